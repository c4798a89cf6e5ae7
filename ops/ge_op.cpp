// ge(a, b) = a >= b elementwise, with broadcasting, compared in the promoted type of a and b
// (PyTorch's result_type); a bool result, so no gradient.
// One of the pointwise ops (ops/pointwise_op.h).
#include "ops/pointwise_op.h"

namespace ofl::ops {
namespace {
OpSchema MakeGeOp() { return MakePointwiseOp("ge", PointwiseDTypes::kToBool); }
OFL_REGISTER_OP(MakeGeOp);
}  // namespace
}  // namespace ofl::ops
