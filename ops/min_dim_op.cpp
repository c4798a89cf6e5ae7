// min_dim: the smallest element along dim and its int64 index (ops/extreme_op.h says how, and its
// gradient).
#include "ops/extreme_op.h"

namespace ofl::ops {
namespace {
OpSchema MakeMinDimOp() { return ExtremeDimOp("min_dim", /*is_max=*/false); }
OFL_REGISTER_OP(MakeMinDimOp);
}  // namespace
}  // namespace ofl::ops
