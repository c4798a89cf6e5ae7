// logical_and(a, b): whether a and b are both nonzero (NaN counts as nonzero), elementwise with
// broadcasting, any dtypes; a bool result, so no gradient. One of the pointwise ops
// (ops/pointwise_op.h).
#include "ops/pointwise_op.h"

namespace ofl::ops {
namespace {
OpSchema MakeLogicalAndOp() { return MakePointwiseOp("logical_and", PointwiseDTypes::kToBool); }
OFL_REGISTER_OP(MakeLogicalAndOp);
}  // namespace
}  // namespace ofl::ops
