// The array ops on global tensors. Each infers the output SBP and logical shape from the logical
// input (ops/sbp_rules.h; argument errors are the same on every rank, thrown before anything is
// issued), then runs the local op on this rank's shard with the physical arguments. Where no SBP
// passes through (repeat or reshape across a split dim), the input is boxed to broadcast first
// and the result is broadcast. Ranks outside the placement compute nothing.
#include <optional>
#include <vector>

#include "oneflow_lite/distributed.h"
#include "oneflow_lite/functional/functional.h"
#include "oneflow_lite/functional/functor_util.h"
#include "oneflow_lite/functional/global_util.h"
#include "ops/array_ops.h"
#include "ops/sbp_rules.h"

namespace ofl::functional {
namespace {

const GlobalMeta& Meta(const char* op, const Tensor& x) { return *LocalImplOf(op, x).global(); }

int MyIndex(const GlobalMeta& g) { return g.placement.index_of(ofl::rank()); }

std::vector<int64_t> Dims(const Shape& s) { return std::vector<int64_t>(s.begin(), s.end()); }

}  // namespace

Tensor GlobalExpand(const Tensor& x, const std::vector<int64_t>& sizes) {
  const GlobalMeta& g = Meta("expand", x);
  const Shape& in = g.logical_shape;
  const Shape out = ops::InferExpand(in, RowMajorStrides(in), sizes, element_size(x.dtype())).shape;
  const Sbp sbp = ops::InferExpandSbp(in, g.sbp, out);
  const int me = MyIndex(g);
  if (me < 0) return Wrap(EmptyShard(x.dtype()), g.placement, sbp, out);
  const Tensor shard = ShardOf(x);
  return Wrap(ofl::expand(shard, ops::PhysicalExpandSizes(in, g.sbp, out, shard.shape())),
              g.placement, sbp, out);
}

Tensor GlobalContiguous(const Tensor& x) {
  const GlobalMeta& g = Meta("contiguous", x);
  if (MyIndex(g) < 0) return x;
  return Wrap(ofl::contiguous(ShardOf(x)), g.placement, g.sbp, g.logical_shape);
}

Tensor GlobalRepeat(const Tensor& x, const std::vector<int64_t>& repeats) {
  const GlobalMeta& g = Meta("repeat", x);
  const Shape out = ops::InferRepeat(g.logical_shape, repeats, element_size(x.dtype()));
  const std::optional<Sbp> passes = ops::InferRepeatSbp(g.logical_shape, g.sbp, repeats);
  const Sbp sbp = passes ? *passes : Sbp::broadcast();
  const Tensor src = passes ? x : x.to_global(g.placement, Sbp::broadcast());
  if (MyIndex(g) < 0) return Wrap(EmptyShard(x.dtype()), g.placement, sbp, out);
  return Wrap(ofl::repeat(ShardOf(src), repeats), g.placement, sbp, out);
}

Tensor GlobalReshape(const Tensor& x, const std::vector<int64_t>& shape) {
  const GlobalMeta& g = Meta("reshape", x);
  const Shape out = ops::InferReshape(g.logical_shape, shape);
  const std::optional<Sbp> passes = ops::InferReshapeSbp(g.logical_shape, g.sbp, out);
  const Sbp sbp = passes ? *passes : Sbp::broadcast();
  const Tensor src = passes ? x : x.to_global(g.placement, Sbp::broadcast());
  const int me = MyIndex(g);
  if (me < 0) return Wrap(EmptyShard(x.dtype()), g.placement, sbp, out);
  const Shape local = ops::PhysicalShape(out, sbp, g.placement.size(), me);
  return Wrap(ofl::reshape(ShardOf(src), Dims(local)), g.placement, sbp, out);
}

Tensor GlobalExpandBackward(const Tensor& dy, const Shape& input_shape) {
  const GlobalMeta& g = Meta("expand_backward", dy);
  ops::CheckShape("expand_backward", "input_shape", input_shape, element_size(dy.dtype()));
  const Sbp sbp = ops::InferExpandBackwardSbp(g.sbp, g.logical_shape, input_shape);
  const int me = MyIndex(g);
  if (me < 0) return Wrap(EmptyShard(dy.dtype()), g.placement, sbp, input_shape);
  const Shape local = ops::PhysicalShape(input_shape, sbp, g.placement.size(), me);
  return Wrap(ofl::expand_backward(ShardOf(dy), local), g.placement, sbp, input_shape);
}

Tensor GlobalRepeatBackward(const Tensor& dy, const Shape& input_shape,
                            const std::vector<int64_t>& repeats) {
  const GlobalMeta& g = Meta("repeat_backward", dy);
  ops::CheckRepeatBackward(g.logical_shape, input_shape, repeats);
  const std::optional<Sbp> passes = ops::InferRepeatBackwardSbp(g.sbp, input_shape, repeats);
  const Sbp dy_sbp = passes ? g.sbp : Sbp::broadcast();
  const Tensor src = passes ? dy : dy.to_global(g.placement, Sbp::broadcast());
  const Sbp sbp = passes ? *passes : Sbp::broadcast();
  const int me = MyIndex(g);
  if (me < 0) return Wrap(EmptyShard(dy.dtype()), g.placement, sbp, input_shape);
  const Tensor shard = ShardOf(src);
  const Shape local = ops::PhysicalShape(input_shape, sbp, g.placement.size(), me);
  const std::vector<int64_t> local_repeats =
      ops::PhysicalRepeatBackwardRepeats(dy_sbp, input_shape, repeats, shard.shape());
  return Wrap(ofl::repeat_backward(shard, local, local_repeats), g.placement, sbp, input_shape);
}

}  // namespace ofl::functional
