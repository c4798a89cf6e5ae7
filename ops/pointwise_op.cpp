#include "ops/pointwise_op.h"

#include <string>
#include <utility>
#include <vector>

#include "oneflow_lite/error.h"
#include "oneflow_lite/functional/functional.h"
#include "ops/array_ops.h"
#include "ops/broadcast.h"
#include "ops/grad_util.h"

namespace ofl::ops {
namespace {

// The output dtype of `name` for inputs of `dtype`; InvalidArgument where the op takes no such
// dtype.
DType OutputDType(const char* name, PointwiseDTypes dtypes, DType dtype) {
  CheckDType(name, dtype);
  if (dtypes == PointwiseDTypes::kBitwise && is_floating_point(dtype)) {
    throw InvalidArgument(std::string(name) + ": dtype " + to_string(dtype) +
                          " is not supported (an integer or bool dtype is)");
  }
  if (dtypes == PointwiseDTypes::kNumeric && dtype == DType::kBool) {
    throw InvalidArgument(std::string(name) +
                          ": dtype bool is not supported (an integer or float dtype is)");
  }
  return dtypes == PointwiseDTypes::kToBool ? DType::kBool : dtype;
}

}  // namespace

OpSchema MakePointwiseOp(const char* name, PointwiseDTypes dtypes, uint64_t save_inputs,
                         BackwardFn backward) {
  OpSchema op;
  op.name = name;
  op.num_inputs = 2;
  op.form = KernelForm{/*kernel=*/"", /*broadcast_inputs=*/true};
  op.input_cast = InputCast::kResultType;
  op.infer = [name, dtypes](const std::vector<TensorMeta>& in, const Attrs&) {
    if (in[0].dtype != in[1].dtype) {
      throw InvalidArgument(std::string(name) + ": the operands have different dtypes, " +
                            to_string(in[0].dtype) + " and " + to_string(in[1].dtype));
    }
    const DType out = OutputDType(name, dtypes, in[0].dtype);
    return std::vector<TensorMeta>{
        TensorMeta{BroadcastShapes(name, in[0].shape, in[1].shape), out}};
  };
  op.save_inputs = save_inputs;
  op.backward = std::move(backward);
  op.sbp_signature = [](const GlobalInputs& c) {
    return ElementwiseSignature(c, PartialInputs::kNone);
  };
  return op;
}

OpSchema MakeMinMaxOp(const char* name, bool is_max) {
  return MakePointwiseOp(
      name, PointwiseDTypes::kSame, Bit(0) | Bit(1),
      [is_max](const GradContext& ctx, const std::vector<Tensor>& g) {
        const Tensor& a = ctx.inputs[0];
        const Tensor& b = ctx.inputs[1];
        const DType dtype = g[0].dtype();
        const Tensor tie = eq(a, b).to(dtype) * 0.5;
        // Where each operand is the one chosen (a > b for a's share of maximum's gradient).
        auto wins = [is_max](const Tensor& x, const Tensor& y) {
          return is_max ? gt(x, y) : lt(x, y);
        };
        std::vector<Tensor> dx(2);
        if (ctx.needs(0))
          dx[0] = SumTo(g[0] * (wins(a, b).to(dtype) + tie), ctx.input_info[0].shape);
        if (ctx.needs(1))
          dx[1] = SumTo(g[0] * (wins(b, a).to(dtype) + tie), ctx.input_info[1].shape);
        return dx;
      });
}

OpSchema MakePointwiseUnaryOp(const char* name, PointwiseDTypes dtypes) {
  OpSchema op;
  op.name = name;
  op.form = KernelForm{};
  op.infer1 = [name, dtypes](const TensorMeta& x, const Attrs&) {
    return TensorMeta{x.shape, OutputDType(name, dtypes, x.dtype)};
  };
  op.sbp = [](const GlobalCall& c) { return ElementwiseUnarySbp(c.in_sbp, PartialInputs::kNone); };
  return op;
}

}  // namespace ofl::ops
