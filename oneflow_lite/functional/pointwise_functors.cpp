// The pointwise ops' entry points written by hand: the comparisons with a number, the comparison
// and bitwise operators, and clamp's family, whose number bounds decide the dtype it computes in
// (PyTorch's result_type: an integer tensor with a fractional bound computes in float32). The
// tensor-tensor functions are generated from the op table (ops/op_table.py).
#include <string>

#include "oneflow_lite/functional/functional.h"
#include "oneflow_lite/functional/functor_util.h"
#include "oneflow_lite/functional/op_call.h"
#include "ops/op_schema.h"

namespace ofl {

namespace {

// x cast to the dtype its result type with the bounds gives (the wrapped-number rule of
// ofl::wrapped_number: a float bound makes an integer x float32), then the op called with `bounds`
// as its attributes. A bool x is refused, not promoted (the op's own check).
template <class... Bounds>
Tensor Clamp(const char* name, const Tensor& x, const Bounds&... bounds) {
  static_assert(sizeof...(Bounds) >= 1, "a bound at least");
  const DType dtype = functional::LocalImplOf(name, x).dtype();
  DType to = dtype;
  if ((bounds.is_floating_point() || ...) && !is_floating_point(dtype) && dtype != DType::kBool) {
    to = DType::kFloat32;
  }
  const ops::OpSchema& op = ops::BuiltinOp(name);
  return functional::Call(op, to == dtype ? x : x.to(to), Attrs(op.attrs, bounds...));
}

}  // namespace

Tensor clamp(const Tensor& x, Scalar min, Scalar max) { return Clamp("clamp", x, min, max); }
Tensor clamp_min(const Tensor& x, Scalar min) { return Clamp("clamp_min", x, min); }
Tensor clamp_max(const Tensor& x, Scalar max) { return Clamp("clamp_max", x, max); }

Tensor pow(const Tensor& x, const Tensor& exponent) {
  static const ops::OpSchema& op = ops::BuiltinOp("pow");
  return functional::Call(op, {x, exponent}, {})[0];
}
Tensor pow(Scalar self, const Tensor& exponent) {
  return pow(wrapped_number("pow", self, exponent), exponent);
}
Tensor Tensor::pow(const Tensor& exponent) const { return ofl::pow(*this, exponent); }

Tensor eq(const Tensor& a, Scalar b) { return eq(a, wrapped_number("eq", b, a)); }
Tensor ne(const Tensor& a, Scalar b) { return ne(a, wrapped_number("ne", b, a)); }
Tensor lt(const Tensor& a, Scalar b) { return lt(a, wrapped_number("lt", b, a)); }
Tensor le(const Tensor& a, Scalar b) { return le(a, wrapped_number("le", b, a)); }
Tensor gt(const Tensor& a, Scalar b) { return gt(a, wrapped_number("gt", b, a)); }
Tensor ge(const Tensor& a, Scalar b) { return ge(a, wrapped_number("ge", b, a)); }

Tensor operator==(const Tensor& a, const Tensor& b) { return eq(a, b); }
Tensor operator!=(const Tensor& a, const Tensor& b) { return ne(a, b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
Tensor operator==(const Tensor& a, Scalar b) { return eq(a, b); }
Tensor operator!=(const Tensor& a, Scalar b) { return ne(a, b); }
Tensor operator<(const Tensor& a, Scalar b) { return lt(a, b); }
Tensor operator<=(const Tensor& a, Scalar b) { return le(a, b); }
Tensor operator>(const Tensor& a, Scalar b) { return gt(a, b); }
Tensor operator>=(const Tensor& a, Scalar b) { return ge(a, b); }
// A number on the left: the mirrored comparison (2 < t is t > 2).
Tensor operator==(Scalar a, const Tensor& b) { return eq(b, a); }
Tensor operator!=(Scalar a, const Tensor& b) { return ne(b, a); }
Tensor operator<(Scalar a, const Tensor& b) { return gt(b, a); }
Tensor operator<=(Scalar a, const Tensor& b) { return ge(b, a); }
Tensor operator>(Scalar a, const Tensor& b) { return lt(b, a); }
Tensor operator>=(Scalar a, const Tensor& b) { return le(b, a); }

Tensor operator&(const Tensor& a, const Tensor& b) { return bitwise_and(a, b); }
Tensor operator|(const Tensor& a, const Tensor& b) { return bitwise_or(a, b); }
Tensor operator^(const Tensor& a, const Tensor& b) { return bitwise_xor(a, b); }
Tensor operator~(const Tensor& a) { return bitwise_not(a); }

}  // namespace ofl
