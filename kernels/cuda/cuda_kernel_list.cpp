#include "kernels/cuda/cuda_kernel_list.h"

#include <mutex>
#include <utility>
#include <vector>

namespace ofl::kernels::cuda {
inline namespace OFL_CUDA_BUILD {

namespace {
// This build's kernels, and the device types they were registered for. Static initialisation
// fills the kernels in an order across files that nobody chooses, and a device type may be bound
// before it ends (the host grid's test device is): a kernel that comes later joins the types
// bound already.
struct List {
  std::mutex mu;
  std::vector<std::pair<const char*, KernelFn>> kernels;
  std::vector<DeviceType> types;
};
List& GetList() {
  static auto* list = new List();  // never destroyed: kernels may be looked up during exit
  return *list;
}

// "empty": nothing to compute; the output only needs its memory.
void EmptyKernel(const KernelContext& /*ctx*/) {}
OFL_REGISTER_CUDA_KERNEL("empty", EmptyKernel);
}  // namespace

KernelRegistrar::KernelRegistrar(const char* op, KernelFn fn) {
  List& list = GetList();
  std::lock_guard<std::mutex> lock(list.mu);
  list.kernels.emplace_back(op, fn);
  for (DeviceType type : list.types) RegisterBuiltinKernel(op, type, fn);
}

void RegisterCudaKernels(DeviceType type) {
  List& list = GetList();
  std::lock_guard<std::mutex> lock(list.mu);
  list.types.push_back(type);
  for (const auto& [op, fn] : list.kernels) RegisterBuiltinKernel(op, type, fn);
}

}  // namespace OFL_CUDA_BUILD
}  // namespace ofl::kernels::cuda
