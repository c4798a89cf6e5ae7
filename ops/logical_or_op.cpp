// logical_or(a, b): whether a or b is nonzero (NaN counts as nonzero), elementwise with
// broadcasting, any dtypes; a bool result, so no gradient. One of the pointwise ops
// (ops/pointwise_op.h).
#include "ops/pointwise_op.h"

namespace ofl::ops {
namespace {
OpSchema MakeLogicalOrOp() { return MakePointwiseOp("logical_or", PointwiseDTypes::kToBool); }
OFL_REGISTER_OP(MakeLogicalOrOp);
}  // namespace
}  // namespace ofl::ops
