// The three stages of an op call (op_call.h), for the files that implement them. Each stage calls
// only the stages after it.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/kernel.h"
#include "oneflow_lite/tensor.h"
#include "oneflow_lite/tensor_impl.h"
#include "ops/op_schema.h"

namespace ofl::functional::stage {

// global_stage.cpp: an input is global.
std::vector<Tensor> Global(const ops::OpSchema& op, const std::vector<Tensor>& inputs,
                           const Attrs& attrs);
Tensor Global(const ops::OpSchema& op, const Tensor& x, const Attrs& attrs);

// autograd_stage.cpp: every input local.
std::vector<Tensor> Autograd(const ops::OpSchema& op, const std::vector<Tensor>& inputs,
                             const Attrs& attrs);
Tensor Autograd(const ops::OpSchema& op, const Tensor& x, const Attrs& attrs);

// local_stage.cpp: records nothing.
std::vector<Tensor> Local(const ops::OpSchema& op, const std::vector<Tensor>& inputs,
                          const Attrs& attrs);
Tensor Local(const ops::OpSchema& op, const Tensor& x, const Attrs& attrs);

// device_copy_form.cpp: the device-copy form (the "to" op).
Tensor LocalDeviceCopy(const ops::OpSchema& op, const Tensor& x, const Attrs& attrs);

// An in-place call checked and ready to issue: the autograd stage may queue work that must run
// before the write (a copy of the old value its node saves) between the two steps.
class PreparedInplace {
 public:
  // Checks the call (the definition's infer, the target's layout, devices, broadcasting) and
  // makes its operands; throws before anything is queued.
  PreparedInplace(const ops::OpSchema& op, const std::vector<Tensor>& inputs, const Attrs& attrs);
  // Queues the kernel writing the target and bumps its storage's version.
  void Issue();

 private:
  const ops::OpSchema& op_;
  const Attrs& attrs_;
  const TensorImpl& target_;
  kernels::KernelFn fn_;
  std::vector<vm::BlobArg> in_args_;
  std::vector<Tensor> copies_;  // sources copied because they overlap the target, kept to Issue
};

}  // namespace ofl::functional::stage
