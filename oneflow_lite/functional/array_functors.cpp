// Functors for the view and copy ops: expand, repeat, reshape, permute, narrow, contiguous and the
// backward of expand and repeat.
#include <limits>
#include <string>

#include "oneflow_lite/autograd.h"
#include "oneflow_lite/autograd/graph.h"
#include "oneflow_lite/functional/functional.h"
#include "oneflow_lite/functional/functor_util.h"
#include "oneflow_lite/functional/global_util.h"
#include "ops/array_ops.h"

namespace ofl {

using functional::ImplOf;
using functional::KernelCache;
using functional::MakeView;
using functional::NewTensor;

namespace {
KernelCache copy_kernel("copy");
KernelCache repeat_kernel("repeat");
KernelCache reduce_kernel("reduce_sum_to");

// Materialises a (possibly strided) view of x into a new contiguous tensor through the copy kernel.
Tensor CopyView(const char* op, const TensorImpl& x, const Shape& shape, const Strides& stride,
                int64_t offset) {
  Tensor out = NewTensor(shape, x.dtype(), x.device());
  kernels::KernelFn fn = copy_kernel.Get(x.device().type());
  vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
    b->OpCall(op, fn, {x.arg(shape, stride, offset)}, {out.impl()->arg()});
  });
  return out;
}

// out, with the node of `name` recorded when x requires grad (ops/<name>_op.cpp has its backward).
Tensor Recorded(const char* name, const Tensor& x, Tensor out, const std::vector<int64_t>& attrs) {
  if (autograd::ShouldRecord(x)) autograd::Record(ops::BuiltinOp(name), x, out, attrs);
  return out;
}

void CheckNotBool(const char* op, DType dtype) {
  if (dtype == DType::kBool) {
    throw InvalidArgument(std::string(op) +
                          ": dtype bool is not supported (gradients are summed); got a bool dy");
  }
}
}  // namespace

Tensor expand(const Tensor& x, const std::vector<int64_t>& sizes) {
  if (x.defined() && x.is_global()) return functional::GlobalExpand(x, sizes);
  const TensorImpl& impl = ImplOf("expand", x);
  ops::ViewGeometry g =
      ops::InferExpand(impl.shape(), impl.stride(), sizes, element_size(impl.dtype()));
  if (functional::ViewsDisabled())
    return Recorded("expand", x, CopyView("expand", impl, g.shape, g.stride, impl.offset()), {});
  return Recorded("expand", x, MakeView(x, g.shape, std::move(g.stride), impl.offset()), {});
}

Tensor contiguous(const Tensor& x) {
  if (x.defined() && x.is_global()) return functional::GlobalContiguous(x);
  const TensorImpl& impl = ImplOf("contiguous", x);
  if (ops::IsContiguous(impl.shape(), impl.stride())) return x;
  return Recorded("contiguous", x,
                  CopyView("contiguous", impl, impl.shape(), impl.stride(), impl.offset()), {});
}

Tensor repeat(const Tensor& x, const std::vector<int64_t>& repeats) {
  if (x.defined() && x.is_global()) return functional::GlobalRepeat(x, repeats);
  const TensorImpl& impl = ImplOf("repeat", x);
  const Shape out_shape = ops::InferRepeat(impl.shape(), repeats, element_size(impl.dtype()));
  Tensor out = NewTensor(out_shape, impl.dtype(), impl.device());
  kernels::KernelFn fn = repeat_kernel.Get(impl.device().type());
  vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
    b->OpCall("repeat", fn, {impl.arg()}, {out.impl()->arg()}, repeats);
  });
  return Recorded("repeat", x, std::move(out), repeats);
}

Tensor reshape(const Tensor& x, const std::vector<int64_t>& shape) {
  if (x.defined() && x.is_global()) return functional::GlobalReshape(x, shape);
  const TensorImpl& impl = ImplOf("reshape", x);
  const Shape out_shape = ops::InferReshape(impl.shape(), shape);
  if (auto stride = ops::ReshapeStrides(impl.shape(), impl.stride(), out_shape)) {
    return Recorded("reshape", x, MakeView(x, out_shape, std::move(*stride), impl.offset()), {});
  }
  Tensor out;
  {
    NoGradGuard inner;  // one node for the whole reshape
    Tensor c = contiguous(x);
    out = MakeView(c, out_shape, RowMajorStrides(out_shape), c.storage_offset());
  }
  return Recorded("reshape", x, std::move(out), {});
}

Tensor permute(const Tensor& x, const std::vector<int64_t>& dims) {
  const TensorImpl& impl = ImplOf("permute", x);
  ops::ViewGeometry g = ops::InferPermute(impl.shape(), impl.stride(), dims);
  return Recorded("permute", x, MakeView(x, g.shape, std::move(g.stride), impl.offset()), dims);
}

Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  const TensorImpl& impl = ImplOf("narrow", x);
  ops::ViewGeometry g = ops::InferNarrow(impl.shape(), impl.stride(), dim, start, length);
  // Only views of empty tensors (whose strides saturate) can push the sum out of range; such an
  // offset is never dereferenced, so saturate it too.
  int64_t offset = 0;
  if (__builtin_add_overflow(impl.offset(), g.offset_delta, &offset)) {
    offset = g.offset_delta > 0 ? std::numeric_limits<int64_t>::max()
                                : std::numeric_limits<int64_t>::min();
  }
  return Recorded("narrow", x, MakeView(x, g.shape, std::move(g.stride), offset),
                  {dim, start, length});
}

Tensor expand_backward(const Tensor& dy, const Shape& input_shape) {
  if (dy.defined() && dy.is_global()) return functional::GlobalExpandBackward(dy, input_shape);
  const TensorImpl& impl = ImplOf("expand_backward", dy);
  CheckNotBool("expand_backward", impl.dtype());
  ops::CheckShape("expand_backward", "input_shape", input_shape, element_size(impl.dtype()));
  const Shape target = ops::InferExpandBackward(impl.shape(), input_shape);
  Tensor out = NewTensor(input_shape, impl.dtype(), impl.device());
  kernels::KernelFn fn = reduce_kernel.Get(impl.device().type());
  vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
    b->OpCall("expand_backward", fn, {impl.arg()},
              {out.impl()->arg(target, RowMajorStrides(target), 0)});
  });
  return Recorded("expand_backward", dy, std::move(out), input_shape.vec());
}

namespace {
Tensor RepeatBackwardUnrecorded(const Tensor& dy, const Shape& input_shape,
                                const std::vector<int64_t>& repeats);
}  // namespace

Tensor repeat_backward(const Tensor& dy, const Shape& input_shape,
                       const std::vector<int64_t>& repeats) {
  if (dy.defined() && dy.is_global())
    return functional::GlobalRepeatBackward(dy, input_shape, repeats);
  Tensor out;
  {
    NoGradGuard inner;  // one node for the whole op, whatever it is made of
    out = RepeatBackwardUnrecorded(dy, input_shape, repeats);
  }
  return Recorded("repeat_backward", dy, std::move(out), repeats);
}

namespace {
Tensor RepeatBackwardUnrecorded(const Tensor& dy, const Shape& input_shape,
                                const std::vector<int64_t>& repeats) {
  const TensorImpl& impl = ImplOf("repeat_backward", dy);
  CheckNotBool("repeat_backward", impl.dtype());
  ops::CheckRepeatBackward(impl.shape(), input_shape, repeats);
  const int64_t n = static_cast<int64_t>(repeats.size());
  const int64_t k = input_shape.ndim();
  std::vector<int64_t> in_padded(static_cast<size_t>(n), 1);
  int64_t splits = 0;
  for (int64_t j = 0; j < n; ++j) {
    const int64_t dim = k - (n - j);
    if (dim >= 0) in_padded[j] = input_shape[dim];
    if (repeats[j] != 1 && in_padded[j] != 1) ++splits;
  }
  kernels::KernelFn fn = reduce_kernel.Get(impl.device().type());
  auto reduce = [&](const TensorImpl& src, const std::vector<int64_t>& view_shape,
                    const std::vector<int64_t>& view_stride, const std::vector<int64_t>& target,
                    const Shape& out_shape, DType out_dtype) {
    Tensor out = NewTensor(out_shape, out_dtype, src.device());
    const Shape target_shape(target);
    vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
      b->OpCall("repeat_backward", fn,
                {src.arg(Shape(view_shape), Strides(view_stride), src.offset())},
                {out.impl()->arg(target_shape, RowMajorStrides(target_shape), 0)});
    });
    return out;
  };
  if (n + splits <= kMaxDims) {
    // dy's dim j (size r*s, stride t) is viewed as (r, s) with strides (s*t, t); r is summed.
    std::vector<int64_t> view_shape, view_stride, target;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t r = repeats[j], s = in_padded[j], t = impl.stride()[j];
      if (r != 1 && s != 1) {
        view_shape.insert(view_shape.end(), {r, s});
        // Saturating: only an empty dy (which is never read) can have s * t out of range.
        view_stride.insert(view_stride.end(), {ops::SaturatingMul(s, t), t});
        target.insert(target.end(), {1, s});
      } else {
        view_shape.push_back(impl.shape()[j]);
        view_stride.push_back(t);
        target.push_back(s);
      }
    }
    return reduce(impl, view_shape, view_stride, target, input_shape, impl.dtype());
  }
  // Too many dims to split at once: reduce one dim per round over a contiguous copy, seen as
  // (before, r, s, after). Every round is one OpCall; the order of each sum stays fixed. 16-bit
  // floats keep their partial sums in float32 between rounds, so they still accumulate in float.
  const bool half = impl.dtype() == DType::kFloat16 || impl.dtype() == DType::kBFloat16;
  int64_t last_round = -1;
  for (int64_t j = 0; j < n; ++j) {
    if (repeats[j] != 1) last_round = j;
  }
  Tensor cur = contiguous(dy);
  std::vector<int64_t> sizes(impl.shape().begin(), impl.shape().end());
  for (int64_t j = 0; j < n; ++j) {
    const int64_t r = repeats[j], s = in_padded[j];
    if (r == 1) continue;
    const DType out_dtype = half && j != last_round ? DType::kFloat32 : impl.dtype();
    int64_t before = 1, after = 1;
    for (int64_t d = 0; d < j; ++d) before = ops::SaturatingMul(before, sizes[d]);
    for (int64_t d = j + 1; d < n; ++d) after = ops::SaturatingMul(after, sizes[d]);
    sizes[j] = s;
    const int64_t s_after = ops::SaturatingMul(s, after);
    cur = reduce(*cur.impl(), {before, r, s, after},
                 {ops::SaturatingMul(r, s_after), s_after, after, 1}, {before, 1, s, after},
                 Shape(sizes), out_dtype);
  }
  return reshape(cur, input_shape.vec());
}
}  // namespace

}  // namespace ofl
