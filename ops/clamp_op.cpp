// clamp(x, min, max) = min(max(x, min), max) elementwise (lo > hi gives hi; a NaN in x or a bound
// gives NaN), and its one-bound forms clamp_min(x, min) and clamp_max(x, max): attributes "min" and
// "max", numbers x's dtype holds (the entry, functional/pointwise_functors.cpp, casts an integer x
// to float32 for a fractional bound, as PyTorch's result_type); bool is refused.
// Gradient: g where min <= x <= max (both bounds included, as PyTorch), else 0; saves x.
#include <string>
#include <utility>
#include <vector>

#include "oneflow_lite/error.h"
#include "oneflow_lite/functional/functional.h"
#include "ops/array_ops.h"
#include "ops/op_schema.h"

namespace ofl::ops {
namespace {

OpSchema MakeClamp(const char* name, bool has_min, bool has_max) {
  OpSchema op;
  op.name = name;
  op.form = KernelForm{};
  std::vector<AttrDef> attrs;
  if (has_min) attrs.push_back({"min", AttrType::kScalar});
  if (has_max) attrs.push_back({"max", AttrType::kScalar});
  op.attrs = AttrSchema(std::move(attrs));
  op.infer1 = [name, has_min, has_max](const TensorMeta& x, const Attrs& attrs) {
    CheckDType(name, x.dtype);
    if (x.dtype == DType::kBool) {
      throw InvalidArgument(std::string(name) +
                            ": dtype bool is not supported (an integer or float dtype is)");
    }
    if (has_min) CheckHeldBy(attrs.get_scalar("min"), x.dtype, name, "min");
    if (has_max) CheckHeldBy(attrs.get_scalar("max"), x.dtype, name, "max");
    return x;
  };
  op.save_inputs = Bit(0);
  op.backward = [has_min, has_max](const GradContext& ctx, const std::vector<Tensor>& g) {
    const Tensor& x = ctx.inputs[0];
    Tensor inside;
    if (has_min) inside = ge(x, ctx.attrs.get_scalar("min"));
    if (has_max) {
      const Tensor below = le(x, ctx.attrs.get_scalar("max"));
      inside = inside.defined() ? logical_and(inside, below) : below;
    }
    return std::vector<Tensor>{g[0] * inside.to(g[0].dtype())};
  };
  op.sbp = [](const GlobalCall& c) { return ElementwiseUnarySbp(c.in_sbp, PartialInputs::kNone); };
  return op;
}

OpSchema MakeClampOp() { return MakeClamp("clamp", true, true); }
OpSchema MakeClampMinOp() { return MakeClamp("clamp_min", true, false); }
OpSchema MakeClampMaxOp() { return MakeClamp("clamp_max", false, true); }
OFL_REGISTER_OP(MakeClampOp);
OFL_REGISTER_OP(MakeClampMinOp);
OFL_REGISTER_OP(MakeClampMaxOp);
}  // namespace
}  // namespace ofl::ops
