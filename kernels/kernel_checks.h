// The argument checks of the built-in kernels ("copy", "repeat", "reduce_sum_to", "add", "sub",
// "mul", "div", "fill", "cast" and the unary ops), one set for every device type: the CPU kernels,
// the sim kernels (on the calling thread, before the work is queued) and the CUDA kernels (before
// the launch) throw the same InvalidArgument, naming the kernel, the argument and the values,
// before any memory is touched. The VM checks these arguments before it calls a kernel; these
// checks keep a kernel called directly (a program's own op, a test) from reading or writing out of
// bounds.
#pragma once

#include "kernels/kernel.h"
#include "kernels/pointwise_ops.h"
#include "kernels/unary_ops.h"

namespace ofl::kernels {

// "copy": the shapes and dtypes of input and output agree.
void CheckCopyArgs(const KernelContext& ctx);
// "repeat": one repeat count per output dim, none negative, the output shape the input shape times
// the counts (no overflow), the same dtype, and (for a non-empty output) a contiguous output.
// Returns whether the output is empty.
bool CheckRepeatArgs(const KernelContext& ctx);
// "reduce_sum_to": no bool; equal dtypes except float16/bfloat16 <-> float32; the same rank; each
// output dim the input's or 1.
void CheckReduceSumToArgs(const KernelContext& ctx);

// The elementwise-binary ops, one kernel family.
enum class BinaryOp { kAdd, kSub, kMul, kDiv };
const char* BinaryOpName(BinaryOp op);  // "add", "sub", "mul", "div"

// "add", "sub", "mul", "div": two inputs and one output of one shape and one dtype; no bool, and
// no integer dtype for "div".
void CheckBinaryArgs(BinaryOp op, const KernelContext& ctx);
template <BinaryOp kOp>
void CheckBinaryArgs(const KernelContext& ctx) {
  CheckBinaryArgs(kOp, ctx);
}

// The elementwise-unary ops (kernels/unary_ops.h): one input and one output of one shape and one
// dtype; a float dtype, or an integer one (not bool) for neg, abs, sign and relu; gelu's
// `approximate` is "none" or "tanh". Returns the op the kernel computes (kGeluTanh for gelu's
// approximate="tanh") and, in *params, what it reads besides its input.
UnaryOp CheckUnaryArgs(UnaryOp op, const KernelContext& ctx, UnaryParams* params);
// "cast": one input and one output of one shape, any dtypes.
void CheckCastArgs(const KernelContext& ctx);

// The pointwise ops (kernels/pointwise_ops.h): PointwiseArity(op) inputs and one output of one
// shape; the inputs of one dtype (where: a bool condition, then two of the output's dtype); a bool
// output for the comparisons and logical ops, else the inputs' dtype; an integer or bool dtype for
// the bitwise ops, no bool for clamp. Sets clamp's bounds (attributes "min", "max": numbers the
// input's dtype holds, whole numbers for an integer input) in *params.
void CheckPointwiseArgs(PointwiseOp op, const KernelContext& ctx, PointwiseParams* params);

// "max_dim", "min_dim": one input with at least one element along attribute "dim" (in range,
// wrapped), two outputs: the values (the input's dtype) and the indices (int64), each the input's
// shape with a 1 at dim. Returns the dim, non-negative (0 for a 0-dim input).
int CheckReduceExtremeArgs(const char* op, const KernelContext& ctx);

// "fill": no inputs, one output, one or two attributes (the value, its kind: fill_value.h).
void CheckFillArgs(const KernelContext& ctx);

}  // namespace ofl::kernels
