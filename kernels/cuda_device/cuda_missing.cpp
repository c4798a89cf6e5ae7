// The cuda device type in a build without CUDA: a built-in type with no backend, whose first use
// says why (kernels/builtin_device.h). Compiled only without CUDA; with it, cuda_device.cpp.
#include "kernels/builtin_device.h"

namespace ofl::kernels {
namespace {

OFL_REGISTER_BUILTIN_DEVICE(DeviceType::kCUDA, 2, nullptr,
                            "cuda: this oneflow_lite was built without CUDA (OFL_WITH_CUDA=OFF, or "
                            "no nvcc when it was built); use Device(\"cpu\") or Device(\"sim:0\")");

}  // namespace
}  // namespace ofl::kernels
