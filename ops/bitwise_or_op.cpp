// bitwise_or(a, b) = a | b elementwise with broadcasting, on integer and bool tensors (bool + int
// promotes to the int); no gradient. One of the pointwise ops (ops/pointwise_op.h).
#include "ops/pointwise_op.h"

namespace ofl::ops {
namespace {
OpSchema MakeBitwiseOrOp() { return MakePointwiseOp("bitwise_or", PointwiseDTypes::kBitwise); }
OFL_REGISTER_OP(MakeBitwiseOrOp);
}  // namespace
}  // namespace ofl::ops
