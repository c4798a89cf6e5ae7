// The definition every elementwise-unary op shares (each op is one file, ops/<name>_op.cpp, that
// gives its name, its dtypes and its backward): one input, one output of the input's shape and
// dtype, the kernel of the op's name (kernels/unary_ops.h's family). On global tensors a split or
// broadcast passes through and partial_sum is boxed to broadcast first (neg, linear, keeps it).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "ops/op_schema.h"

namespace ofl::ops {

enum class UnaryDTypes : uint8_t {
  kNumeric,  // integers and floats (neg, abs, sign, relu); bool refused
  kFloat,    // floats: an integer or bool input is cast to float32 first (exp, sqrt, ...)
};

// The op `name` over `dtypes`; the backward reads the inputs and outputs of `save_inputs` and
// `save_outputs` (Bit(0) or 0). Attributes, when the op has some, are added by the caller.
OpSchema MakeUnaryOp(const char* name, UnaryDTypes dtypes, uint64_t save_inputs,
                     uint64_t save_outputs, BackwardFn backward);

// The one gradient of a single-input op's backward.
inline std::vector<Tensor> OneGrad(Tensor dx) { return {std::move(dx)}; }

}  // namespace ofl::ops
