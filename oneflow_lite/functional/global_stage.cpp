// The global stage of an op call (op_call.h): the logical output and its SBP from the definition
// (the same verdict on every rank: only logical shapes enter it), boxing to broadcast where no
// SBP passes through, then the autograd stage on this rank's shard with its physical attributes.
// Ranks outside the placement compute nothing.
#include <optional>
#include <string>

#include "oneflow_lite/autograd.h"
#include "oneflow_lite/autograd/graph.h"
#include "oneflow_lite/distributed.h"
#include "oneflow_lite/functional/functor_util.h"
#include "oneflow_lite/functional/global_util.h"
#include "oneflow_lite/functional/stages.h"
#include "ops/array_ops.h"
#include "ops/sbp_rules.h"

namespace ofl::functional::stage {

namespace {
Shape LogicalOutput(const ops::OpSchema& op, const Shape& in, DType dtype, const Attrs& attrs) {
  if (const ops::ViewForm* view = op.as<ops::ViewForm>()) {
    std::optional<ops::ViewGeometry> v = view->geometry(in, RowMajorStrides(in), dtype, attrs);
    if (!v) throw Error(op.name + ": internal: no view of a contiguous tensor");
    return v->shape;
  }
  std::vector<TensorMeta> out = op.infer({TensorMeta{in, dtype}}, attrs);
  if (out.size() != 1) throw Error(op.name + ": internal: a global op with one output only");
  ops::CheckDType(op.name.c_str(), out[0].dtype);
  ops::CheckShape(op.name.c_str(), "output shape", out[0].shape, element_size(out[0].dtype));
  return out[0].shape;
}
}  // namespace

namespace {
Tensor Compute(const ops::OpSchema& op, const Tensor& x, const Attrs& attrs) {
  const char* name = op.name.c_str();
  // An op without an SBP signature refuses global tensors (the message says what to do).
  if (!op.sbp) (void)ImplOf(name, x);
  const GlobalMeta& g = *LocalImplOf(name, x).global();
  const Shape& in = g.logical_shape;
  const Shape out = LogicalOutput(op, in, x.dtype(), attrs);
  const ops::GlobalCall logical{in, g.sbp, out, attrs};
  const std::optional<Sbp> passes = op.sbp(logical);
  const Sbp out_sbp = passes ? *passes : Sbp::broadcast();
  const Sbp in_sbp = passes ? g.sbp : Sbp::broadcast();
  const Tensor src = passes ? x : x.to_global(g.placement, Sbp::broadcast());
  const int me = g.placement.index_of(ofl::rank());
  if (me < 0) return GlobalOverShard(EmptyShard(x.dtype()), g.placement, out_sbp, out);
  const Tensor shard = ShardOf(src);
  const Shape local_out = ops::PhysicalShape(out, out_sbp, g.placement.size(), me);
  const ops::GlobalCall call{in, in_sbp, out, attrs};
  const Attrs local_attrs =
      op.local_attrs ? op.local_attrs(call, out_sbp, shard.shape(), local_out) : attrs;
  return GlobalOverShard(Autograd(op, shard, local_attrs), g.placement, out_sbp, out);
}

namespace {
// The placement every input of a call of several inputs is global over; InvalidArgument naming
// the op, the input and both sides when one is local or over another placement (the same verdict
// on every rank: placements and locality are the program's, not a rank's).
const Placement& CommonPlacement(const ops::OpSchema& op, const std::vector<Tensor>& inputs) {
  const GlobalMeta* first = nullptr;
  size_t first_i = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const GlobalMeta* g = LocalImplOf(op.name.c_str(), inputs[i]).global().get();
    if (g != nullptr && first == nullptr) {
      first = g;
      first_i = i;
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const GlobalMeta* g = inputs[i].impl()->global().get();
    if (g == nullptr) {
      throw InvalidArgument(op.name + ": input " + std::to_string(i) +
                            " is a local tensor but input " + std::to_string(first_i) +
                            " is global over " + first->placement.str() +
                            "; make every input global over one placement (to_global)");
    }
    if (g->placement != first->placement) {
      throw InvalidArgument(op.name + ": input " + std::to_string(i) + " is global over " +
                            g->placement.str() + " but input " + std::to_string(first_i) +
                            " over " + first->placement.str() +
                            "; box one to the other's placement (to_global) first");
    }
  }
  return first->placement;
}
}  // namespace

std::vector<Tensor> Compute(const ops::OpSchema& op, const std::vector<Tensor>& inputs,
                            const Attrs& attrs) {
  if (op.sbp && inputs.size() == 1) return {Compute(op, inputs[0], attrs)};
  if (!op.sbp_signature) {
    // No SBP signature: name the first global input.
    for (const Tensor& x : inputs) (void)ImplOf(op.name.c_str(), x);
    throw Error(op.name + ": internal: no global input");
  }
  const Placement& p = CommonPlacement(op, inputs);
  std::vector<Shape> logical;
  std::vector<Sbp> sbps;
  std::vector<TensorMeta> metas;
  for (const Tensor& x : inputs) {
    const GlobalMeta& g = *x.impl()->global();
    logical.push_back(g.logical_shape);
    sbps.push_back(g.sbp);
    metas.push_back(TensorMeta{g.logical_shape, x.dtype()});
  }
  const std::vector<TensorMeta> out = op.infer(metas, attrs);
  for (const TensorMeta& m : out) {
    ops::CheckDType(op.name.c_str(), m.dtype);
    ops::CheckShape(op.name.c_str(), "output shape", m.shape, element_size(m.dtype));
  }
  if (out.empty()) throw Error(op.name + ": internal: a global op without outputs");
  const ops::SbpSignature sig =
      op.sbp_signature(ops::GlobalInputs{logical, sbps, out[0].shape, attrs});
  std::vector<Tensor> boxed = inputs;
  for (size_t i = 0; i < boxed.size(); ++i) {
    if (sig.in[i] != sbps[i]) boxed[i] = boxed[i].to_global(p, sig.in[i]);
  }
  const int me = p.index_of(ofl::rank());
  std::vector<Tensor> results;
  if (me < 0) {
    for (const TensorMeta& m : out) {
      results.push_back(GlobalOverShard(EmptyShard(m.dtype), p, sig.out, m.shape));
    }
    return results;
  }
  std::vector<Tensor> shards;
  for (const Tensor& x : boxed) shards.push_back(ShardOf(x));
  const std::vector<Tensor> local = Autograd(op, shards, attrs);
  for (size_t i = 0; i < local.size(); ++i) {
    const Shape expect = ops::PhysicalShape(out[i].shape, sig.out, p.size(), me);
    if (local[i].shape() != expect) {
      throw Error(op.name + ": internal: the shard of output " + std::to_string(i) + " has shape " +
                  local[i].shape().str() + ", not " + expect.str() + " (" + sig.out.str() + " of " +
                  out[i].shape.str() + ")");
    }
    results.push_back(GlobalOverShard(local[i], p, sig.out, out[i].shape));
  }
  return results;
}

}  // namespace

// A call whose inputs require grad records one node over the global tensors (the boxing and the
// shards' work inside it record nothing); its backward runs global ops in turn.
Tensor Global(const ops::OpSchema& op, const Tensor& x, const Attrs& attrs) {
  if (!autograd::ShouldRecord(x)) return Compute(op, x, attrs);
  Tensor out;
  {
    NoGradGuard inner;
    out = Compute(op, x, attrs);
  }
  autograd::Record(op, x, out, attrs);
  return out;
}

std::vector<Tensor> Global(const ops::OpSchema& op, const std::vector<Tensor>& inputs,
                           const Attrs& attrs) {
  if (!autograd::ShouldRecord(inputs)) return Compute(op, inputs, attrs);
  std::vector<Tensor> outputs;
  {
    NoGradGuard inner;
    outputs = Compute(op, inputs, attrs);
  }
  autograd::Record(op, inputs, outputs, attrs);
  return outputs;
}

}  // namespace ofl::functional::stage
