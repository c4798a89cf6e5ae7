// The creation functions with PyTorch's rules: arange and linspace (the range_ op into a new
// 1-dim tensor: every device computes the values by one rule, kernels/range.h), and empty_like,
// zeros_like, ones_like and full_like (x's shape and device, x's dtype unless told another).
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "oneflow_lite/distributed.h"
#include "oneflow_lite/functional/functional.h"
#include "oneflow_lite/functional/functor_util.h"
#include "oneflow_lite/functional/global_util.h"
#include "oneflow_lite/functional/op_call.h"
#include "ops/array_ops.h"
#include "ops/op_schema.h"

namespace ofl {

namespace {

// A new 1-dim tensor of n elements filled by the range kernel.
Tensor Range(const char* op_name, int64_t n, const Scalar& start, const Scalar& step,
             const Scalar& end, int64_t head, DType dtype, const Device& device) {
  static const ops::OpSchema& op = ops::BuiltinOp("range_");
  ops::CheckDType(op_name, dtype);
  if (dtype == DType::kBool) {
    throw InvalidArgument(std::string(op_name) + ": dtype bool is not supported");
  }
  const Shape shape(std::vector<int64_t>{n});
  ops::CheckShape(op_name, "size", shape, element_size(dtype));
  return functional::Call(op, functional::NewTensor(shape, dtype, device),
                          Attrs(op.attrs, start, step, end, head));
}

// An integer start or step of an integer arange: a float is truncated toward zero (as PyTorch
// computes an integer arange in int64).
Scalar AsInteger(const char* what, const Scalar& v) {
  if (!v.is_floating_point()) return v;
  const double d = std::trunc(v.double_value());
  if (!(d >= -9.2233720368547758e18 && d < 9.2233720368547758e18)) {
    throw InvalidArgument(std::string("arange: ") + what + " " + v.str() +
                          " is outside the range of int64 for an integer dtype");
  }
  return Scalar(static_cast<int64_t>(d));
}

// x's implementation (a global one's is its shard).
const TensorImpl& LikeImpl(const char* op, const Tensor& x) {
  return functional::LocalImplOf(op, x);
}

}  // namespace

Tensor arange(Scalar end, std::optional<DType> dtype, const Device& device) {
  return arange(Scalar(int64_t{0}), end, Scalar(int64_t{1}), dtype, device);
}

Tensor arange(Scalar start, Scalar end, Scalar step, std::optional<DType> dtype,
              const Device& device) {
  const bool all_integers =
      !start.is_floating_point() && !end.is_floating_point() && !step.is_floating_point();
  const DType out = dtype ? *dtype : (all_integers ? DType::kInt64 : DType::kFloat32);
  const double s = start.to_double(), e = end.to_double(), d = step.to_double();
  if (!std::isfinite(s) || !std::isfinite(e)) {
    throw InvalidArgument("arange: unsupported range: " + start.str() + " -> " + end.str());
  }
  if (d == 0 || !std::isfinite(d)) {
    throw InvalidArgument("arange: step must be finite and nonzero, got " + step.str());
  }
  if ((d > 0 && e < s) || (d < 0 && e > s)) {
    throw InvalidArgument("arange: the range " + start.str() + " -> " + end.str() +
                          " runs against the sign of step " + step.str());
  }
  double count = 0;
  if (all_integers && start.kind() != Scalar::Kind::kUInt64 &&
      end.kind() != Scalar::Kind::kUInt64 && step.kind() != Scalar::Kind::kUInt64) {
    // Exactly, in 128 bits: ceil((end - start) / step) of integers.
    const __int128 span = static_cast<__int128>(end.int64_value()) - start.int64_value();
    const __int128 st = step.int64_value();
    const __int128 n = (span + st + (st > 0 ? -1 : 1)) / st;
    count = static_cast<double>(n);
  } else {
    count = std::ceil((e - s) / d);
  }
  if (!(count < 9.2233720368547758e18)) {
    throw InvalidArgument("arange: the range " + start.str() + " -> " + end.str() + " by step " +
                          step.str() + " has too many elements");
  }
  const int64_t n = static_cast<int64_t>(count);
  if (is_floating_point(out) || out == DType::kBool) {
    return Range("arange", n, start, step, end, n, out, device);
  }
  return Range("arange", n, AsInteger("start", start), AsInteger("step", step), end, n, out,
               device);
}

Tensor linspace(Scalar start, Scalar end, int64_t steps, std::optional<DType> dtype,
                const Device& device) {
  if (steps < 0) {
    throw InvalidArgument("linspace: number of steps must be non-negative, got " +
                          std::to_string(steps));
  }
  const DType out = dtype ? *dtype : DType::kFloat32;
  const double s = start.to_double(), e = end.to_double();
  const double step = steps > 1 ? (e - s) / static_cast<double>(steps - 1) : 0.0;
  // The floating form of the kernel (double start and end), the second half counted from the end.
  return Range("linspace", steps, Scalar(s), Scalar(step), Scalar(e), steps > 1 ? steps / 2 : steps,
               out, device);
}

// The *_like functions: a global x gives a global tensor of its placement and logical shape, each
// rank making its own shard; a partial_sum x gives a broadcast one (its value is the same on every
// rank, as the like of the whole tensor's).
namespace {
Sbp LikeSbp(const Sbp& sbp) { return sbp.is_partial_sum() ? Sbp::broadcast() : sbp; }

// x's global metadata, or null for a local x. InvalidArgument naming `op` when a device is asked
// for a global x (its placement decides the devices).
const GlobalMeta* GlobalLike(const char* op, const TensorImpl& t,
                             const std::optional<Device>& device) {
  const GlobalMeta* g = t.global().get();
  if (g != nullptr && device) {
    throw InvalidArgument(std::string(op) + ": device " + device->str() +
                          " given for a global tensor over " + g->placement.str() +
                          " (its placement decides the devices; call to_local() first for a "
                          "local result)");
  }
  return g;
}

Tensor FullLike(const char* op, const Tensor& x, const Scalar& value, std::optional<DType> dtype,
                std::optional<Device> device) {
  const TensorImpl& t = LikeImpl(op, x);
  const DType out = dtype ? *dtype : t.dtype();
  if (const GlobalMeta* g = GlobalLike(op, t, device)) {
    return functional::GlobalFull(op, g->logical_shape, value, out, g->placement, LikeSbp(g->sbp));
  }
  return functional::Full(op, t.shape(), value, out, device ? *device : t.device());
}
}  // namespace

Tensor empty_like(const Tensor& x, std::optional<DType> dtype, std::optional<Device> device) {
  const TensorImpl& t = LikeImpl("empty_like", x);
  const DType out = dtype ? *dtype : t.dtype();
  ops::CheckDType("empty_like", out);
  if (const GlobalMeta* g = GlobalLike("empty_like", t, device)) {
    return empty(g->logical_shape, out, g->placement, LikeSbp(g->sbp));
  }
  return empty(t.shape(), out, device ? *device : t.device());
}
Tensor zeros_like(const Tensor& x, std::optional<DType> dtype, std::optional<Device> device) {
  return FullLike("zeros_like", x, 0, dtype, device);
}
Tensor ones_like(const Tensor& x, std::optional<DType> dtype, std::optional<Device> device) {
  return FullLike("ones_like", x, 1, dtype, device);
}
Tensor full_like(const Tensor& x, Scalar value, std::optional<DType> dtype,
                 std::optional<Device> device) {
  return FullLike("full_like", x, value, dtype, device);
}

}  // namespace ofl
