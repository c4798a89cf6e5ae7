// minimum(a, b): the smaller of a and b elementwise, with broadcasting, in their promoted type (a
// NaN operand gives NaN). Gradient, as PyTorch's: g to the smaller operand, g / 2 to each where
// they are equal, summed to the operands' shapes (MakeMinMaxOp). One of the pointwise ops
// (ops/pointwise_op.h).
#include "ops/pointwise_op.h"

namespace ofl::ops {
namespace {
OpSchema MakeMinimumOp() { return MakeMinMaxOp("minimum", /*is_max=*/false); }
OFL_REGISTER_OP(MakeMinimumOp);
}  // namespace
}  // namespace ofl::ops
