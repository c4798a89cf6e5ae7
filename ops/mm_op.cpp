// mm: the product of two matrices (ops/matmul_op.h says how, and its gradient).
#include "ops/matmul_op.h"

namespace ofl::ops {
namespace {
OpSchema MakeMmOp() { return MatmulOp("mm", /*batched=*/false); }
OFL_REGISTER_OP(MakeMmOp);
}  // namespace
}  // namespace ofl::ops
