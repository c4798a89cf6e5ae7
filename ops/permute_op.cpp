// permute(x, dims): attribute dims (int list; (a permutation of 0..ndim-1; negative ones wrap). A
// view (ops/array_ops.h InferPermute). Global: a split moves with its dim (InferPermuteSbp).
// Gradient: g permuted back by the inverse permutation.
#include <optional>
#include <utility>
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "ops/array_ops.h"
#include "ops/op_schema.h"
#include "ops/sbp_rules.h"

namespace ofl::ops {
namespace {
OpSchema MakePermuteOp() {
  OpSchema op;
  op.name = "permute";
  op.attrs = {{"dims", AttrType::kInts}};
  ViewForm view;
  view.geometry = [](const Shape& shape, const Strides& stride, DType, const Attrs& attrs) {
    return std::optional<ViewGeometry>(InferPermute(shape, stride, attrs.get_ints("dims")));
  };
  op.form = std::move(view);
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    const IntList dims = ctx.attrs.get_ints("dims");
    const size_t n = dims.size();
    std::vector<int64_t> inverse(n);
    for (size_t i = 0; i < n; ++i) {
      const int64_t d = dims[i] < 0 ? dims[i] + static_cast<int64_t>(n) : dims[i];
      inverse[static_cast<size_t>(d)] = static_cast<int64_t>(i);
    }
    return std::vector<Tensor>{g[0].permute(inverse)};
  };
  op.sbp = [](const GlobalCall& c) {
    return std::optional<Sbp>(InferPermuteSbp(c.in_sbp, c.attrs.get_ints("dims")));
  };
  return op;
}
OFL_REGISTER_OP(MakePermuteOp);
}  // namespace
}  // namespace ofl::ops
