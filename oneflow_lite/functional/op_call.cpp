// The entry of every op call (op_call.h): the checks that depend on the call's shape alone, the
// casts of the inputs an op asks for (OpSchema::input_cast), then the global stage for a global
// input, else the autograd stage.
#include "oneflow_lite/functional/op_call.h"

#include <string>

#include "oneflow_lite/functional/stages.h"
#include "oneflow_lite/tensor_impl.h"

namespace ofl::functional {

namespace {
// Tensor::is_global without its checks (an undefined input is refused by the local stage).
inline bool IsGlobal(const Tensor& x) { return x.defined() && x.impl()->global() != nullptr; }

// The call's attributes follow this op's declarations (Attrs(op.attrs, ...)).
void CheckAttrsOf(const ops::OpSchema& op, const Attrs& attrs) {
  if (attrs.schema() == &op.attrs) return;
  if (attrs.schema() == nullptr && op.attrs.size() == 0) return;
  throw InvalidArgument(op.name + ": takes the attributes " + op.attrs.str() + ", got " +
                        (attrs.schema() == nullptr
                             ? std::string("none")
                             : "those of op '" + attrs.op() + "' (" + attrs.str() + ")"));
}

// The inputs cast as InputCast::kIntToFloat says (op_schema.h); *cast set when one was.
std::vector<Tensor> CastInputs(const std::vector<Tensor>& inputs, bool* cast) {
  std::vector<Tensor> out = inputs;
  for (Tensor& x : out) {
    if (x.defined() && !is_floating_point(x.dtype())) {
      x = x.to(DType::kFloat32);
      *cast = true;
    }
  }
  return out;
}

bool AnyGlobal(const std::vector<Tensor>& inputs) {
  for (const Tensor& x : inputs) {
    if (IsGlobal(x)) return true;
  }
  return false;
}
}  // namespace

std::vector<Tensor> Call(const ops::OpSchema& op, const std::vector<Tensor>& inputs,
                         const Attrs& attrs) {
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
  CheckAttrsOf(op, attrs);
  if (__builtin_expect(op.input_cast != ops::InputCast::kNone, 0)) {
    bool cast = false;
    std::vector<Tensor> cast_inputs = CastInputs(inputs, &cast);
    if (cast) return Call(op, cast_inputs, attrs);
  }
  if (AnyGlobal(inputs)) return stage::Global(op, inputs, attrs);
  return stage::Autograd(op, inputs, attrs);
}

Tensor Call(const ops::OpSchema& op, const Tensor& x, const Attrs& attrs) {
  CheckAttrsOf(op, attrs);
  if (__builtin_expect(op.input_cast != ops::InputCast::kNone, 0) && x.defined() &&
      !is_floating_point(x.dtype())) {
    return Call(op, x.to(DType::kFloat32), attrs);
  }
  if (IsGlobal(x)) return stage::Global(op, x, attrs);
  return stage::Autograd(op, x, attrs);
}

Tensor Clone(const Tensor& x) {
  static const ops::OpSchema& op = ops::BuiltinOp("clone");
  return Call(op, x, {});
}

}  // namespace ofl::functional
