// Helpers shared by the functors: making output tensors and looking up kernels once per call site.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "kernels/kernel.h"
#include "oneflow_lite/tensor.h"
#include "oneflow_lite/tensor_impl.h"
#include "vm/instructions_builder.h"

namespace ofl::functional {

// A kernel by name per device type, looked up again only when the registry changed (a later
// register_kernel replaces an earlier one, extension.h), so the per-call path skips the registry's
// lock. The same scheme as an op schema's kernel slots (KernelFor, dispatch.h).
class KernelCache {
 public:
  explicit KernelCache(const char* op) : op_(op) {}
  kernels::KernelFn Get(DeviceType type) {
    const int t = static_cast<int>(type);
    const uint64_t gen = kernels::RegistryGeneration();
    if (generation_[t].load(std::memory_order_acquire) == gen) {
      return fns_[t].load(std::memory_order_acquire);
    }
    kernels::KernelFn fn = kernels::FindKernel(op_, type);
    fns_[t].store(fn, std::memory_order_release);
    generation_[t].store(gen, std::memory_order_release);
    return fn;
  }

 private:
  const char* op_;
  std::atomic<kernels::KernelFn> fns_[kMaxDeviceTypes] = {};
  std::atomic<uint64_t> generation_[kMaxDeviceTypes] = {};  // 0: never looked up
};

// A contiguous tensor with a fresh storage on `device` (no memory yet: the writing instruction
// allocates it in Prepare). The caller has validated the shape.
Tensor NewTensor(const Shape& shape, DType dtype, const Device& device);
// A new contiguous tensor with x's values (its own storage, never x's).
Tensor Clone(const Tensor& x);
// A view of x's storage.
Tensor MakeView(const Tensor& x, const Shape& shape, Strides stride, int64_t offset);
// x's implementation; InvalidArgument for an undefined tensor, and for a global one (the call is
// local-only: the message names the call and the placement).
const TensorImpl& ImplOf(const char* op, const Tensor& x);
// The same for the global functors: a global tensor's impl is its physical shard.
const TensorImpl& LocalImplOf(const char* op, const Tensor& x);
// True when OFL_DISABLE_VIEW=1 (read once, through the table of settings): view ops then run as
// OpCalls producing contiguous outputs.
bool ViewsDisabled();

}  // namespace ofl::functional
