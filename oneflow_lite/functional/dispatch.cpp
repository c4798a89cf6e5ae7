#include "oneflow_lite/functional/dispatch.h"

#include <cctype>
#include <string>
#include <utility>

#include "oneflow_lite/autograd/graph.h"
#include "oneflow_lite/extension.h"
#include "oneflow_lite/functional/functor_util.h"
#include "ops/array_ops.h"
#include "ops/broadcast.h"

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
                          "; register one with register_kernel(\"" + op.kernel + "\", \"" +
                          to_string(type) + "\", fn)");
  }
  slots.fn[t].store(fn, std::memory_order_release);
  slots.generation[t].store(gen, std::memory_order_release);
  return fn;
}

std::vector<Tensor> Dispatch(const ops::OpSchema& op, const std::vector<Tensor>& inputs,
                             const std::vector<int64_t>& attrs) {
  const char* name = op.name.c_str();
  if (!op.infer) {
    throw InvalidArgument(op.name +
                          ": this built-in op has no generic form; call its own function "
                          "(ofl::" +
                          op.name + ")");
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
  const Device device = inputs[0].impl()->device();
  std::vector<TensorMeta> out_metas = op.infer(metas, attrs);
  if (static_cast<int>(out_metas.size()) != op.num_outputs) {
    throw InvalidArgument(op.name + ": its infer returned " + std::to_string(out_metas.size()) +
                          " outputs, but the op has " + std::to_string(op.num_outputs));
  }
  for (const TensorMeta& m : out_metas) {
    ops::CheckDType(name, m.dtype);
    ops::CheckShape(name, "output shape", m.shape, element_size(m.dtype));
  }
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
      const Shape s = op.kernel_output_shape(metas, attrs);
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
