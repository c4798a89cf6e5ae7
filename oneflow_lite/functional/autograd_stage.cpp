// The autograd stage of an op call (op_call.h): the one place a node is recorded. A call whose
// inputs need no gradient (or under no_grad) goes straight to the local stage; otherwise the local
// stage runs with grad mode off (a composed op is one node, whatever it is made of) and the node
// is recorded after it. In-place calls follow PyTorch's rules: refused on a leaf that requires
// grad; on any other tensor the write is recorded as a node of the op's out-of-place form whose
// input 0 is the tensor's history before the write, and the tensor's history becomes that node.
#include <string>
#include <variant>

#include "oneflow_lite/autograd.h"
#include "oneflow_lite/autograd/graph.h"
#include "oneflow_lite/functional/stages.h"

namespace ofl::functional::stage {

namespace {

void RefuseInplace(const ops::OpSchema& op, const Tensor& target) {
  if (!target.defined() || !is_grad_enabled()) return;
  const autograd::AutogradMeta* m = target.impl()->autograd();
  if (m == nullptr) return;
  if (m->grad_fn == nullptr && m->requires_grad) {
    throw InvalidArgument(op.name +
                          ": a leaf that requires grad is being used in an in-place operation; "
                          "run it under NoGradGuard (an optimizer step) or use the out-of-place "
                          "op");
  }
  if (m->grad_fn != nullptr && m->grad_fn->op->is_view()) {
    // PyTorch rewrites the base's history here (CopySlices); this runtime does not, and a
    // recorded write into a view would give the base a wrong gradient.
    throw InvalidArgument(op.name + ": the tensor is a view (made by " +
                          m->grad_fn->op->backward_name +
                          ") of a tensor that requires grad, and an in-place write into a view "
                          "is not recorded; write into a clone() of it, or run it under "
                          "NoGradGuard");
  }
}

Tensor Inplace(const ops::OpSchema& op, const std::vector<Tensor>& inputs, const Attrs& attrs) {
  const Tensor& target = inputs[0];
  RefuseInplace(op, target);
  if (!autograd::ShouldRecord(inputs)) {
    Local(op, inputs, attrs);
    return target;
  }
  const std::string& of = std::get<ops::InPlaceForm>(op.form).node_op;
  const ops::OpSchema& node_op = of.empty() ? op : ops::BuiltinOp(of.c_str());
  PreparedInplace call(op, inputs, attrs);
  NoGradGuard inner;
  // The backward reads the tensor's value before the write: keep a copy, queued ahead of it (as
  // PyTorch saves self.clone() for mul_).
  Tensor before;
  if (autograd::SavedInputs(node_op, inputs) & ops::Bit(0)) {
    static const ops::OpSchema& clone = ops::BuiltinOp("clone");
    before = Local(clone, target, {});
  }
  std::shared_ptr<autograd::Node> node = autograd::InplaceNode(node_op, inputs, before, attrs);
  call.Issue();
  autograd::AttachInplace(node, target);
  return target;
}

}  // namespace

std::vector<Tensor> Autograd(const ops::OpSchema& op, const std::vector<Tensor>& inputs,
                             const Attrs& attrs) {
  if (op.is_inplace()) return {Inplace(op, inputs, attrs)};
  if (!autograd::ShouldRecord(inputs)) return Local(op, inputs, attrs);
  std::vector<Tensor> outputs;
  {
    NoGradGuard inner;
    outputs = Local(op, inputs, attrs);
  }
  autograd::Record(op, inputs, outputs, attrs);
  return outputs;
}

Tensor Autograd(const ops::OpSchema& op, const Tensor& x, const Attrs& attrs) {
  if (op.is_inplace()) return Inplace(op, {x}, attrs);
  if (!autograd::ShouldRecord(x)) return Local(op, x, attrs);
  Tensor out;
  {
    NoGradGuard inner;
    out = Local(op, x, attrs);
  }
  autograd::Record(op, x, out, attrs);
  return out;
}

}  // namespace ofl::functional::stage
