// bmm: the products of a batch of matrix pairs (ops/matmul_op.h says how, and its gradient).
#include "ops/matmul_op.h"

namespace ofl::ops {
namespace {
OpSchema MakeBmmOp() { return MatmulOp("bmm", /*batched=*/true); }
OFL_REGISTER_OP(MakeBmmOp);
}  // namespace
}  // namespace ofl::ops
