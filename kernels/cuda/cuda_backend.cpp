#include "kernels/cuda/cuda_backend.h"

#include <cuda_runtime_api.h>

#include <cstdio>

#include "kernels/cuda/cuda_check.h"
#include "kernels/log_warning.h"

namespace ofl::kernels::cuda {
inline namespace OFL_CUDA_BUILD {
namespace {

cudaStream_t AsStream(NativeStream s) { return static_cast<cudaStream_t>(s); }
cudaEvent_t AsEvent(NativeEvent e) { return static_cast<cudaEvent_t>(e); }

std::string GiB(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f GiB", static_cast<double>(bytes) / (1 << 30));
  return buf;
}

// The GPU whose memory `ptr` points into; -1 for other memory (host, managed) or a pointer CUDA
// does not know, which the copy itself then reports.
int DeviceOf(const void* ptr) {
  cudaPointerAttributes attr{};
  const cudaError_t err = cudaPointerGetAttributes(&attr, ptr);
  if (err != cudaSuccess) {
    if (IsSticky(err)) ThrowCudaError(err, "cudaPointerGetAttributes", "a copy between GPUs");
    ClearLastErrorIf(err);
    return -1;
  }
  return attr.type == cudaMemoryTypeDevice ? attr.device : -1;
}

}  // namespace

void CudaBackend::Probe() {
  std::call_once(probed_, [this] {
    int n = 0;
    const cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) {
      ClearLastErrorIf(err);
      count_ = 0;
      reason_ = std::string("no CUDA device is available: ") + cudaGetErrorString(err) + " (" +
                cudaGetErrorName(err) + " from cudaGetDeviceCount)";
    } else if (n == 0) {
      reason_ = "no CUDA device is available: cudaGetDeviceCount found none";
    }
    if (err == cudaSuccess) count_ = n;
    const size_t pairs = static_cast<size_t>(count_) * static_cast<size_t>(count_);
    peer_ = std::make_unique<std::atomic<uint8_t>[]>(pairs);
    for (size_t i = 0; i < pairs; ++i) peer_[i].store(kPeerUnknown, std::memory_order_relaxed);
  });
}

int CudaBackend::device_count() {
  Probe();
  return count_;
}

std::string CudaBackend::unavailable_reason() {
  Probe();
  return reason_;
}

void CudaBackend::set_device(int index) {
  Check(cudaSetDevice(index), "cudaSetDevice", "cuda:" + std::to_string(index));
}

void* CudaBackend::allocate(int index, size_t bytes) {
  DeviceGuard guard(index);
  void* p = nullptr;
  const cudaError_t err = cudaMalloc(&p, bytes);
  if (err == cudaErrorMemoryAllocation) {
    ClearLastErrorIf(err);  // the pool empties its cache and retries, then reports
    return nullptr;
  }
  Check(err, "cudaMalloc",
        "cuda:" + std::to_string(index) + ", " + std::to_string(bytes) + " bytes");
  return p;
}

void CudaBackend::deallocate(int index, void* ptr, size_t /*bytes*/) {
  DeviceGuard guard(index);
  Check(cudaFree(ptr), "cudaFree", "cuda:" + std::to_string(index));
}

void* CudaBackend::allocate_host(size_t bytes) {
  void* p = nullptr;
  const cudaError_t err = cudaHostAlloc(&p, bytes == 0 ? 1 : bytes, cudaHostAllocPortable);
  if (err == cudaErrorMemoryAllocation) {
    ClearLastErrorIf(err);
    return nullptr;
  }
  Check(err, "cudaHostAlloc", std::to_string(bytes) + " bytes of pinned staging memory");
  return p;
}

void CudaBackend::deallocate_host(void* ptr, size_t /*bytes*/) {
  Check(cudaFreeHost(ptr), "cudaFreeHost");
}

NativeStream CudaBackend::create_stream(int index) {
  DeviceGuard guard(index);
  cudaStream_t s = nullptr;
  Check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags",
        "cuda:" + std::to_string(index));
  return s;
}

void CudaBackend::destroy_stream(int index, NativeStream stream) {
  DeviceGuard guard(index);
  Check(cudaStreamDestroy(AsStream(stream)), "cudaStreamDestroy", "cuda:" + std::to_string(index));
}

NativeEvent CudaBackend::create_event(int index) {
  DeviceGuard guard(index);
  cudaEvent_t e = nullptr;
  Check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags",
        "cuda:" + std::to_string(index));
  return e;
}

void CudaBackend::destroy_event(int index, NativeEvent event) {
  DeviceGuard guard(index);
  Check(cudaEventDestroy(AsEvent(event)), "cudaEventDestroy", "cuda:" + std::to_string(index));
}

void CudaBackend::record_event(NativeEvent event, NativeStream stream) {
  Check(cudaEventRecord(AsEvent(event), AsStream(stream)), "cudaEventRecord");
}

bool CudaBackend::query_event(NativeEvent event) {
  const cudaError_t err = cudaEventQuery(AsEvent(event));
  if (err == cudaSuccess) return true;
  if (err == cudaErrorNotReady) {
    // "Not actually an error" (driver_types.h). Should the runtime have recorded it as the
    // thread's last error, clear exactly that; another pending error stays for its own call.
    ClearLastErrorIf(cudaErrorNotReady);
    return false;
  }
  ThrowCudaError(err, "cudaEventQuery", "the completion of the work before this event");
}

void CudaBackend::synchronize_event(NativeEvent event) {
  Check(cudaEventSynchronize(AsEvent(event)), "cudaEventSynchronize");
}

void CudaBackend::stream_wait_event(NativeStream stream, NativeEvent event) {
  Check(cudaStreamWaitEvent(AsStream(stream), AsEvent(event), 0), "cudaStreamWaitEvent");
}

void CudaBackend::copy_async(void* dst, const void* src, size_t bytes, CopyKind kind,
                             NativeStream stream) {
  if (bytes == 0) return;
  const cudaMemcpyKind k = kind == CopyKind::kHostToDevice   ? cudaMemcpyHostToDevice
                           : kind == CopyKind::kDeviceToHost ? cudaMemcpyDeviceToHost
                                                             : cudaMemcpyDefault;
  if (kind == CopyKind::kDeviceToDevice) EnsurePeerAccess(dst, src);
  Check(cudaMemcpyAsync(dst, src, bytes, k, AsStream(stream)), "cudaMemcpyAsync",
        std::to_string(bytes) + " bytes");
}

void CudaBackend::EnsurePeerAccess(void* dst, const void* src) {
  Probe();
  const int a = DeviceOf(src);
  const int b = DeviceOf(dst);
  if (a < 0 || b < 0 || a == b || a >= count_ || b >= count_) return;
  const auto known = [this](int from, int to) {
    return peer_[static_cast<size_t>(from) * count_ + to].load(std::memory_order_acquire) !=
           kPeerUnknown;
  };
  if (known(a, b) && known(b, a)) return;
  std::lock_guard<std::mutex> lock(peer_mu_);
  // Both ways, so that the copy is direct whichever GPU's stream issues it.
  if (!known(a, b)) EnablePeer(a, b);
  if (!known(b, a)) EnablePeer(b, a);
}

void CudaBackend::EnablePeer(int from, int to) {
  std::atomic<uint8_t>& state = peer_[static_cast<size_t>(from) * count_ + to];
  const std::string pair = "from cuda:" + std::to_string(from) + " to cuda:" + std::to_string(to);
  int can = 0;
  const char* call = "cudaDeviceCanAccessPeer";
  cudaError_t err = cudaDeviceCanAccessPeer(&can, from, to);
  if (err == cudaSuccess && can == 0) {  // no direct path: the driver stages such copies
    state.store(kPeerUnavailable, std::memory_order_release);
    return;
  }
  if (err == cudaSuccess) {
    DeviceGuard guard(from);
    call = "cudaDeviceEnablePeerAccess";
    err = cudaDeviceEnablePeerAccess(to, 0);
    if (err == cudaErrorPeerAccessAlreadyEnabled) {  // by other code in this process: fine
      ClearLastErrorIf(err);
      err = cudaSuccess;
    }
  }
  if (err == cudaSuccess) {
    state.store(kPeerEnabled, std::memory_order_release);
    return;
  }
  if (IsSticky(err)) ThrowCudaError(err, call, "peer access " + pair);
  // Peer access is an optimisation (cudaErrorTooManyPeers, say): copies still work, staged.
  ClearLastErrorIf(err);
  state.store(kPeerUnavailable, std::memory_order_release);
  LogWarning(Describe(err, call, "peer access " + pair) +
             "; copies between these GPUs stage through host memory");
}

std::string CudaBackend::memory_info(int index) {
  size_t free_bytes = 0;
  size_t total = 0;
  try {
    DeviceGuard guard(index);
    const cudaError_t err = cudaMemGetInfo(&free_bytes, &total);
    if (err != cudaSuccess) {
      ClearLastErrorIf(err);
      return {};
    }
  } catch (const std::exception&) {
    return {};
  }
  return "device free " + GiB(free_bytes) + " of " + GiB(total) + " (cudaMemGetInfo)";
}

}  // namespace OFL_CUDA_BUILD
}  // namespace ofl::kernels::cuda
