// The "gather" and "scatter_add" kernels' shared parts (torch.gather and Tensor.scatter_add along
// one dim): their argument check, and how each position of the index maps to an element of the
// other tensor. For gather, out[p] = x[p with its dim coordinate replaced by index[p]]; for
// scatter_add, out = self, then out[p with dim coordinate index[p]] += src[p] for every p of the
// index, in order along dim (the kernels give each row along dim to one thread, so the sums are
// deterministic and the same on every device).
#pragma once

#include <cstdint>

#include "kernels/kernel.h"

namespace ofl::kernels {

// "gather": inputs x and index (int64, x's number of dims, each dim but `dim` at most x's), one
// output of the index's shape and x's dtype. "scatter_add": inputs self, index and src (src of
// self's dtype, at least the index's size in every dim; the index at most self's size in every dim
// but `dim`), one output of self's shape and dtype. Attribute "dim" wrapped. Returns the dim (0
// for 0-dim tensors). The index values are checked by the kernels as they read them: one outside
// 0 .. size - 1 of dim fails the kernel (InvalidArgument on the CPU; a device fault on CUDA, as
// PyTorch's device-side assert). Defined beside the other checks (kernels/kernel_checks.cpp).
int CheckGatherArgs(const KernelContext& ctx);
int CheckScatterAddArgs(const KernelContext& ctx);

}  // namespace ofl::kernels
