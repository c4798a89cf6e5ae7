// log_softmax: x - max - log(sum(exp(x - max))) along dim (ops/softmax_family.h says how, and its
// gradient).
#include "ops/softmax_family.h"

namespace ofl::ops {
namespace {
OpSchema MakeLogSoftmaxOp() { return SoftmaxOp("log_softmax", /*is_log=*/true); }
OFL_REGISTER_OP(MakeLogSoftmaxOp);
}  // namespace
}  // namespace ofl::ops
