// The losses, made of public ops (autograd records the ops they are made of): mse_loss, nll_loss
// and cross_entropy (class indices with weights, ignore_index and label smoothing, or class
// probabilities), and the reduction argument every loss takes ("none", "mean", "sum", as
// torch.nn.functional's). The common cross_entropy (2-dim logits, class indices, "mean" or "sum",
// no weights or smoothing) is one fused op where its kernel exists (ops/cross_entropy_op.cpp).
#include <string>
#include <vector>

#include "kernels/kernel.h"
#include "oneflow_lite/error.h"
#include "oneflow_lite/functional/functional.h"
#include "oneflow_lite/functional/functor_util.h"
#include "oneflow_lite/functional/op_call.h"
#include "ops/op_schema.h"

namespace ofl {

namespace {

enum class Reduction { kNone, kMean, kSum };

Reduction ReductionOf(const char* op, const std::string& reduction) {
  if (reduction == "mean") return Reduction::kMean;
  if (reduction == "sum") return Reduction::kSum;
  if (reduction == "none") return Reduction::kNone;
  throw InvalidArgument(std::string(op) + ": reduction '" + reduction +
                        "' is not one of 'none', 'mean', 'sum'");
}

Tensor Reduce(const Tensor& loss, Reduction r) {
  switch (r) {
    case Reduction::kMean:
      // A global loss split over its batch: each rank sums its part, a partial sum scaled by the
      // whole count (mean would gather the elements first).
      if (loss.is_global()) return loss.sum() / static_cast<double>(loss.numel());
      return loss.mean();
    case Reduction::kSum:
      return loss.sum();
    case Reduction::kNone:
      break;
  }
  return loss;
}

}  // namespace

Tensor mse_loss(const Tensor& x, const Tensor& target, const std::string& reduction) {
  functional::LocalImplOf("mse_loss", x);
  functional::LocalImplOf("mse_loss", target);
  const Reduction r = ReductionOf("mse_loss", reduction);
  const Tensor d = x - target;
  return Reduce(d * d, r);
}

namespace {

// The class dim of a loss's input: 0 for a (C) input, else 1 ((N, C) or (N, C, d1, ...)).
int64_t ClassDim(const Tensor& input) { return input.dim() == 1 ? 0 : 1; }

// The target's shape a class-index loss expects for `input`: input's without the class dim.
std::vector<int64_t> TargetShape(const Tensor& input) {
  std::vector<int64_t> s = input.shape().vec();
  s.erase(s.begin() + ClassDim(input));
  return s;
}

void CheckWeight(const char* op, const Tensor& x, const Tensor& weight) {
  if (!weight.defined()) return;
  const int64_t classes = x.shape()[ClassDim(x)];
  if (weight.dim() != 1 || weight.shape()[0] != classes) {
    throw InvalidArgument(std::string(op) + ": weight shape " + weight.shape().str() + " is not (" +
                          std::to_string(classes) + ") (one per class)");
  }
  if (weight.dtype() != x.dtype()) {
    throw InvalidArgument(std::string(op) + ": weight dtype " + to_string(weight.dtype()) +
                          " differs from input dtype " + to_string(x.dtype()));
  }
}

// A class-index target (int64, the input's shape without the class dim) for a float input with a
// class dim, and the weight (CheckWeight).
void CheckClassTarget(const char* op, const Tensor& x, const Tensor& target, const Tensor& weight) {
  functional::LocalImplOf(op, x);
  functional::LocalImplOf(op, target);
  if (x.dim() == 0) {
    throw InvalidArgument(std::string(op) + ": input must have a class dim, got a 0-dim tensor");
  }
  if (!is_floating_point(x.dtype())) {
    throw InvalidArgument(std::string(op) + ": input dtype " + to_string(x.dtype()) +
                          " is not supported (a float dtype is)");
  }
  if (target.dtype() != DType::kInt64) {
    throw InvalidArgument(std::string(op) + ": target dtype " + to_string(target.dtype()) +
                          " is not int64 (class indices; float class probabilities are taken "
                          "by cross_entropy with a target of the input's shape)");
  }
  const std::vector<int64_t> want = TargetShape(x);
  if (target.shape().vec() != want) {
    throw InvalidArgument(std::string(op) + ": target shape " + target.shape().str() +
                          " does not match input shape " + x.shape().str() + " (expected " +
                          Shape(want).str() + ")");
  }
  CheckWeight(op, x, weight);
}

// What the class-index losses read of their targets: each target's weight `w` (the class weight,
// 1 without a weight), 0 where the target is ignore_index; `valid`, that mask as 0/1 of the
// input's dtype; the targets with ignore_index replaced by 0 (`safe`, to gather with).
struct Targets {
  Tensor w, valid, safe;
};

Targets TargetWeights(const char* op, const Tensor& input, const Tensor& target,
                      const Tensor& weight, int64_t ignore_index) {
  const Tensor is_valid = ne(target, Scalar(ignore_index));
  Targets t;
  t.safe = where(is_valid, target, wrapped_number(op, Scalar(int64_t{0}), target));
  t.valid = is_valid.to(input.dtype());
  t.w = t.valid;
  if (weight.defined()) {
    t.w = t.w * gather(weight, 0, t.safe.reshape({-1})).reshape(target.shape().vec());
  }
  return t;
}

// input[target] along the class dim, of the target's shape.
Tensor PickClasses(const Tensor& input, int64_t cdim, const Tensor& safe) {
  std::vector<int64_t> idx_shape = safe.shape().vec();
  idx_shape.insert(idx_shape.begin() + cdim, 1);
  return gather(input, cdim, safe.reshape(idx_shape)).reshape(safe.shape().vec());
}

Tensor ReduceWeighted(const Tensor& loss, const Tensor& w, Reduction r) {
  if (r == Reduction::kMean) return loss.sum() / w.sum();
  return Reduce(loss, r);
}

}  // namespace

Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight,
                const std::string& reduction, int64_t ignore_index) {
  CheckClassTarget("nll_loss", input, target, weight);
  const Reduction r = ReductionOf("nll_loss", reduction);
  const int64_t cdim = ClassDim(input);
  const Targets t = TargetWeights("nll_loss", input, target, weight, ignore_index);
  return ReduceWeighted(-(PickClasses(input, cdim, t.safe) * t.w), t.w, r);
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                     const std::string& reduction, int64_t ignore_index, double label_smoothing) {
  functional::LocalImplOf("cross_entropy", input);
  functional::LocalImplOf("cross_entropy", target);
  const Reduction r = ReductionOf("cross_entropy", reduction);
  if (!(label_smoothing >= 0.0 && label_smoothing <= 1.0)) {
    throw InvalidArgument("cross_entropy: label_smoothing must be between 0.0 and 1.0, got " +
                          std::to_string(label_smoothing));
  }
  if (input.dim() == 0) {
    throw InvalidArgument("cross_entropy: input must have a class dim, got a 0-dim tensor");
  }
  const int64_t cdim = ClassDim(input);
  const int64_t classes = input.shape()[cdim];
  if (!is_floating_point(input.dtype())) {
    throw InvalidArgument("cross_entropy: input dtype " + to_string(input.dtype()) +
                          " is not supported (a float dtype is)");
  }
  CheckWeight("cross_entropy", input, weight);
  // The weight seen along the class dim, broadcast over the others.
  Tensor weight_b;
  if (weight.defined()) {
    std::vector<int64_t> ws(static_cast<size_t>(input.dim()), 1);
    ws[static_cast<size_t>(cdim)] = classes;
    weight_b = weight.reshape(ws);
  }
  if (is_floating_point(target.dtype())) {
    // Class probabilities, of the input's shape.
    if (target.shape() != input.shape()) {
      throw InvalidArgument(
          "cross_entropy: a float target (class probabilities) must have the "
          "input's shape " +
          input.shape().str() + ", got " + target.shape().str());
    }
    const Tensor logp = log_softmax(input, cdim);
    Tensor p = target;
    if (label_smoothing > 0) p = p * (1.0 - label_smoothing) + label_smoothing / classes;
    Tensor terms = p * logp;
    if (weight_b.defined()) terms = terms * weight_b;
    const Tensor loss = -terms.sum({cdim});
    if (r == Reduction::kMean) return loss.sum() / static_cast<double>(loss.numel());
    return Reduce(loss, r);
  }
  CheckClassTarget("cross_entropy", input, target, weight);
  if (label_smoothing == 0.0 && !weight.defined() && input.dim() == 2 && r != Reduction::kNone &&
      !input.is_global() && !target.is_global() &&
      kernels::TryFindKernel("cross_entropy", input.device().type()) != nullptr) {
    // The common case as one kernel (ops/cross_entropy_op.cpp).
    static const ops::OpSchema& fused = ops::BuiltinOp("cross_entropy");
    return functional::Call(fused, {input, target},
                            Attrs(fused.attrs, ignore_index, r == Reduction::kMean))[0];
  }
  const Tensor logp = log_softmax(input, cdim);
  if (label_smoothing == 0.0) return nll_loss(logp, target, weight, reduction, ignore_index);
  const Targets t = TargetWeights("cross_entropy", input, target, weight, ignore_index);
  const Tensor nll = -(PickClasses(logp, cdim, t.safe) * t.w);
  const Tensor smooth = -(weight_b.defined() ? logp * weight_b : logp).sum({cdim}) * t.valid;
  const Tensor loss = nll * (1.0 - label_smoothing) + smooth * (label_smoothing / classes);
  return ReduceWeighted(loss, t.w, r);
}

}  // namespace ofl
