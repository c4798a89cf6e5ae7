#include "kernels/device_backend.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/kernel.h"
#include "kernels/sim/sim_backend.h"
#ifdef OFL_WITH_CUDA
#include "kernels/cuda/cuda_backend.h"
#endif

namespace ofl {

void* DeviceBackend::allocate_host(size_t bytes) {
  const size_t rounded = (bytes + 63) / 64 * 64;
  return std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
}

void DeviceBackend::deallocate_host(void* ptr, size_t /*bytes*/) { std::free(ptr); }

namespace kernels {
namespace {
struct BackendTable {
  std::mutex mu;
  std::array<std::atomic<DeviceBackend*>, kMaxDeviceTypes> by_type{};
  std::vector<std::shared_ptr<DeviceBackend>> keep;  // every backend ever registered
};

BackendTable& Table() {
  static BackendTable* table = [] {
    auto* t = new BackendTable();  // never destroyed: workers use backends while the process exits
    auto cpu = std::make_shared<cpu::CpuBackend>();
    t->by_type[static_cast<int>(DeviceType::kCPU)].store(cpu.get());
    t->keep.push_back(std::move(cpu));
    return t;
  }();
  return *table;
}

void Install(DeviceType type, std::shared_ptr<DeviceBackend> backend) {
  BackendTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  t.by_type[static_cast<int>(type)].store(backend.get(), std::memory_order_release);
  t.keep.push_back(std::move(backend));
}
}  // namespace

DeviceBackend* TryGetBackend(DeviceType type) {
  const int v = static_cast<int>(type);
  if (v < 0 || v >= kMaxDeviceTypes) return nullptr;
  BackendTable& t = Table();
  DeviceBackend* b = t.by_type[v].load(std::memory_order_acquire);
  if (b == nullptr && type == DeviceType::kSim) {
    static std::once_flag sim_once;
    std::call_once(sim_once, [] {
      sim::RegisterSimKernels();
      Install(DeviceType::kSim, sim::SimBackend::SharedInstance());
    });
    b = t.by_type[v].load(std::memory_order_acquire);
  }
#ifdef OFL_WITH_CUDA
  // Made on first use too: a program that never names "cuda" never calls the CUDA runtime.
  if (b == nullptr && type == DeviceType::kCUDA) {
    static std::once_flag cuda_once;
    std::call_once(cuda_once, [] {
      cuda::RegisterCudaKernels();
      Install(DeviceType::kCUDA, std::make_shared<cuda::CudaBackend>());
    });
    b = t.by_type[v].load(std::memory_order_acquire);
  }
#endif
  return b;
}

DeviceBackend* GetBackend(DeviceType type) {
  DeviceBackend* b = TryGetBackend(type);
  if (b == nullptr) {
    if (type == DeviceType::kCUDA) {
      throw DeviceError(
          "cuda: this oneflow_lite was built without CUDA (OFL_WITH_CUDA=OFF, or no nvcc when it "
          "was built); use Device(\"cpu\") or Device(\"sim:0\")");
    }
    throw DeviceError(to_string(type) +
                      ": no device backend is registered for this device type (register one "
                      "with ofl::register_device_backend)");
  }
  return b;
}

}  // namespace kernels

int device_count(DeviceType type) {
  DeviceBackend* b = kernels::TryGetBackend(type);
  if (b == nullptr) return 0;
  try {
    return std::max(0, b->device_count());
  } catch (const std::exception&) {
    return 0;
  }
}

std::string device_unavailable_reason(DeviceType type) {
  DeviceBackend* b = kernels::TryGetBackend(type);
  if (b == nullptr) {
    try {
      kernels::GetBackend(type);
    } catch (const DeviceError& e) {
      return e.what();
    }
    return to_string(type) + ": no device backend is registered for this device type";
  }
  try {
    if (b->device_count() > 0) return {};
    const std::string reason = b->unavailable_reason();
    return reason.empty() ? to_string(type) + ": no device of this type is present" : reason;
  } catch (const std::exception& e) {
    return to_string(type) + ": device_count() failed: " + e.what();
  }
}

void register_device_backend(const std::string& type, std::shared_ptr<DeviceBackend> backend) {
  if (!backend) {
    throw InvalidArgument("register_device_backend: the backend for device type '" + type +
                          "' is null");
  }
  if (type == "cpu") {
    throw InvalidArgument(
        "register_device_backend: the cpu backend is built in and cannot be "
        "replaced");
  }
  const DeviceType t = detail::RegisterDeviceTypeName(type);
  kernels::Install(t, std::move(backend));
}

void register_kernel(const std::string& op, const std::string& device_type, KernelFn fn) {
  if (fn == nullptr) {
    throw InvalidArgument("register_kernel: the kernel for op '" + op + "' on device type '" +
                          device_type + "' is null");
  }
  if (op.empty()) throw InvalidArgument("register_kernel: the op name is empty");
  DeviceType t;
  if (!find_device_type(device_type, &t)) t = detail::RegisterDeviceTypeName(device_type);
  kernels::RegisterKernel(op, t, fn);
}

}  // namespace ofl
