// logical_not(x): whether x is zero, elementwise, any dtype; a bool result, so no gradient.
// One of the pointwise ops (ops/pointwise_op.h).
#include "ops/pointwise_op.h"

namespace ofl::ops {
namespace {
OpSchema MakeLogicalNotOp() {
  return MakePointwiseUnaryOp("logical_not", PointwiseDTypes::kToBool);
}
OFL_REGISTER_OP(MakeLogicalNotOp);
}  // namespace
}  // namespace ofl::ops
