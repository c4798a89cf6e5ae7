// Tensor's arithmetic operators as the class's number slots: + - * / with a tensor or a Python
// number on either side, += -= *=, and unary minus. CPython calls a slot directly (and makes
// __add__, __radd__, ... from it), where a method named __add__ would cost a lookup and nanobind's
// overload dispatch on every operator.
#include <Python.h>

#include <string>

#include "python/src/bindings.h"

namespace ofl::python {
namespace {

// The tensor `value` as a 0-dim tensor of t's dtype and device, for in-place ops with a number.
Tensor ScalarLike(const Tensor& t, double value) {
  return ofl::full(Shape(std::vector<int64_t>{}), value, t.dtype(), t.device());
}

std::string NotTensorOrNumber(const char* fn, nb::handle other) {
  return std::string(fn) + "(): argument 'other' must be a Tensor or a number, not " +
         nb::type_name(other.type()).c_str();
}

// In-place add/sub with a tensor or a number.
template <class Op>
void InPlace(Tensor& t, nb::handle other, const char* fn, Op op) {
  if (IsTensor(other)) {
    const Tensor& o = TensorOf(other);
    ReleaseIfGlobal r(t.is_global() ? t : o);
    op(t, o);
    return;
  }
  double v;
  if (!NumberAsDouble(other, &v)) throw nb::type_error(NotTensorOrNumber(fn, other).c_str());
  ReleaseIfGlobal r(t);
  op(t, ScalarLike(t, v));
}

// a <op> b where a or b (or both) is a tensor, the other a tensor or a number; NotImplemented for
// anything else, so Python raises its own TypeError (or tries the other operand's method). `op`
// takes (Tensor, Tensor), (Tensor, double) and (double, Tensor).
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
      double v;
      if (!NumberAsDouble(tensor_left ? b : a, &v)) Py_RETURN_NOTIMPLEMENTED;
      ReleaseIfGlobal r(t);
      out = tensor_left ? op(t, v) : op(v, t);
    }
    return NewTensorObject(std::move(out));
  } catch (...) {
    return RaiseCurrent();
  }
}

struct AddOp {
  template <class X, class Y>
  Tensor operator()(const X& x, const Y& y) const {
    return x + y;
  }
};
struct SubOp {
  template <class X, class Y>
  Tensor operator()(const X& x, const Y& y) const {
    return x - y;
  }
};
struct MulOp {
  template <class X, class Y>
  Tensor operator()(const X& x, const Y& y) const {
    return x * y;
  }
};
struct DivOp {
  template <class X, class Y>
  Tensor operator()(const X& x, const Y& y) const {
    return x / y;
  }
};

PyObject* Negative(PyObject* a) {
  try {
    const Tensor& t = TensorOf(a);
    ReleaseIfGlobal r(t);
    return NewTensorObject(-t);
  } catch (...) {
    return RaiseCurrent();
  }
}

PyObject* Self(PyObject* self) {
  Py_INCREF(self);
  return self;
}

// self += other / self -= other (`kName`: the name a TypeError gives).
template <void (*kOp)(Tensor&, nb::handle, const char*), const char* kName>
PyObject* InPlaceSlot(PyObject* self, PyObject* other) {
  try {
    kOp(TensorOf(self), other, kName);
    return Self(self);
  } catch (...) {
    return RaiseCurrent();
  }
}
constexpr char kIadd[] = "__iadd__";
constexpr char kIsub[] = "__isub__";

// t *= x: by a number in place; by a tensor the product written back (the C++ API has no
// mul_(Tensor)); NotImplemented for anything else.
PyObject* InPlaceMulSlot(PyObject* self, PyObject* other) {
  try {
    Tensor& t = TensorOf(self);
    double v;
    if (NumberAsDouble(other, &v)) {
      GilRelease r;
      t.mul_(v);
    } else if (IsTensor(other)) {
      const Tensor& x = TensorOf(other);
      GilRelease r;
      t.copy_(t * x);
    } else {
      Py_RETURN_NOTIMPLEMENTED;
    }
    return Self(self);
  } catch (...) {
    return RaiseCurrent();
  }
}

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
    {Py_nb_inplace_add, Slot(&InPlaceSlot<&AddInPlace, kIadd>)},
    {Py_nb_inplace_subtract, Slot(&InPlaceSlot<&SubInPlace, kIsub>)},
    {Py_nb_inplace_multiply, Slot(&InPlaceMulSlot)},
    {0, nullptr},
};

}  // namespace

void AddInPlace(Tensor& t, nb::handle other, const char* fn) {
  InPlace(t, other, fn, [](Tensor& a, const Tensor& b) { a.add_(b); });
}

void SubInPlace(Tensor& t, nb::handle other, const char* fn) {
  InPlace(t, other, fn, [](Tensor& a, const Tensor& b) { a.sub_(b); });
}

const PyType_Slot* TensorNumberSlots() { return kSlots; }

}  // namespace ofl::python
