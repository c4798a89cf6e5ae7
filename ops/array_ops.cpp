#include "ops/array_ops.h"

#include <algorithm>
#include <limits>
#include <string>

#include "oneflow_lite/error.h"

namespace ofl::ops {

namespace {

std::string Str(IntList v) { return ToString(v.data(), v.size()); }
std::string Str(const Shape& s) { return s.str(); }

[[noreturn]] void Fail(const std::string& msg) { throw InvalidArgument(msg); }

int64_t SatMul(int64_t a, int64_t b) { return SaturatingMul(a, b); }

int64_t WrapDim(const char* op, const char* arg, int64_t dim, int64_t ndim) {
  const int64_t lo = ndim == 0 ? -1 : -ndim;
  const int64_t hi = ndim == 0 ? 0 : ndim - 1;
  if (dim < lo || dim > hi) {
    Fail(std::string(op) + ": " + arg + " " + std::to_string(dim) + " is out of range [" +
         std::to_string(lo) + ", " + std::to_string(hi) + "] for a tensor with " +
         std::to_string(ndim) + " dims");
  }
  return dim < 0 ? dim + (ndim == 0 ? 1 : ndim) : dim;
}

}  // namespace

namespace {
int64_t CheckDims(const char* op, const char* arg, const int64_t* data, size_t n,
                  size_t element_size) {
  auto dims_str = [&] { return ToString(data, n); };
  if (n > static_cast<size_t>(kMaxDims)) {
    Fail(std::string(op) + ": " + arg + " has " + std::to_string(n) + " dims, at most " +
         std::to_string(kMaxDims) + " are supported");
  }
  int64_t numel = 1;
  bool overflow = false;
  bool zero = false;
  for (size_t i = 0; i < n; ++i) {
    if (data[i] < 0) {
      Fail(std::string(op) + ": " + arg + " " + dims_str() + " has negative size " +
           std::to_string(data[i]) + " at dim " + std::to_string(i));
    }
    if (data[i] == 0) zero = true;
    if (__builtin_mul_overflow(numel, data[i], &numel)) overflow = true;
  }
  // A zero anywhere makes the count 0 whatever overflowed before it.
  if (zero) return 0;
  int64_t bytes = 0;
  if (overflow || __builtin_mul_overflow(numel, static_cast<int64_t>(element_size), &bytes)) {
    Fail(std::string(op) + ": " + arg + " " + dims_str() + " has more elements (x " +
         std::to_string(element_size) + " bytes each) than int64 can count");
  }
  return numel;
}
}  // namespace

int64_t CheckShape(const char* op, const char* arg, IntList dims, size_t element_size) {
  return CheckDims(op, arg, dims.data(), dims.size(), element_size);
}

void CheckDType(const char* op, DType dtype) {
  const int v = static_cast<int>(dtype);
  if (v < 0 || v >= kNumDTypes) {
    Fail(std::string(op) + ": dtype value " + std::to_string(v) + " is not a DType (valid: 0.." +
         std::to_string(kNumDTypes - 1) + ")");
  }
}

void CheckGradientDType(const char* op, DType dtype) {
  CheckDType(op, dtype);
  if (dtype == DType::kBool) {
    Fail(std::string(op) + ": dtype bool is not supported (gradients are summed); got a bool dy");
  }
}

int64_t CheckShape(const char* op, const char* arg, const Shape& shape, size_t element_size) {
  return CheckDims(op, arg, shape.data(), static_cast<size_t>(shape.ndim()), element_size);
}

ViewGeometry InferExpand(const Shape& in, const Strides& in_stride, IntList sizes,
                         size_t element_size) {
  const int64_t n = static_cast<int64_t>(sizes.size());
  const int64_t k = in.ndim();
  if (n < k) {
    Fail("expand: the number of sizes provided (" + std::to_string(n) +
         ") must be greater or equal to the number of dimensions in the tensor (" +
         std::to_string(k) + "); sizes " + Str(sizes) + ", tensor shape " + Str(in));
  }
  if (n > kMaxDims) {
    Fail("expand: sizes " + Str(sizes) + " has " + std::to_string(n) + " dims, at most " +
         std::to_string(kMaxDims) + " are supported");
  }
  const int64_t* in_size = in.data();
  const int64_t* in_st = in_stride.data();
  int64_t out[kMaxDims];
  int64_t out_st[kMaxDims];
  for (int64_t i = n - 1; i >= 0; --i) {
    const int64_t dim = k - (n - i);
    int64_t size = dim >= 0 ? in_size[dim] : 1;
    // A new leading dim takes stride[i+1] * size[i+1]; with a 0-dim input every dim is new and,
    // as in PyTorch, every stride is 0 (size-1 dims included).
    int64_t st = dim >= 0 ? in_st[dim] : (k == 0 ? 0 : SatMul(out[i + 1], out_st[i + 1]));
    int64_t target = sizes[i];
    if (target < -1) {
      Fail("expand: size " + std::to_string(target) + " at dim " + std::to_string(i) +
           " is invalid (sizes must be >= -1); target sizes " + Str(sizes) + ", tensor shape " +
           Str(in));
    }
    if (target == -1) {
      if (dim < 0) {
        Fail(
            "expand: the expanded size of the tensor (-1) isn't allowed in a leading, "
            "non-existing dimension " +
            std::to_string(i) + "; target sizes " + Str(sizes) + ", tensor shape " + Str(in));
      }
      target = size;
    }
    if (size != target) {
      if (size != 1) {
        Fail("expand: the expanded size of the tensor (" + std::to_string(target) +
             ") must match the existing size (" + std::to_string(size) +
             ") at non-singleton dimension " + std::to_string(i) + "; target sizes " + Str(sizes) +
             ", tensor shape " + Str(in));
      }
      size = target;
      st = 0;
    }
    out[i] = size;
    out_st[i] = st;
  }
  ViewGeometry g{Shape(out, static_cast<int>(n)), Strides(out_st, static_cast<int>(n)), 0};
  CheckShape("expand", "output shape", g.shape, element_size);
  return g;
}

Shape InferRepeat(const Shape& in, IntList repeats, size_t element_size) {
  const int64_t n = static_cast<int64_t>(repeats.size());
  const int64_t k = in.ndim();
  if (n < k) {
    Fail("repeat: the number of repeats (" + std::to_string(n) +
         ") must be greater or equal to the number of dimensions of the tensor (" +
         std::to_string(k) + "); repeats " + Str(repeats) + ", tensor shape " + Str(in));
  }
  if (n > kMaxDims) {
    Fail("repeat: repeats " + Str(repeats) + " has " + std::to_string(n) + " dims, at most " +
         std::to_string(kMaxDims) + " are supported");
  }
  int64_t out[kMaxDims];
  for (int64_t i = 0; i < n; ++i) {
    if (repeats[i] < 0) {
      Fail("repeat: repeats must be non-negative, got " + std::to_string(repeats[i]) + " at dim " +
           std::to_string(i) + "; repeats " + Str(repeats) + ", tensor shape " + Str(in));
    }
    const int64_t dim = k - (n - i);
    const int64_t s = dim >= 0 ? in[dim] : 1;
    if (__builtin_mul_overflow(s, repeats[i], &out[i])) {
      Fail("repeat: output size at dim " + std::to_string(i) + " (" + std::to_string(s) + " x " +
           std::to_string(repeats[i]) + ") overflows int64; repeats " + Str(repeats) +
           ", tensor shape " + Str(in));
    }
  }
  const Shape out_shape(out, static_cast<int>(n));
  CheckShape("repeat", "output shape", out_shape, element_size);
  return out_shape;
}

Shape InferReshape(const Shape& in, IntList shape) {
  if (shape.size() > static_cast<size_t>(kMaxDims)) {
    Fail("reshape: shape " + Str(shape) + " has " + std::to_string(shape.size()) +
         " dims, at most " + std::to_string(kMaxDims) + " are supported");
  }
  int64_t infer = -1;
  int64_t known = 1;
  // A 0 anywhere makes the product 0, however large the other sizes (an empty tensor's view).
  const bool has_zero = std::find(shape.begin(), shape.end(), 0) != shape.end();
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) {
        Fail("reshape: only one dimension can be inferred (-1), got shape " + Str(shape));
      }
      infer = static_cast<int64_t>(i);
    } else if (shape[i] < -1) {
      Fail("reshape: invalid size " + std::to_string(shape[i]) + " at dim " + std::to_string(i) +
           " in shape " + Str(shape));
    } else if (has_zero) {
      known = 0;
    } else if (__builtin_mul_overflow(known, shape[i], &known)) {
      Fail("reshape: shape " + Str(shape) + " has more elements than int64 can count");
    }
  }
  const int64_t numel = in.numel();
  std::vector<int64_t> out = shape.vec();
  if (infer >= 0) {
    if (known == 0) {
      Fail("reshape: cannot reshape tensor of shape " + Str(in) + " into shape " + Str(shape) +
           " because the unspecified dimension size -1 can be any value and is ambiguous");
    }
    if (numel % known != 0) {
      Fail("reshape: shape " + Str(shape) + " is invalid for input of shape " + Str(in) + " (" +
           std::to_string(numel) + " elements)");
    }
    out[infer] = numel / known;
  } else if (known != numel) {
    Fail("reshape: shape " + Str(shape) + " is invalid for input of shape " + Str(in) + " (" +
         std::to_string(numel) + " elements)");
  }
  return Shape(out);
}

std::optional<Strides> ReshapeStrides(const Shape& in, const Strides& in_stride, const Shape& out) {
  const int64_t n_out = out.ndim();
  Strides stride = Strides::Filled(static_cast<int>(n_out), 0);
  if (in.numel() == 0 || in.ndim() == 0) {
    // Nothing (or a single element) to address: any consistent strides will do.
    int64_t acc = 1;
    for (int64_t i = n_out - 1; i >= 0; --i) {
      stride[i] = acc;
      acc = SatMul(acc, out[i] > 0 ? out[i] : 1);
    }
    return stride;
  }
  // Walk both shapes right to left in "chunks": runs of input dims that are contiguous with each
  // other. Each chunk must be covered exactly by a run of output dims.
  int64_t view_d = n_out - 1;
  int64_t chunk_stride = in_stride.back();
  int64_t in_numel = 1;
  int64_t view_numel = 1;
  for (int64_t d = in.ndim() - 1; d >= 0; --d) {
    in_numel *= in[d];
    const bool chunk_ends =
        d == 0 || (in[d - 1] != 1 && in_stride[d - 1] != in_numel * chunk_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < in_numel || out[view_d] == 1)) {
      stride[view_d] = SatMul(view_numel, chunk_stride);
      view_numel = SatMul(view_numel, out[view_d]);
      --view_d;
      if (view_numel > in_numel) return std::nullopt;  // overshot the chunk: no view
    }
    if (view_numel != in_numel) return std::nullopt;
    if (d > 0) {
      chunk_stride = in_stride[d - 1];
      in_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return stride;
}

ViewGeometry InferPermute(const Shape& in, const Strides& in_stride, IntList dims) {
  const int64_t n = in.ndim();
  if (static_cast<int64_t>(dims.size()) != n) {
    Fail("permute: the number of dims (" + std::to_string(dims.size()) +
         ") must equal the number of dimensions of the tensor (" + std::to_string(n) + "); dims " +
         Str(dims) + ", tensor shape " + Str(in));
  }
  std::vector<bool> seen(static_cast<size_t>(n), false);
  std::vector<int64_t> shape(static_cast<size_t>(n));
  Strides stride = Strides::Filled(static_cast<int>(n), 0);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t d = WrapDim("permute", "dim", dims[i], n);
    if (seen[d]) {
      Fail("permute: dim " + std::to_string(dims[i]) + " appears more than once in dims " +
           Str(dims));
    }
    seen[d] = true;
    shape[i] = in[d];
    stride[i] = in_stride[d];
  }
  return {Shape(shape), stride, 0};
}

ViewGeometry InferNarrow(const Shape& in, const Strides& in_stride, int64_t dim, int64_t start,
                         int64_t length) {
  if (in.ndim() == 0) Fail("narrow: cannot narrow a 0-dim tensor");
  const int64_t d = WrapDim("narrow", "dim", dim, in.ndim());
  const int64_t size = in[d];
  int64_t s = start;
  if (s < 0 && s >= -size) s += size;
  if (s < 0 || s > size) {
    Fail("narrow: start " + std::to_string(start) + " is out of range [" + std::to_string(-size) +
         ", " + std::to_string(size) + "] for dim " + std::to_string(d) + " of size " +
         std::to_string(size));
  }
  if (length < 0 || length > size - s) {
    Fail("narrow: start (" + std::to_string(s) + ") + length (" + std::to_string(length) +
         ") exceeds dimension size (" + std::to_string(size) + ") at dim " + std::to_string(d) +
         " (or length is negative); tensor shape " + Str(in));
  }
  ViewGeometry g{in, in_stride, SatMul(s, in_stride[d])};
  g.shape[d] = length;
  return g;
}

Shape InferExpandBackward(const Shape& dy, const Shape& input_shape) {
  const int64_t n = dy.ndim();
  const int64_t k = input_shape.ndim();
  auto fail = [&](const std::string& why) {
    Fail("expand_backward: input_shape " + Str(input_shape) +
         " cannot be expanded to the gradient's shape " + Str(dy) + ": " + why);
  };
  if (k > n) fail("input_shape has more dims than the gradient");
  std::vector<int64_t> target(static_cast<size_t>(n), 1);
  for (int64_t i = 0; i < k; ++i) {
    const int64_t in_d = input_shape[i];
    const int64_t dy_d = dy[n - k + i];
    if (in_d < 0) fail("negative size " + std::to_string(in_d) + " at dim " + std::to_string(i));
    if (in_d != dy_d && in_d != 1) {
      fail("size " + std::to_string(in_d) + " at input dim " + std::to_string(i) +
           " vs gradient size " + std::to_string(dy_d));
    }
    target[n - k + i] = in_d;
  }
  return Shape(target);
}

void CheckRepeatBackward(const Shape& dy, const Shape& input_shape, IntList repeats) {
  CheckShape("repeat_backward", "input_shape", input_shape, 1);
  Shape expect;
  try {
    expect = InferRepeat(input_shape, repeats, 1);
  } catch (const InvalidArgument& e) {
    Fail(std::string("repeat_backward: invalid repeats for input_shape ") + Str(input_shape) +
         ": " + e.what());
  }
  if (expect != dy) {
    Fail("repeat_backward: gradient shape " + Str(dy) + " does not match repeat(input_shape=" +
         Str(input_shape) + ", repeats=" + Str(repeats) + ") = " + Str(expect));
  }
}

int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) {
    return (a < 0) != (b < 0) ? std::numeric_limits<int64_t>::min()
                              : std::numeric_limits<int64_t>::max();
  }
  return r;
}

bool IsContiguous(const Shape& shape, const Strides& stride) {
  int64_t expected = 1;
  for (int64_t i = shape.ndim() - 1; i >= 0; --i) {
    if (shape[i] == 0) return true;
  }
  for (int64_t i = shape.ndim() - 1; i >= 0; --i) {
    if (shape[i] == 1) continue;
    if (stride[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

}  // namespace ofl::ops
