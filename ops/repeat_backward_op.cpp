// repeat_backward(dy, input_shape, repeats): attributes input_shape (shape), repeats (int list).
// The sum of dy's tiles, composed of public ops: dy's dim j (r tiles of s) is seen as (r, s) by a
// reshape (a view) and one reduce_sum_to sums every r at once. When that would take more than
// kMaxDims dims, one dim per round over a contiguous copy, 16-bit floats keeping their partial sums
// in float32 between rounds (one rounding, as in one round). Global: InferRepeatBackwardSbp (a
// split on a repeated dim becomes partial_sum where tiles are at most one element thick, else dy is
// boxed to broadcast); each rank sums its shard with PhysicalRepeatBackwardRepeats. Gradient: it
// is linear, the adjoint of repeat: gg repeated.
#include <string>
#include <vector>

#include "oneflow_lite/error.h"
#include "oneflow_lite/extension.h"
#include "oneflow_lite/functional/functional.h"
#include "ops/array_ops.h"
#include "ops/op_schema.h"
#include "ops/sbp_rules.h"

namespace ofl::ops {

namespace {

struct Args {
  Shape input_shape;
  IntList repeats;
};

Args Decode(const Attrs& attrs) {
  return Args{attrs.get_shape("input_shape"), attrs.get_ints("repeats")};
}

Tensor ReduceTo(const Tensor& x, const std::vector<int64_t>& target, DType dtype) {
  return call_op("reduce_sum_to", {x}, {{"dtype", dtype}, {"target", target}})[0];
}

std::vector<Tensor> Compose(const std::vector<Tensor>& in, const Attrs& attrs) {
  const Tensor& dy = in[0];
  const Args a = Decode(attrs);
  const IntList repeats = a.repeats;
  const int64_t n = static_cast<int64_t>(repeats.size());
  const int64_t k = a.input_shape.ndim();
  std::vector<int64_t> in_padded(static_cast<size_t>(n), 1);
  int64_t splits = 0;
  for (int64_t j = 0; j < n; ++j) {
    const int64_t dim = k - (n - j);
    if (dim >= 0) in_padded[j] = a.input_shape[dim];
    if (repeats[j] != 1 && in_padded[j] != 1) ++splits;
  }
  const Shape& dy_shape = dy.shape();
  if (n + splits <= kMaxDims) {
    // dy's dim j (size r*s) seen as (r, s); r is summed.
    std::vector<int64_t> view_shape, target;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t r = repeats[j], s = in_padded[j];
      if (r != 1 && s != 1) {
        view_shape.insert(view_shape.end(), {r, s});
        target.insert(target.end(), {1, s});
      } else {
        view_shape.push_back(dy_shape[j]);
        target.push_back(s);
      }
    }
    return {ReduceTo(dy.reshape(view_shape), target, dy.dtype()).reshape(a.input_shape.vec())};
  }
  // Too many dims to split at once: reduce one dim per round over a contiguous copy, seen as
  // (before, r, s, after). The order of each sum stays fixed.
  const DType dtype = dy.dtype();
  const bool half = dtype == DType::kFloat16 || dtype == DType::kBFloat16;
  int64_t last_round = -1;
  for (int64_t j = 0; j < n; ++j) {
    if (repeats[j] != 1) last_round = j;
  }
  Tensor cur = dy.contiguous();
  std::vector<int64_t> sizes(dy_shape.begin(), dy_shape.end());
  for (int64_t j = 0; j < n; ++j) {
    const int64_t r = repeats[j], s = in_padded[j];
    if (r == 1) continue;
    int64_t before = 1, after = 1;
    for (int64_t d = 0; d < j; ++d) before = SaturatingMul(before, sizes[d]);
    for (int64_t d = j + 1; d < n; ++d) after = SaturatingMul(after, sizes[d]);
    sizes[j] = s;
    cur = ReduceTo(cur.reshape({before, r, s, after}), {before, 1, s, after},
                   half && j != last_round ? DType::kFloat32 : dtype);
  }
  return {cur.reshape(a.input_shape.vec())};
}

OpSchema MakeRepeatBackwardOp() {
  OpSchema op;
  op.name = "repeat_backward";
  op.attrs = {{"input_shape", AttrType::kShape}, {"repeats", AttrType::kInts}};
  op.infer = [](const std::vector<TensorMeta>& in, const Attrs& attrs) {
    const TensorMeta& dy = in[0];
    CheckGradientDType("repeat_backward", dy.dtype);
    Args a = Decode(attrs);
    CheckShape("repeat_backward", "input_shape", a.input_shape, element_size(dy.dtype));
    CheckRepeatBackward(dy.shape, a.input_shape, a.repeats);
    return std::vector<TensorMeta>{{std::move(a.input_shape), dy.dtype}};
  };
  op.form = ComposeForm{Compose};
  op.sbp = [](const GlobalCall& c) {
    const Args a = Decode(c.attrs);
    return InferRepeatBackwardSbp(c.in_sbp, a.input_shape, a.repeats);
  };
  op.local_attrs = [](const GlobalCall& c, const Sbp&, const Shape& physical_in,
                      const Shape& physical_out) {
    const Args a = Decode(c.attrs);
    return Attrs(*c.attrs.schema(), physical_out,
                 PhysicalRepeatBackwardRepeats(c.in_sbp, a.input_shape, a.repeats, physical_in));
  };
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    return std::vector<Tensor>{g[0].repeat(Decode(ctx.attrs).repeats.vec())};
  };
  return op;
}
OFL_REGISTER_OP(MakeRepeatBackwardOp);

}  // namespace
}  // namespace ofl::ops
