// amax: the largest element over dims (ops/extreme_op.h says how, and its gradient).
#include "ops/extreme_op.h"

namespace ofl::ops {
namespace {
OpSchema MakeAmaxOp() { return AmaxOp("amax", /*is_max=*/true); }
OFL_REGISTER_OP(MakeAmaxOp);
}  // namespace
}  // namespace ofl::ops
