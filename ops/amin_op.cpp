// amin: the smallest element over dims (ops/extreme_op.h says how, and its gradient).
#include "ops/extreme_op.h"

namespace ofl::ops {
namespace {
OpSchema MakeAminOp() { return AmaxOp("amin", /*is_max=*/false); }
OFL_REGISTER_OP(MakeAminOp);
}  // namespace
}  // namespace ofl::ops
