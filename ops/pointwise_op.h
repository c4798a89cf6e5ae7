// The definitions the pointwise ops share (kernels/pointwise_ops.h's family; each op is one file,
// ops/<name>_op.cpp, giving its name, its dtypes and its backward): inputs broadcast to one shape,
// cast at the entry to their promoted type (PyTorch's result_type), the kernel of the op's name,
// on global tensors the elementwise SBP signatures (ops/sbp_rules.h), no partial_sum passing.
#pragma once

#include <cstdint>

#include "ops/op_schema.h"

namespace ofl::ops {

enum class PointwiseDTypes : uint8_t {
  kToBool,   // any dtype in, bool out (comparisons, logical ops): no gradient
  kSame,     // any dtype, the output of the inputs' dtype (maximum, minimum)
  kBitwise,  // integer or bool dtypes, the output of the inputs' dtype: no gradient
  kNumeric,  // integer or float dtypes, the output of the inputs' dtype (pow)
};

// A two-input op `name` (`dtypes` as above); the backward reads the inputs of `save_inputs`.
OpSchema MakePointwiseOp(const char* name, PointwiseDTypes dtypes, uint64_t save_inputs = 0,
                         BackwardFn backward = nullptr);

// maximum (is_max) or minimum: kSame, with PyTorch's gradient: g to the larger (smaller) operand,
// g / 2 to each on a tie, summed to the operands' shapes; saves both inputs.
OpSchema MakeMinMaxOp(const char* name, bool is_max);

// A one-input op of the same family (logical_not: kToBool; bitwise_not: kBitwise), no attributes.
OpSchema MakePointwiseUnaryOp(const char* name, PointwiseDTypes dtypes);

}  // namespace ofl::ops
