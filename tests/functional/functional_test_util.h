// Helpers for the end-to-end tests: host-side reference tensors and naive reference versions of the
// array ops, written with logical indices only (no strides), random values per element type, value
// comparison with a readable first mismatch, error-message checks and a scope guard for the
// memory limit.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"
#include "oneflow_lite/settings.h"
#include "oneflow_lite/tensor_impl.h"

namespace ofl::testing {

using Dims = std::vector<int64_t>;

// Every element type the runtime supports, for typed tests.
using AllElementTypes = ::testing::Types<bool, uint8_t, int8_t, int16_t, int32_t, int64_t, float16,
                                         bfloat16, float, double>;

inline int64_t Numel(const Dims& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

inline Dims Unravel(int64_t linear, const Dims& shape) {
  Dims idx(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    idx[i] = linear % shape[i];
    linear /= shape[i];
  }
  return idx;
}

inline int64_t Ravel(const Dims& idx, const Dims& shape) {
  int64_t linear = 0;
  for (size_t i = 0; i < shape.size(); ++i) linear = linear * shape[i] + idx[i];
  return linear;
}

inline std::string Str(const Dims& v) { return ToString(v); }

// A row-major host tensor: the reference the runtime's results are compared with.
template <class T>
struct HostTensor {
  Dims shape;
  std::vector<T> data;
};

template <class T>
T RandomValue(std::mt19937_64& rng) {
  if constexpr (std::is_same_v<T, bool>) {
    return (rng() & 1) != 0;
  } else if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    return T(static_cast<float>(static_cast<int64_t>(rng() % 2001) - 1000) / 64.0f);
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(std::uniform_real_distribution<double>(-100, 100)(rng));
  } else if constexpr (std::is_unsigned_v<T>) {
    return static_cast<T>(rng());
  } else {
    return static_cast<T>(static_cast<int64_t>(rng() % 2001) - 1000);
  }
}

template <class T>
HostTensor<T> RandomHost(std::mt19937_64& rng, const Dims& shape) {
  HostTensor<T> h{shape, std::vector<T>(static_cast<size_t>(Numel(shape)))};
  for (size_t i = 0; i < h.data.size(); ++i) h.data[i] = RandomValue<T>(rng);
  return h;
}

// The device the suites run on: OFL_TEST_DEVICE ("cpu" when unset). CTest runs the functional
// suite once per device (cpu, sim:0, sim:1, and cuda:0 where one is present).
inline Device TestDevice() {
  static const Device device(settings::String("OFL_TEST_DEVICE"));
  return device;
}

template <class T>
Tensor ToDevice(const HostTensor<T>& h) {
  return ofl::tensor<T>(h.data, Shape(h.shape), TestDevice());
}

template <class T>
double AsDouble(T v) {
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    return static_cast<double>(static_cast<float>(v));
  } else {
    return static_cast<double>(v);
  }
}

// Same shape and the same values element for element (bit for bit for the 16-bit floats).
template <class T>
::testing::AssertionResult SameAs(const Tensor& t, const HostTensor<T>& want) {
  if (t.shape().vec() != want.shape) {
    return ::testing::AssertionFailure() << "shape " << t.shape() << ", want " << Str(want.shape);
  }
  const std::vector<T> got = t.to_vector<T>();
  if (got.size() != want.data.size()) {
    return ::testing::AssertionFailure()
           << got.size() << " elements read back, want " << want.data.size();
  }
  for (size_t i = 0; i < got.size(); ++i) {
    if (!(static_cast<T>(got[i]) == static_cast<T>(want.data[i]))) {
      return ::testing::AssertionFailure()
             << "element " << i << " " << Str(Unravel(static_cast<int64_t>(i), want.shape))
             << " is " << AsDouble<T>(got[i]) << ", want " << AsDouble<T>(want.data[i])
             << " (shape " << Str(want.shape) << ", strides " << Str(t.stride()) << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

// Whether two tensors view the same storage (internal: the public API has no storage handle).
inline bool SameStorage(const Tensor& a, const Tensor& b) {
  return a.impl()->storage() == b.impl()->storage();
}

// --- Reference ops on logical indices ---

template <class T>
HostTensor<T> Gather(const Dims& out_shape, const std::function<int64_t(const Dims&)>& source,
                     const HostTensor<T>& x) {
  HostTensor<T> out{out_shape, std::vector<T>(static_cast<size_t>(Numel(out_shape)))};
  for (int64_t i = 0; i < Numel(out_shape); ++i) {
    out.data[i] = x.data[static_cast<size_t>(source(Unravel(i, out_shape)))];
  }
  return out;
}

// sizes may hold -1 (keep the dim).
template <class T>
HostTensor<T> RefExpand(const HostTensor<T>& x, const Dims& sizes) {
  const size_t lead = sizes.size() - x.shape.size();
  Dims out = sizes;
  for (size_t j = 0; j < x.shape.size(); ++j) {
    if (out[lead + j] == -1) out[lead + j] = x.shape[j];
  }
  return Gather<T>(
      out,
      [&](const Dims& idx) {
        Dims src(x.shape.size());
        for (size_t j = 0; j < src.size(); ++j) src[j] = x.shape[j] == 1 ? 0 : idx[lead + j];
        return Ravel(src, x.shape);
      },
      x);
}

template <class T>
HostTensor<T> RefRepeat(const HostTensor<T>& x, const Dims& repeats) {
  const size_t lead = repeats.size() - x.shape.size();
  Dims out(repeats.size());
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = repeats[i] * (i < lead ? 1 : x.shape[i - lead]);
  }
  return Gather<T>(
      out,
      [&](const Dims& idx) {
        Dims src(x.shape.size());
        for (size_t j = 0; j < src.size(); ++j) src[j] = idx[lead + j] % x.shape[j];
        return Ravel(src, x.shape);
      },
      x);
}

template <class T>
HostTensor<T> RefPermute(const HostTensor<T>& x, const Dims& dims) {
  const int64_t n = static_cast<int64_t>(x.shape.size());
  Dims d(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) d[i] = dims[i] < 0 ? dims[i] + n : dims[i];
  Dims out(d.size());
  for (size_t i = 0; i < d.size(); ++i) out[i] = x.shape[d[i]];
  return Gather<T>(
      out,
      [&](const Dims& idx) {
        Dims src(d.size());
        for (size_t i = 0; i < d.size(); ++i) src[d[i]] = idx[i];
        return Ravel(src, x.shape);
      },
      x);
}

template <class T>
HostTensor<T> RefNarrow(const HostTensor<T>& x, int64_t dim, int64_t start, int64_t length) {
  const int64_t n = static_cast<int64_t>(x.shape.size());
  const size_t d = static_cast<size_t>(dim < 0 ? dim + n : dim);
  const int64_t s = start < 0 ? start + x.shape[d] : start;
  Dims out = x.shape;
  out[d] = length;
  return Gather<T>(
      out,
      [&](const Dims& idx) {
        Dims src = idx;
        src[d] += s;
        return Ravel(src, x.shape);
      },
      x);
}

// shape may hold one -1.
template <class T>
HostTensor<T> RefReshape(const HostTensor<T>& x, const Dims& shape) {
  Dims out = shape;
  int64_t known = 1;
  for (int64_t d : shape) known *= d == -1 ? 1 : d;
  for (int64_t& d : out) {
    if (d == -1) d = Numel(x.shape) / known;
  }
  return HostTensor<T>{out, x.data};
}

// --- Error checks ---

// Fails unless fn throws E with every piece in its message.
template <class E>
void ExpectThrowWith(const std::function<void()>& fn, const std::vector<std::string>& pieces) {
  try {
    fn();
    ADD_FAILURE() << "no exception; expected one naming " << ::testing::PrintToString(pieces);
  } catch (const E& e) {
    const std::string msg = e.what();
    for (const std::string& p : pieces) {
      EXPECT_NE(msg.find(p), std::string::npos) << "message lacks \"" << p << "\": " << msg;
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

// The runtime still computes correctly: a small op after an error.
inline void ExpectRuntimeWorks() {
  const Tensor x = ofl::tensor<int32_t>({1, 2, 3}, Shape({3}));
  const Tensor y = ofl::repeat(x, {2});
  EXPECT_EQ(y.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3, 1, 2, 3}));
  EXPECT_NO_THROW(ofl::sync());
}

// Whether the flag `name` (OFL_VM_SYNC, OFL_DISABLE_VIEW) is on, as the library reads it.
inline bool EnvSet(const char* name) { return settings::Flag(name); }

// Puts the test device pool's limit back to "none" when the test ends, however it ends.
class MemoryLimitGuard {
 public:
  explicit MemoryLimitGuard(Device device = TestDevice()) : device_(device) {}
  ~MemoryLimitGuard() { ofl::set_memory_limit(device_, 0); }
  MemoryLimitGuard(const MemoryLimitGuard&) = delete;
  MemoryLimitGuard& operator=(const MemoryLimitGuard&) = delete;

 private:
  Device device_;
};

// Names typed-test instances by dtype ("float32", "int64", ...).
struct DTypeNames {
  template <class T>
  static std::string GetName(int) {
    return to_string(DTypeOf<T>::value);
  }
};

}  // namespace ofl::testing
