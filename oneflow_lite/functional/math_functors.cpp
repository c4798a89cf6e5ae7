// The arithmetic ops (add, sub, mul, div and their operators, a number operand taken exactly as
// an ofl::Scalar), sum, the filled tensors (full, zeros, ones) and the in-place ops. The
// out-of-place ones go through their definitions on the generic path (dispatch.h); the in-place
// ones write the tensor's own view with the same kernels.
#include <cstring>
#include <string>
#include <vector>

#include "kernels/fill_value.h"
#include "oneflow_lite/autograd.h"
#include "oneflow_lite/autograd/graph.h"
#include "oneflow_lite/functional/dispatch.h"
#include "oneflow_lite/functional/functional.h"
#include "oneflow_lite/functional/functor_util.h"
#include "ops/array_ops.h"
#include "ops/broadcast.h"

namespace ofl {

using functional::Dispatch;
using functional::ImplOf;
using functional::KernelFor;
using functional::NewTensor;

namespace {

// PyTorch's refusal (c10::checked_convert), before anything is queued.
void CheckFits(const char* op, const Scalar& value, DType dtype) {
  if (!value.fits(dtype)) {
    throw InvalidArgument(std::string(op) + ": value " + value.str() +
                          " cannot be converted to type " + to_string(dtype) + " without overflow");
  }
}

// The attributes of a "fill" of `value` (extension.h): a double as its bits alone, an integer
// with its kind, so that it reaches an integer dtype exactly.
std::vector<int64_t> FillAttrs(const Scalar& value) {
  switch (value.kind()) {
    case Scalar::Kind::kBool:
    case Scalar::Kind::kInt64:
      return {value.int64_value(), static_cast<int64_t>(kernels::FillKind::kInt64)};
    case Scalar::Kind::kUInt64:
      return {static_cast<int64_t>(value.uint64_value()),
              static_cast<int64_t>(kernels::FillKind::kUInt64)};
    case Scalar::Kind::kDouble:
      break;
  }
  const double d = value.double_value();
  int64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  return {bits};
}

// full, zeros and ones; `op` names the call in errors. The instruction is "full" for each.
Tensor Full(const char* op, const Shape& shape, const Scalar& value, DType dtype,
            const Device& device) {
  ops::CheckDType(op, dtype);
  ops::CheckShape(op, "shape", shape, element_size(dtype));
  CheckFits(op, value, dtype);
  Tensor out = NewTensor(shape, dtype, device);
  kernels::KernelFn fn = kernels::FindKernel("fill", device.type());
  vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
    b->OpCall("full", fn, {}, {out.impl()->arg()}, FillAttrs(value));
  });
  return out;
}

// The scalar operand of `x op value`: a 0-dim tensor of x's dtype on x's device.
Tensor ScalarLike(const char* op, const Tensor& x, const Scalar& value) {
  const TensorImpl& impl = ImplOf(op, x);
  return Full(op, Shape(std::vector<int64_t>{}), value, impl.dtype(), impl.device());
}

// The checks every in-place op makes on the tensor it writes, before anything is queued.
const TensorImpl& InplaceTarget(const char* op, const Tensor& self) {
  const TensorImpl& impl = ImplOf(op, self);
  if (autograd::RequiresGrad(impl) && is_grad_enabled()) {
    throw InvalidArgument(std::string(op) +
                          ": the tensor requires grad, and an in-place op on it would not be "
                          "recorded (" +
                          (self.is_leaf() ? std::string("a leaf that requires grad is being used "
                                                        "in an in-place operation")
                                          : "it was made by " + self.grad_fn_name()) +
                          "); run it under NoGradGuard (an optimizer step) or use the "
                          "out-of-place op");
  }
  for (int i = 0; i < impl.shape().ndim(); ++i) {
    if (impl.stride()[i] == 0 && impl.shape()[i] > 1) {
      throw InvalidArgument(std::string(op) + ": the tensor (shape " + impl.shape().str() +
                            ", strides " + impl.stride().str() +
                            ") is an expanded view: " + "dim " + std::to_string(i) +
                            " has stride 0, so several elements share one memory location; "
                            "write a contiguous() copy instead");
    }
  }
  return impl;
}

// An operand of an in-place op: defined, local, on the target's device unless `any_device`, of
// its dtype, not requiring grad while grad mode is on; seen as the target's shape.
const TensorImpl& RefuseGradSource(const char* op, const Tensor& src) {
  const TensorImpl& impl = ImplOf(op, src);
  if (autograd::RequiresGrad(impl) && is_grad_enabled()) {
    throw InvalidArgument(std::string(op) +
                          ": the source requires grad, and in-place ops are not recorded by "
                          "autograd; run it under NoGradGuard or use the out-of-place op");
  }
  return impl;
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

// An in-place op's source as an operand: `arg` its view of the target's shape; `copy` the
// overlapping source's copy, which must live until the op is queued (its storage is released
// after the instructions queued before the release only).
struct InplaceOperand {
  vm::BlobArg arg;
  Tensor copy;
};

InplaceOperand InplaceSource(const char* op, const TensorImpl& target, const Tensor& src) {
  const TensorImpl& impl = RefuseGradSource(op, src);
  if (impl.dtype() != target.dtype()) {
    throw InvalidArgument(std::string(op) + ": the source's dtype " + to_string(impl.dtype()) +
                          " differs from the tensor's " + to_string(target.dtype()) +
                          " (no conversion)");
  }
  if (impl.device() != target.device()) {
    throw InvalidArgument(std::string(op) + ": the source is on " + impl.device().str() +
                          " but the tensor is on " + target.device().str());
  }
  Strides stride = ops::BroadcastStrides(op, impl.shape(), impl.stride(), target.shape());
  if (!MayOverlap(target, impl, stride, impl.offset())) {
    return {impl.arg(target.shape(), stride, impl.offset()), Tensor()};
  }
  // As numpy: the source's values before the write, from a copy queued ahead of it (PyTorch
  // refuses the call instead).
  Tensor copy = functional::Clone(src);
  const TensorImpl& c = *copy.impl();
  stride = ops::BroadcastStrides(op, c.shape(), c.stride(), target.shape());
  return {c.arg(target.shape(), stride, c.offset()), std::move(copy)};
}

// Issues `kernel_op` writing the target's own view, and bumps its storage's version.
void InplaceCall(const char* op, const char* kernel_op, const TensorImpl& target,
                 std::vector<vm::BlobArg> inputs, const std::vector<int64_t>& attrs) {
  kernels::KernelFn fn = kernels::FindKernel(kernel_op, target.device().type());
  std::vector<vm::BlobArg> outputs{target.arg()};
  vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
    b->OpCall(op, fn, std::move(inputs), std::move(outputs), attrs);
  });
  target.blob()->BumpVersion();
}

// The checks of an in-place arithmetic op beyond InplaceTarget's: a result the tensor's dtype
// holds, as PyTorch requires of an in-place result (bool holds no arithmetic result here; an
// integer holds no true division). Refused at the call, so the tensor and its views keep their
// data.
const TensorImpl& ArithmeticTarget(const char* op, const Tensor& self, bool division) {
  const TensorImpl& t = InplaceTarget(op, self);
  if (t.dtype() == DType::kBool) {
    throw InvalidArgument(std::string(op) +
                          ": the tensor's dtype is bool, and arithmetic on bool is not "
                          "supported (its result is no bool); the tensor is unchanged");
  }
  if (division && !is_floating_point(t.dtype())) {
    throw InvalidArgument(std::string(op) + ": the tensor's dtype " + to_string(t.dtype()) +
                          " cannot hold the result of a true division (a floating value); "
                          "the tensor is unchanged");
  }
  return t;
}

// The number operand of an in-place arithmetic op: PyTorch refuses a floating-point number with
// an integer tensor (the result would be floating), even 2.0.
Tensor InplaceScalar(const char* op, const TensorImpl& t, const Scalar& value) {
  if (value.is_floating_point() && !is_floating_point(t.dtype())) {
    throw InvalidArgument(std::string(op) + ": value " + value.str() +
                          " is a floating-point number, and the tensor's dtype " +
                          to_string(t.dtype()) +
                          " cannot hold the result; the tensor is unchanged");
  }
  return Full(op, Shape(std::vector<int64_t>{}), value, t.dtype(), t.device());
}

// self op= other, by a tensor.
void InplaceArithmetic(const char* op, const char* kernel_op, const TensorImpl& t,
                       const Tensor& other) {
  const InplaceOperand s = InplaceSource(op, t, other);
  InplaceCall(op, kernel_op, t, {t.arg(), s.arg}, {});
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b) {
  static const ops::OpSchema& op = ops::BuiltinOp("add");
  return Dispatch(op, {a, b}, {})[0];
}
Tensor sub(const Tensor& a, const Tensor& b) {
  static const ops::OpSchema& op = ops::BuiltinOp("sub");
  return Dispatch(op, {a, b}, {})[0];
}
Tensor mul(const Tensor& a, const Tensor& b) {
  static const ops::OpSchema& op = ops::BuiltinOp("mul");
  return Dispatch(op, {a, b}, {})[0];
}
Tensor div(const Tensor& a, const Tensor& b) {
  static const ops::OpSchema& op = ops::BuiltinOp("div");
  return Dispatch(op, {a, b}, {})[0];
}
Tensor add(const Tensor& a, Scalar b) { return add(a, ScalarLike("add", a, b)); }
Tensor sub(const Tensor& a, Scalar b) { return sub(a, ScalarLike("sub", a, b)); }
Tensor mul(const Tensor& a, Scalar b) { return mul(a, ScalarLike("mul", a, b)); }
Tensor div(const Tensor& a, Scalar b) { return div(a, ScalarLike("div", a, b)); }

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator+(const Tensor& a, Scalar b) { return add(a, b); }
Tensor operator-(const Tensor& a, Scalar b) { return sub(a, b); }
Tensor operator*(const Tensor& a, Scalar b) { return mul(a, b); }
Tensor operator/(const Tensor& a, Scalar b) { return div(a, b); }
Tensor operator+(Scalar a, const Tensor& b) { return add(ScalarLike("add", b, a), b); }
Tensor operator-(Scalar a, const Tensor& b) { return sub(ScalarLike("sub", b, a), b); }
Tensor operator*(Scalar a, const Tensor& b) { return mul(ScalarLike("mul", b, a), b); }
Tensor operator/(Scalar a, const Tensor& b) { return div(ScalarLike("div", b, a), b); }

Tensor operator-(const Tensor& a) {
  if (!a.defined())
    throw InvalidArgument("neg: the input tensor is undefined (default-constructed)");
  if (a.dtype() == DType::kBool) {
    throw InvalidArgument("neg: negation, the `-` operator, on a bool tensor is not supported");
  }
  return mul(a, -1);  // -1 is uint8's 255: the two's-complement negation, as PyTorch
}

Tensor sum(const Tensor& x) {
  static const ops::OpSchema& op = ops::BuiltinOp("sum");
  return Dispatch(op, x, {0});
}

Tensor sum(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  static const ops::OpSchema& op = ops::BuiltinOp("sum");
  std::vector<int64_t> attrs;
  attrs.reserve(dims.size() + 1);
  attrs.push_back(keepdim ? 1 : 0);
  attrs.insert(attrs.end(), dims.begin(), dims.end());  // no dims: every dim, as PyTorch
  return Dispatch(op, x, attrs);
}

Tensor Tensor::sum() const { return ofl::sum(*this); }
Tensor Tensor::sum(const std::vector<int64_t>& dims, bool keepdim) const {
  return ofl::sum(*this, dims, keepdim);
}

Tensor full(const Shape& shape, Scalar value, DType dtype, const Device& device) {
  return Full("full", shape, value, dtype, device);
}
Tensor zeros(const Shape& shape, DType dtype, const Device& device) {
  return Full("zeros", shape, 0, dtype, device);
}
Tensor ones(const Shape& shape, DType dtype, const Device& device) {
  return Full("ones", shape, 1, dtype, device);
}

Tensor& Tensor::fill_(Scalar value) {
  const TensorImpl& t = InplaceTarget("fill_", *this);
  CheckFits("fill_", value, t.dtype());
  InplaceCall("fill_", "fill", t, {}, FillAttrs(value));
  return *this;
}

Tensor& Tensor::zero_() {
  const TensorImpl& t = InplaceTarget("zero_", *this);
  InplaceCall("zero_", "fill", t, {}, FillAttrs(0));
  return *this;
}

Tensor& Tensor::add_(const Tensor& other) {
  InplaceArithmetic("add_", "add", ArithmeticTarget("add_", *this, false), other);
  return *this;
}
Tensor& Tensor::sub_(const Tensor& other) {
  InplaceArithmetic("sub_", "sub", ArithmeticTarget("sub_", *this, false), other);
  return *this;
}
Tensor& Tensor::mul_(const Tensor& other) {
  InplaceArithmetic("mul_", "mul", ArithmeticTarget("mul_", *this, false), other);
  return *this;
}
Tensor& Tensor::div_(const Tensor& other) {
  InplaceArithmetic("div_", "div", ArithmeticTarget("div_", *this, true), other);
  return *this;
}

Tensor& Tensor::add_(Scalar value) {
  const TensorImpl& t = ArithmeticTarget("add_", *this, false);
  InplaceArithmetic("add_", "add", t, InplaceScalar("add_", t, value));
  return *this;
}
Tensor& Tensor::sub_(Scalar value) {
  const TensorImpl& t = ArithmeticTarget("sub_", *this, false);
  InplaceArithmetic("sub_", "sub", t, InplaceScalar("sub_", t, value));
  return *this;
}
Tensor& Tensor::mul_(Scalar value) {
  const TensorImpl& t = ArithmeticTarget("mul_", *this, false);
  InplaceArithmetic("mul_", "mul", t, InplaceScalar("mul_", t, value));
  return *this;
}
Tensor& Tensor::div_(Scalar value) {
  const TensorImpl& t = ArithmeticTarget("div_", *this, true);
  InplaceArithmetic("div_", "div", t, InplaceScalar("div_", t, value));
  return *this;
}

Tensor& Tensor::copy_(const Tensor& src) {
  const TensorImpl& t = InplaceTarget("copy_", *this);
  const TensorImpl& s = RefuseGradSource("copy_", src);
  // From another device: to this one first (a copy queued like any op).
  const Tensor here = s.device() == t.device() ? src : src.to(t.device());
  const InplaceOperand source = InplaceSource("copy_", t, here);
  InplaceCall("copy_", "copy", t, {source.arg}, {});
  return *this;
}

}  // namespace ofl
