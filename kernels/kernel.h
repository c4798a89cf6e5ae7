// The kernel interface inside the library: the public types of oneflow_lite/extension.h (what a
// kernel sees: strided views of raw memory, typed attributes, the native stream) and the
// registry that maps (op name, device type) to a kernel function. Kernels know nothing of
// instructions, streams' workers or tensors' lifetimes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oneflow_lite/device.h"
#include "oneflow_lite/dtype.h"
#include "oneflow_lite/extension.h"
#include "oneflow_lite/shape.h"

namespace ofl::kernels {

using ofl::KernelContext;
using ofl::KernelFn;
using ofl::Strides;
using ofl::TensorArg;

// Looks up a kernel; throws InvalidArgument naming the op and device type when none is registered.
KernelFn FindKernel(const std::string& op, DeviceType device_type);
// Returns nullptr instead of throwing.
KernelFn TryFindKernel(const std::string& op, DeviceType device_type);
void RegisterKernel(const std::string& op, DeviceType device_type, KernelFn fn);
// Bumped by every registration: a cached look-up made under an older value must look up again.
uint64_t RegistryGeneration();
// Makes `op` known to register_kernel before it has any kernel (an op a program defined).
void DeclareOp(const std::string& op);
// The ops that have a kernel on some device type (the built-in ones always) or were declared,
// sorted: the names register_kernel accepts.
std::vector<std::string> KnownOps();
// For the library's own kernels, registered lazily (on the first look-up, or the first use of the
// device type): keeps a kernel a program registered before for the same op and type.
void RegisterBuiltinKernel(const std::string& op, DeviceType device_type, KernelFn fn);
// Whether fn is one of the library's own kernels (RegisterBuiltinKernel): pure computations that
// never call back into the runtime, never block and never issue work. The VM may run a small one
// while it holds its submit lock (VirtualMachine::TryRunOpDirect); a program's kernels it never
// does.
bool IsBuiltinKernel(KernelFn fn);

// Gives a kernel context the call's attributes, and the deprecated integers of an op registered
// without attribute declarations (KernelContext::attrs).
inline void SetAttrs(KernelContext* ctx, const Attrs& attrs) {
  ctx->attributes = attrs;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  if (attrs.schema() != nullptr && attrs.schema()->legacy()) {
    const IntList ints = attrs.get_ints("attrs");
    ctx->attrs.assign(ints.begin(), ints.end());
  } else if (!ctx->attrs.empty()) {
    ctx->attrs.clear();
  }
#pragma GCC diagnostic pop
}

}  // namespace ofl::kernels
