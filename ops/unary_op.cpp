#include "ops/unary_op.h"

#include <string>
#include <utility>

#include "oneflow_lite/error.h"
#include "oneflow_lite/functional/functional.h"
#include "ops/array_ops.h"

namespace ofl::ops {

OpSchema MakeUnaryOp(const char* name, UnaryDTypes dtypes, uint64_t save_inputs,
                     uint64_t save_outputs, BackwardFn backward) {
  OpSchema op;
  op.name = name;
  op.form = KernelForm{};
  if (dtypes == UnaryDTypes::kFloat) op.input_cast = InputCast::kIntToFloat;
  op.infer1 = [name, dtypes](const TensorMeta& x, const Attrs&) {
    CheckDType(name, x.dtype);
    if (dtypes == UnaryDTypes::kFloat ? !is_floating_point(x.dtype) : x.dtype == DType::kBool) {
      throw InvalidArgument(std::string(name) + ": dtype " + to_string(x.dtype) +
                            " is not supported (" +
                            (dtypes == UnaryDTypes::kFloat ? "a float dtype"
                                                           : "an integer or "
                                                             "float dtype") +
                            " is)");
    }
    return x;
  };
  op.save_inputs = save_inputs;
  op.save_outputs = save_outputs;
  op.backward = std::move(backward);
  op.sbp = [](const GlobalCall& c) { return ElementwiseUnarySbp(c.in_sbp, PartialInputs::kNone); };
  return op;
}

}  // namespace ofl::ops
