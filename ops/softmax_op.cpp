// softmax: exp(x - max) / sum along dim (ops/softmax_family.h says how, and its gradient).
#include "ops/softmax_family.h"

namespace ofl::ops {
namespace {
OpSchema MakeSoftmaxOp() { return SoftmaxOp("softmax", /*is_log=*/false); }
OFL_REGISTER_OP(MakeSoftmaxOp);
}  // namespace
}  // namespace ofl::ops
