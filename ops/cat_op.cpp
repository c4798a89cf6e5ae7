// cat(tensors, dim): the inputs joined along dim, as torch.cat. The inputs (1 to 64; the function
// cats more in groups) have one number of dims and equal sizes in every dim but dim; a 1-dim input
// of size 0 is skipped whatever the others' shapes (PyTorch's legacy rule); a 0-dim input is
// refused. The inputs are cast to their result type at the entry (cat of int32 and float32 is
// float32). Made of copy_ into the narrowed views of one new output, so it runs on every device.
// Gradient: the narrowed views of g.
#include <cstdint>
#include <string>
#include <vector>

#include "oneflow_lite/error.h"
#include "oneflow_lite/functional/functional.h"
#include "ops/array_ops.h"
#include "ops/op_schema.h"
#include "ops/reduce_dims.h"

namespace ofl::ops {
namespace {

bool Skipped(const Shape& s) { return s.ndim() == 1 && s[0] == 0; }

// The output's shape; InvalidArgument for inputs that do not join.
Shape CatShape(const std::vector<TensorMeta>& in, int64_t dim, int* wrapped) {
  if (in.empty()) throw InvalidArgument("cat: expected a non-empty list of tensors");
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i].shape.ndim() == 0) {
      throw InvalidArgument("cat: zero-dimensional tensor (at position " + std::to_string(i) +
                            ") cannot be concatenated");
    }
  }
  size_t ref = 0;
  while (ref < in.size() && Skipped(in[ref].shape)) ++ref;
  if (ref == in.size()) {
    *wrapped = WrapDim("cat", dim, 1);
    return Shape(std::vector<int64_t>{0});
  }
  const Shape& r = in[ref].shape;
  const int d = WrapDim("cat", dim, r.ndim());
  *wrapped = d;
  std::vector<int64_t> out = r.vec();
  out[static_cast<size_t>(d)] = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const Shape& s = in[i].shape;
    if (Skipped(s)) continue;
    if (s.ndim() != r.ndim()) {
      throw InvalidArgument("cat: tensors must have the same number of dims: tensor " +
                            std::to_string(ref) + " has shape " + r.str() + ", tensor " +
                            std::to_string(i) + " has shape " + s.str());
    }
    for (int k = 0; k < r.ndim(); ++k) {
      if (k != d && s[k] != r[k]) {
        throw InvalidArgument("cat: sizes of tensors must match except in dim " +
                              std::to_string(d) + ": expected size " + std::to_string(r[k]) +
                              " but got size " + std::to_string(s[k]) + " for tensor " +
                              std::to_string(i) + " in dim " + std::to_string(k));
      }
    }
    out[static_cast<size_t>(d)] += s[d];
  }
  return Shape(out);
}

OpSchema MakeCatOp() {
  OpSchema op;
  op.name = "cat";
  op.variadic_inputs = true;
  op.attrs = {{"dim", AttrType::kInt}};
  op.input_cast = InputCast::kResultType;
  op.infer = [](const std::vector<TensorMeta>& in, const Attrs& attrs) {
    int d = 0;
    const Shape shape = CatShape(in, attrs.get_int("dim"), &d);
    CheckDType("cat", in[0].dtype);
    CheckShape("cat", "output shape", shape, element_size(in[0].dtype));
    return std::vector<TensorMeta>{TensorMeta{shape, in[0].dtype}};
  };
  op.form = ComposeForm{[](const std::vector<Tensor>& in, const Attrs& attrs) {
    std::vector<TensorMeta> metas;
    metas.reserve(in.size());
    for (const Tensor& x : in) metas.push_back(TensorMeta{x.shape(), x.dtype()});
    int d = 0;
    const Shape shape = CatShape(metas, attrs.get_int("dim"), &d);
    Tensor out = empty(shape, in[0].dtype(), in[0].device());
    int64_t offset = 0;
    for (const Tensor& x : in) {
      if (Skipped(x.shape())) continue;
      const int64_t n = x.shape()[d];
      if (n > 0) out.narrow(d, offset, n).copy_(x);
      offset += n;
    }
    return std::vector<Tensor>{out};
  }};
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    std::vector<TensorMeta> metas;
    metas.reserve(ctx.input_info.size());
    for (const ArgInfo& a : ctx.input_info) metas.push_back(TensorMeta{a.shape, a.dtype});
    int d = 0;
    (void)CatShape(metas, ctx.attrs.get_int("dim"), &d);
    std::vector<Tensor> dx(ctx.input_info.size());
    int64_t offset = 0;
    for (size_t i = 0; i < dx.size(); ++i) {
      const ArgInfo& a = ctx.input_info[i];
      if (Skipped(a.shape)) {
        if (ctx.needs(static_cast<int>(i))) dx[i] = zeros(a.shape, g[0].dtype(), g[0].device());
        continue;
      }
      const int64_t n = a.shape[d];
      if (ctx.needs(static_cast<int>(i))) dx[i] = g[0].narrow(d, offset, n);
      offset += n;
    }
    return dx;
  };
  return op;
}
OFL_REGISTER_OP(MakeCatOp);

}  // namespace
}  // namespace ofl::ops
