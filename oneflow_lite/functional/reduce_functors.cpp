// The reductions written by hand: sum in a dtype (a cast, then sum); max/min along a dim, whose op
// (max_dim, min_dim) gives values and indices with the dim kept, and of the whole tensor;
// argmax/argmin, the indices alone (of the flattened tensor for dim None).
#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "oneflow_lite/functional/functor_util.h"
#include "oneflow_lite/functional/op_call.h"
#include "oneflow_lite/reductions.h"
#include "ops/op_schema.h"

namespace ofl {

namespace {

// (values, indices) of op `name` along dim, the dim dropped unless keepdim.
std::tuple<Tensor, Tensor> ExtremeDim(const char* name, const Tensor& x, int64_t dim,
                                      bool keepdim) {
  const ops::OpSchema& op = ops::BuiltinOp(name);
  std::vector<Tensor> out = functional::Call(op, std::vector<Tensor>{x}, Attrs(op.attrs, dim));
  if (!keepdim && x.dim() > 0) {
    std::vector<int64_t> shape = x.shape().vec();
    shape.erase(shape.begin() + (dim < 0 ? dim + x.dim() : dim));
    out[0] = out[0].reshape(shape);
    out[1] = out[1].reshape(shape);
  }
  return {out[0], out[1]};
}

// The index of the extreme along dim, or of the flattened tensor (keepdim then gives every dim
// as 1, as PyTorch's).
Tensor ArgExtreme(const char* name, const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  if (dim) return std::get<1>(ExtremeDim(name, x, *dim, keepdim));
  functional::ImplOf(name, x);  // names an undefined or global tensor
  Tensor i = std::get<1>(ExtremeDim(name, x.reshape({-1}), 0, /*keepdim=*/false));
  if (keepdim) i = i.reshape(std::vector<int64_t>(static_cast<size_t>(x.dim()), 1));
  return i;
}

}  // namespace

Tensor max_dim(const Tensor& x, int64_t dim) {
  return std::get<0>(ExtremeDim("max_dim", x, dim, /*keepdim=*/true));
}
Tensor min_dim(const Tensor& x, int64_t dim) {
  return std::get<0>(ExtremeDim("min_dim", x, dim, /*keepdim=*/true));
}

std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim) {
  return ExtremeDim("max_dim", x, dim, keepdim);
}
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim) {
  return ExtremeDim("min_dim", x, dim, keepdim);
}
Tensor max(const Tensor& x) { return amax(x); }
Tensor min(const Tensor& x) { return amin(x); }
std::tuple<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim) const {
  return ofl::max(*this, dim, keepdim);
}
std::tuple<Tensor, Tensor> Tensor::min(int64_t dim, bool keepdim) const {
  return ofl::min(*this, dim, keepdim);
}
Tensor sum(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim, DType dtype) {
  functional::ImplOf("sum", x);  // names an undefined or global tensor
  Tensor s = sum(x.to(dtype), dims, keepdim);
  return s.dtype() == dtype ? s : s.to(dtype);  // an integer sum is int64: back to dtype
}
Tensor sum(const Tensor& x, DType dtype) { return sum(x, {}, false, dtype); }
Tensor Tensor::max() const { return ofl::max(*this); }
Tensor Tensor::min() const { return ofl::min(*this); }

Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return ArgExtreme("max_dim", x, dim, keepdim);
}
Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return ArgExtreme("min_dim", x, dim, keepdim);
}

}  // namespace ofl
