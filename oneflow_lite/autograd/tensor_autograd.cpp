// The autograd members of Tensor, and autograd::grad.
#include <string>
#include <utility>
#include <vector>

#include "oneflow_lite/autograd.h"
#include "oneflow_lite/autograd/engine.h"
#include "oneflow_lite/autograd/graph.h"
#include "oneflow_lite/functional/functional.h"
#include "oneflow_lite/functional/functor_util.h"
#include "oneflow_lite/functional/global_util.h"

namespace ofl {

namespace {

const TensorImpl& ImplFor(const char* op, const Tensor& t) {
  return functional::LocalImplOf(op, t);
}

// Where a gradient for t enters the graph.
autograd::Edge EdgeOf(const Tensor& t) {
  autograd::Edge e;
  const autograd::AutogradMeta* m = t.impl()->autograd();
  if (m != nullptr && m->grad_fn) {
    e.node = m->grad_fn;
    e.output_nr = m->output_nr;
  } else if (m != nullptr && m->requires_grad) {
    e.leaf = t.impl();
  }
  return e;
}

// The gradient that enters at `output`: `given`, checked against it, or ones for a one-element
// output.
Tensor RootGrad(const char* op, const Tensor& output, const Tensor& given) {
  if (!given.defined()) {
    if (output.numel() != 1) {
      throw InvalidArgument(std::string(op) +
                            ": grad can be implicitly created only for scalar outputs (one "
                            "element); the output has shape " +
                            output.shape().str() + ", so pass a gradient of that shape");
    }
    if (const GlobalMeta* g = output.impl()->global().get()) {
      return functional::GlobalFull(op, g->logical_shape, 1.0, output.dtype(), g->placement,
                                    Sbp::broadcast());
    }
    return full(output.shape(), 1.0, output.dtype(), output.device());
  }
  const TensorImpl& g = ImplFor(op, given);
  if (given.shape() != output.shape() || g.dtype() != output.dtype()) {
    throw InvalidArgument(std::string(op) + ": the gradient has shape " + given.shape().str() +
                          " dtype " + to_string(g.dtype()) + " but the output has shape " +
                          output.shape().str() + " dtype " + to_string(output.dtype()));
  }
  const GlobalMeta* gg = g.global().get();
  const GlobalMeta* og = output.impl()->global().get();
  if ((gg == nullptr) != (og == nullptr) || (gg != nullptr && gg->placement != og->placement)) {
    throw InvalidArgument(std::string(op) + ": the gradient is " +
                          (gg ? "global over " + gg->placement.str() : std::string("local")) +
                          " but the output is " +
                          (og ? "global over " + og->placement.str() : std::string("local")));
  }
  if (gg == nullptr && g.device() != output.device()) {
    throw InvalidArgument(std::string(op) + ": the gradient is on " + g.device().str() +
                          " but the output is on " + output.device().str());
  }
  return given;
}

}  // namespace

bool Tensor::requires_grad() const { return autograd::RequiresGrad(Get()); }

Tensor& Tensor::requires_grad_(bool requires_grad) {
  const TensorImpl& impl = Get();
  const autograd::AutogradMeta* m = impl.autograd();
  if (m != nullptr && m->grad_fn) {
    throw InvalidArgument(
        "requires_grad_: only leaves can change requires_grad; this tensor was made by " +
        m->grad_fn->op->backward_name + " (use detach() for a leaf that shares its storage)");
  }
  if (!requires_grad) {
    if (m != nullptr) impl_->mutable_autograd().requires_grad = false;
    return *this;
  }
  if (!is_floating_point(impl.dtype())) {
    throw InvalidArgument(
        "requires_grad_: only floating tensors can require grad; the tensor's "
        "dtype is " +
        to_string(impl.dtype()));
  }
  impl_->mutable_autograd().requires_grad = true;
  return *this;
}

bool Tensor::is_leaf() const {
  const autograd::AutogradMeta* m = Get().autograd();
  return m == nullptr || m->grad_fn == nullptr;
}

Tensor Tensor::grad() const {
  const autograd::AutogradMeta* m = Get().autograd();
  if (m == nullptr) return Tensor();
  std::lock_guard<std::mutex> lock(m->grad_mu);
  return m->grad;
}

void Tensor::set_grad(const Tensor& grad) {
  const TensorImpl& impl = Get();
  if (!grad.defined()) {
    if (impl.autograd() != nullptr) {
      autograd::AutogradMeta& m = impl_->mutable_autograd();
      std::lock_guard<std::mutex> lock(m.grad_mu);
      m.grad = Tensor();
    }
    return;
  }
  const TensorImpl& g = ImplFor("set_grad", grad);
  if (&g == &impl) {
    throw InvalidArgument(
        "set_grad: a tensor cannot be its own gradient (the grad would hold the tensor that holds "
        "it); assign a copy, e.g. t.detach().clone()");
  }
  const GlobalMeta* gg = g.global().get();
  const GlobalMeta* tg = impl.global().get();
  if (grad.shape() != shape() || g.dtype() != impl.dtype() || g.device() != impl.device() ||
      (gg == nullptr) != (tg == nullptr) || (gg != nullptr && gg->placement != tg->placement)) {
    auto where = [](const TensorImpl& t) {
      return t.global() ? "global over " + t.global()->placement.str() : t.device().str();
    };
    throw InvalidArgument("set_grad: the gradient has shape " + grad.shape().str() + " dtype " +
                          to_string(g.dtype()) + " on " + where(g) + " but the tensor has shape " +
                          shape().str() + " dtype " + to_string(impl.dtype()) + " on " +
                          where(impl));
  }
  // A gradient with history is kept detached: its graph could lead back to this tensor (w.grad =
  // w * 2), and the tensor holding its own graph through .grad would never be freed.
  Tensor kept = autograd::RequiresGrad(g) ? autograd::Detached(grad) : grad;
  autograd::AutogradMeta& m = impl_->mutable_autograd();
  std::lock_guard<std::mutex> lock(m.grad_mu);
  m.grad = std::move(kept);
}

void Tensor::retain_grad() const {
  const TensorImpl& impl = Get();
  autograd::AutogradMeta* m = impl.autograd();
  if (m == nullptr || (!m->requires_grad && !m->grad_fn)) {
    throw InvalidArgument("retain_grad: the tensor does not require grad");
  }
  if (!m->grad_fn || m->retains_grad) return;  // a leaf keeps its grad anyway
  m->retains_grad = true;
  m->grad_fn->retained[m->output_nr] = impl_;
}

namespace {
// The roots of backward() over `tensors`; InvalidArgument naming `op` for a tensor that requires no
// grad or a gradient that does not fit it.
std::vector<std::pair<autograd::Edge, Tensor>> BackwardRoots(const char* op,
                                                             const std::vector<Tensor>& tensors,
                                                             const std::vector<Tensor>& grads) {
  if (!grads.empty() && grads.size() != tensors.size()) {
    throw InvalidArgument(std::string(op) + ": " + std::to_string(grads.size()) +
                          " gradients for " + std::to_string(tensors.size()) + " tensors");
  }
  std::vector<std::pair<autograd::Edge, Tensor>> roots;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorImpl& impl = ImplFor(op, tensors[i]);
    if (!autograd::RequiresGrad(impl)) {
      throw InvalidArgument(
          std::string(op) +
          ": the tensor does not require grad and has no grad_fn (no input of the ops "
          "that made it requires grad, or they ran under NoGradGuard)");
    }
    roots.emplace_back(EdgeOf(tensors[i]),
                       RootGrad(op, tensors[i], grads.empty() ? Tensor() : grads[i]));
  }
  return roots;
}
}  // namespace

void Tensor::backward(const Tensor& gradient, bool retain_graph) const {
  autograd::RunBackward(BackwardRoots("backward", {*this}, {gradient}), {}, retain_graph,
                        /*accumulate=*/true);
}

void autograd::backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors,
                        bool retain_graph, bool create_graph) {
  if (tensors.empty()) throw InvalidArgument("backward: no tensors given");
  RunBackward(BackwardRoots("backward", tensors, grad_tensors), {}, retain_graph,
              /*accumulate=*/true, create_graph);
}

Tensor Tensor::detach() const { return autograd::Detached(*this); }

int64_t Tensor::version() const { return Get().storage()->version(); }

std::string Tensor::grad_fn_name() const {
  const autograd::AutogradMeta* m = Get().autograd();
  return m != nullptr && m->grad_fn ? m->grad_fn->op->backward_name : std::string();
}

std::vector<Tensor> autograd::grad(const std::vector<Tensor>& outputs,
                                   const std::vector<Tensor>& inputs,
                                   const std::vector<Tensor>& grad_outputs, bool retain_graph,
                                   bool allow_unused, bool create_graph) {
  const char* op = "autograd::grad";
  if (outputs.empty()) throw InvalidArgument("autograd::grad: outputs is empty");
  if (!grad_outputs.empty() && grad_outputs.size() != outputs.size()) {
    throw InvalidArgument("autograd::grad: " + std::to_string(grad_outputs.size()) +
                          " grad_outputs for " + std::to_string(outputs.size()) + " outputs");
  }
  std::vector<std::pair<Edge, Tensor>> roots;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const TensorImpl& impl = ImplFor(op, outputs[i]);
    if (!RequiresGrad(impl)) {
      throw InvalidArgument("autograd::grad: output " + std::to_string(i) +
                            " does not require grad and has no grad_fn");
    }
    roots.emplace_back(EdgeOf(outputs[i]),
                       RootGrad(op, outputs[i], grad_outputs.empty() ? Tensor() : grad_outputs[i]));
  }
  std::vector<Edge> captures;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorImpl& impl = ImplFor(op, inputs[i]);
    if (!RequiresGrad(impl)) {
      throw InvalidArgument("autograd::grad: input " + std::to_string(i) +
                            " does not require grad");
    }
    captures.push_back(EdgeOf(inputs[i]));
  }
  std::vector<Tensor> out =
      RunBackward(roots, captures, retain_graph, /*accumulate=*/false, create_graph);
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i].defined() && !allow_unused) {
      throw InvalidArgument("autograd::grad: input " + std::to_string(i) +
                            " is not used by the outputs' graph (pass allow_unused=true to get an "
                            "undefined gradient for it)");
    }
  }
  return out;
}

}  // namespace ofl
