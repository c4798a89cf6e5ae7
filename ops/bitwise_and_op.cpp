// bitwise_and(a, b) = a & b elementwise with broadcasting, on integer and bool tensors (bool + int
// promotes to the int); no gradient. One of the pointwise ops (ops/pointwise_op.h).
#include "ops/pointwise_op.h"

namespace ofl::ops {
namespace {
OpSchema MakeBitwiseAndOp() { return MakePointwiseOp("bitwise_and", PointwiseDTypes::kBitwise); }
OFL_REGISTER_OP(MakeBitwiseAndOp);
}  // namespace
}  // namespace ofl::ops
