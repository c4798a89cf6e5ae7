// maximum(a, b): the larger of a and b elementwise, with broadcasting, in their promoted type (a
// NaN operand gives NaN). Gradient, as PyTorch's: g to the larger operand, g / 2 to each where they
// are equal, summed to the operands' shapes (MakeMinMaxOp). One of the pointwise ops
// (ops/pointwise_op.h).
#include "ops/pointwise_op.h"

namespace ofl::ops {
namespace {
OpSchema MakeMaximumOp() { return MakeMinMaxOp("maximum", /*is_max=*/true); }
OFL_REGISTER_OP(MakeMaximumOp);
}  // namespace
}  // namespace ofl::ops
