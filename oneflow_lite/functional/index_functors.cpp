// The indexing ops written by hand, whose PyTorch signatures put an int between tensors (the op
// table's rows take the tensors first): gather and scatter_add, as functions and Tensor methods;
// index_select (a gather of the index expanded along the other dims) and one_hot (a comparison
// with 0 .. C - 1), both made of public ops.
#include <cstdint>
#include <vector>

#include "oneflow_lite/error.h"
#include "oneflow_lite/functional/functional.h"
#include "oneflow_lite/functional/functor_util.h"
#include "oneflow_lite/functional/op_call.h"
#include "ops/op_schema.h"
#include "ops/reduce_dims.h"

namespace ofl {

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  static const ops::OpSchema& op = ops::BuiltinOp("gather");
  return functional::Call(op, std::vector<Tensor>{x, index}, Attrs(op.attrs, dim))[0];
}

Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  static const ops::OpSchema& op = ops::BuiltinOp("scatter_add");
  return functional::Call(op, std::vector<Tensor>{self, index, src}, Attrs(op.attrs, dim))[0];
}

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  functional::ImplOf("index_select", x);
  functional::ImplOf("index_select", index);
  if (index.dtype() != DType::kInt64) {
    throw InvalidArgument("index_select: index dtype " + to_string(index.dtype()) +
                          " is not int64");
  }
  if (index.dim() > 1) {
    throw InvalidArgument("index_select: index must have 1 dim (or none), got shape " +
                          index.shape().str());
  }
  const int nd = static_cast<int>(x.dim());
  const int d = ops::WrapDim("index_select", dim, nd);
  if (nd == 0) return gather(x, 0, index.reshape({}));
  std::vector<int64_t> along(static_cast<size_t>(nd), 1), out = x.shape().vec();
  along[static_cast<size_t>(d)] = index.numel();
  out[static_cast<size_t>(d)] = index.numel();
  return gather(x, d, index.reshape(along).expand(out));
}

Tensor one_hot(const Tensor& x, int64_t num_classes) {
  functional::ImplOf("one_hot", x);
  if (x.dtype() != DType::kInt64) {
    throw InvalidArgument("one_hot: dtype " + to_string(x.dtype()) +
                          " is not supported (class indices are int64)");
  }
  if (num_classes < -1) {
    throw InvalidArgument("one_hot: num_classes must be -1 (inferred) or at least 0, got " +
                          std::to_string(num_classes));
  }
  int64_t classes = num_classes;
  if (x.numel() > 0) {
    // The values decide the shape or are checked against it: read them (a wait for x, as
    // PyTorch's one_hot reads them too).
    const int64_t lo = x.amin().to_vector<int64_t>()[0];
    const int64_t hi = x.amax().to_vector<int64_t>()[0];
    if (lo < 0) {
      throw InvalidArgument("one_hot: class values must be non-negative, got " +
                            std::to_string(lo));
    }
    if (classes == -1) {
      classes = hi + 1;
    } else if (hi >= classes) {
      throw InvalidArgument("one_hot: class value " + std::to_string(hi) +
                            " is not below num_classes " + std::to_string(classes));
    }
  } else if (classes == -1) {
    throw InvalidArgument(
        "one_hot: cannot infer the number of classes of an empty tensor; give "
        "num_classes");
  }
  std::vector<int64_t> iota(static_cast<size_t>(classes));
  for (int64_t i = 0; i < classes; ++i) iota[static_cast<size_t>(i)] = i;
  std::vector<int64_t> shape = x.shape().vec();
  shape.push_back(1);
  return eq(x.reshape(shape), tensor<int64_t>(iota, Shape({classes}), x.device()))
      .to(DType::kInt64);
}

Tensor Tensor::gather(int64_t dim, const Tensor& index) const {
  return ofl::gather(*this, dim, index);
}
Tensor Tensor::scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const {
  return ofl::scatter_add(*this, dim, index, src);
}
Tensor Tensor::index_select(int64_t dim, const Tensor& index) const {
  return ofl::index_select(*this, dim, index);
}

}  // namespace ofl
