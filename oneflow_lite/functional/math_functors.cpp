// The arithmetic ops with a number operand (taken exactly as an ofl::Scalar) and the operators,
// the filled tensors (full, zeros, ones) and the in-place ops, each a call of its op's definition
// (op_call.h); the in-place ones are definitions of their own (ops/inplace_ops.cpp). The
// tensor-tensor functions are generated from the op table (ops/op_table.py).
#include <string>
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "oneflow_lite/functional/functor_util.h"
#include "oneflow_lite/functional/global_protocol.h"
#include "oneflow_lite/functional/global_util.h"
#include "oneflow_lite/functional/op_call.h"
#include "ops/array_ops.h"

namespace ofl {

using functional::Call;
using functional::Full;
using functional::ImplOf;
using functional::NewTensor;

namespace {

// PyTorch's refusal (c10::checked_convert), before anything is queued.
void CheckFits(const char* op, const Scalar& value, DType dtype) {
  if (!value.fits(dtype)) {
    throw InvalidArgument(std::string(op) + ": value " + value.str() +
                          " cannot be converted to type " + to_string(dtype) + " without overflow");
  }
}

// A definition of the built-in ops, looked up once per name.
#define OFL_BUILTIN(name)                                  \
  ([]() -> const ops::OpSchema& {                          \
    static const ops::OpSchema& op = ops::BuiltinOp(name); \
    return op;                                             \
  }())

// The number operand of an in-place arithmetic op: PyTorch refuses a floating-point number with
// an integer tensor (the result would be floating), even 2.0.
Tensor InplaceScalar(const char* op, const Tensor& self, const Scalar& value) {
  const TensorImpl& t = ImplOf(op, self);
  if (value.is_floating_point() && !is_floating_point(t.dtype()) && t.dtype() != DType::kBool) {
    throw InvalidArgument(std::string(op) + ": value " + value.str() +
                          " is a floating-point number, and the tensor's dtype " +
                          to_string(t.dtype()) +
                          " cannot hold the result; the tensor is unchanged");
  }
  return Full(op, Shape(std::vector<int64_t>{}), value, t.dtype(), t.device());
}

}  // namespace

Tensor functional::Full(const char* op, const Shape& shape, const Scalar& value, DType dtype,
                        const Device& device) {
  ops::CheckDType(op, dtype);
  ops::CheckShape(op, "shape", shape, element_size(dtype));
  CheckFits(op, value, dtype);
  const ops::OpSchema& fill = OFL_BUILTIN("fill_");
  return Call(fill, NewTensor(shape, dtype, device), Attrs(fill.attrs, value));
}

Tensor add(const Tensor& a, Scalar b) { return add(a, wrapped_number("add", b, a)); }
Tensor sub(const Tensor& a, Scalar b) { return sub(a, wrapped_number("sub", b, a)); }
Tensor mul(const Tensor& a, Scalar b) { return mul(a, wrapped_number("mul", b, a)); }
Tensor div(const Tensor& a, Scalar b) { return div(a, wrapped_number("div", b, a)); }

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator+(const Tensor& a, Scalar b) { return add(a, b); }
Tensor operator-(const Tensor& a, Scalar b) { return sub(a, b); }
Tensor operator*(const Tensor& a, Scalar b) { return mul(a, b); }
Tensor operator/(const Tensor& a, Scalar b) { return div(a, b); }
Tensor operator+(Scalar a, const Tensor& b) { return add(wrapped_number("add", a, b), b); }
Tensor operator-(Scalar a, const Tensor& b) { return sub(wrapped_number("sub", a, b), b); }
Tensor operator*(Scalar a, const Tensor& b) { return mul(wrapped_number("mul", a, b), b); }
Tensor operator/(Scalar a, const Tensor& b) { return div(wrapped_number("div", a, b), b); }

Tensor operator-(const Tensor& a) {
  if (!a.defined())
    throw InvalidArgument("neg: the input tensor is undefined (default-constructed)");
  if (a.dtype() == DType::kBool) {
    throw InvalidArgument("neg: negation, the `-` operator, on a bool tensor is not supported");
  }
  return neg(a);
}

Tensor wrapped_number(const char* op, Scalar value, const Tensor& like) {
  const TensorImpl& impl = functional::LocalImplOf(op, like);
  DType dtype = impl.dtype();
  if (value.is_floating_point() && !is_floating_point(dtype)) {
    dtype = DType::kFloat32;
  } else if (value.kind() != Scalar::Kind::kBool && dtype == DType::kBool) {
    dtype = value.is_floating_point() ? DType::kFloat32 : DType::kInt64;
  }
  const Shape scalar(std::vector<int64_t>{});
  if (const GlobalMeta* g = impl.global().get()) {
    // Every rank passes the same number (one program on every rank): a broadcast 0-dim tensor
    // over like's placement, made locally.
    if (!g->placement.contains(ofl::rank())) {
      return functional::GlobalOverShard(functional::EmptyShard(dtype), g->placement,
                                         Sbp::broadcast(), scalar);
    }
    return functional::GlobalOverShard(
        Full(op, scalar, value, dtype, functional::PlacementDevice(g->placement)), g->placement,
        Sbp::broadcast(), scalar);
  }
  return Full(op, scalar, value, dtype, impl.device());
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
  CheckFits("fill_", value, ImplOf("fill_", *this).dtype());
  const ops::OpSchema& op = OFL_BUILTIN("fill_");
  Call(op, *this, Attrs(op.attrs, value));
  return *this;
}

Tensor& Tensor::zero_() {
  const ops::OpSchema& op = OFL_BUILTIN("zero_");
  Call(op, *this, Attrs(op.attrs, Scalar(0)));
  return *this;
}

Tensor& Tensor::add_(const Tensor& other) {
  Call(OFL_BUILTIN("add_"), {*this, other}, {});
  return *this;
}
Tensor& Tensor::sub_(const Tensor& other) {
  Call(OFL_BUILTIN("sub_"), {*this, other}, {});
  return *this;
}
Tensor& Tensor::mul_(const Tensor& other) {
  Call(OFL_BUILTIN("mul_"), {*this, other}, {});
  return *this;
}
Tensor& Tensor::div_(const Tensor& other) {
  Call(OFL_BUILTIN("div_"), {*this, other}, {});
  return *this;
}

Tensor& Tensor::add_(Scalar value) { return add_(InplaceScalar("add_", *this, value)); }
Tensor& Tensor::sub_(Scalar value) { return sub_(InplaceScalar("sub_", *this, value)); }
Tensor& Tensor::mul_(Scalar value) { return mul_(InplaceScalar("mul_", *this, value)); }
Tensor& Tensor::div_(Scalar value) { return div_(InplaceScalar("div_", *this, value)); }

Tensor& Tensor::copy_(const Tensor& src) {
  const TensorImpl& t = ImplOf("copy_", *this);
  const TensorImpl& s = ImplOf("copy_", src);
  // From another device: to this one first (a copy queued like any op, recorded as one).
  const Tensor here = s.device() == t.device() ? src : src.to(t.device());
  Call(OFL_BUILTIN("copy_"), {*this, here}, {});
  return *this;
}

}  // namespace ofl
