// contiguous(x): x itself when it is already row-major (recording nothing), else a copy into
// row-major order. Global: every SBP passes; each rank makes its shard contiguous. Gradient: g.
#include <utility>
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "ops/array_ops.h"
#include "ops/op_schema.h"

namespace ofl::ops {
namespace {
OpSchema MakeContiguousOp() {
  OpSchema op;
  op.name = "contiguous";
  ViewForm view;
  view.geometry = [](const Shape& shape, const Strides& stride, DType,
                     const Attrs&) -> std::optional<ViewGeometry> {
    if (!IsContiguous(shape, stride)) return std::nullopt;  // copied, then this view of the copy
    return ViewGeometry{shape, stride, 0};
  };
  view.unchanged_returns_input = true;
  op.form = std::move(view);
  op.sbp = [](const GlobalCall& c) { return std::optional<Sbp>(c.in_sbp); };
  op.backward = [](const GradContext&, const std::vector<Tensor>& g) {
    return std::vector<Tensor>{g[0]};
  };
  return op;
}
OFL_REGISTER_OP(MakeContiguousOp);
}  // namespace
}  // namespace ofl::ops
