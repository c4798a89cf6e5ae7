// libFuzzer target for the whole runtime: decodes the input into a short program (at most 40
// steps) over at most 4 small tensors (float32 and int32, at most 64 elements each) and runs it
// through the public API (queued on the VM) and through a plain sequential reference written here
// that shares no code with the library: its own shape rules and element loops over std::vector.
// Every read-back must equal the reference exactly (values are small integers, so float sums are
// exact too); a call must throw ofl::InvalidArgument exactly when the reference says its arguments
// are bad; any other exception, a crash, a hang or a sanitizer report is a failure.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

using ofl_fuzz::Dims;
using ofl_fuzz::i128;
using ofl_fuzz::Input;
using ofl_fuzz::kI64Max;
using ofl_fuzz::Str;

constexpr int kSlots = 4;
constexpr int kMaxSteps = 40;
constexpr int64_t kMaxNumel = 64;
constexpr double kMaxAbs = 1 << 20;  // sums stay exact in float32 and int32 below this
constexpr int64_t kMaxRank = ofl_fuzz::kMaxRankRef;

// ---- The reference: logical row-major values, nothing shared with the library ----------------

struct Ref {
  bool is_float = true;
  Dims shape;
  std::vector<double> v;  // row-major logical values
};

// Calls f(index) for every multi-index of `shape` in row-major order.
template <class F>
void ForEachIndex(const Dims& shape, F&& f) {
  const int64_t n = static_cast<int64_t>(ofl_fuzz::SatProduct(shape));
  Dims idx(shape.size(), 0);
  for (int64_t e = 0; e < n; ++e) {
    f(idx);
    for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
      if (++idx[i] < shape[i]) break;
      idx[i] = 0;
    }
  }
}

int64_t Linear(const Dims& shape, const Dims& idx) {
  int64_t l = 0;
  for (size_t i = 0; i < shape.size(); ++i) l = l * shape[i] + idx[i];
  return l;
}

// Each Ref* returns nullopt when the op must reject its arguments.
std::optional<Ref> RefExpand(const Ref& x, const Dims& sizes) {
  const int64_t n = static_cast<int64_t>(sizes.size()), k = static_cast<int64_t>(x.shape.size());
  if (n < k || n > kMaxRank) return std::nullopt;
  Dims out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t j = i - (n - k);
    const int64_t s = j >= 0 ? x.shape[j] : 1;
    int64_t t = sizes[i];
    if (t < -1 || (t == -1 && j < 0)) return std::nullopt;
    if (t == -1) t = s;
    if (t != s && s != 1) return std::nullopt;
    out[i] = t;
  }
  if (!ofl_fuzz::ShapeOk(out, 4)) return std::nullopt;
  Ref r{x.is_float, out, {}};
  if (ofl_fuzz::SatProduct(out) > kMaxNumel) return r;  // too big to run: the caller skips it
  ForEachIndex(out, [&](const Dims& idx) {
    Dims src(static_cast<size_t>(k));
    for (int64_t j = 0; j < k; ++j) src[j] = x.shape[j] == 1 ? 0 : idx[j + (n - k)];
    r.v.push_back(x.v[Linear(x.shape, src)]);
  });
  return r;
}

std::optional<Ref> RefRepeat(const Ref& x, const Dims& reps) {
  const int64_t n = static_cast<int64_t>(reps.size()), k = static_cast<int64_t>(x.shape.size());
  if (n < k || n > kMaxRank) return std::nullopt;
  Dims out(static_cast<size_t>(n)), padded(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t j = i - (n - k);
    padded[i] = j >= 0 ? x.shape[j] : 1;
    if (reps[i] < 0) return std::nullopt;
    const i128 o = static_cast<i128>(padded[i]) * reps[i];
    if (o > kI64Max) return std::nullopt;
    out[i] = static_cast<int64_t>(o);
  }
  if (!ofl_fuzz::ShapeOk(out, 4)) return std::nullopt;
  Ref r{x.is_float, out, {}};
  if (ofl_fuzz::SatProduct(out) > kMaxNumel) return r;
  ForEachIndex(out, [&](const Dims& idx) {
    Dims src(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) src[i] = idx[i] % padded[i];
    r.v.push_back(x.v[Linear(padded, src)]);
  });
  return r;
}

// `overflow_then_zero`: the sizes' product overflows int64 before a later 0 makes it 0; the library
// may reject those (PyTorch's arithmetic would be undefined there), so either answer is accepted.
std::optional<Ref> RefReshape(const Ref& x, const Dims& shape, bool* overflow_then_zero) {
  *overflow_then_zero = false;
  if (static_cast<int64_t>(shape.size()) > kMaxRank) return std::nullopt;
  int64_t infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < -1) return std::nullopt;
    if (shape[i] == -1) {
      if (infer >= 0) return std::nullopt;
      infer = static_cast<int64_t>(i);
    }
  }
  i128 known = 1;
  bool overflow = false, zero = false;
  for (int64_t d : shape) {
    if (d == -1) continue;
    if (d == 0) zero = true;
    if (!zero) {
      known *= d;
      if (known > kI64Max) overflow = true, known = kI64Max + 1;
    }
  }
  if (zero) {
    *overflow_then_zero = overflow;
    known = 0;
  }
  const i128 numel = ofl_fuzz::SatProduct(x.shape);
  Dims out = shape;
  if (infer >= 0) {
    if (known == 0 || overflow || numel % known != 0) return std::nullopt;
    out[infer] = static_cast<int64_t>(numel / known);
  } else if (overflow || known != numel) {
    return std::nullopt;
  }
  return Ref{x.is_float, out, x.v};
}

std::optional<Ref> RefPermute(const Ref& x, const Dims& dims) {
  const int64_t n = static_cast<int64_t>(x.shape.size());
  if (static_cast<int64_t>(dims.size()) != n) return std::nullopt;
  Dims d(dims.size());
  std::vector<bool> seen(static_cast<size_t>(n), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < -n || dims[i] >= n) return std::nullopt;
    d[i] = dims[i] < 0 ? dims[i] + n : dims[i];
    if (seen[d[i]]) return std::nullopt;
    seen[d[i]] = true;
  }
  Dims out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[i] = x.shape[d[i]];
  Ref r{x.is_float, out, {}};
  ForEachIndex(out, [&](const Dims& idx) {
    Dims src(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) src[d[i]] = idx[i];
    r.v.push_back(x.v[Linear(x.shape, src)]);
  });
  return r;
}

std::optional<Ref> RefNarrow(const Ref& x, int64_t dim, int64_t start, int64_t length) {
  const int64_t n = static_cast<int64_t>(x.shape.size());
  if (n == 0 || dim < -n || dim >= n) return std::nullopt;
  const int64_t d = dim < 0 ? dim + n : dim;
  const int64_t size = x.shape[d];
  int64_t s = start;
  if (s < 0 && s >= -size) s += size;
  if (s < 0 || s > size || length < 0 || static_cast<i128>(s) + length > size) return std::nullopt;
  Dims out = x.shape;
  out[d] = length;
  Ref r{x.is_float, out, {}};
  ForEachIndex(out, [&](const Dims& idx) {
    Dims src = idx;
    src[d] += s;
    r.v.push_back(x.v[Linear(x.shape, src)]);
  });
  return r;
}

std::optional<Ref> RefExpandBackward(const Ref& dy, const Dims& input_shape) {
  const int64_t n = static_cast<int64_t>(dy.shape.size());
  const int64_t k = static_cast<int64_t>(input_shape.size());
  if (!ofl_fuzz::ShapeOk(input_shape, 4) || k > n) return std::nullopt;
  for (int64_t i = 0; i < k; ++i) {
    const int64_t a = input_shape[i], b = dy.shape[n - k + i];
    if (a != b && a != 1) return std::nullopt;
  }
  Ref r{dy.is_float, input_shape, {}};
  if (ofl_fuzz::SatProduct(input_shape) > kMaxNumel) return r;
  r.v.assign(static_cast<size_t>(ofl_fuzz::SatProduct(input_shape)), 0.0);
  int64_t e = 0;
  ForEachIndex(dy.shape, [&](const Dims& idx) {
    Dims dst(static_cast<size_t>(k));
    for (int64_t i = 0; i < k; ++i) dst[i] = input_shape[i] == 1 ? 0 : idx[n - k + i];
    r.v[Linear(input_shape, dst)] += dy.v[e++];
  });
  return r;
}

std::optional<Ref> RefRepeatBackward(const Ref& dy, const Dims& input_shape, const Dims& reps) {
  const int64_t n = static_cast<int64_t>(reps.size());
  const int64_t k = static_cast<int64_t>(input_shape.size());
  if (!ofl_fuzz::ShapeOk(input_shape, 1) || n < k || n > kMaxRank) return std::nullopt;
  Dims expect(static_cast<size_t>(n)), padded(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t j = i - (n - k);
    padded[i] = j >= 0 ? input_shape[j] : 1;
    if (reps[i] < 0) return std::nullopt;
    const i128 o = static_cast<i128>(padded[i]) * reps[i];
    if (o > kI64Max) return std::nullopt;
    expect[i] = static_cast<int64_t>(o);
  }
  if (!ofl_fuzz::ShapeOk(expect, 1) || expect != dy.shape) return std::nullopt;
  Ref r{dy.is_float, input_shape, {}};
  if (ofl_fuzz::SatProduct(input_shape) > kMaxNumel) return r;
  r.v.assign(static_cast<size_t>(ofl_fuzz::SatProduct(input_shape)), 0.0);
  int64_t e = 0;
  ForEachIndex(dy.shape, [&](const Dims& idx) {
    Dims src(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) src[i] = idx[i] % padded[i];
    r.v[Linear(padded, src)] += dy.v[e++];
  });
  return r;
}

// ---- Running both sides ---------------------------------------------------------------------

struct Slot {
  bool live = false;
  Ref ref;
  ofl::Tensor t;
};

bool Verbose() {
  static const bool v = std::getenv("OFL_FUZZ_VERBOSE") != nullptr;
  return v;
}

// With OFL_FUZZ_SKIP_KNOWN_BUGS=1 the fuzzer steers around the library bugs it has already found
// (each has an input in regressions/program_fuzz/), so that a long run can look for new ones.
bool SkipKnownBugs() {
  static const bool skip = [] {
    const char* v = std::getenv("OFL_FUZZ_SKIP_KNOWN_BUGS");
    return v != nullptr && v[0] == '1';
  }();
  return skip;
}

// Known bug: the reduce_sum_to kernel (kernels/cpu/reduce_sum_kernel.cpp, ReduceRuns) offsets
// the input pointer, null for an empty dy, when the output is not empty: expand_backward of a
// (3, 0) dy to (). regressions/program_fuzz/reduce_sum_empty_dy_null_offset.
bool HitsReduceEmptyInput(const Ref& dy, const std::optional<Ref>& ref) {
  return SkipKnownBugs() && ref && dy.v.empty() && !ref->v.empty();
}

// Known bug: ContiguousStrides (oneflow_lite/shape.cpp) multiplies max(d, 1) over all dims in
// int64; a valid empty result such as repeat((4, 1), (INT64_MAX-2, 2, 0, 0)) overflows there.
// regressions/program_fuzz/repeat_empty_huge_contiguous_strides.
bool HitsEmptyStrideOverflow(const std::optional<Ref>& ref) {
  if (!SkipKnownBugs() || !ref) return false;
  i128 acc = 1;
  for (int64_t d : ref->shape) {
    acc *= d > 0 ? d : 1;
    if (acc > kI64Max) return true;
  }
  return false;
}

// Runs a library call whose reference answer is `ref`: the call must throw InvalidArgument exactly
// when ref is nullopt; the result's shape must match.
template <class F>
std::optional<ofl::Tensor> RunOp(const std::string& what, const std::optional<Ref>& ref, F&& f,
                                 bool either_ok = false) {
  if (Verbose()) std::fprintf(stderr, "step: %s -> %s\n", what.c_str(), ref ? "ok" : "invalid");
  std::optional<ofl::Tensor> out;
  try {
    out = f();
  } catch (const ofl::InvalidArgument& e) {
    if (ref && !either_ok) {
      ofl_fuzz::Fail(what + ": the library threw InvalidArgument (" + e.what() +
                     ") but the reference accepts it");
    }
    return std::nullopt;
  } catch (const std::exception& e) {
    ofl_fuzz::Fail(what + ": unexpected exception " + e.what());
  } catch (...) {
    ofl_fuzz::Fail(what + ": unexpected non-std exception");
  }
  if (!ref) ofl_fuzz::Fail(what + ": the library accepted arguments the reference rejects");
  const Dims got = out->shape().vec();
  if (got != ref->shape) {
    ofl_fuzz::Fail(what + ": shape " + Str(got) + ", reference " + Str(ref->shape));
  }
  if (out->numel() != static_cast<int64_t>(ref->v.size())) {
    ofl_fuzz::Fail(what + ": numel " + std::to_string(out->numel()));
  }
  return out;
}

void CheckValues(const std::string& what, const Slot& s) {
  std::vector<double> got;
  try {
    if (s.ref.is_float) {
      for (float f : s.t.to_vector<float>()) got.push_back(f);
    } else {
      for (int32_t i : s.t.to_vector<int32_t>()) got.push_back(i);
    }
  } catch (const std::exception& e) {
    ofl_fuzz::Fail(what + ": read-back threw " + e.what());
  }
  if (got != s.ref.v) {
    std::string g, r;
    for (double x : got) g += std::to_string(static_cast<int64_t>(x)) + " ";
    for (double x : s.ref.v) r += std::to_string(static_cast<int64_t>(x)) + " ";
    ofl_fuzz::Fail(what + ": read-back of shape " + Str(s.ref.shape) + " is [" + g +
                   "], the reference says [" + r + "]");
  }
}

bool Fits(const Ref& r) {
  if (static_cast<int64_t>(r.v.size()) > kMaxNumel || ofl_fuzz::SatProduct(r.shape) > kMaxNumel)
    return false;
  for (double x : r.v) {
    if (x > kMaxAbs || x < -kMaxAbs) return false;
  }
  return true;
}

Dims SmallShape(Input& in) {
  Dims d(static_cast<size_t>(in.Below(5)));
  for (auto& x : d) x = in.Below(5);
  while (ofl_fuzz::SatProduct(d) > kMaxNumel) d[in.Below(static_cast<int64_t>(d.size()))] = 1;
  return d;
}

void Create(Input& in, Slot& s) {
  s.ref.is_float = in.Flip();
  s.ref.shape = SmallShape(in);
  s.ref.v.clear();
  const int64_t n = static_cast<int64_t>(ofl_fuzz::SatProduct(s.ref.shape));
  for (int64_t i = 0; i < n; ++i) s.ref.v.push_back(static_cast<double>(in.Below(17)) - 8);
  try {
    if (s.ref.is_float) {
      std::vector<float> f(s.ref.v.begin(), s.ref.v.end());
      s.t = ofl::tensor<float>(f, ofl::Shape(s.ref.shape));
    } else {
      std::vector<int32_t> i(s.ref.v.begin(), s.ref.v.end());
      s.t = ofl::tensor<int32_t>(i, ofl::Shape(s.ref.shape));
    }
  } catch (const std::exception& e) {
    ofl_fuzz::Fail(std::string("creating a tensor threw ") + e.what());
  }
  s.live = true;
}

// An argument list aimed at the op's rules: mostly plausible, sometimes noise.
int64_t Arg(Input& in, int64_t plausible) { return in.Below(6) == 0 ? in.Value() : plausible; }

void Step(Input& in, std::vector<Slot>& slots) {
  const uint8_t op = in.Byte();
  Slot& src = slots[in.Below(kSlots)];
  Slot& dst = slots[in.Below(kSlots)];
  if (!src.live) {
    Create(in, src);
    return;
  }
  const Ref& x = src.ref;
  const int64_t k = static_cast<int64_t>(x.shape.size());
  const bool method = in.Flip();  // Tensor method or the free function
  std::optional<Ref> ref;
  std::optional<ofl::Tensor> out;
  bool either_ok = false;
  std::string what;
  auto run = [&](auto&& call) {
    if (ref && !Fits(*ref)) return;  // valid but too big for this program: skip it
    if (HitsEmptyStrideOverflow(ref)) return;
    out = RunOp(what, ref, call, either_ok);
  };
  switch (op % 13) {
    case 0: {  // expand
      const int64_t n = k + in.Below(3);
      Dims sizes(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        const int64_t j = i - (n - k);
        const int64_t s = j >= 0 ? x.shape[j] : 1;
        const int64_t c = in.Below(4);
        sizes[i] = Arg(in, c == 0 ? -1 : (s == 1 && c == 1) ? in.Below(4) : s);
      }
      what = "expand " + Str(x.shape) + " to " + Str(sizes);
      ref = RefExpand(x, sizes);
      run([&] { return method ? src.t.expand(sizes) : ofl::expand(src.t, sizes); });
      break;
    }
    case 1: {  // repeat
      Dims reps(static_cast<size_t>(k + in.Below(3)));
      for (auto& r : reps) r = Arg(in, in.Below(4));
      what = "repeat " + Str(x.shape) + " by " + Str(reps);
      ref = RefRepeat(x, reps);
      run([&] { return method ? src.t.repeat(reps) : ofl::repeat(src.t, reps); });
      break;
    }
    case 2: {  // reshape
      Dims shape;
      int64_t rest = static_cast<int64_t>(ofl_fuzz::SatProduct(x.shape));
      const int64_t parts = in.Below(4);
      for (int64_t p = 0; p < parts; ++p) {
        const int64_t f = 1 + in.Below(4);
        if (rest > 0 && rest % f == 0) shape.push_back(f), rest /= f;
      }
      shape.push_back(in.Below(3) == 0 ? -1 : rest);
      for (size_t i = shape.size(); i > 1; --i) std::swap(shape[i - 1], shape[in.Below(i)]);
      for (auto& d : shape) d = Arg(in, d);
      bool loose = false;
      ref = RefReshape(x, shape, &loose);
      either_ok = loose;
      what = "reshape " + Str(x.shape) + " to " + Str(shape);
      run([&] { return method ? src.t.reshape(shape) : ofl::reshape(src.t, shape); });
      break;
    }
    case 3: {  // permute
      Dims dims(static_cast<size_t>(k));
      for (int64_t i = 0; i < k; ++i) dims[i] = i;
      for (size_t i = dims.size(); i > 1; --i) std::swap(dims[i - 1], dims[in.Below(i)]);
      for (auto& d : dims) d = in.Below(4) == 0 ? d - k : Arg(in, d);
      if (in.Below(8) == 0) dims.push_back(in.Below(4));
      what = "permute " + Str(x.shape) + " by " + Str(dims);
      ref = RefPermute(x, dims);
      run([&] { return method ? src.t.permute(dims) : ofl::permute(src.t, dims); });
      break;
    }
    case 4: {  // narrow
      const int64_t dim = Arg(in, in.Below(k + 1) - (in.Flip() ? k : 0));
      const int64_t start = Arg(in, in.Below(5) - 1);
      const int64_t length = Arg(in, in.Below(4));
      what = "narrow " + Str(x.shape) + " (" + std::to_string(dim) + ", " + std::to_string(start) +
             ", " + std::to_string(length) + ")";
      ref = RefNarrow(x, dim, start, length);
      run([&] {
        return method ? src.t.narrow(dim, start, length) : ofl::narrow(src.t, dim, start, length);
      });
      break;
    }
    case 5: {  // contiguous
      what = "contiguous " + Str(x.shape);
      ref = x;
      run([&] { return method ? src.t.contiguous() : ofl::contiguous(src.t); });
      if (out && !out->is_contiguous()) ofl_fuzz::Fail(what + ": result is not contiguous");
      break;
    }
    case 6: {  // expand_backward
      Dims input_shape;
      for (int64_t i = in.Below(k + 1); i < k; ++i) {
        input_shape.push_back(in.Below(3) == 0 ? 1 : x.shape[i]);
      }
      for (auto& d : input_shape) d = in.Below(8) == 0 ? in.Value() : d;
      if (in.Below(8) == 0) input_shape.insert(input_shape.begin(), in.Below(3));
      what = "expand_backward " + Str(x.shape) + " to " + Str(input_shape);
      ref = RefExpandBackward(x, input_shape);
      if (HitsReduceEmptyInput(x, ref)) break;
      run([&] { return ofl::expand_backward(src.t, ofl::Shape(input_shape)); });
      break;
    }
    case 7: {  // repeat_backward
      const int64_t extra = in.Below(3);
      Dims reps, input_shape;
      for (int64_t i = 0; i < extra; ++i) reps.push_back(1);
      for (int64_t i = 0; i < k; ++i) {
        const int64_t d = x.shape[i];
        int64_t r = 1 + in.Below(4);
        if (d == 0) r = in.Below(3);
        if (r == 0 || d % r != 0) r = 1;
        if (d == 0 && in.Flip()) r = 0;
        reps.push_back(r);
        input_shape.push_back(r == 0 ? in.Below(3) : d / r);
      }
      // Leading new dims of the repeat must be 1 in dy, and dy's leading dims come from repeats.
      for (int64_t i = 0; i < k && in.Below(3) == 0; ++i) {
        if (input_shape.front() == 1) {
          input_shape.erase(input_shape.begin());
          break;
        }
      }
      for (auto& r : reps) r = in.Below(8) == 0 ? in.Value() : r;
      what =
          "repeat_backward " + Str(x.shape) + " to " + Str(input_shape) + " repeats " + Str(reps);
      ref = RefRepeatBackward(x, input_shape, reps);
      if (HitsReduceEmptyInput(x, ref)) break;
      run([&] { return ofl::repeat_backward(src.t, ofl::Shape(input_shape), reps); });
      break;
    }
    case 8:  // drop a tensor (its storage may still be in use by queued work and views)
      if (Verbose()) std::fprintf(stderr, "step: drop\n");
      src.t = ofl::Tensor();
      src.live = false;
      return;
    case 9:
    case 10:  // read back
      if (Verbose()) std::fprintf(stderr, "step: read %s\n", Str(x.shape).c_str());
      CheckValues("read-back", src);
      return;
    case 11:  // sync: nothing can have failed inside the VM
      if (Verbose()) std::fprintf(stderr, "step: sync\n");
      try {
        ofl::sync();
      } catch (const std::exception& e) {
        ofl_fuzz::Fail(std::string("sync threw ") + e.what());
      }
      return;
    default: {  // an invalid call: to_vector with the wrong element type, or an out-of-range dim
      if (Verbose()) std::fprintf(stderr, "step: invalid call\n");
      bool threw = false;
      try {
        if (in.Flip()) {
          if (x.is_float) {
            (void)src.t.to_vector<int32_t>();
          } else {
            (void)src.t.to_vector<float>();
          }
        } else {
          (void)src.t.narrow(k + in.Below(3), 0, 0);
        }
      } catch (const ofl::InvalidArgument&) {
        threw = true;
      } catch (const std::exception& e) {
        ofl_fuzz::Fail(std::string("invalid call threw a non-InvalidArgument: ") + e.what());
      }
      if (!threw) ofl_fuzz::Fail("invalid call on " + Str(x.shape) + " did not throw");
      return;
    }
  }
  if (out) {
    dst.t = *out;
    dst.ref = *ref;
    dst.live = true;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  std::vector<Slot> slots(kSlots);
  for (int step = 0; step < kMaxSteps && !in.empty(); ++step) Step(in, slots);
  // Every live tensor reads back right at the end, then all die and the VM drains.
  for (Slot& s : slots) {
    if (s.live) CheckValues("final read-back", s);
  }
  slots.clear();
  try {
    ofl::sync();
  } catch (const std::exception& e) {
    ofl_fuzz::Fail(std::string("final sync threw ") + e.what());
  }
  return 0;
}
