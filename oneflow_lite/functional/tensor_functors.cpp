// Functors that create tensors, move bytes between the host and a tensor, and talk to the VM and
// the pools: empty, from_host, from_blob, tensor, copy_to_host, data_ptr, sync, memory_stats,
// empty_cache, set_memory_limit.
#include <cstring>
#include <functional>
#include <memory>
#include <string>

#include "kernels/device_backend.h"
#include "kernels/parallel.h"
#include "oneflow_lite/functional/functional.h"
#include "oneflow_lite/functional/functor_util.h"
#include "oneflow_lite/functional/global_util.h"
#include "oneflow_lite/functional/kernel_lookup.h"
#include "oneflow_lite/functional/op_call.h"
#include "oneflow_lite/small_object.h"
#include "ops/array_ops.h"
#include "vm/copy_policies.h"

namespace ofl {

using functional::ImplOf;
using functional::KernelCache;
using functional::NewTensor;

namespace {
KernelCache empty_kernel("empty");
KernelCache copy_kernel("copy");

// Below this size from_host copies the caller's bytes into a staging buffer and returns at once;
// above it, it waits for the device copy instead of copying twice.
constexpr size_t kStagingLimit = size_t{64} << 10;
}  // namespace

Tensor empty(const Shape& shape, DType dtype, const Device& device) {
  ops::CheckDType("empty", dtype);
  ops::CheckShape("empty", "shape", shape, element_size(dtype));
  Tensor out = NewTensor(shape, dtype, device);
  // Nothing to compute: on the CPU a cached block is taken here, with no instruction at all.
  if (vm::VirtualMachine::Get().AllocateAtIssue(out.impl()->blob().get(), "empty")) return out;
  kernels::KernelFn fn = empty_kernel.Get(device.type());
  vm::PhysicalRun(
      [&](vm::InstructionsBuilder* b) { b->OpCall("empty", fn, {}, {out.impl()->arg()}); });
  return out;
}

Tensor from_host(const void* data, const Shape& shape, DType dtype, const Device& device) {
  ops::CheckDType("from_host", dtype);
  const int64_t numel = ops::CheckShape("from_host", "shape", shape, element_size(dtype));
  const size_t bytes = static_cast<size_t>(numel) * element_size(dtype);
  if (data == nullptr && bytes > 0) {
    throw InvalidArgument("from_host: data is null but shape " + shape.str() + " of " +
                          to_string(dtype) + " needs " + std::to_string(bytes) + " bytes");
  }
  Tensor out = NewTensor(shape, dtype, device);
  DeviceBackend* backend = kernels::GetBackend(device.type());
  if (!backend->host_accessible()) {
    // Staged through the backend's host memory and copied on the h2d stream: the caller's buffer
    // is free again when this returns, and the host never touches device memory.
    auto staging = std::make_shared<vm::HostBuffer>(
        vm::VirtualMachine::Get().devices().GetStagingPool(device.type()), bytes);
    if (bytes > 0) std::memcpy(staging->data(), data, bytes);
    vm::Stream* h2d =
        vm::VirtualMachine::Get().devices().GetStream(device, vm::StreamRole::kHost2Device);
    vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
      b->Policy(h2d, vm::DeviceCopyPolicy::HostToDevice("from_host", out.impl()->arg(),
                                                        std::move(staging), bytes));
    });
    return out;
  }
  const bool staged = bytes <= kStagingLimit;
  std::shared_ptr<char[]> staging;
  if (staged && bytes > 0) {
    staging.reset(new char[bytes]);
    std::memcpy(staging.get(), data, bytes);
  }
  const char* src = staged ? staging.get() : static_cast<const char*>(data);
  vm::InstrRef access;
  vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
    access = b->AccessBlobByCallback(
        "from_host", out.impl()->arg(),
        [staging, src, bytes](const kernels::TensorArg& dst) {
          if (bytes > 0) std::memcpy(dst.data, src, bytes);
        },
        vm::AccessModifier::kMut, /*stream=*/nullptr, /*caller_memory=*/!staged,
        /*bounded_copy=*/true);
  });
  if (!staged) {
    auto& vm = vm::VirtualMachine::Get();
    vm.Wait(access.get(), "from_host");
    vm.ThrowIfFailed(access.get());
  }
  return out;
}

namespace {
// Memory the host can address (cpu), or CUDA device memory: what from_blob may wrap and data_ptr
// may return.
bool Addressable(const Device& device) {
  return device.type() == DeviceType::kCUDA ||
         kernels::GetBackend(device.type())->host_accessible();
}

std::string ViewStr(const Shape& shape, const std::vector<int64_t>& strides, int64_t storage_offset,
                    DType dtype) {
  return "shape " + shape.str() + ", strides " + ToString(strides) + ", storage_offset " +
         std::to_string(storage_offset) + ", dtype " + to_string(dtype);
}
}  // namespace

Tensor from_blob(void* data, const Shape& shape, const std::vector<int64_t>& strides,
                 int64_t storage_offset, DType dtype, const Device& device,
                 std::function<void()> on_release) {
  ops::CheckDType("from_blob", dtype);
  const int64_t numel = ops::CheckShape("from_blob", "shape", shape, element_size(dtype));
  if (static_cast<int64_t>(strides.size()) != shape.ndim()) {
    throw InvalidArgument("from_blob: strides " + ToString(strides) + " has " +
                          std::to_string(strides.size()) + " values but shape " + shape.str() +
                          " has " + std::to_string(shape.ndim()) + " dims");
  }
  for (size_t i = 0; i < strides.size(); ++i) {
    if (strides[i] < 0) {
      throw InvalidArgument("from_blob: strides " + ToString(strides) + " has negative stride " +
                            std::to_string(strides[i]) + " at dim " + std::to_string(i) +
                            " (shape " + shape.str() + ")");
    }
  }
  if (storage_offset < 0) {
    throw InvalidArgument("from_blob: storage_offset must be >= 0, got " +
                          std::to_string(storage_offset));
  }
  // The storage ends after the furthest element the view reaches; a view of no element reaches
  // none.
  int64_t bytes = 0;
  if (numel > 0) {
    int64_t last = storage_offset;
    bool overflow = false;
    for (int i = 0; i < shape.ndim(); ++i) {
      int64_t step = 0;
      overflow |= __builtin_mul_overflow(shape[i] - 1, strides[i], &step);
      overflow |= __builtin_add_overflow(last, step, &last);
    }
    overflow |= __builtin_add_overflow(last, int64_t{1}, &last);
    overflow |= __builtin_mul_overflow(last, static_cast<int64_t>(element_size(dtype)), &bytes);
    if (overflow) {
      throw InvalidArgument("from_blob: the view (" +
                            ViewStr(shape, strides, storage_offset, dtype) +
                            ") reaches more bytes than int64 can count");
    }
  }
  if (data == nullptr && bytes > 0) {
    throw InvalidArgument("from_blob: data is null but the view (" +
                          ViewStr(shape, strides, storage_offset, dtype) + ") reaches " +
                          std::to_string(bytes) + " bytes");
  }
  if (!Addressable(device)) {
    throw InvalidArgument("from_blob: device " + device.str() +
                          " is not supported: the host cannot address its memory and it is not "
                          "CUDA, so no caller's memory can be its storage (use from_host to copy)");
  }
  vm::Stream* stream =
      vm::VirtualMachine::Get().devices().GetStream(device);  // DeviceError if unusable
  auto blob = MakeShared<Storage>(device, static_cast<size_t>(bytes), stream, dtype);
  Tensor out(MakeShared<TensorImpl>(shape, Strides(strides), storage_offset, StorageRef(blob)));
  // Last, so that nothing can throw after the blob owns on_release: a tensor dying before this
  // line leaves on_release uncalled.
  blob->SetExternal(data, std::move(on_release));
  return out;
}

namespace detail {
Tensor TensorFromVector(const void* data, size_t count, DType dtype, const Shape& shape,
                        const Device& device) {
  ops::CheckDType("tensor", dtype);
  const int64_t numel = ops::CheckShape("tensor", "shape", shape, element_size(dtype));
  if (static_cast<int64_t>(count) != numel) {
    throw InvalidArgument("tensor: data has " + std::to_string(count) + " elements but shape " +
                          shape.str() + " needs " + std::to_string(numel));
  }
  return from_host(data, shape, dtype, device);
}

Tensor TensorFromBools(const std::vector<bool>& data, const Shape& shape, const Device& device) {
  std::unique_ptr<uint8_t[]> bytes(new uint8_t[data.size() + 1]);
  for (size_t i = 0; i < data.size(); ++i) bytes[i] = data[i] ? 1 : 0;
  return TensorFromVector(bytes.get(), data.size(), DType::kBool, shape, device);
}
}  // namespace detail

namespace {
// The smallest piece of a contiguous read one thread copies.
constexpr size_t kReadGrainBytes = size_t{1} << 20;
constexpr size_t kPageBytes = 4096;

// Maps in the pages of [p, p + n) for writing, one byte per page (the range is about to be
// overwritten). (MADV_POPULATE_WRITE measured slower here: it maps small pages.)
void PrefaultForWrite(char* p, size_t n) {
  for (size_t off = 0; off < n; off += kPageBytes) p[off] = 0;
}

// Copies a host-accessible view into the memory dst_of(nbytes) returns, in row-major order.
struct HostRead {
  std::function<void*(size_t)>* dst_of;
  size_t nbytes;
  bool contiguous;
  kernels::KernelFn copy;

  void operator()(const kernels::TensorArg& src) const {
    void* dst = (*dst_of)(nbytes);
    if (nbytes == 0) return;
    if (contiguous) {
      // A large read is split over oneTBB's threads, with plain stores: the destination is often
      // memory just faulted in (numpy's new array), which is in cache already, where streaming
      // stores would lose (python_bench: numpy() of 64 MiB).
      const auto* from = static_cast<const char*>(src.data);
      auto* to = static_cast<char*>(dst);
      // Fresh memory is faulted in here, by one thread, first: page faults taken by several
      // threads at once in one region cost twice as much (the whole copy is overwritten anyway).
      if (nbytes < kReadGrainBytes) {
        // One grain: a loop's set-up in oneTBB costs more than a small copy (item(), tolist()).
        std::memcpy(to, from, nbytes);
        return;
      }
      PrefaultForWrite(to, nbytes);
      kernels::ParallelFor(tbb::blocked_range<size_t>(0, nbytes, kReadGrainBytes),
                           [&](const tbb::blocked_range<size_t>& r) {
                             std::memcpy(to + r.begin(), from + r.begin(), r.size());
                           });
      return;
    }
    kernels::KernelContext ctx;
    kernels::TensorArg out = src;
    out.data = dst;
    out.stride = RowMajorStrides(src.shape);
    ctx.inputs.push_back(src);
    ctx.outputs.push_back(out);
    copy(ctx);
  }
  static void Run(const kernels::TensorArg& src, void* self) {
    (*static_cast<const HostRead*>(self))(src);
  }
};

// The largest read from a device the host cannot touch that may be queued on the compute stream
// behind its writer (ReadView).
constexpr size_t kReadOnComputeStreamBytes = size_t{64} << 10;

// Reads t's view into the host memory that dst_of(nbytes) returns, then re-throws the producer's
// error. On a host-accessible device the copy runs on the view's producer stream; otherwise it
// goes D2H into staging (on the d2h stream, or the compute stream for a small read of its
// unfinished output) and is copied out here once complete, so no VM worker ever touches the
// caller's memory. `caller_memory`: dst_of returns memory the caller owns (see
// vm::InstructionPolicy::TouchesCallerMemory).
void ReadView(const Tensor& t, const char* op, std::function<void*(size_t)> dst_of,
              bool caller_memory) {
  const TensorImpl& impl = ImplOf(op, t);
  const size_t nbytes = static_cast<size_t>(impl.shape().numel()) * element_size(impl.dtype());
  const bool contiguous = ops::IsContiguous(impl.shape(), impl.stride());
  auto& vm = vm::VirtualMachine::Get();
  DeviceBackend* backend = kernels::GetBackend(impl.device().type());
  if (!backend->host_accessible()) {
    const Tensor src = contiguous ? t : ofl::contiguous(t);
    // Allocated by the copy itself: a read of a tensor whose producer failed throws that error.
    auto staging =
        std::make_shared<vm::HostBuffer>(vm.devices().GetStagingPool(impl.device().type()), nbytes,
                                         /*allocate_now=*/false);
    // A small read of what the compute stream is still computing is copied on that stream,
    // behind its writer, as PyTorch's item() is: the copy follows the kernel with no cross-stream
    // wait (on the sim, one wake-up of the copy stream's thread less), and delays later compute
    // work by a short copy only. Anything else goes on the d2h stream, beside the compute work.
    vm::Stream* writer = nbytes <= kReadOnComputeStreamBytes
                             ? vm.UnfinishedWriterStream(src.impl()->arg().blob.get())
                             : nullptr;
    vm::Stream* stream = writer != nullptr && writer->role() == vm::StreamRole::kCompute &&
                                 writer->device() == impl.device()
                             ? writer
                             : vm.devices().GetStream(impl.device(), vm::StreamRole::kDevice2Host);
    vm::InstrRef copy;
    vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
      copy = b->Policy(stream,
                       vm::DeviceCopyPolicy::DeviceToHost(op, src.impl()->arg(), staging, nbytes));
    });
    vm.Wait(copy.get(), op);
    vm.ThrowIfFailed(copy.get());
    void* dst = dst_of(nbytes);
    if (nbytes > 0) std::memcpy(dst, staging->data(), nbytes);
    return;
  }
  HostRead read{&dst_of, nbytes, contiguous, copy_kernel.Get(DeviceType::kCPU)};
  const vm::BlobArg arg = impl.arg();
  if (vm.TryReadDirect(arg, &HostRead::Run, &read)) return;
  vm::InstrRef access;
  vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
    access = b->AccessBlobByCallback(
        op, arg,
        [dst_of = std::move(dst_of), read](const kernels::TensorArg& src) mutable {
          read.dst_of = &dst_of;
          read(src);
        },
        vm::AccessModifier::kConst, /*stream=*/nullptr, caller_memory, /*bounded_copy=*/true);
  });
  vm.Wait(access.get(), op);
  vm.ThrowIfFailed(access.get());
}
}  // namespace

void detail::ReadToHost(const Tensor& t, const char* op,
                        std::function<void*(size_t nbytes)> allocate) {
  if (t.defined() && t.is_global()) {
    // The logical values, on every rank of the placement.
    ReadView(functional::GlobalToBroadcastShard(t, op), op, std::move(allocate),
             /*caller_memory=*/false);
    return;
  }
  ReadView(t, op, std::move(allocate), /*caller_memory=*/false);
}

void Tensor::copy_to_host(void* dst, size_t nbytes) const {
  if (defined() && is_global()) {
    return functional::GlobalToBroadcastShard(*this, "copy_to_host").copy_to_host(dst, nbytes);
  }
  const TensorImpl& impl = ImplOf("copy_to_host", *this);
  const size_t expect = static_cast<size_t>(impl.shape().numel()) * element_size(impl.dtype());
  if (nbytes != expect) {
    throw InvalidArgument("copy_to_host: nbytes " + std::to_string(nbytes) +
                          " does not match the tensor's " + std::to_string(expect) +
                          " bytes (shape " + impl.shape().str() + ", dtype " +
                          to_string(impl.dtype()) + ")");
  }
  if (dst == nullptr && nbytes > 0) throw InvalidArgument("copy_to_host: dst is null");
  ReadView(
      *this, "copy_to_host", [dst](size_t) { return dst; }, /*caller_memory=*/true);
}

void* Tensor::data_ptr() const {
  const TensorImpl& impl = functional::LocalImplOf("data_ptr", *this);
  if (impl.global()) {
    throw InvalidArgument("data_ptr: the tensor is global; call to_local() first");
  }
  if (!Addressable(impl.device())) {
    throw InvalidArgument("data_ptr: device " + impl.device().str() +
                          " is not supported: the host cannot address its memory and it is not "
                          "CUDA (copy it with to(Device(\"cpu\")) first)");
  }
  auto& vm = vm::VirtualMachine::Get();
  vm::EagerBlobObject* blob = impl.blob().get();
  if (!vm.WritesFinished(blob)) {
    // A read of no element of the storage: ordered after every writer (the dependences are the
    // storage's, not the view's), it touches no byte, so it may run inline on the CPU.
    const Shape none({0});
    vm::InstrRef access;
    vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
      access = b->AccessBlobByCallback(
          "data_ptr", impl.arg(none, RowMajorStrides(none), 0), [](const kernels::TensorArg&) {},
          vm::AccessModifier::kConst, /*stream=*/nullptr, /*caller_memory=*/false,
          /*bounded_copy=*/true);
    });
    vm.Wait(access.get(), "data_ptr");
    vm.ThrowIfFailed(access.get());
  }
  char* base = blob->data();
  if (base == nullptr) return nullptr;
  return base + impl.offset() * static_cast<int64_t>(element_size(impl.dtype()));
}

Tensor Tensor::to(const Device& device) const {
  static const ops::OpSchema& op = ops::BuiltinOp("to");
  return functional::Call(op, *this, Attrs(op.attrs, device.str()));
}

void sync() { vm::VirtualMachine::Get().Sync(); }

void shutdown() { vm::VirtualMachine::Get().Shutdown(); }

MemoryStats memory_stats(const Device& device) {
  return vm::VirtualMachine::Get().devices().GetAllocator(device)->stats();
}

void empty_cache(const Device& device) {
  auto& vm = vm::VirtualMachine::Get();
  vm.devices().GetAllocator(device)->EmptyCache();
  if (!kernels::GetBackend(device.type())->host_accessible()) {
    vm.devices().GetStagingPool(device.type())->EmptyCache();
  }
}

void reset_peak_memory_stats(const Device& device) {
  vm::VirtualMachine::Get().devices().GetAllocator(device)->ResetPeakStats();
}

void set_memory_limit(const Device& device, int64_t bytes) {
  if (bytes < 0) {
    throw InvalidArgument("set_memory_limit: limit for " + device.str() +
                          " must be >= 0 bytes (0 = no limit), got " + std::to_string(bytes));
  }
  vm::VirtualMachine::Get().devices().GetAllocator(device)->SetLimit(bytes);
}

}  // namespace ofl
