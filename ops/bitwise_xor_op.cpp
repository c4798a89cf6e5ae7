// bitwise_xor(a, b) = a ^ b elementwise with broadcasting, on integer and bool tensors (bool + int
// promotes to the int); no gradient. One of the pointwise ops (ops/pointwise_op.h).
#include "ops/pointwise_op.h"

namespace ofl::ops {
namespace {
OpSchema MakeBitwiseXorOp() { return MakePointwiseOp("bitwise_xor", PointwiseDTypes::kBitwise); }
OFL_REGISTER_OP(MakeBitwiseXorOp);
}  // namespace
}  // namespace ofl::ops
