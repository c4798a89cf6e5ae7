// The entry of every op call (op_call.h): the checks that depend on the call's shape alone, the
// casts of the inputs an op asks for (OpSchema::input_cast), then the global stage for a global
// input, else the autograd stage.
#include "oneflow_lite/functional/op_call.h"

#include <optional>
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

// The dtype the entry casts input `x` to under `rule` (input_cast), given the call's result type
// and target dtype where the rule needs them.
DType CastTarget(ops::InputCast rule, DType x, DType result, DType target) {
  switch (rule) {
    case ops::InputCast::kIntToFloat:
      return is_floating_point(x) ? x : DType::kFloat32;
    case ops::InputCast::kIntToInt64:
      return is_floating_point(x) ? x : DType::kInt64;
    case ops::InputCast::kResultType:
    case ops::InputCast::kResultTypeAfterFirst:
      return result;
    case ops::InputCast::kResultTypeFloat:
      return is_floating_point(result) ? result : DType::kFloat32;
    default:  // the in-place rules
      return target;
  }
}

// PyTorch's result type (op_schema.h, InputCast): the inputs with dims promote together, the
// 0-dim ones together; the 0-dim result joins only when it is of a higher kind.
DType ResultType(const std::vector<Tensor>& inputs, size_t first) {
  std::optional<DType> dims, zero;
  for (size_t i = first; i < inputs.size(); ++i) {
    const Tensor& x = inputs[i];
    std::optional<DType>& r = x.dim() > 0 ? dims : zero;
    r = r ? promote_types(*r, x.dtype()) : x.dtype();
  }
  if (!dims) return *zero;
  if (!zero || is_floating_point(*dims)) return *dims;
  if (*dims == DType::kBool || is_floating_point(*zero)) return promote_types(*dims, *zero);
  return *dims;
}

// The inputs cast as op.input_cast says; false (inputs untouched) when none needs a cast.
bool CastInputs(const ops::OpSchema& op, const std::vector<Tensor>& inputs,
                std::vector<Tensor>* cast) {
  const ops::InputCast rule = op.input_cast;
  // The inputs that take part: where's condition does not.
  const size_t from = rule == ops::InputCast::kResultTypeAfterFirst ? 1 : 0;
  bool same = true;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) return false;  // the local stage names the undefined input
    same = same && (i < from || inputs[i].dtype() == inputs[from].dtype());
  }
  // Inputs of one dtype: a cast only where the rule wants a float (or int64) of an integer.
  if (same && (is_floating_point(inputs[from].dtype()) || rule == ops::InputCast::kResultType ||
               rule == ops::InputCast::kResultTypeAfterFirst || rule == ops::InputCast::kToTarget ||
               rule == ops::InputCast::kToTargetAlways)) {
    return false;
  }
  const bool in_place = rule == ops::InputCast::kToTarget ||
                        rule == ops::InputCast::kToTargetDivision ||
                        rule == ops::InputCast::kToTargetAlways;
  const DType target = inputs[0].dtype();
  DType result = target;
  if (rule != ops::InputCast::kIntToFloat && rule != ops::InputCast::kIntToInt64) {
    result = ResultType(inputs, from);
    if (rule == ops::InputCast::kToTargetDivision && !is_floating_point(result)) {
      result = DType::kFloat32;
    }
    if ((rule == ops::InputCast::kToTarget || rule == ops::InputCast::kToTargetDivision) &&
        !can_cast(result, target)) {
      throw InvalidArgument(op.name + ": the result type " + to_string(result) +
                            " cannot be cast to the tensor's dtype " + to_string(target) +
                            " (an in-place op keeps its tensor's dtype); the tensor is unchanged");
    }
  }
  const size_t first_cast = in_place ? 1 : from;
  bool any = false;
  for (size_t i = first_cast; i < inputs.size(); ++i) {
    any = any || CastTarget(rule, inputs[i].dtype(), result, target) != inputs[i].dtype();
  }
  if (!any) return false;
  *cast = inputs;
  for (size_t i = first_cast; i < cast->size(); ++i) {
    Tensor& x = (*cast)[i];
    x = x.to(CastTarget(rule, x.dtype(), result, target));
  }
  return true;
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
  if (op.variadic_inputs) {
    if (inputs.size() > 64) {
      throw InvalidArgument(op.name + ": takes at most 64 inputs, got " +
                            std::to_string(inputs.size()));
    }
  } else if (static_cast<int>(inputs.size()) != op.num_inputs) {
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
  if (op.input_cast != ops::InputCast::kNone) {
    std::vector<Tensor> cast;
    if (CastInputs(op, inputs, &cast)) return Call(op, cast, attrs);
  }
  if (AnyGlobal(inputs)) return stage::Global(op, inputs, attrs);
  return stage::Autograd(op, inputs, attrs);
}

Tensor Call(const ops::OpSchema& op, const Tensor& x, const Attrs& attrs) {
  CheckAttrsOf(op, attrs);
  if (__builtin_expect(op.input_cast != ops::InputCast::kNone, 0) && x.defined()) {
    const DType to = CastTarget(op.input_cast, x.dtype(), x.dtype(), x.dtype());
    if (to != x.dtype()) return Call(op, x.to(to), attrs);
  }
  if (IsGlobal(x)) return stage::Global(op, x, attrs);
  return stage::Autograd(op, x, attrs);
}

Tensor Clone(const Tensor& x) {
  static const ops::OpSchema& op = ops::BuiltinOp("clone");
  return Call(op, x, {});
}

}  // namespace ofl::functional
