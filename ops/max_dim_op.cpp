// max_dim: the largest element along dim and its int64 index (ops/extreme_op.h says how, and its
// gradient).
#include "ops/extreme_op.h"

namespace ofl::ops {
namespace {
OpSchema MakeMaxDimOp() { return ExtremeDimOp("max_dim", /*is_max=*/true); }
OFL_REGISTER_OP(MakeMaxDimOp);
}  // namespace
}  // namespace ofl::ops
