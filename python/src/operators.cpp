// Tensor's operators as the class's slots: + - * / with a tensor or a Python number (an exact
// ofl::Scalar) on either side, += -= *= /= in place, unary minus, abs() and t ** number; the
// comparisons == != < <= > >= (bool tensors, with __hash__ kept as identity, as PyTorch's), and
// & | ^ ~ (the bitwise ops: logical on bool tensors), and @ (matmul, tensors only). CPython calls a
// slot directly (and makes
// __add__, __radd__, ... from it), where a method named __add__ would cost a lookup and nanobind's
// overload dispatch on every operator.
#include <Python.h>

#include <string>
#include <string_view>

#include "python/src/bindings.h"

namespace ofl::python {
namespace {

std::string NotTensorOrNumber(const char* fn, nb::handle other) {
  return std::string(fn) + "(): argument 'other' must be a Tensor or a number, not " +
         nb::type_name(other.type()).c_str();
}

// In-place arithmetic with a tensor or a number (an exact Scalar: an int stays an int).
template <class Op>
void InPlace(Tensor& t, nb::handle other, const char* fn, Op op) {
  if (IsTensor(other)) {
    const Tensor& o = TensorOf(other);
    ReleaseIfGlobal r(t.is_global() ? t : o);
    op(t, o);
    return;
  }
  Scalar v;
  if (!NumberAsScalar(other, fn, "other", &v)) {
    throw nb::type_error(NotTensorOrNumber(fn, other).c_str());
  }
  ReleaseIfGlobal r(t);
  op(t, v);
}

// a <op> b where a or b (or both) is a tensor, the other a tensor or a number; NotImplemented for
// anything else, so Python raises its own TypeError (or tries the other operand's method). `op`
// takes (Tensor, Tensor), (Tensor, Scalar) and (Scalar, Tensor); an int beyond 64 bits is an
// OverflowError naming Op::kName.
template <class Op>
PyObject* Binary(PyObject* a, PyObject* b) {
  try {
    Tensor out;
    const Op op;
    if (IsTensor(a) && IsTensor(b)) {
      const Tensor &x = TensorOf(a), &y = TensorOf(b);
      ReleaseIfGlobal r(x.is_global() ? x : y);
      out = op(x, y);
    } else {
      const bool tensor_left = IsTensor(a);
      const Tensor& t = TensorOf(tensor_left ? a : b);
      Scalar v;
      if (!NumberAsScalar(tensor_left ? b : a, Op::kName, "other", &v)) Py_RETURN_NOTIMPLEMENTED;
      ReleaseIfGlobal r(t);
      out = tensor_left ? op(t, v) : op(v, t);
    }
    return NewTensorObject(std::move(out));
  } catch (...) {
    return RaiseCurrent();
  }
}

struct AddOp {
  static constexpr const char* kName = "add";
  template <class X, class Y>
  Tensor operator()(const X& x, const Y& y) const {
    return x + y;
  }
};
struct SubOp {
  static constexpr const char* kName = "sub";
  template <class X, class Y>
  Tensor operator()(const X& x, const Y& y) const {
    return x - y;
  }
};
struct MulOp {
  static constexpr const char* kName = "mul";
  template <class X, class Y>
  Tensor operator()(const X& x, const Y& y) const {
    return x * y;
  }
};
struct DivOp {
  static constexpr const char* kName = "div";
  template <class X, class Y>
  Tensor operator()(const X& x, const Y& y) const {
    return x / y;
  }
};

// An operator that is an op function of two tensors: a number operand becomes a wrapped number
// beside the tensor (ofl::wrapped_number).
template <Tensor (*kFn)(const Tensor&, const Tensor&), const char* kOpName>
struct TensorFnOp {
  static constexpr const char* kName = kOpName;
  Tensor operator()(const Tensor& x, const Tensor& y) const { return kFn(x, y); }
  Tensor operator()(const Tensor& x, const Scalar& y) const {
    return kFn(x, wrapped_number(kName, y, x));
  }
  Tensor operator()(const Scalar& x, const Tensor& y) const {
    return kFn(wrapped_number(kName, x, y), y);
  }
};
constexpr char kEq[] = "eq";
constexpr char kNe[] = "ne";
constexpr char kLt[] = "lt";
constexpr char kLe[] = "le";
constexpr char kGt[] = "gt";
constexpr char kGe[] = "ge";
constexpr char kAnd[] = "bitwise_and";
constexpr char kOr[] = "bitwise_or";
constexpr char kXor[] = "bitwise_xor";

// a @ b: both tensors (ofl::matmul), NotImplemented otherwise (Python's TypeError).
PyObject* MatMul(PyObject* a, PyObject* b) {
  if (!IsTensor(a) || !IsTensor(b)) Py_RETURN_NOTIMPLEMENTED;
  try {
    const Tensor &x = TensorOf(a), &y = TensorOf(b);
    ReleaseIfGlobal r(x, y);
    return NewTensorObject(ofl::matmul(x, y));
  } catch (...) {
    return RaiseCurrent();
  }
}

// self <op> other: CPython calls the left operand's slot, and the right one's with the mirrored
// op when that gave NotImplemented (2 < t is t > 2), so `a` is always a tensor here.
PyObject* RichCompare(PyObject* a, PyObject* b, int op) {
  switch (op) {
    case Py_EQ:
      return Binary<TensorFnOp<&ofl::eq, kEq>>(a, b);
    case Py_NE:
      return Binary<TensorFnOp<&ofl::ne, kNe>>(a, b);
    case Py_LT:
      return Binary<TensorFnOp<&ofl::lt, kLt>>(a, b);
    case Py_LE:
      return Binary<TensorFnOp<&ofl::le, kLe>>(a, b);
    case Py_GT:
      return Binary<TensorFnOp<&ofl::gt, kGt>>(a, b);
    case Py_GE:
      return Binary<TensorFnOp<&ofl::ge, kGe>>(a, b);
    default:
      Py_RETURN_NOTIMPLEMENTED;
  }
}

// Identity hashing (object.__hash__'s), which a class defining __eq__ would otherwise lose: tensors
// stay usable as dict keys and in sets, as PyTorch's.
Py_hash_t IdentityHash(PyObject* self) {
  // CPython's pointer hash: the low bits of an aligned address are always 0.
  auto y = reinterpret_cast<size_t>(self);
  y = (y >> 4) | (y << (8 * sizeof(void*) - 4));
  const auto h = static_cast<Py_hash_t>(y);
  return h == -1 ? -2 : h;
}

PyObject* Invert(PyObject* a) {
  try {
    const Tensor& t = TensorOf(a);
    Tensor out;
    {
      ReleaseIfGlobal r(t);
      out = ofl::bitwise_not(t);
    }
    return NewTensorObject(std::move(out));
  } catch (...) {
    return RaiseCurrent();
  }
}

PyObject* Negative(PyObject* a) {
  try {
    const Tensor& t = TensorOf(a);
    Tensor out;
    {
      ReleaseIfGlobal r(t);
      out = -t;
    }
    return NewTensorObject(std::move(out));  // with the GIL
  } catch (...) {
    return RaiseCurrent();
  }
}

PyObject* Absolute(PyObject* a) {
  try {
    const Tensor& t = TensorOf(a);
    Tensor out;
    {
      ReleaseIfGlobal r(t);
      out = ofl::abs(t);
    }
    return NewTensorObject(std::move(out));
  } catch (...) {
    return RaiseCurrent();
  }
}

// t ** number (pow_scalar), t ** tensor and number ** t (pow with a tensor exponent; the number a
// wrapped number); NotImplemented for anything else (a bool exponent, the three-argument form), so
// Python raises its own TypeError.
PyObject* Power(PyObject* a, PyObject* b, PyObject* mod) {
  try {
    if (mod != Py_None || PyBool_Check(b) || PyBool_Check(a)) Py_RETURN_NOTIMPLEMENTED;
    Tensor out;
    double exponent = 0;
    Scalar base;
    if (IsTensor(a) && IsTensor(b)) {
      const Tensor& t = TensorOf(a);
      const Tensor& e = TensorOf(b);
      ReleaseIfGlobal r(t, e);
      out = ofl::pow(t, e);
    } else if (IsTensor(a) && NumberAsDouble(b, &exponent)) {
      const Tensor& t = TensorOf(a);
      ReleaseIfGlobal r(t);
      out = ofl::pow(t, exponent);
    } else if (IsTensor(b) && NumberAsScalar(a, "pow", "self", &base)) {
      const Tensor& e = TensorOf(b);
      ReleaseIfGlobal r(e);
      out = ofl::pow(base, e);
    } else {
      Py_RETURN_NOTIMPLEMENTED;
    }
    return NewTensorObject(std::move(out));
  } catch (...) {
    return RaiseCurrent();
  }
}

PyObject* Self(PyObject* self) {
  Py_INCREF(self);
  return self;
}

// A numpy array operand of an in-place operator (`t += np.ones(3)`) as the out-of-place
// operators take it (`_tensor_operand`: a tensor of self's dtype and device, or a number for a
// 0-dim array); any other operand as it is.
nb::object InPlaceOperand(PyObject* self, PyObject* other) {
  if (IsTensor(other) || std::string_view(Py_TYPE(other)->tp_name) != "numpy.ndarray") {
    return nb::borrow(other);
  }
  // Kept for the life of the process (never released after the interpreter finalizes).
  static const nb::handle convert =
      nb::object(nb::module_::import_("oneflow_lite._tensor").attr("_tensor_operand")).release();
  return convert(nb::handle(other), nb::handle(self));
}

// self += other, -=, *=, /= (`kName`: the name a TypeError gives).
template <void (*kOp)(Tensor&, nb::handle, const char*), const char* kName>
PyObject* InPlaceSlot(PyObject* self, PyObject* other) {
  try {
    kOp(TensorOf(self), InPlaceOperand(self, other), kName);
    return Self(self);
  } catch (...) {
    return RaiseCurrent();
  }
}
constexpr char kIadd[] = "__iadd__";
constexpr char kIsub[] = "__isub__";
constexpr char kImul[] = "__imul__";
constexpr char kItruediv[] = "__itruediv__";

template <class F>
void* Slot(F* f) {
  return reinterpret_cast<void*>(f);
}

const PyType_Slot kSlots[] = {
    {Py_nb_add, Slot(&Binary<AddOp>)},
    {Py_nb_subtract, Slot(&Binary<SubOp>)},
    {Py_nb_multiply, Slot(&Binary<MulOp>)},
    {Py_nb_true_divide, Slot(&Binary<DivOp>)},
    {Py_nb_negative, Slot(&Negative)},
    {Py_nb_absolute, Slot(&Absolute)},
    {Py_nb_power, Slot(&Power)},
    {Py_nb_and, Slot(&Binary<TensorFnOp<&ofl::bitwise_and, kAnd>>)},
    {Py_nb_or, Slot(&Binary<TensorFnOp<&ofl::bitwise_or, kOr>>)},
    {Py_nb_xor, Slot(&Binary<TensorFnOp<&ofl::bitwise_xor, kXor>>)},
    {Py_nb_invert, Slot(&Invert)},
    {Py_nb_matrix_multiply, Slot(&MatMul)},
    {Py_tp_richcompare, Slot(&RichCompare)},
    {Py_tp_hash, Slot(&IdentityHash)},
    {Py_nb_inplace_add, Slot(&InPlaceSlot<&AddInPlace, kIadd>)},
    {Py_nb_inplace_subtract, Slot(&InPlaceSlot<&SubInPlace, kIsub>)},
    {Py_nb_inplace_multiply, Slot(&InPlaceSlot<&MulInPlace, kImul>)},
    {Py_nb_inplace_true_divide, Slot(&InPlaceSlot<&DivInPlace, kItruediv>)},
    {0, nullptr},
};

}  // namespace

void AddInPlace(Tensor& t, nb::handle other, const char* fn) {
  InPlace(t, other, fn, [](Tensor& a, const auto& b) { a.add_(b); });
}
void SubInPlace(Tensor& t, nb::handle other, const char* fn) {
  InPlace(t, other, fn, [](Tensor& a, const auto& b) { a.sub_(b); });
}
void MulInPlace(Tensor& t, nb::handle other, const char* fn) {
  InPlace(t, other, fn, [](Tensor& a, const auto& b) { a.mul_(b); });
}
void DivInPlace(Tensor& t, nb::handle other, const char* fn) {
  InPlace(t, other, fn, [](Tensor& a, const auto& b) { a.div_(b); });
}

void FillInPlace(Tensor& t, nb::handle value) {
  Scalar v;
  if (!NumberAsScalar(value, "fill_", "value", &v)) {
    throw nb::type_error((std::string("fill_(): argument 'value' must be a number, not ") +
                          nb::type_name(value.type()).c_str())
                             .c_str());
  }
  ReleaseIfGlobal r(t);
  t.fill_(v);
}

const PyType_Slot* TensorNumberSlots() { return kSlots; }

}  // namespace ofl::python
