// Helpers for the kernel tests: random shapes, random strided views over raw byte buffers, the
// naive index arithmetic the reference implementations use, and RunKernel, which runs a kernel on
// the device the suite is run for (OFL_TEST_DEVICE) over host buffers. Deliberately independent of
// kernels/index_util.h, so a bug there cannot hide in both the kernel and its reference.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/device_backend.h"
#include "kernels/kernel.h"
#include "oneflow_lite/device.h"
#include "oneflow_lite/dtype.h"
#include "oneflow_lite/error.h"
#include "oneflow_lite/extension.h"
#include "oneflow_lite/settings.h"
#include "oneflow_lite/shape.h"

namespace ofl::kernels::testing {

inline const std::vector<DType>& AllDTypes() {
  static const std::vector<DType> all = {
      DType::kBool,  DType::kUInt8,   DType::kInt8,     DType::kInt16,   DType::kInt32,
      DType::kInt64, DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64};
  return all;
}

// Output sizes beyond this are certainly past every kernel's parallel threshold (256 KiB).
inline constexpr int64_t kLargeBytes = 300 << 10;

inline int64_t Numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

inline Shape ToShape(const std::vector<int64_t>& v) { return Shape(v); }

// The attributes the built-in kernels read, as their ops declare them (ops/repeat_op.cpp,
// ops/inplace_ops.cpp).
inline const AttrSchema& KernelAttrSchema(const char* op, AttrDef def) {
  static std::map<std::string, AttrSchema>* schemas = new std::map<std::string, AttrSchema>();
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  auto it = schemas->find(op);
  if (it == schemas->end()) {
    AttrSchema s{def};
    s.set_op(op);
    it = schemas->emplace(op, std::move(s)).first;
  }
  return it->second;
}
inline Attrs RepeatAttrs(const std::vector<int64_t>& repeats) {
  return Attrs(KernelAttrSchema("repeat", {"repeats", AttrType::kInts}), repeats);
}
inline Attrs FillAttrs(const Scalar& value) {
  return Attrs(KernelAttrSchema("fill_", {"value", AttrType::kScalar}), value);
}

// A strided layout inside a storage of `storage` elements; element [0,..,0] sits at `offset`.
struct View {
  std::vector<int64_t> shape;
  std::vector<int64_t> stride;
  int64_t offset = 0;
  int64_t storage = 1;
};

inline int64_t StorageFor(const View& v) {
  int64_t last = v.offset;
  for (size_t i = 0; i < v.shape.size(); ++i) {
    if (v.shape[i] == 0) return v.offset + 1;
    last += (v.shape[i] - 1) * v.stride[i];
  }
  return last + 1;
}

inline View ContiguousView(const std::vector<int64_t>& shape) {
  View v;
  v.shape = shape;
  v.stride.assign(shape.size(), 0);
  int64_t acc = 1;
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    v.stride[i] = acc;
    acc *= std::max<int64_t>(shape[i], 1);
  }
  v.storage = StorageFor(v);
  return v;
}

// `shape` seen through `stride` (broadcast dims have stride 0), with storage just big enough.
inline View StridedView(const std::vector<int64_t>& shape, const std::vector<int64_t>& stride) {
  View v{shape, stride, 0, 1};
  v.storage = StorageFor(v);
  return v;
}

// A random layout: the dims laid out in memory in a random order, each padded by a random gap (a
// narrowed view), some broadcast with stride 0 when `broadcast`, size-1 dims with an arbitrary
// stride, and a random leading offset. Never overlapping unless broadcast.
inline View RandomView(std::mt19937_64& rng, const std::vector<int64_t>& shape, bool broadcast) {
  const int n = static_cast<int>(shape.size());
  View v;
  v.shape = shape;
  v.stride.assign(n, 0);
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  if (rng() % 3 != 0) std::shuffle(order.begin(), order.end(), rng);
  int64_t acc = 1 + static_cast<int64_t>(rng() % 4 == 0);  // sometimes every other element
  for (int j = n - 1; j >= 0; --j) {
    const int d = order[j];
    if (shape[d] == 1) {
      v.stride[d] = static_cast<int64_t>(rng() % 7);  // never read: any value is legal
      continue;
    }
    if (broadcast && shape[d] > 1 && rng() % 4 == 0) {
      v.stride[d] = 0;
      continue;
    }
    v.stride[d] = acc;
    const int64_t gap = rng() % 3 == 0 ? static_cast<int64_t>(rng() % 3) : 0;
    acc *= std::max<int64_t>(shape[d], 1) + gap;
  }
  v.offset = static_cast<int64_t>(rng() % 4);
  v.storage = StorageFor(v);
  return v;
}

// Mostly small dims, many of size 1, sometimes a 0.
inline std::vector<int64_t> RandomShape(std::mt19937_64& rng, int ndim) {
  std::vector<int64_t> s(ndim);
  for (int i = 0; i < ndim; ++i) s[i] = rng() % 3 == 0 ? 1 : 1 + static_cast<int64_t>(rng() % 5);
  if (ndim > 0 && rng() % 12 == 0) s[rng() % ndim] = 0;
  return s;
}

// A random shape of at least min_numel elements.
inline std::vector<int64_t> LargeShape(std::mt19937_64& rng, int ndim, int64_t min_numel) {
  std::vector<int64_t> s(ndim);
  for (int i = 0; i < ndim; ++i) s[i] = 1 + static_cast<int64_t>(rng() % 6);
  while (Numel(s) < min_numel) s[rng() % ndim] += 1 + static_cast<int64_t>(rng() % 8);
  return s;
}

// Raw storage, 8-byte aligned, filled with random bytes.
struct Buffer {
  std::vector<uint64_t> words;
  size_t bytes = 0;
  char* data() { return reinterpret_cast<char*>(words.data()); }
  const char* data() const { return reinterpret_cast<const char*>(words.data()); }
};

inline Buffer RandomBuffer(std::mt19937_64& rng, int64_t elems, size_t es) {
  Buffer b;
  b.bytes = static_cast<size_t>(elems) * es;
  b.words.resize((b.bytes + 7) / 8 + 1);
  for (uint64_t& w : b.words) w = rng();
  return b;
}

inline TensorArg Arg(Buffer& b, const View& v, DType dtype) {
  TensorArg a;
  a.data = b.data() + v.offset * static_cast<int64_t>(element_size(dtype));
  a.shape = Shape(v.shape);
  a.stride = Shape(v.stride);
  a.dtype = dtype;
  return a;
}

// Row-major multi-index of `linear` in `shape`.
inline std::vector<int64_t> Unravel(const std::vector<int64_t>& shape, int64_t linear) {
  std::vector<int64_t> idx(shape.size());
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    idx[i] = linear % shape[i];
    linear /= shape[i];
  }
  return idx;
}

// Walks every multi-index of a shape in row-major order (the references' loop: no divisions, so
// large cases stay quick under sanitizers).
class IndexWalker {
 public:
  explicit IndexWalker(const std::vector<int64_t>& shape)
      : shape_(shape), index_(shape.size(), 0) {}
  const std::vector<int64_t>& index() const { return index_; }
  void Next() {
    for (int i = static_cast<int>(shape_.size()) - 1; i >= 0; --i) {
      if (++index_[i] < shape_[i]) return;
      index_[i] = 0;
    }
  }

 private:
  std::vector<int64_t> shape_;
  std::vector<int64_t> index_;
};

inline int64_t OffsetOf(const View& v, const std::vector<int64_t>& idx) {
  int64_t off = v.offset;
  for (size_t i = 0; i < idx.size(); ++i) off += idx[i] * v.stride[i];
  return off;
}

inline std::string Describe(const View& v) {
  return "shape " + ToString(v.shape) + " stride " + ToString(v.stride) + " offset " +
         std::to_string(v.offset);
}

// Element values as doubles, for the float references.
inline double LoadAsDouble(const char* p, DType dtype) {
  switch (dtype) {
    case DType::kFloat16: {
      float16 h;
      std::memcpy(&h, p, 2);
      return static_cast<float>(h);
    }
    case DType::kBFloat16: {
      bfloat16 h;
      std::memcpy(&h, p, 2);
      return static_cast<float>(h);
    }
    case DType::kFloat32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case DType::kFloat64: {
      double d;
      std::memcpy(&d, p, 8);
      return d;
    }
    default:
      ADD_FAILURE() << "not a float dtype";
      return 0;
  }
}

// An element of any dtype as the exact number it holds (long double holds every int64 and
// double).
inline long double ExactValue(const char* p, DType d) {
  switch (d) {
    case DType::kBool:
      return *reinterpret_cast<const uint8_t*>(p) != 0;
    case DType::kUInt8:
      return *reinterpret_cast<const uint8_t*>(p);
    case DType::kInt8:
      return *reinterpret_cast<const int8_t*>(p);
    case DType::kInt16: {
      int16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case DType::kInt32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::kInt64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
    default:
      return LoadAsDouble(p, d);
  }
}

inline void StoreDouble(char* p, DType dtype, double v) {
  switch (dtype) {
    case DType::kFloat16: {
      float16 h(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      return;
    }
    case DType::kBFloat16: {
      bfloat16 h(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      return;
    }
    case DType::kFloat32: {
      float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
      return;
    }
    case DType::kFloat64:
      std::memcpy(p, &v, 8);
      return;
    default:
      ADD_FAILURE() << "not a float dtype";
  }
}

// A whole number stored exactly in any dtype: bool as v != 0, integers wrapped to their width,
// floats as the number (exact for the small values the tests use).
inline void StoreWhole(char* p, DType d, int64_t v) {
  switch (d) {
    case DType::kBool:
      *p = static_cast<char>(v != 0);
      return;
    case DType::kUInt8:
    case DType::kInt8:
      *p = static_cast<char>(v);
      return;
    case DType::kInt16: {
      const auto x = static_cast<int16_t>(v);
      std::memcpy(p, &x, 2);
      return;
    }
    case DType::kInt32: {
      const auto x = static_cast<int32_t>(v);
      std::memcpy(p, &x, 4);
      return;
    }
    case DType::kInt64:
      std::memcpy(p, &v, 8);
      return;
    default:
      StoreDouble(p, d, static_cast<double>(v));
  }
}

inline bool IsFloat(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 || d == DType::kFloat32 ||
         d == DType::kFloat64;
}

// ---- Running a kernel on the test device ----------------------------------------------------

// The device the value tests run their kernels on: OFL_TEST_DEVICE ("cpu" when unset; "sim:0" or
// "sim:1" for the simulated asynchronous accelerator). CTest runs the suite once per device, so
// the same references check every backend's kernels.
// "cudahost:N" is the CUDA kernels run on the host grid (tests/cuda_host/host_grid_device.cpp).
inline Device KernelTestDevice() {
  static const Device device(settings::String("OFL_TEST_DEVICE"));
  return device;
}

namespace detail {

// The elements a strided view reaches, relative to its data pointer: [first, first + count).
// Strides may be negative (first < 0); a view with no elements reaches nothing (count 0).
struct Extent {
  int64_t first = 0;
  int64_t count = 0;
};

inline Extent ExtentOf(const TensorArg& a) {
  // A malformed operand (a stride count that is not the rank, which the kernel must refuse before
  // reading anything): one element, so that the kernel sees a real device pointer.
  if (a.stride.ndim() != a.shape.ndim()) return {0, 1};
  if (a.shape.numel() == 0) return {};
  int64_t lo = 0;
  int64_t hi = 0;
  for (int i = 0; i < a.shape.ndim(); ++i) {
    const int64_t span = (a.shape[i] - 1) * a.stride[i];
    (span < 0 ? lo : hi) += span;
  }
  return {lo, hi - lo + 1};
}

inline bool SameView(const TensorArg& a, const TensorArg& b) {
  return a.data == b.data && a.dtype == b.dtype && a.shape == b.shape && a.stride == b.stride;
}

// One stream and one event per device for the whole process: a sim stream is a thread, too dear
// to start for each of the thousands of launches. Never destroyed, like the sim backend itself,
// whose streams may outlive the statics.
struct DeviceQueue {
  NativeStream stream = nullptr;
  NativeEvent event = nullptr;
};

inline DeviceQueue QueueFor(DeviceBackend* backend, const Device& device) {
  static std::mutex mu;
  static auto* queues = new std::map<std::pair<DeviceType, int>, DeviceQueue>();
  std::lock_guard<std::mutex> lock(mu);
  DeviceQueue& q = (*queues)[{device.type(), device.index()}];
  if (q.stream == nullptr) {
    q.stream = backend->create_stream(device.index());
    q.event = backend->create_event(device.index());
  }
  return q;
}

// The device memory of one launch. Every path out (a kernel that throws at launch, a failed copy,
// a DeviceError from the wait) first waits for the stream, then frees: a copy or kernel still
// queued must not touch memory that went back (the sim poisons it at once and may hand it to the
// next test's launch).
class DeviceLaunch {
 public:
  DeviceLaunch(DeviceBackend* backend, const Device& device)
      : backend_(backend), index_(device.index()), queue_(QueueFor(backend, device)) {}
  DeviceLaunch(const DeviceLaunch&) = delete;
  DeviceLaunch& operator=(const DeviceLaunch&) = delete;

  ~DeviceLaunch() {
    if (!waited_) {
      try {
        Wait();
      } catch (...) {
        // An error is propagating already (this wait only keeps the frees safe); the first one
        // is the one to report.
      }
    }
    for (const Allocation& a : allocations_) {
      try {
        backend_->deallocate(index_, a.ptr, a.bytes);
      } catch (const std::exception& e) {
        ADD_FAILURE() << "deallocate: " << e.what();
      }
    }
  }

  NativeStream stream() const { return queue_.stream; }
  int index() const { return index_; }

  // Device memory holding a copy of what `host` reaches (for outputs too, so that the elements a
  // kernel must not write compare equal after the copy back); returns `host` pointing into it.
  TensorArg Upload(const TensorArg& host) {
    TensorArg dev = host;
    const Extent e = ExtentOf(host);
    if (e.count == 0) {
      dev.data = nullptr;  // nothing to reach: the contract allows null, so test that too
      return dev;
    }
    const size_t es = element_size(host.dtype);
    const size_t bytes = static_cast<size_t>(e.count) * es;
    const int64_t shift = -e.first * static_cast<int64_t>(es);
    const char* host_start = static_cast<const char*>(host.data) - shift;
    // The device copy keeps the host data's place within 16 bytes: device allocations are aligned
    // to more, and the kernels' unaligned starts (a view at an offset) must be tested too.
    const size_t phase = reinterpret_cast<uintptr_t>(host_start) % 16;
    void* ptr = backend_->allocate(index_, bytes + phase);
    if (ptr == nullptr) {
      throw DeviceError("RunKernel: " + KernelTestDevice().str() + " has no room for " +
                        std::to_string(bytes + phase) + " bytes");
    }
    allocations_.push_back({ptr, bytes + phase});
    char* start = static_cast<char*>(ptr) + phase;
    backend_->copy_async(start, host_start, bytes, CopyKind::kHostToDevice, queue_.stream);
    dev.data = start + shift;
    return dev;
  }

  // Copies what `dev` reaches back over what `host` reaches (queued; Wait() completes it).
  void Download(const TensorArg& dev, const TensorArg& host) {
    const Extent e = ExtentOf(host);
    if (e.count == 0) return;
    const int64_t shift = -e.first * static_cast<int64_t>(element_size(host.dtype));
    backend_->copy_async(static_cast<char*>(host.data) - shift,
                         static_cast<const char*>(dev.data) - shift,
                         static_cast<size_t>(e.count) * element_size(host.dtype),
                         CopyKind::kDeviceToHost, queue_.stream);
  }

  // Waits for everything queued; throws DeviceError for a fault the device reports (a kernel
  // whose work failed on the stream).
  void Wait() {
    waited_ = true;  // even when it throws: the destructor's second wait would only repeat it
    backend_->record_event(queue_.event, queue_.stream);
    backend_->synchronize_event(queue_.event);
  }

 private:
  struct Allocation {
    void* ptr;
    size_t bytes;
  };

  DeviceBackend* backend_;
  int index_;
  DeviceQueue queue_;
  std::vector<Allocation> allocations_;
  bool waited_ = false;
};

}  // namespace detail

// Runs the kernel registered for `op` on KernelTestDevice() over `ctx`, whose pointers are host
// memory, and returns once the outputs are back in it. On the CPU that is the kernel itself. On
// another device the operands go through device memory and the device's stream (an input that is
// exactly an output's view shares the output's device memory, as an in-place op's does): an
// argument error the kernel throws at launch propagates unchanged; one the device only finds while
// the work runs surfaces as the DeviceError of its asynchronous report.
inline void RunKernel(const std::string& op, const KernelContext& ctx) {
  const Device device = KernelTestDevice();
  if (device.is_cpu()) {
    FindKernel(op, DeviceType::kCPU)(ctx);
    return;
  }
  // GetBackend first: it registers the kernels of a built-in device type (sim) on first use.
  DeviceBackend* backend = GetBackend(device.type());
  const KernelFn kernel = FindKernel(op, device.type());
  backend->set_device(device.index());  // as a stream's worker does: launches go to this device
  detail::DeviceLaunch launch(backend, device);
  KernelContext dev_ctx;
  dev_ctx.attributes = ctx.attributes;
  dev_ctx.stream = launch.stream();
  dev_ctx.device_index = launch.index();
  for (const TensorArg& a : ctx.outputs) dev_ctx.outputs.push_back(launch.Upload(a));
  // An input that is exactly an output's view (an in-place op) is that output's device memory.
  for (const TensorArg& a : ctx.inputs) {
    size_t same = 0;
    while (same < ctx.outputs.size() && !detail::SameView(a, ctx.outputs[same])) ++same;
    dev_ctx.inputs.push_back(same < ctx.outputs.size() ? dev_ctx.outputs[same] : launch.Upload(a));
  }
  kernel(dev_ctx);
  for (size_t i = 0; i < ctx.outputs.size(); ++i) {
    launch.Download(dev_ctx.outputs[i], ctx.outputs[i]);
  }
  launch.Wait();
}

}  // namespace ofl::kernels::testing
