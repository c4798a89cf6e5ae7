// libFuzzer target for the pure shape / stride inference in ops/array_ops.h: decodes the input into
// a tensor geometry (shape, strides) and op arguments (sizes, repeats, dims, narrow ranges,
// backward shapes), runs the op's inference and checks the result against a reference written here
// (with 128-bit arithmetic) and against element-address invariants. A result must either be valid
// or the call must throw ofl::InvalidArgument exactly when the reference says the arguments are
// bad; any other exception, a crash or a sanitizer report is a failure.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "oneflow_lite/error.h"
#include "oneflow_lite/shape.h"
#include "ops/array_ops.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

using ofl_fuzz::Dims;
using ofl_fuzz::i128;
using ofl_fuzz::Input;
using ofl_fuzz::kI64Max;
using ofl_fuzz::SatProduct;
using ofl_fuzz::ShapeOk;
using ofl_fuzz::Str;

constexpr int64_t kMaxDimsRef = ofl_fuzz::kMaxRankRef;
constexpr int64_t kWalkLimit = 2048;  // element walks only for views this small

// Runs f; returns true when it returned, false when it threw InvalidArgument; aborts on anything
// else.
template <class F>
bool Returns(const char* what, F&& f) {
  try {
    f();
    return true;
  } catch (const ofl::InvalidArgument&) {
    return false;
  } catch (const std::exception& e) {
    ofl_fuzz::Fail(std::string(what) + " threw a non-InvalidArgument exception: " + e.what());
  } catch (...) {
    ofl_fuzz::Fail(std::string(what) + " threw a non-std exception");
  }
}

void CheckAgrees(const char* op, bool lib_ok, bool ref_ok, const std::string& args) {
  if (lib_ok != ref_ok) {
    ofl_fuzz::Fail(std::string(op) + (lib_ok ? " accepted" : " rejected") + " arguments the " +
                   "reference " + (ref_ok ? "accepts" : "rejects") + ": " + args);
  }
}

// Storage offsets of every element of the view (row-major order); the caller bounds numel.
std::vector<int64_t> Offsets(const Dims& shape, const Dims& stride, int64_t base) {
  std::vector<int64_t> out;
  const int64_t n = static_cast<int64_t>(SatProduct(shape));
  out.reserve(static_cast<size_t>(n));
  Dims idx(shape.size(), 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t off = base;
    for (size_t i = 0; i < shape.size(); ++i) off += idx[i] * stride[i];
    out.push_back(off);
    for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
      if (++idx[i] < shape[i]) break;
      idx[i] = 0;
    }
  }
  return out;
}

// A tensor geometry as the library could hold it: a valid shape and non-negative strides whose
// largest addressed offset fits comfortably in int64.
struct Geometry {
  Dims shape;
  Dims stride;
  int64_t extent = 0;  // 1 + the largest offset addressed (0 for an empty tensor)
};

Dims RefContiguous(const Dims& shape) {
  Dims s(shape.size());
  i128 acc = 1;
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    s[i] = static_cast<int64_t>(acc > kI64Max ? kI64Max : acc);
    acc *= shape[i] > 0 ? shape[i] : 1;
    if (acc > kI64Max) acc = kI64Max + 1;
  }
  return s;
}

// With OFL_FUZZ_SKIP_KNOWN_BUGS=1 the fuzzer steers around the library bugs it has already found
// (each has an input in regressions/shape_fuzz/), so that a long run can look for new ones.
bool SkipKnownBugs() {
  static const bool skip = [] {
    const char* v = std::getenv("OFL_FUZZ_SKIP_KNOWN_BUGS");
    return v != nullptr && v[0] == '1';
  }();
  return skip;
}

// Known bug: ContiguousStrides (shape.cpp) multiplies max(d, 1) over all dims in int64, which
// overflows for an empty shape such as (2, INT64_MAX, 0); ReshapeStrides does the same for empty
// inputs. regressions/shape_fuzz/contiguous_strides_empty_overflow.
bool HitsEmptyStrideOverflow(const Dims& shape) {
  i128 acc = 1;
  for (int64_t d : shape) {
    acc *= d > 0 ? d : 1;
    if (acc > kI64Max) return true;
  }
  return false;
}

Geometry MakeGeometry(Input& in) {
  Geometry g;
  const int64_t rank = in.Rank();
  g.shape = in.Values(rank);
  // CheckShape on raw dims: the reference decides.
  const bool ok = Returns("CheckShape", [&] { ofl::ops::CheckShape("fuzz", "shape", g.shape, 4); });
  CheckAgrees("CheckShape", ok, ShapeOk(g.shape, 4), Str(g.shape));
  if (ok) {
    int64_t numel = -1;
    Returns("CheckShape", [&] { numel = ofl::ops::CheckShape("fuzz", "shape", g.shape, 4); });
    FUZZ_CHECK(numel == static_cast<int64_t>(SatProduct(g.shape)), Str(g.shape));
  } else {
    // Make it a valid tensor shape so that the op checks below get exercised.
    if (rank > kMaxDimsRef) g.shape.resize(static_cast<size_t>(in.Below(7)));
    for (auto& d : g.shape) d = in.Below(5);
  }
  // Known bug: InferExpand (array_ops.cpp) computes a new leading dim's stride as size * stride
  // of the next dim without an overflow check; an empty tensor whose other dims multiply past
  // int64 overflows there. regressions/shape_fuzz/expand_leading_dim_stride_overflow.
  if (SkipKnownBugs() && HitsEmptyStrideOverflow(g.shape)) {
    for (auto& d : g.shape) d = d > 4 ? 4 : d;  // at most 4^25 elements: fits
  }
  const bool empty = SatProduct(g.shape) == 0;
  g.stride = RefContiguous(g.shape);
  switch (in.Below(4)) {
    case 1:  // arbitrary small strides, 0 included (broadcast-like views)
      for (auto& s : g.stride) s = in.Below(7);
      break;
    case 2: {  // contiguous strides of a permuted layout
      Dims order(g.shape.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
      for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[in.Below(i)]);
      Dims permuted(g.shape.size());
      for (size_t i = 0; i < order.size(); ++i) permuted[i] = g.shape[order[i]];
      const Dims ps = RefContiguous(permuted);
      for (size_t i = 0; i < order.size(); ++i) g.stride[order[i]] = ps[i];
      break;
    }
    case 3:  // every other element (a narrowed / strided storage)
      for (auto& s : g.stride) {
        if (s <= (std::numeric_limits<int64_t>::max() >> 4)) s *= 2 + in.Below(2);
      }
      break;
    default:
      break;
  }
  // As in any tensor the library makes: no dim spans more than int64 elements of storage.
  for (size_t i = 0; i < g.shape.size(); ++i) {
    if (static_cast<i128>(g.shape[i]) * g.stride[i] > kI64Max) {
      g.stride = RefContiguous(g.shape);
      break;
    }
  }
  i128 max_off = 0;
  for (size_t i = 0; i < g.shape.size(); ++i) {
    if (g.shape[i] > 0) max_off += static_cast<i128>(g.shape[i] - 1) * g.stride[i];
    if (max_off > kI64Max) max_off = kI64Max;  // each term is < 2^126: no 128-bit overflow
  }
  if (empty) {
    g.extent = 0;
  } else if (max_off >= (kI64Max >> 1)) {
    g.stride = RefContiguous(g.shape);  // keep the storage addressable
    g.extent = static_cast<int64_t>(SatProduct(g.shape));
  } else {
    g.extent = static_cast<int64_t>(max_off) + 1;
  }
  return g;
}

bool Small(const Dims& shape) { return SatProduct(shape) <= kWalkLimit; }

void CheckInBounds(const char* op, const std::vector<int64_t>& offs, int64_t extent,
                   const std::string& args) {
  for (int64_t o : offs) {
    if (o < 0 || o >= extent) {
      ofl_fuzz::Fail(std::string(op) + ": offset " + std::to_string(o) +
                     " outside the input's storage [0, " + std::to_string(extent) + "): " + args);
    }
  }
}

std::string GeoStr(const Geometry& g) {
  return "shape " + Str(g.shape) + " stride " + Str(g.stride);
}

void FuzzExpand(Input& in, const Geometry& g) {
  const int64_t n = in.Rank();
  Dims sizes(static_cast<size_t>(n));
  const int64_t k = static_cast<int64_t>(g.shape.size());
  for (int64_t i = 0; i < n; ++i) {
    const int64_t j = i - (n - k);
    // Bias towards sizes that fit: keep, -1, or broadcast a 1.
    switch (in.Below(4)) {
      case 0:
        sizes[i] = j >= 0 ? g.shape[j] : 1;
        break;
      case 1:
        sizes[i] = -1;
        break;
      default:
        sizes[i] = in.Value();
    }
  }
  const size_t es = size_t{1} << in.Below(4);
  // Reference.
  bool ref_ok = n >= k && n <= kMaxDimsRef;
  Dims ref_shape(static_cast<size_t>(n));
  for (int64_t i = 0; ref_ok && i < n; ++i) {
    const int64_t j = i - (n - k);
    const int64_t s = j >= 0 ? g.shape[j] : 1;
    int64_t t = sizes[i];
    if (t < -1 || (t == -1 && j < 0)) ref_ok = false;
    if (t == -1) t = s;
    if (t != s && s != 1) ref_ok = false;
    ref_shape[i] = t;
  }
  if (ref_ok) ref_ok = ShapeOk(ref_shape, es);
  ofl::ops::ViewGeometry out;
  const bool ok = Returns("InferExpand", [&] {
    out = ofl::ops::InferExpand(ofl::Shape(g.shape), ofl::Strides(g.stride), sizes, es);
  });
  const std::string args = GeoStr(g) + " sizes " + Str(sizes);
  CheckAgrees("InferExpand", ok, ref_ok, args);
  if (!ok) return;
  FUZZ_CHECK(out.shape.vec() == ref_shape, args + " got " + out.shape.str());
  FUZZ_CHECK(out.stride.size() == n, args);
  FUZZ_CHECK(out.offset_delta == 0, args);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t j = i - (n - k);
    if (out.stride[i] == 0 && ref_shape[i] > 1) {
      // Every stride-0 dim is a broadcast: a new dim, a size-1 input dim or already stride 0.
      FUZZ_CHECK(j < 0 || g.shape[j] == 1 || g.stride[j] == 0, args);
    }
    if (j >= 0 && g.shape[j] == ref_shape[i]) FUZZ_CHECK(out.stride[i] == g.stride[j], args);
  }
  if (!Small(ref_shape)) return;
  // Each output element addresses the input element it was broadcast from.
  const std::vector<int64_t> offs = Offsets(ref_shape, out.stride.vec(), 0);
  CheckInBounds("InferExpand", offs, g.extent, args);
  Dims idx(static_cast<size_t>(n), 0);
  for (int64_t o : offs) {
    int64_t expect = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t j = i - (n - k);
      if (j >= 0 && g.shape[j] != 1) expect += idx[i] * g.stride[j];
    }
    FUZZ_CHECK(o == expect, args);
    for (int64_t i = n - 1; i >= 0; --i) {
      if (++idx[i] < ref_shape[i]) break;
      idx[i] = 0;
    }
  }
}

void FuzzRepeat(Input& in, const Geometry& g) {
  const int64_t n = in.Rank();
  Dims repeats = in.Values(n);
  const size_t es = size_t{1} << in.Below(4);
  const int64_t k = static_cast<int64_t>(g.shape.size());
  bool ref_ok = n >= k && n <= kMaxDimsRef;
  Dims ref_shape(static_cast<size_t>(n));
  for (int64_t i = 0; ref_ok && i < n; ++i) {
    const int64_t j = i - (n - k);
    if (repeats[i] < 0) {
      ref_ok = false;
      break;
    }
    const i128 v = static_cast<i128>(j >= 0 ? g.shape[j] : 1) * repeats[i];
    if (v > kI64Max) ref_ok = false;
    ref_shape[i] = static_cast<int64_t>(v);
  }
  if (ref_ok) ref_ok = ShapeOk(ref_shape, es);
  ofl::Shape out;
  const bool ok = Returns("InferRepeat",
                          [&] { out = ofl::ops::InferRepeat(ofl::Shape(g.shape), repeats, es); });
  const std::string args = GeoStr(g) + " repeats " + Str(repeats);
  CheckAgrees("InferRepeat", ok, ref_ok, args);
  if (ok) FUZZ_CHECK(out.vec() == ref_shape, args + " got " + out.str());

  // repeat_backward of that output (or of a perturbed one) back to the input shape.
  Dims dy = ok ? ref_shape : Dims(g.shape);
  if (in.Flip() && !dy.empty()) {
    int64_t& d = dy[in.Below(static_cast<int64_t>(dy.size()))];
    d = d > 1 ? d - 1 : d + 1;
  }
  Dims input_shape = g.shape;
  if (in.Below(4) == 0 && !input_shape.empty()) input_shape[0] = in.Value();
  bool dy_valid = ShapeOk(dy, 1);
  if (!dy_valid) return;  // dy must come from a tensor
  bool ref_bw = ShapeOk(input_shape, 1) &&
                static_cast<int64_t>(repeats.size()) >= static_cast<int64_t>(input_shape.size()) &&
                static_cast<int64_t>(repeats.size()) <= kMaxDimsRef;
  if (ref_bw) {
    const int64_t kk = static_cast<int64_t>(input_shape.size());
    Dims expect(repeats.size());
    for (int64_t i = 0; ref_bw && i < n; ++i) {
      const int64_t j = i - (n - kk);
      if (repeats[i] < 0) {
        ref_bw = false;
        break;
      }
      const i128 v = static_cast<i128>(j >= 0 ? input_shape[j] : 1) * repeats[i];
      if (v > kI64Max) ref_bw = false;
      expect[i] = static_cast<int64_t>(v);
    }
    ref_bw = ref_bw && ShapeOk(expect, 1) && expect == dy;
  }
  const bool bw_ok = Returns("CheckRepeatBackward", [&] {
    ofl::ops::CheckRepeatBackward(ofl::Shape(dy), ofl::Shape(input_shape), repeats);
  });
  CheckAgrees("CheckRepeatBackward", bw_ok, ref_bw,
              "dy " + Str(dy) + " input_shape " + Str(input_shape) + " repeats " + Str(repeats));
}

void FuzzReshape(Input& in, const Geometry& g) {
  const int64_t n = in.Rank();
  Dims shape = in.Values(n);
  // Often aim at a shape with the right element count: split or merge the input's dims.
  if (in.Flip()) {
    const int64_t numel = static_cast<int64_t>(SatProduct(g.shape));
    shape.clear();
    int64_t rest = numel;
    const int64_t parts = in.Below(5);
    for (int64_t p = 0; p < parts; ++p) {
      const int64_t f = 1 + in.Below(4);
      if (rest > 0 && rest % f == 0) {
        shape.push_back(f);
        rest /= f;
      } else if (f == 1) {
        shape.push_back(1);
      }
    }
    shape.push_back(in.Flip() ? -1 : rest);
    for (size_t i = shape.size(); i > 1; --i) std::swap(shape[i - 1], shape[in.Below(i)]);
  }
  // Reference.
  const i128 numel = SatProduct(g.shape);
  bool ref_ok = static_cast<int64_t>(shape.size()) <= kMaxDimsRef;
  int64_t infer = -1;
  i128 known = 1;
  bool known_overflow = false;
  for (size_t i = 0; ref_ok && i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) ref_ok = false;
      infer = static_cast<int64_t>(i);
    } else if (shape[i] < -1) {
      ref_ok = false;
    }
  }
  Dims ref_shape = shape;
  if (ref_ok) {
    bool has_zero = false;
    for (int64_t d : shape) has_zero |= d == 0;
    for (int64_t d : shape) {
      if (d == -1) continue;
      known *= d;
      if (known > kI64Max) {
        known_overflow = true;
        known = kI64Max + 1;
      }
    }
    if (has_zero) {  // 0 elements, however large the other sizes' product
      known = 0;
      known_overflow = false;
    }
    if (infer >= 0) {
      if (known == 0 || known_overflow || numel % known != 0) {
        ref_ok = false;
      } else {
        ref_shape[infer] = static_cast<int64_t>(numel / known);
      }
    } else if (known_overflow || known != numel) {
      ref_ok = false;
    }
  }
  ofl::Shape out;
  const bool ok =
      Returns("InferReshape", [&] { out = ofl::ops::InferReshape(ofl::Shape(g.shape), shape); });
  const std::string args = GeoStr(g) + " reshape to " + Str(shape);
  // A shape with a 0 holds 0 elements for both, whatever the product of its other sizes
  // (regressions/program_fuzz/repeat_backward_empty_huge_dim_view).
  CheckAgrees("InferReshape", ok, ref_ok, args);
  if (!ok) return;
  FUZZ_CHECK(out.vec() == ref_shape, args + " got " + out.str());
  if (SkipKnownBugs() && SatProduct(g.shape) == 0 && HitsEmptyStrideOverflow(ref_shape)) return;
  // Known bug: ReshapeStrides (array_ops.cpp, the chunk loop) keeps multiplying view_numel *
  // chunk_stride for trailing size-1 output dims after view_numel has overshot the chunk, which
  // overflows for big transposed inputs such as shape (2^49, 2) stride (1, 2^49) reshaped to
  // (1, 1, -1, 1). regressions/shape_fuzz/reshape_strides_overshoot_overflow.
  if (SkipKnownBugs()) {
    i128 span = 0;
    for (size_t i = 0; i < g.shape.size(); ++i) span += static_cast<i128>(g.stride[i]);
    if (span * SatProduct(g.shape) > (kI64Max >> 2)) return;
  }
  if (std::getenv("OFL_FUZZ_VERBOSE")) std::fprintf(stderr, "ReshapeStrides: %s\n", args.c_str());
  std::optional<ofl::Strides> st;
  Returns("ReshapeStrides",
          [&] { st = ofl::ops::ReshapeStrides(ofl::Shape(g.shape), ofl::Strides(g.stride), out); });
  if (ofl::ops::IsContiguous(ofl::Shape(g.shape), ofl::Strides(g.stride))) {
    FUZZ_CHECK(st.has_value(), args + ": a contiguous input must reshape as a view");
  }
  if (!st) return;
  FUZZ_CHECK(static_cast<size_t>(st->size()) == ref_shape.size(), args);
  if (!Small(g.shape)) return;
  // A view reshape keeps the row-major order: output element e is input element e.
  const std::vector<int64_t> want = Offsets(g.shape, g.stride, 0);
  const std::vector<int64_t> got = Offsets(ref_shape, st->vec(), 0);
  FUZZ_CHECK(want.size() == got.size(), args);
  for (size_t e = 0; e < want.size(); ++e) {
    FUZZ_CHECK(want[e] == got[e],
               args + " strides " + Str(st->vec()) + " element " + std::to_string(e));
  }
}

void FuzzPermute(Input& in, const Geometry& g) {
  const int64_t n = static_cast<int64_t>(g.shape.size());
  Dims dims;
  if (in.Flip()) {
    dims = in.Values(in.Rank());
  } else {
    for (int64_t i = 0; i < n; ++i) dims.push_back(i);
    for (size_t i = dims.size(); i > 1; --i) std::swap(dims[i - 1], dims[in.Below(i)]);
    for (auto& d : dims) {
      if (in.Below(4) == 0) d -= n;  // negative spelling
    }
    if (in.Below(8) == 0 && !dims.empty()) dims[in.Below(n)] = in.Value();
  }
  bool ref_ok = static_cast<int64_t>(dims.size()) == n;
  std::vector<bool> seen(static_cast<size_t>(n), false);
  Dims ref_shape, ref_stride;
  for (size_t i = 0; ref_ok && i < dims.size(); ++i) {
    int64_t d = dims[i];
    const int64_t lo = n == 0 ? -1 : -n, hi = n == 0 ? 0 : n - 1;
    if (d < lo || d > hi) {
      ref_ok = false;
      break;
    }
    if (d < 0) d += n;
    if (seen[d]) ref_ok = false;
    seen[d] = true;
    ref_shape.push_back(g.shape[d]);
    ref_stride.push_back(g.stride[d]);
  }
  ofl::ops::ViewGeometry out;
  const bool ok = Returns("InferPermute", [&] {
    out = ofl::ops::InferPermute(ofl::Shape(g.shape), ofl::Strides(g.stride), dims);
  });
  const std::string args = GeoStr(g) + " dims " + Str(dims);
  CheckAgrees("InferPermute", ok, ref_ok, args);
  if (!ok) return;
  FUZZ_CHECK(out.shape.vec() == ref_shape && out.stride == ref_stride, args);
}

void FuzzNarrow(Input& in, const Geometry& g) {
  const int64_t n = static_cast<int64_t>(g.shape.size());
  int64_t dim = in.Flip() ? in.Below(n + 1) - (in.Flip() ? n : 0) : in.Value();
  int64_t start = in.Flip() ? in.Below(6) - 2 : in.Value();
  int64_t length = in.Flip() ? in.Below(6) : in.Value();
  bool ref_ok = n > 0;
  int64_t d = dim, s = start, size = 0;
  if (ref_ok) {
    if (d < -n || d > n - 1) ref_ok = false;
    if (d < 0) d += n;
  }
  if (ref_ok) {
    size = g.shape[d];
    if (s < 0 && s >= -size) s += size;
    if (s < 0 || s > size) ref_ok = false;
    if (length < 0 || static_cast<i128>(s) + length > size) ref_ok = false;
  }
  ofl::ops::ViewGeometry out;
  const bool ok = Returns("InferNarrow", [&] {
    out = ofl::ops::InferNarrow(ofl::Shape(g.shape), ofl::Strides(g.stride), dim, start, length);
  });
  const std::string args = GeoStr(g) + " narrow(" + std::to_string(dim) + ", " +
                           std::to_string(start) + ", " + std::to_string(length) + ")";
  CheckAgrees("InferNarrow", ok, ref_ok, args);
  if (!ok) return;
  Dims ref_shape = g.shape;
  ref_shape[d] = length;
  FUZZ_CHECK(out.shape.vec() == ref_shape && out.stride == g.stride, args);
  if (length > 0 && SatProduct(ref_shape) > 0) {
    FUZZ_CHECK(out.offset_delta == s * g.stride[d], args);
  }
  if (!Small(ref_shape)) return;
  // The narrowed view stays within the input's storage.
  CheckInBounds("InferNarrow", Offsets(ref_shape, out.stride.vec(), out.offset_delta), g.extent,
                args);
}

void FuzzExpandBackward(Input& in, const Geometry& g) {
  // dy is the input geometry's shape; input_shape is either a shape that expands to it, or noise.
  const Dims& dy = g.shape;
  Dims input_shape;
  if (in.Flip()) {
    input_shape = in.Values(in.Rank());
  } else {
    const int64_t drop = in.Below(static_cast<int64_t>(dy.size()) + 1);
    for (size_t i = static_cast<size_t>(drop); i < dy.size(); ++i) {
      input_shape.push_back(in.Below(3) == 0 ? 1 : dy[i]);
    }
    if (in.Below(6) == 0 && !input_shape.empty()) {
      input_shape[in.Below(static_cast<int64_t>(input_shape.size()))] = in.Value();
    }
  }
  if (static_cast<int64_t>(input_shape.size()) > kMaxDimsRef) {
    // A Shape cannot hold it: its constructor rejects it.
    const bool ok = Returns("Shape", [&] { ofl::Shape s(input_shape); });
    FUZZ_CHECK(!ok, Str(input_shape));
    return;
  }
  const int64_t n = static_cast<int64_t>(dy.size());
  const int64_t k = static_cast<int64_t>(input_shape.size());
  bool ref_ok = k <= n;
  Dims target(static_cast<size_t>(n), 1);
  for (int64_t i = 0; ref_ok && i < k; ++i) {
    const int64_t a = input_shape[i], b = dy[n - k + i];
    if (a < 0 || (a != b && a != 1)) ref_ok = false;
    target[n - k + i] = a;
  }
  ofl::Shape out;
  const bool ok = Returns("InferExpandBackward", [&] {
    out = ofl::ops::InferExpandBackward(ofl::Shape(dy), ofl::Shape(input_shape));
  });
  const std::string args = "dy " + Str(dy) + " input_shape " + Str(input_shape);
  CheckAgrees("InferExpandBackward", ok, ref_ok, args);
  if (!ok) return;
  FUZZ_CHECK(out.vec() == target, args + " got " + out.str());
  // Consistency: input_shape expands to dy.
  if (ShapeOk(input_shape, 4)) {
    const bool fwd = Returns("InferExpand", [&] {
      ofl::ops::ViewGeometry e = ofl::ops::InferExpand(
          ofl::Shape(input_shape), ofl::Strides(RefContiguous(input_shape)), dy, 4);
      FUZZ_CHECK(e.shape.vec() == dy, args);
    });
    FUZZ_CHECK(fwd, args + ": expand_backward accepted a shape that expand rejects");
  }
}

void FuzzContiguousStrides(const Geometry& g) {
  // ContiguousStrides runs for every new tensor, empty ones included.
  if (SkipKnownBugs() && HitsEmptyStrideOverflow(g.shape)) return;
  const Dims s = ofl::ContiguousStrides(ofl::Shape(g.shape));
  FUZZ_CHECK(s.size() == g.shape.size(), Str(g.shape));
  if (SatProduct(g.shape) > 0) FUZZ_CHECK(s == RefContiguous(g.shape), Str(g.shape));
  FUZZ_CHECK(ofl::ops::IsContiguous(ofl::Shape(g.shape), ofl::Strides(s)), Str(g.shape));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  const uint8_t op = in.Byte();
  const Geometry g = MakeGeometry(in);
  switch (op % 7) {
    case 0:
      FuzzExpand(in, g);
      break;
    case 1:
      FuzzRepeat(in, g);
      break;
    case 2:
      FuzzReshape(in, g);
      break;
    case 3:
      FuzzPermute(in, g);
      break;
    case 4:
      FuzzNarrow(in, g);
      break;
    case 5:
      FuzzExpandBackward(in, g);
      break;
    default:
      FuzzContiguousStrides(g);
      break;
  }
  return 0;
}
