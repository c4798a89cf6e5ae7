// The kernel interface: what a kernel sees (strided views of raw memory plus integer attributes)
// and the registry that maps (op name, device type) to a kernel function. Kernels know nothing of
// instructions, streams or tensors' lifetimes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oneflow_lite/device.h"
#include "oneflow_lite/dtype.h"
#include "oneflow_lite/shape.h"
#include "oneflow_lite/small_object.h"

namespace ofl::kernels {

// Strides are stored like a Shape: inline, at most kMaxDims, in elements (not bytes).
using Strides = Shape;

// One operand as the kernel sees it. `data` already points at the view's first element (the
// storage offset is applied); it may be null when shape.numel() == 0.
struct TensorArg {
  void* data = nullptr;
  Shape shape;
  Strides stride;
  DType dtype = DType::kFloat32;
};

struct KernelContext {
  FastVector<TensorArg> inputs;
  FastVector<TensorArg> outputs;
  FastVector<int64_t> attrs;  // op-specific integers (e.g. repeat counts)
};

using KernelFn = void (*)(const KernelContext&);

// Looks up a kernel; throws InvalidArgument naming the op and device type when none is registered.
KernelFn FindKernel(const std::string& op, DeviceType device_type);
// Returns nullptr instead of throwing.
KernelFn TryFindKernel(const std::string& op, DeviceType device_type);
void RegisterKernel(const std::string& op, DeviceType device_type, KernelFn fn);

}  // namespace ofl::kernels
