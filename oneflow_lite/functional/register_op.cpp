// register_op and call_op (extension.h): a program's own ops, defined by an ofl::OpDef and called
// through the same entry and stages as the built-in ones (op_call.h).
#include <string>
#include <utility>

#include "kernels/kernel.h"
#include "oneflow_lite/extension.h"
#include "oneflow_lite/functional/op_call.h"
#include "oneflow_lite/identifier.h"
#include "ops/op_schema.h"

namespace ofl {

void register_op(OpDef def) {
  if (!IsLowerIdentifier(def.name)) {
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
  op.attrs = def.attrs.empty() ? AttrSchema::Legacy() : AttrSchema(std::move(def.attrs));
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

namespace {
const ops::OpSchema& FindForCall(const std::string& name) {
  const ops::OpSchema* op = ops::FindOp(name);
  if (op == nullptr) {
    throw InvalidArgument("call_op: there is no op named '" + name +
                          "' (register it with register_op first)");
  }
  return *op;
}
}  // namespace

std::vector<Tensor> call_op(const std::string& name, const std::vector<Tensor>& inputs,
                            const NamedAttrs& attrs) {
  const ops::OpSchema& op = FindForCall(name);
  if (op.attrs.legacy() && attrs.empty()) {
    return functional::Call(op, inputs, Attrs(op.attrs, std::vector<int64_t>{}));
  }
  return functional::Call(op, inputs, Attrs(op.attrs, attrs.list()));
}

std::vector<Tensor> call_op(const std::string& name, const std::vector<Tensor>& inputs,
                            const std::vector<int64_t>& attrs) {
  const ops::OpSchema& op = FindForCall(name);
  if (op.attrs.legacy()) return functional::Call(op, inputs, Attrs(op.attrs, attrs));
  if (op.attrs.size() == 0 && attrs.empty()) return functional::Call(op, inputs, Attrs());
  throw InvalidArgument("call_op: op '" + name + "' takes typed attributes (" + op.attrs.str() +
                        "); pass them by name, as call_op(\"" + name + "\", inputs, {{\"" +
                        (op.attrs.size() > 0 ? op.attrs.defs()[0].name : std::string("name")) +
                        "\", value}}), not as the integers " + IntList(attrs).str());
}

}  // namespace ofl
