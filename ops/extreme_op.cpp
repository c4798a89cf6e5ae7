#include "ops/extreme_op.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "oneflow_lite/error.h"
#include "oneflow_lite/functional/functional.h"
#include "ops/array_ops.h"
#include "ops/reduce_dims.h"
#include "ops/sbp_rules.h"

namespace ofl::ops {
namespace {

// InvalidArgument naming `op` when a reduced dim has no elements (a max has no identity).
void CheckNonEmpty(const char* op, const Shape& shape, const std::vector<bool>& reduced) {
  for (size_t i = 0; i < reduced.size(); ++i) {
    if (reduced[i] && shape[static_cast<int>(i)] == 0) {
      throw InvalidArgument(std::string(op) + ": the input has no elements along dim " +
                            std::to_string(i) + " (shape " + shape.str() +
                            "): the reduction has no identity");
    }
  }
  if (reduced.empty() && shape.numel() == 0) {
    throw InvalidArgument(std::string(op) + ": the input has no elements");
  }
}

}  // namespace

OpSchema ExtremeDimOp(const char* name, bool is_max) {
  (void)is_max;  // the kernel of the op's name decides
  OpSchema op;
  op.name = name;
  op.num_outputs = 2;
  op.attrs = {{"dim", AttrType::kInt}};
  op.form = KernelForm{};
  op.infer = [name](const std::vector<TensorMeta>& in, const Attrs& attrs) {
    const TensorMeta& x = in[0];
    CheckDType(name, x.dtype);
    const int ndim = x.shape.ndim();
    const int dim = WrapDim(name, attrs.get_int("dim"), ndim);
    std::vector<bool> reduced(static_cast<size_t>(ndim), false);
    if (ndim > 0) reduced[static_cast<size_t>(dim)] = true;
    CheckNonEmpty(name, x.shape, reduced);
    const Shape keep = KeepdimShape(x.shape, reduced);
    return std::vector<TensorMeta>{TensorMeta{keep, x.dtype}, TensorMeta{keep, DType::kInt64}};
  };
  op.save_outputs = Bit(1);
  op.backward = [name](const GradContext& ctx, const std::vector<Tensor>& g) {
    const ArgInfo& x = ctx.input_info[0];
    const int ndim = x.shape.ndim();
    if (ndim == 0) return std::vector<Tensor>{g[0]};
    const int dim = WrapDim(name, ctx.attrs.get_int("dim"), ndim);
    // 0 .. n-1 along dim, 1 elsewhere: equal to the index only at the chosen element.
    const int64_t n = x.shape[dim];
    std::vector<int64_t> iota(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) iota[static_cast<size_t>(i)] = i;
    std::vector<int64_t> along(static_cast<size_t>(ndim), 1);
    along[static_cast<size_t>(dim)] = n;
    const Tensor positions = tensor<int64_t>(iota, Shape(along), x.device);
    const Tensor chosen = eq(ctx.outputs[1], positions).to(g[0].dtype());
    return std::vector<Tensor>{g[0].expand(x.shape.vec()) * chosen};
  };
  return op;
}

OpSchema AmaxOp(const char* name, bool is_max) {
  OpSchema op;
  op.name = name;
  op.attrs = {{"dims", AttrType::kInts}, {"keepdim", AttrType::kBool}};
  op.infer = [name](const std::vector<TensorMeta>& in, const Attrs& attrs) {
    const TensorMeta& x = in[0];
    CheckDType(name, x.dtype);
    const std::vector<bool> reduced = ReducedDims(name, x.shape.ndim(), attrs.get_ints("dims"));
    CheckNonEmpty(name, x.shape, reduced);
    return std::vector<TensorMeta>{TensorMeta{
        attrs.get_bool("keepdim") ? KeepdimShape(x.shape, reduced) : DroppedShape(x.shape, reduced),
        x.dtype}};
  };
  // One max_dim (min_dim) call per reduced dim, innermost first, each keeping its dim.
  op.form = ComposeForm{[name, is_max](const std::vector<Tensor>& in, const Attrs& attrs) {
    const Shape& shape = in[0].shape();
    const std::vector<bool> reduced = ReducedDims(name, shape.ndim(), attrs.get_ints("dims"));
    auto step = [is_max](const Tensor& t, int64_t d) {
      return is_max ? max_dim(t, d) : min_dim(t, d);
    };
    Tensor y = in[0];
    if (shape.ndim() == 0) y = step(y, 0);
    for (int d = shape.ndim() - 1; d >= 0; --d) {
      if (reduced[static_cast<size_t>(d)]) y = step(y, d);
    }
    if (!attrs.get_bool("keepdim")) y = y.reshape(DroppedShape(shape, reduced).vec());
    return std::vector<Tensor>{y};
  }};
  op.save_inputs = Bit(0);
  op.save_outputs = Bit(0);
  op.backward = [name](const GradContext& ctx, const std::vector<Tensor>& g) {
    const Tensor& x = ctx.inputs[0];
    const Shape& shape = ctx.input_info[0].shape;
    const std::vector<bool> reduced = ReducedDims(name, shape.ndim(), ctx.attrs.get_ints("dims"));
    const std::vector<int64_t> keep = KeepdimShape(shape, reduced).vec();
    std::vector<int64_t> dims;
    for (size_t i = 0; i < reduced.size(); ++i) {
      if (reduced[i]) dims.push_back(static_cast<int64_t>(i));
    }
    const Tensor mask = eq(x, ctx.outputs[0].reshape(keep)).to(g[0].dtype());
    return std::vector<Tensor>{g[0].reshape(keep) * mask / mask.sum(dims, /*keepdim=*/true)};
  };
  // Global: a split on a reduced dim is boxed to broadcast first; partial_sum is reduced first.
  op.sbp = [name = name](const GlobalCall& c) {
    return InferReduceSbp(c.in_sbp,
                          ReducedDims(name, c.logical_in.ndim(), c.attrs.get_ints("dims")),
                          c.attrs.get_bool("keepdim"), /*split_gives_partial=*/false,
                          /*partial_passes=*/false);
  };
  return op;
}

}  // namespace ofl::ops
