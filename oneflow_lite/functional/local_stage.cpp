// The local stage of an op call (op_call.h): the op's form on local tensors. A view of the input's
// storage, a composition of other ops (each a call of its own), the kernel into new outputs, or
// the kernel into input 0's own view (in-place). Records nothing: the autograd stage before it
// does, and runs it with grad mode off while it records.
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "oneflow_lite/functional/functor_util.h"
#include "oneflow_lite/functional/kernel_lookup.h"
#include "oneflow_lite/functional/stages.h"
#include "ops/array_ops.h"
#include "ops/broadcast.h"

namespace ofl::functional::stage {

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

Tensor LocalView(const ops::OpSchema& op, const ops::ViewForm& view, const Tensor& x,
                 const Attrs& attrs) {
  const TensorImpl& impl = ImplOf(op.name.c_str(), x);
  std::optional<ops::ViewGeometry> g =
      view.geometry(impl.shape(), impl.stride(), impl.dtype(), attrs);
  if (!g) {
    // These strides allow no view: view a contiguous copy instead.
    Tensor c = CopyOf(op, impl, impl.shape(), impl.stride(), impl.offset());
    if (view.unchanged_returns_input) return c;  // contiguous
    const TensorImpl& ci = *c.impl();
    g = view.geometry(ci.shape(), ci.stride(), ci.dtype(), attrs);
    if (!g) throw Error(op.name + ": internal: no view of a contiguous tensor");
    return Unchanged(*g, ci) ? std::move(c)
                             : MakeView(c, g->shape, std::move(g->stride),
                                        SaturatingOffset(ci.offset(), g->offset_delta));
  }
  if (view.unchanged_returns_input && Unchanged(*g, impl)) return x;
  if (view.copy_when_views_disabled && ViewsDisabled()) {
    return CopyOf(op, impl, g->shape, g->stride, SaturatingOffset(impl.offset(), g->offset_delta));
  }
  return MakeView(x, g->shape, std::move(g->stride),
                  SaturatingOffset(impl.offset(), g->offset_delta));
}

// A single-input, single-output kernel op (infer1): no vector on the way.
Tensor LocalKernel1(const ops::OpSchema& op, const ops::KernelForm& form, const Tensor& x,
                    const Attrs& attrs) {
  const TensorImpl& impl = ImplOf(op.name.c_str(), x);
  const TensorMeta in{impl.shape(), impl.dtype()};
  const TensorMeta m = op.infer1(in, attrs);  // built-in ops only: it checks the output itself
  kernels::KernelFn fn = KernelFor(op, impl.device().type());
  Tensor out = NewTensor(m.shape, m.dtype, impl.device());
  const TensorImpl& o = *out.impl();
  vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
    if (form.output_shape) {
      const Shape s = form.output_shape(in, attrs);
      b->OpCall(op.name, fn, {impl.arg()}, {o.arg(s, RowMajorStrides(s), 0)}, attrs);
    } else {
      b->OpCall(op.name, fn, {impl.arg()}, {o.arg()}, attrs);
    }
  });
  return out;
}

std::vector<TensorMeta> CheckedInfer(const ops::OpSchema& op, const std::vector<TensorMeta>& in,
                                     const Attrs& attrs) {
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

// The inputs' shapes and dtypes; InvalidArgument when they are not all on input 0's device.
std::vector<TensorMeta> InputMetas(const ops::OpSchema& op, const std::vector<Tensor>& inputs) {
  const char* name = op.name.c_str();
  std::vector<TensorMeta> metas;
  metas.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorImpl& impl = ImplOf(name, inputs[i]);
    if (i > 0 && impl.device() != inputs[0].impl()->device()) {
      if (op.is_inplace()) {
        throw InvalidArgument(op.name + ": the source is on " + impl.device().str() +
                              " but the tensor is on " + inputs[0].impl()->device().str());
      }
      throw InvalidArgument(op.name + ": the inputs are on different devices: input 0 on " +
                            inputs[0].impl()->device().str() + ", input " + std::to_string(i) +
                            " on " + impl.device().str());
    }
    metas.push_back(TensorMeta{impl.shape(), impl.dtype()});
  }
  return metas;
}

std::vector<Tensor> LocalCompose(const ops::OpSchema& op, const ops::ComposeForm& form,
                                 const std::vector<Tensor>& inputs, const Attrs& attrs) {
  const std::vector<TensorMeta> metas = InputMetas(op, inputs);  // devices, undefined inputs
  if (op.infer) (void)CheckedInfer(op, metas, attrs);
  std::vector<Tensor> outputs;
  {
    vm::ComposedOpName named(op.name.c_str());
    outputs = form.compose(inputs, attrs);
  }
  if (static_cast<int>(outputs.size()) != op.num_outputs) {
    throw Error(op.name + ": internal: composed " + std::to_string(outputs.size()) +
                " outputs, the op has " + std::to_string(op.num_outputs));
  }
  return outputs;
}

std::vector<Tensor> LocalKernel(const ops::OpSchema& op, const ops::KernelForm& form,
                                const std::vector<Tensor>& inputs, const Attrs& attrs) {
  const char* name = op.name.c_str();
  const std::vector<TensorMeta> metas = InputMetas(op, inputs);
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
    if (form.broadcast_inputs && impl.shape() != out_metas[0].shape) {
      const Shape& to = out_metas[0].shape;
      in_args.push_back(impl.arg(to, ops::BroadcastStrides(name, impl.shape(), impl.stride(), to),
                                 impl.offset()));
    } else {
      in_args.push_back(impl.arg());
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const TensorImpl& impl = *outputs[i].impl();
    if (i == 0 && form.output_shape) {
      const Shape s = form.output_shape(metas[0], attrs);
      out_args.push_back(impl.arg(s, RowMajorStrides(s), 0));
    } else {
      out_args.push_back(impl.arg());
    }
  }
  vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
    b->OpCall(op.name, fn, std::move(in_args), std::move(out_args), attrs);
  });
  return outputs;
}

// Whether an elementwise write of `target` reading `src` (seen as target's shape through
// `stride` and `offset`) may read an element it already wrote: both view one storage, the element
// ranges they reach intersect, and src is not target's own view (then each element reads only
// itself, before writing it). Conservative: a layout that interleaves without sharing an element
// is taken as overlapping, and costs a copy, never a wrong value.
bool MayOverlap(const TensorImpl& target, const TensorImpl& src, const Strides& stride,
                int64_t offset) {
  if (src.storage() != target.storage()) return false;
  const Shape& shape = target.shape();
  if (shape.numel() == 0) return false;
  bool same_view = offset == target.offset();
  int64_t src_last = offset, target_last = target.offset();
  for (int i = 0; i < shape.ndim(); ++i) {
    if (shape[i] == 1) continue;
    same_view = same_view && stride[i] == target.stride()[i];
    src_last += (shape[i] - 1) * stride[i];
    target_last += (shape[i] - 1) * target.stride()[i];
  }
  if (same_view) return false;
  return offset <= target_last && target.offset() <= src_last;
}

// The tensor an in-place op writes: not an expanded view, where several elements share one
// memory location.
const TensorImpl& InplaceTarget(const ops::OpSchema& op, const Tensor& self) {
  const TensorImpl& impl = ImplOf(op.name.c_str(), self);
  for (int i = 0; i < impl.shape().ndim(); ++i) {
    if (impl.stride()[i] == 0 && impl.shape()[i] > 1) {
      throw InvalidArgument(op.name + ": the tensor (shape " + impl.shape().str() + ", strides " +
                            impl.stride().str() + ") is an expanded view: dim " +
                            std::to_string(i) +
                            " has stride 0, so several elements share one memory location; "
                            "write a contiguous() copy instead");
    }
  }
  return impl;
}

}  // namespace

PreparedInplace::PreparedInplace(const ops::OpSchema& op, const std::vector<Tensor>& inputs,
                                 const Attrs& attrs)
    : op_(op), attrs_(attrs), target_(InplaceTarget(op, inputs[0])) {
  const char* name = op.name.c_str();
  const std::vector<TensorMeta> metas = InputMetas(op, inputs);
  const std::vector<TensorMeta> out = CheckedInfer(op, metas, attrs);
  if (out[0].shape != target_.shape() || out[0].dtype != target_.dtype()) {
    throw Error(op.name + ": internal: an in-place op's infer must return the tensor's meta");
  }
  fn_ = KernelFor(op, target_.device().type());
  in_args_.reserve(inputs.size());
  if (std::get<ops::InPlaceForm>(op.form).reads_target) in_args_.push_back(target_.arg());
  const Shape& shape = target_.shape();
  for (size_t i = 1; i < inputs.size(); ++i) {
    const TensorImpl& src = *inputs[i].impl();
    Strides stride = ops::BroadcastStrides(name, src.shape(), src.stride(), shape);
    if (!MayOverlap(target_, src, stride, src.offset())) {
      in_args_.push_back(src.arg(shape, stride, src.offset()));
      continue;
    }
    // As numpy: the source's values before the write, from a copy queued ahead of it (PyTorch
    // refuses the call instead). The copy lives until the write is queued: a storage is released
    // after the instructions queued before the release only.
    static const ops::OpSchema& clone = ops::BuiltinOp("clone");
    Tensor copy = Local(clone, inputs[i], {});
    const TensorImpl& c = *copy.impl();
    stride = ops::BroadcastStrides(name, c.shape(), c.stride(), shape);
    in_args_.push_back(c.arg(shape, stride, c.offset()));
    copies_.push_back(std::move(copy));
  }
}

void PreparedInplace::Issue() {
  vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
    b->OpCall(op_.name, fn_, std::move(in_args_), {target_.arg()}, attrs_);
  });
  target_.storage()->BumpVersion();
  copies_.clear();
}

Tensor Local(const ops::OpSchema& op, const Tensor& x, const Attrs& attrs) {
  if (const ops::KernelForm* kernel = op.as<ops::KernelForm>(); kernel && op.infer1) {
    return LocalKernel1(op, *kernel, x, attrs);
  }
  if (const ops::ViewForm* view = op.as<ops::ViewForm>()) return LocalView(op, *view, x, attrs);
  if (op.as<ops::DeviceCopyForm>()) return LocalDeviceCopy(op, x, attrs);
  std::vector<Tensor> out = Local(op, std::vector<Tensor>{x}, attrs);
  if (out.size() != 1) {
    throw Error(op.name + ": internal: called for one output, the op has " +
                std::to_string(out.size()));
  }
  return std::move(out[0]);
}

namespace {
// The local stage of each form.
struct RunForm {
  const ops::OpSchema& op;
  const std::vector<Tensor>& inputs;
  const Attrs& attrs;

  std::vector<Tensor> operator()(const ops::KernelForm& f) const {
    return LocalKernel(op, f, inputs, attrs);
  }
  std::vector<Tensor> operator()(const ops::ViewForm& f) const {
    return {LocalView(op, f, inputs[0], attrs)};
  }
  std::vector<Tensor> operator()(const ops::ComposeForm& f) const {
    return LocalCompose(op, f, inputs, attrs);
  }
  std::vector<Tensor> operator()(const ops::InPlaceForm&) const {
    PreparedInplace call(op, inputs, attrs);
    call.Issue();
    return {inputs[0]};
  }
  std::vector<Tensor> operator()(const ops::DeviceCopyForm&) const {
    return {LocalDeviceCopy(op, inputs[0], attrs)};
  }
};
}  // namespace

std::vector<Tensor> Local(const ops::OpSchema& op, const std::vector<Tensor>& inputs,
                          const Attrs& attrs) {
  return std::visit(RunForm{op, inputs, attrs}, op.form);
}

}  // namespace ofl::functional::stage
