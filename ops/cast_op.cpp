// cast(x, dtype): x's values converted to `dtype` (kernels/cast_value.h's rules, the same on every
// device), a new tensor through the "cast" kernel; Tensor::to(dtype), .float(), .long(), ... in
// Python, which return x itself when it has the dtype already. Gradient: g cast back to x's
// dtype (a float input's; an integer output has no gradient, so a cast to an integer dtype ends
// the graph).
#include <vector>

#include "ops/array_ops.h"
#include "ops/op_schema.h"

namespace ofl::ops {
namespace {
OpSchema MakeCastOp() {
  OpSchema op;
  op.name = "cast";
  op.attrs = {{"dtype", AttrType::kDType}};
  op.form = KernelForm{};
  op.infer1 = [](const TensorMeta& x, const Attrs& attrs) {
    CheckDType("cast", x.dtype);
    const DType to = attrs.get_dtype("dtype");
    CheckDType("cast", to);
    return TensorMeta{x.shape, to};
  };
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    return std::vector<Tensor>{g[0].to(ctx.input_info[0].dtype)};
  };
  op.sbp = [](const GlobalCall& c) { return ElementwiseUnarySbp(c.in_sbp, PartialInputs::kNone); };
  return op;
}
OFL_REGISTER_OP(MakeCastOp);
}  // namespace
}  // namespace ofl::ops
