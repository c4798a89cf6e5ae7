// bitwise_not(x) = ~x on an integer tensor, not x on a bool one (the `~` operator); no gradient.
// One of the pointwise ops (ops/pointwise_op.h).
#include "ops/pointwise_op.h"

namespace ofl::ops {
namespace {
OpSchema MakeBitwiseNotOp() {
  return MakePointwiseUnaryOp("bitwise_not", PointwiseDTypes::kBitwise);
}
OFL_REGISTER_OP(MakeBitwiseNotOp);
}  // namespace
}  // namespace ofl::ops
