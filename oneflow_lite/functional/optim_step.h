// The multi-tensor optimizer steps the optimizers of oneflow_lite/optim.h and the Python package's
// ofl.optim take: a whole parameter list updated by one "adam_step" or "sgd_step" instruction per
// (device, dtype) group (kernels/optim_step.h), where the per-op step issues about ten
// instructions per parameter. Not an op of the graph: it records nothing, and writes several
// tensors in place (each one an output of the instruction, so the VM orders it after every
// earlier reader and writer of each).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "oneflow_lite/tensor.h"

namespace ofl::functional {

struct AdamStepArgs {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  bool amsgrad = false, decoupled = false, maximize = false;
};

// Updates params[i], exp_avgs[i], exp_avg_sqs[i] (and max_exp_avg_sqs[i] with amsgrad) in place
// from grads[i] at step steps[i] (from 1), for every i it can take; returns the indices it left
// for the caller's per-op step: a tensor that is not contiguous (a global one's shard), a global
// parameter that is partial_sum or whose gradient or states are not global over its placement
// with its SBP (a gradient of another SBP is boxed to it; the others step shard by shard), a
// state of another shape, dtype or device, a dtype other than float16/bfloat16/float32/float64, a
// device type without the kernel, or an operand whose storage another operand of the call writes
// too.
// The lists have one entry per parameter (max_exp_avg_sqs may be empty without amsgrad).
std::vector<size_t> AdamStep(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                             const std::vector<Tensor>& exp_avgs,
                             const std::vector<Tensor>& exp_avg_sqs,
                             const std::vector<Tensor>& max_exp_avg_sqs,
                             const std::vector<int64_t>& steps, const AdamStepArgs& args);

struct SgdStepArgs {
  double lr = 1e-3, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false, maximize = false;
};

// Updates params[i] (and bufs[i], the momentum buffer, when momentum != 0: firsts[i] true where it
// starts as this step's d, and bufs[i] then only needs the parameter's shape, dtype and device) in
// place from grads[i], for every i it can take; returns the indices left, as AdamStep's.
std::vector<size_t> SgdStep(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                            const std::vector<Tensor>& bufs, const std::vector<bool>& firsts,
                            const SgdStepArgs& args);

}  // namespace ofl::functional
