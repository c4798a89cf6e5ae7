#include "oneflow_lite/functional/dispatch.h"

#include <cctype>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "oneflow_lite/autograd.h"
#include "oneflow_lite/autograd/graph.h"
#include "oneflow_lite/distributed.h"
#include "oneflow_lite/extension.h"
#include "oneflow_lite/functional/functor_util.h"
#include "oneflow_lite/functional/global_util.h"
#include "ops/array_ops.h"
#include "ops/broadcast.h"
#include "ops/sbp_rules.h"

namespace ofl::functional {

kernels::KernelFn KernelFor(const ops::OpSchema& op, DeviceType type) {
  const int t = static_cast<int>(type);
  ops::OpSchema::KernelSlots& slots = *op.kernel_slots;
  const uint64_t gen = kernels::RegistryGeneration();
  if (slots.generation[t].load(std::memory_order_acquire) == gen) {
    return slots.fn[t].load(std::memory_order_acquire);
  }
  kernels::KernelFn fn = kernels::TryFindKernel(op.kernel, type);
  if (fn == nullptr) {
    throw InvalidArgument(op.name + ": no kernel registered for device type " + to_string(type) +
                          (op.kernel != op.name ? " (its kernel is \"" + op.kernel + "\")" : "") +
                          ". Register one with register_kernel(\"" + op.kernel + "\", \"" +
                          to_string(type) + "\", fn)");
  }
  slots.fn[t].store(fn, std::memory_order_release);
  slots.generation[t].store(gen, std::memory_order_release);
  return fn;
}

namespace {

int64_t SaturatingOffset(int64_t offset, int64_t delta) {
  // Only views of empty tensors (whose strides saturate) can push the sum out of range; such an
  // offset is never dereferenced, so saturate it too.
  int64_t out = 0;
  if (__builtin_add_overflow(offset, delta, &out)) {
    out = delta > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
  return out;
}

Tensor Recorded(const ops::OpSchema& op, const Tensor& x, Tensor out,
                const std::vector<int64_t>& attrs) {
  if (autograd::ShouldRecord(x)) autograd::Record(op, x, out, attrs);
  return out;
}

bool Unchanged(const ops::ViewGeometry& g, const TensorImpl& x) {
  return g.offset_delta == 0 && g.shape == x.shape() && g.stride == x.stride();
}

// A new contiguous tensor holding the (shape, stride, offset) view of x, by the op's copy kernel.
Tensor CopyOf(const ops::OpSchema& op, const TensorImpl& x, const Shape& shape,
              const Strides& stride, int64_t offset) {
  Tensor out = NewTensor(shape, x.dtype(), x.device());
  kernels::KernelFn fn = KernelFor(op, x.device().type());
  vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
    b->OpCall(op.name, fn, {x.arg(shape, stride, offset)}, {out.impl()->arg()});
  });
  return out;
}

Tensor DispatchView(const ops::OpSchema& op, const Tensor& x, const std::vector<int64_t>& attrs) {
  const TensorImpl& impl = ImplOf(op.name.c_str(), x);
  std::optional<ops::ViewGeometry> g = op.view(impl.shape(), impl.stride(), impl.dtype(), attrs);
  Tensor out;
  if (!g) {
    // These strides allow no view: view a contiguous copy instead.
    Tensor c = CopyOf(op, impl, impl.shape(), impl.stride(), impl.offset());
    if (op.unchanged_returns_input) return Recorded(op, x, std::move(c), attrs);  // contiguous
    const TensorImpl& ci = *c.impl();
    g = op.view(ci.shape(), ci.stride(), ci.dtype(), attrs);
    if (!g) throw Error(op.name + ": internal: no view of a contiguous tensor");
    out = Unchanged(*g, ci) ? std::move(c)
                            : MakeView(c, g->shape, std::move(g->stride),
                                       SaturatingOffset(ci.offset(), g->offset_delta));
  } else if (op.unchanged_returns_input && Unchanged(*g, impl)) {
    return x;
  } else if (op.copy_when_views_disabled && ViewsDisabled()) {
    out = CopyOf(op, impl, g->shape, g->stride, SaturatingOffset(impl.offset(), g->offset_delta));
  } else {
    out = MakeView(x, g->shape, std::move(g->stride),
                   SaturatingOffset(impl.offset(), g->offset_delta));
  }
  return Recorded(op, x, std::move(out), attrs);
}

// A single-input, single-output kernel op (infer1): no vector on the way.
Tensor DispatchKernel1(const ops::OpSchema& op, const Tensor& x,
                       const std::vector<int64_t>& attrs) {
  const char* name = op.name.c_str();
  const TensorImpl& impl = ImplOf(name, x);
  const TensorMeta in{impl.shape(), impl.dtype()};
  const TensorMeta m = op.infer1(in, attrs);  // built-in ops only: it checks the output itself
  kernels::KernelFn fn = KernelFor(op, impl.device().type());
  Tensor out = NewTensor(m.shape, m.dtype, impl.device());
  const TensorImpl& o = *out.impl();
  vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
    if (op.kernel_output_shape) {
      const Shape s = op.kernel_output_shape(in, attrs);
      b->OpCall(op.name, fn, {impl.arg()}, {o.arg(s, RowMajorStrides(s), 0)}, attrs);
    } else {
      b->OpCall(op.name, fn, {impl.arg()}, {o.arg()}, attrs);
    }
  });
  return Recorded(op, x, std::move(out), attrs);
}

std::vector<TensorMeta> CheckedInfer(const ops::OpSchema& op, const std::vector<TensorMeta>& in,
                                     const std::vector<int64_t>& attrs) {
  std::vector<TensorMeta> out_metas = op.infer(in, attrs);
  if (static_cast<int>(out_metas.size()) != op.num_outputs) {
    throw InvalidArgument(op.name + ": its infer returned " + std::to_string(out_metas.size()) +
                          " outputs, but the op has " + std::to_string(op.num_outputs));
  }
  for (const TensorMeta& m : out_metas) {
    ops::CheckDType(op.name.c_str(), m.dtype);
    ops::CheckShape(op.name.c_str(), "output shape", m.shape, element_size(m.dtype));
  }
  return out_metas;
}

// The op on a global input: the logical output and its SBP from the definition (the same verdict
// on every rank: only logical shapes enter it), boxing to broadcast where no SBP passes through,
// then the local op on this rank's shard with its physical attributes. Ranks outside the placement
// compute nothing.
Tensor DispatchGlobal(const ops::OpSchema& op, const Tensor& x, const std::vector<int64_t>& attrs) {
  const char* name = op.name.c_str();
  const GlobalMeta& g = *LocalImplOf(name, x).global();
  const Shape& in = g.logical_shape;
  Shape out;
  if (op.view) {
    std::optional<ops::ViewGeometry> v = op.view(in, RowMajorStrides(in), x.dtype(), attrs);
    if (!v) throw Error(op.name + ": internal: no view of a contiguous tensor");
    out = v->shape;
  } else {
    out = CheckedInfer(op, {TensorMeta{in, x.dtype()}}, attrs)[0].shape;
  }
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
  const std::vector<int64_t> local_attrs =
      op.local_attrs ? op.local_attrs(call, out_sbp, shard.shape(), local_out) : attrs;
  return GlobalOverShard(Dispatch(op, shard, local_attrs), g.placement, out_sbp, out);
}

}  // namespace

Tensor Dispatch(const ops::OpSchema& op, const Tensor& x, const std::vector<int64_t>& attrs) {
  if (op.sbp && x.defined() && x.is_global()) return DispatchGlobal(op, x, attrs);
  if (op.view) return DispatchView(op, x, attrs);
  if (op.infer1 && !op.compose) return DispatchKernel1(op, x, attrs);
  std::vector<Tensor> out = Dispatch(op, std::vector<Tensor>{x}, attrs);
  if (out.size() != 1) {
    throw Error(op.name + ": internal: called for one output, the op has " +
                std::to_string(out.size()));
  }
  return std::move(out[0]);
}

std::vector<Tensor> Dispatch(const ops::OpSchema& op, const std::vector<Tensor>& inputs,
                             const std::vector<int64_t>& attrs) {
  const char* name = op.name.c_str();
  if (!op.infer && !op.view && !op.compose) {
    throw InvalidArgument(op.name +
                          ": this built-in op has no generic form; call its own function (" +
                          (op.name == "to" ? "Tensor::to" : "ofl::" + op.name) + ")");
  }
  if (static_cast<int>(inputs.size()) != op.num_inputs) {
    throw InvalidArgument(op.name + ": expects " + std::to_string(op.num_inputs) + " input" +
                          (op.num_inputs == 1 ? "" : "s") + ", got " +
                          std::to_string(inputs.size()));
  }
  if (inputs.empty()) {
    throw InvalidArgument(op.name +
                          ": an op without inputs cannot be called (its outputs' device comes "
                          "from the inputs)");
  }
  if (op.view || (op.sbp && inputs[0].defined() && inputs[0].is_global())) {
    return {Dispatch(op, inputs[0], attrs)};
  }
  std::vector<TensorMeta> metas;
  metas.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorImpl& impl = ImplOf(name, inputs[i]);
    if (i > 0 && impl.device() != inputs[0].impl()->device()) {
      throw InvalidArgument(op.name + ": the inputs are on different devices: input 0 on " +
                            inputs[0].impl()->device().str() + ", input " + std::to_string(i) +
                            " on " + impl.device().str());
    }
    metas.push_back(TensorMeta{impl.shape(), impl.dtype()});
  }
  if (op.compose) {
    if (op.infer) (void)CheckedInfer(op, metas, attrs);
    std::vector<Tensor> outputs;
    {
      NoGradGuard inner;  // one node for the whole op, whatever it is made of
      vm::ComposedOpName named(name);
      outputs = op.compose(inputs, attrs);
    }
    if (static_cast<int>(outputs.size()) != op.num_outputs) {
      throw Error(op.name + ": internal: composed " + std::to_string(outputs.size()) +
                  " outputs, the op has " + std::to_string(op.num_outputs));
    }
    autograd::Record(op, inputs, outputs, attrs);
    return outputs;
  }
  const Device device = inputs[0].impl()->device();
  std::vector<TensorMeta> out_metas = CheckedInfer(op, metas, attrs);
  kernels::KernelFn fn = KernelFor(op, device.type());
  std::vector<Tensor> outputs;
  outputs.reserve(out_metas.size());
  for (const TensorMeta& m : out_metas) outputs.push_back(NewTensor(m.shape, m.dtype, device));

  std::vector<vm::BlobArg> in_args, out_args;
  in_args.reserve(inputs.size());
  out_args.reserve(outputs.size());
  for (const Tensor& x : inputs) {
    const TensorImpl& impl = *x.impl();
    if (op.broadcast_inputs && impl.shape() != out_metas[0].shape) {
      const Shape& to = out_metas[0].shape;
      in_args.push_back(impl.arg(to, ops::BroadcastStrides(name, impl.shape(), impl.stride(), to),
                                 impl.offset()));
    } else {
      in_args.push_back(impl.arg());
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const TensorImpl& impl = *outputs[i].impl();
    if (i == 0 && op.kernel_output_shape) {
      const Shape s = op.kernel_output_shape(metas[0], attrs);
      out_args.push_back(impl.arg(s, RowMajorStrides(s), 0));
    } else {
      out_args.push_back(impl.arg());
    }
  }
  vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
    b->OpCall(op.name, fn, std::move(in_args), std::move(out_args), attrs);
  });
  autograd::Record(op, inputs, outputs, attrs);
  return outputs;
}

}  // namespace ofl::functional

namespace ofl {

namespace {
bool IsIdentifier(const std::string& s) {
  if (s.empty() || !(s[0] >= 'a' && s[0] <= 'z')) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}
}  // namespace

void register_op(OpDef def) {
  if (!IsIdentifier(def.name)) {
    throw InvalidArgument("register_op: the name '" + def.name +
                          "' is not a lower-case identifier ([a-z][a-z0-9_]*)");
  }
  if (def.num_inputs < 0 || def.num_outputs < 0) {
    throw InvalidArgument("register_op: op '" + def.name + "' has num_inputs " +
                          std::to_string(def.num_inputs) + " and num_outputs " +
                          std::to_string(def.num_outputs) + "; neither may be below 0");
  }
  if (def.num_inputs > 64 || def.num_outputs > 64) {
    throw InvalidArgument("register_op: op '" + def.name + "' has " +
                          std::to_string(def.num_inputs) + " inputs and " +
                          std::to_string(def.num_outputs) + " outputs; at most 64 of each");
  }
  if (!def.infer) {
    throw InvalidArgument("register_op: op '" + def.name + "' has no infer function");
  }
  ops::OpSchema op;
  op.name = def.name;
  op.num_inputs = def.num_inputs;
  op.num_outputs = def.num_outputs;
  op.infer = std::move(def.infer);
  op.builtin = false;
  // A program's backward may read every input and output.
  op.save_inputs = op.save_outputs = ~uint64_t{0};
  if (def.backward) {
    op.backward = [bw = std::move(def.backward)](const ops::GradContext& ctx,
                                                 const std::vector<Tensor>& grads) {
      return bw(ctx.inputs, ctx.outputs, ctx.attrs, grads);
    };
  }
  ops::RegisterOp(std::move(op));
  kernels::DeclareOp(def.name);
}

std::vector<Tensor> call_op(const std::string& name, const std::vector<Tensor>& inputs,
                            const std::vector<int64_t>& attrs) {
  const ops::OpSchema* op = ops::FindOp(name);
  if (op == nullptr) {
    throw InvalidArgument("call_op: there is no op named '" + name +
                          "' (register it with register_op first)");
  }
  return functional::Dispatch(*op, inputs, attrs);
}

}  // namespace ofl
