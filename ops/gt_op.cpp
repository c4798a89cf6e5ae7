// gt(a, b) = a > b elementwise, with broadcasting, compared in the promoted type of a and b
// (PyTorch's result_type); a bool result, so no gradient.
// One of the pointwise ops (ops/pointwise_op.h).
#include "ops/pointwise_op.h"

namespace ofl::ops {
namespace {
OpSchema MakeGtOp() { return MakePointwiseOp("gt", PointwiseDTypes::kToBool); }
OFL_REGISTER_OP(MakeGtOp);
}  // namespace
}  // namespace ofl::ops
