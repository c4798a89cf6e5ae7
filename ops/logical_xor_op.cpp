// logical_xor(a, b): whether exactly one of a and b is nonzero (NaN counts as nonzero), elementwise
// with broadcasting, any dtypes; a bool result, so no gradient. One of the pointwise ops
// (ops/pointwise_op.h).
#include "ops/pointwise_op.h"

namespace ofl::ops {
namespace {
OpSchema MakeLogicalXorOp() { return MakePointwiseOp("logical_xor", PointwiseDTypes::kToBool); }
OFL_REGISTER_OP(MakeLogicalXorOp);
}  // namespace
}  // namespace ofl::ops
