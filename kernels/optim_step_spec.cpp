// The argument checks of the "adam_step" and "sgd_step" kernels (kernels/optim_step.h), shared by
// every device's kernels.
#include <string>

#include "kernels/optim_step.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels {

namespace {

bool Contiguous(const TensorArg& a) {
  if (a.stride.ndim() != a.shape.ndim()) return false;
  int64_t expect = 1;
  for (int i = a.shape.ndim() - 1; i >= 0; --i) {
    if (a.shape[i] != 1 && a.stride[i] != expect) return false;
    expect *= a.shape[i];
  }
  return true;
}

bool IsStepDType(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 || d == DType::kFloat32 ||
         d == DType::kFloat64;
}

void NeedAttrs(const char* kernel, const KernelContext& ctx,
               std::initializer_list<std::pair<const char*, AttrType>> want,
               const std::string& expected) {
  const AttrSchema* s = ctx.attributes.schema();
  for (const auto& [name, type] : want) {
    const int i = s == nullptr ? -1 : s->index(name);
    if (i < 0 || s->defs()[static_cast<size_t>(i)].type != type) {
      throw InvalidArgument(std::string(kernel) + ": the kernel expects the attributes " +
                            expected + ", got " + (s == nullptr ? std::string("none") : s->str()));
    }
  }
}

// The operands' counts, dtypes, shapes and layouts: n gradients, n * per_tensor outputs.
DType CheckOperands(const char* kernel, const KernelContext& ctx, int per_tensor) {
  const size_t n = ctx.inputs.size();
  if (n == 0 || ctx.outputs.size() != n * static_cast<size_t>(per_tensor)) {
    throw InvalidArgument(std::string(kernel) + ": the kernel expects n >= 1 gradients and " +
                          std::to_string(per_tensor) + " * n outputs, got " + std::to_string(n) +
                          " and " + std::to_string(ctx.outputs.size()));
  }
  const DType dtype = ctx.outputs[0].dtype;
  if (!IsStepDType(dtype)) {
    throw InvalidArgument(std::string(kernel) + ": dtype " + to_string(dtype) +
                          " is not supported (float16, bfloat16, float32 and float64 are)");
  }
  for (size_t i = 0; i < n; ++i) {
    const TensorArg& p = ctx.outputs[i * static_cast<size_t>(per_tensor)];
    for (int j = -1; j < per_tensor; ++j) {
      const TensorArg& a =
          j < 0 ? ctx.inputs[i] : ctx.outputs[i * static_cast<size_t>(per_tensor) + j];
      const std::string which =
          j < 0 ? "gradient " + std::to_string(i) : "output " + std::to_string(i * per_tensor + j);
      if (a.dtype != dtype) {
        throw InvalidArgument(std::string(kernel) + ": " + which + " is " + to_string(a.dtype) +
                              ", output 0 is " + to_string(dtype) + " (one dtype per call)");
      }
      if (a.shape != p.shape) {
        throw InvalidArgument(std::string(kernel) + ": " + which + " has shape " + a.shape.str() +
                              ", its parameter " + p.shape.str());
      }
      if (!Contiguous(a)) {
        throw InvalidArgument(std::string(kernel) + ": " + which +
                              " must be contiguous, got shape " + a.shape.str() + " and strides " +
                              a.stride.str());
      }
    }
  }
  return dtype;
}

}  // namespace

const AttrSchema& AdamStepAttrs() {
  static const AttrSchema* s = [] {
    auto* a = new AttrSchema{{"lr", AttrType::kDouble},           {"beta1", AttrType::kDouble},
                             {"beta2", AttrType::kDouble},        {"eps", AttrType::kDouble},
                             {"weight_decay", AttrType::kDouble}, {"amsgrad", AttrType::kBool},
                             {"decoupled", AttrType::kBool},      {"maximize", AttrType::kBool},
                             {"steps", AttrType::kInts}};
    a->set_op("adam_step");
    return a;
  }();
  return *s;
}

const AttrSchema& SgdStepAttrs() {
  static const AttrSchema* s = [] {
    auto* a = new AttrSchema{{"lr", AttrType::kDouble},        {"momentum", AttrType::kDouble},
                             {"dampening", AttrType::kDouble}, {"weight_decay", AttrType::kDouble},
                             {"nesterov", AttrType::kBool},    {"maximize", AttrType::kBool},
                             {"firsts", AttrType::kInts}};
    a->set_op("sgd_step");
    return a;
  }();
  return *s;
}

AdamStepSpec CheckAdamStepArgs(const KernelContext& ctx) {
  NeedAttrs("adam_step", ctx,
            {{"lr", AttrType::kDouble},
             {"beta1", AttrType::kDouble},
             {"beta2", AttrType::kDouble},
             {"eps", AttrType::kDouble},
             {"weight_decay", AttrType::kDouble},
             {"amsgrad", AttrType::kBool},
             {"decoupled", AttrType::kBool},
             {"maximize", AttrType::kBool},
             {"steps", AttrType::kInts}},
            "lr, beta1, beta2, eps, weight_decay (double), amsgrad, decoupled, maximize (bool) "
            "and steps (ints)");
  const Attrs& a = ctx.attributes;
  AdamStepSpec s;
  s.lr = a.get_double("lr");
  s.beta1 = a.get_double("beta1");
  s.beta2 = a.get_double("beta2");
  s.eps = a.get_double("eps");
  s.weight_decay = a.get_double("weight_decay");
  s.amsgrad = a.get_bool("amsgrad");
  s.decoupled = a.get_bool("decoupled");
  s.maximize = a.get_bool("maximize");
  s.per_tensor = s.amsgrad ? 4 : 3;
  s.dtype = CheckOperands("adam_step", ctx, s.per_tensor);
  const IntList steps = a.get_ints("steps");
  if (steps.size() != ctx.inputs.size()) {
    throw InvalidArgument("adam_step: steps has " + std::to_string(steps.size()) + " entries for " +
                          std::to_string(ctx.inputs.size()) + " tensors");
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i] < 1) {
      throw InvalidArgument("adam_step: steps[" + std::to_string(i) + "] is " +
                            std::to_string(steps[i]) + ", a step count starts at 1");
    }
  }
  s.steps.assign(steps.begin(), steps.end());
  return s;
}

SgdStepSpec CheckSgdStepArgs(const KernelContext& ctx) {
  NeedAttrs("sgd_step", ctx,
            {{"lr", AttrType::kDouble},
             {"momentum", AttrType::kDouble},
             {"dampening", AttrType::kDouble},
             {"weight_decay", AttrType::kDouble},
             {"nesterov", AttrType::kBool},
             {"maximize", AttrType::kBool},
             {"firsts", AttrType::kInts}},
            "lr, momentum, dampening, weight_decay (double), nesterov, maximize (bool) and "
            "firsts (ints)");
  const Attrs& a = ctx.attributes;
  SgdStepSpec s;
  s.lr = a.get_double("lr");
  s.momentum = a.get_double("momentum");
  s.dampening = a.get_double("dampening");
  s.weight_decay = a.get_double("weight_decay");
  s.nesterov = a.get_bool("nesterov");
  s.maximize = a.get_bool("maximize");
  s.per_tensor = s.momentum != 0 ? 2 : 1;
  s.dtype = CheckOperands("sgd_step", ctx, s.per_tensor);
  const IntList firsts = a.get_ints("firsts");
  if (firsts.size() != ctx.inputs.size()) {
    throw InvalidArgument("sgd_step: firsts has " + std::to_string(firsts.size()) +
                          " entries for " + std::to_string(ctx.inputs.size()) + " tensors");
  }
  s.firsts.assign(firsts.begin(), firsts.end());
  return s;
}

}  // namespace ofl::kernels
