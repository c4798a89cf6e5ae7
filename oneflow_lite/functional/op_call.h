// The one entry of every op call, built-in or registered (register_op / call_op), and its three
// stages, each in its own file and each handing on to the next, never back:
//
//   Call (op_call.cpp)        the call's shape: input count, attributes; the input casts the op
//                             asks for (OpSchema::input_cast), through the cast op
//   global (global_stage.cpp) a global input: the SBP signature, boxing, then the autograd stage
//                             on this rank's shard with its physical attributes
//   autograd (autograd_stage.cpp)
//                             the one place a node is recorded: whether the call records, the
//                             in-place rules, the no-grad scope of the local stage, the node
//   local (local_stage.cpp)   the op's form: a view, a composition of other ops, its kernel into
//                             new outputs, or its kernel into input 0's own view (in-place);
//                             checks and inference throw here, before anything is queued
//
// The op's definition (ops/op_schema.h) drives every stage. docs/op_pipeline.md walks a call.
#pragma once

#include <cstdint>
#include <vector>

#include "oneflow_lite/tensor.h"
#include "ops/op_schema.h"

namespace ofl::functional {

// The outputs of `op` on `inputs`; an in-place op returns its input 0.
std::vector<Tensor> Call(const ops::OpSchema& op, const std::vector<Tensor>& inputs,
                         const Attrs& attrs);
// The single-input, single-output call (the array ops, clone, fill_): the same stages without
// the vectors; a view op's call never builds one.
Tensor Call(const ops::OpSchema& op, const Tensor& x, const Attrs& attrs);

// A new contiguous tensor with x's values (its own storage, never x's): the clone op.
Tensor Clone(const Tensor& x);

}  // namespace ofl::functional
