// The definitions the matrix products share (each op is one file giving its name): "mm" (a: m x k,
// b: k x n -> m x n) and "bmm" (a batch of them: b x m x k and b x k x n -> b x m x n). The kernels
// read each operand in place when its strides are a GEMM layout (kernels/matmul.h); the public
// functions ofl::mm and ofl::bmm (functional/matmul_functors.cpp) copy one that is not first, and
// ofl::matmul maps torch.matmul's shapes onto these two. Global inputs: MatmulSignature
// (ops/sbp_rules.h).
#pragma once

#include "ops/op_schema.h"

namespace ofl::ops {

// Checks: two inputs of 2 (mm) or 3 (bmm) dims, one dtype (not bool), the inner sizes equal (and
// the batch sizes, for bmm). Gradients: g @ b^T for a, a^T @ g for b (each computed only when
// wanted, so each saves only the other operand).
OpSchema MatmulOp(const char* name, bool batched);

}  // namespace ofl::ops
