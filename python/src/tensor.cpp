// oneflow_lite.Tensor: the C++ Tensor as a Python class, bound the one way the whole class is
// bound: CPython method and property tables whose functions read their arguments with the one
// parser (arg_parser.h). This file holds the hand-written methods and properties (geometry,
// in-place arithmetic, autograd state, global tensors); the op table's methods are generated
// (generated/python_ops.cpp), detach and backward are fastcall.cpp's, item and tolist
// host_reads.cpp's, the operators the class's number slots (operators.cpp), and the methods
// written in Python (numpy, __repr__, __getitem__, ...) oneflow_lite/_tensor.py's. The GIL rule
// is bindings.h's: op calls keep it (ReleaseIfGlobal), to_global and to_local release it.
#include <Python.h>

#include <string>
#include <utility>
#include <vector>

#include "python/src/arg_parser.h"
#include "python/src/bindings.h"
#include "python/src/global_args.h"

namespace ofl::python {
namespace {

PyObject* IntTuple(const int64_t* v, size_t n) {
  PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(n));
  if (t == nullptr) throw nb::python_error();
  for (size_t i = 0; i < n; ++i) {
    PyObject* item = PyLong_FromLongLong(v[i]);
    if (item == nullptr) {
      Py_DECREF(t);
      throw nb::python_error();
    }
    PyTuple_SET_ITEM(t, i, item);
  }
  return t;
}
PyObject* ShapeTuple(const Tensor& t) {
  const Shape& s = t.shape();
  return IntTuple(s.begin(), static_cast<size_t>(s.ndim()));
}
PyObject* NewInt(int64_t v) { return PyLong_FromLongLong(v); }
PyObject* NewBool(bool v) { return PyBool_FromLong(v ? 1 : 0); }
PyObject* Self(PyObject* self) {
  Py_INCREF(self);
  return self;
}

// A method taking no argument: a TypeError naming it for any given.
void NoArgs(const char* fn, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  ParseArgs(fn, args, static_cast<size_t>(nargsf), kwnames, {}, 0, nullptr);
}

// The `sbp` argument of to_global: one sbp, or a tuple/list holding one.
Sbp ArgSbp(nb::handle h) { return ArgSbpOf(h, "to_global"); }

// ---- Geometry ----

PyObject* Size(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  nb::handle a[1] = {Py_None};
  ParseArgs("size", args, static_cast<size_t>(nargsf), kwnames, {"dim"}, 0, a);
  const Tensor& t = TensorOf(self);
  if (a[0].is_none()) return ShapeTuple(t);
  const int64_t d = ArgInt(a[0], "size", "dim");
  const int64_t n = t.dim();
  if (d < -n || d >= n) {
    throw nb::index_error(("size(): dim " + std::to_string(d) + " is out of range for a " +
                           std::to_string(n) + "-dim tensor")
                              .c_str());
  }
  return NewInt(t.shape()[d < 0 ? d + n : d]);
}

PyObject* Stride(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  NoArgs("stride", args, nargsf, kwnames);
  const std::vector<int64_t>& s = TensorOf(self).stride();
  return IntTuple(s.data(), s.size());
}

PyObject* StorageOffset(PyObject* self, PyObject* const* args, Py_ssize_t nargsf,
                        PyObject* kwnames) {
  NoArgs("storage_offset", args, nargsf, kwnames);
  return NewInt(TensorOf(self).storage_offset());
}

PyObject* Dim(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  NoArgs("dim", args, nargsf, kwnames);
  return NewInt(TensorOf(self).dim());
}

PyObject* Numel(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  NoArgs("numel", args, nargsf, kwnames);
  return NewInt(TensorOf(self).numel());
}

PyObject* IsContiguous(PyObject* self, PyObject* const* args, Py_ssize_t nargsf,
                       PyObject* kwnames) {
  NoArgs("is_contiguous", args, nargsf, kwnames);
  return NewBool(TensorOf(self).is_contiguous());
}

PyObject* IsSetTo(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  nb::handle a[1];
  ParseArgs("is_set_to", args, static_cast<size_t>(nargsf), kwnames, {"tensor"}, 1, a);
  return NewBool(TensorOf(self).is_set_to(ArgTensor(a[0], "is_set_to", "tensor")));
}

PyObject* Len(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  NoArgs("__len__", args, nargsf, kwnames);
  const Tensor& t = TensorOf(self);
  if (t.dim() == 0) throw nb::type_error("len() of a 0-d tensor");
  return NewInt(t.shape()[0]);
}

// ---- Array ops and device moves (the table's are generated) ----

PyObject* ExpandAs(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  nb::handle a[1];
  ParseArgs("expand_as", args, static_cast<size_t>(nargsf), kwnames, {"other"}, 1, a);
  const Tensor& t = TensorOf(self);
  const std::vector<int64_t> sizes = ArgTensor(a[0], "expand_as", "other").shape().vec();
  Tensor out;
  {
    ReleaseIfGlobal r(t);
    out = t.expand(sizes);
  }
  return NewTensorObject(std::move(out));
}

PyObject* Transpose(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  nb::handle a[2];
  ParseArgs("transpose", args, static_cast<size_t>(nargsf), kwnames, {"dim0", "dim1"}, 2, a);
  const int64_t d0 = ArgInt(a[0], "transpose", "dim0"), d1 = ArgInt(a[1], "transpose", "dim1");
  const Tensor& t = TensorOf(self);
  const int64_t n = t.dim();
  for (int64_t d : {d0, d1}) {
    const int64_t lo = n == 0 ? -1 : -n, hi = n == 0 ? 0 : n - 1;
    if (d < lo || d > hi) {
      throw InvalidArgument("transpose: dim " + std::to_string(d) + " is out of range for a " +
                            std::to_string(n) + "-dim tensor (expected " + std::to_string(lo) +
                            " to " + std::to_string(hi) + ")");
    }
  }
  std::vector<int64_t> perm(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) perm[i] = i;
  if (n > 0) std::swap(perm[(d0 + n) % n], perm[(d1 + n) % n]);
  Tensor out;
  {
    ReleaseIfGlobal r(t);
    out = t.permute(perm);
  }
  return NewTensorObject(std::move(out));
}

// cpu(): self itself when it is on the CPU already, as PyTorch.
PyObject* MoveTo(PyObject* self, const Device& d) {
  const Tensor& t = TensorOf(self);
  Tensor out;
  {
    ReleaseIfGlobal r(t);
    out = t.to(d);
  }
  return ResultObject(self, std::move(out));
}

// to(device), to(dtype), to(device, dtype), with keywords device= and dtype=: self itself when
// nothing changes, as PyTorch's.
PyObject* To(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  nb::handle a[2];
  ParseArgs("to", args, static_cast<size_t>(nargsf), kwnames, {"device", "dtype"}, 0, a);
  // A dtype given first is the dtype: t.to(ofl.float64).
  if (a[0].ptr() != nullptr && a[1].ptr() == nullptr && nb::isinstance<PyDType>(a[0])) {
    std::swap(a[0], a[1]);
  }
  if (a[0].ptr() == nullptr && a[1].ptr() == nullptr) {
    throw nb::type_error("to() takes a device, a dtype or both (t.to('sim:0'), t.to(ofl.float64))");
  }
  const Tensor& t = TensorOf(self);
  const bool has_device = a[0].ptr() != nullptr && !a[0].is_none();
  const Device d = has_device ? ArgDevice(a[0], "to") : t.device();
  const DType dtype = a[1].ptr() != nullptr ? ArgDType(a[1], "to", t.dtype()) : t.dtype();
  Tensor out;
  {
    ReleaseIfGlobal r(t);
    out = has_device ? t.to(d) : t;
    out = out.to(dtype);
  }
  return ResultObject(self, std::move(out));
}

PyObject* Cpu(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  NoArgs("cpu", args, nargsf, kwnames);
  return MoveTo(self, Device(DeviceType::kCPU, 0));
}

// ---- In-place arithmetic (the operators are the number slots: operators.cpp) ----

template <void (*Op)(Tensor&, nb::handle, const char*), const char* kName, const char* kArg>
PyObject* InPlace(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  nb::handle a[1];
  ParseArgs(kName, args, static_cast<size_t>(nargsf), kwnames, {kArg}, 1, a);
  Op(TensorOf(self), a[0], kName);
  return Self(self);
}
void Fill(Tensor& t, nb::handle value, const char*) { FillInPlace(t, value); }
constexpr char kAdd[] = "add_", kSub[] = "sub_", kMul[] = "mul_", kDiv[] = "div_",
               kFill[] = "fill_", kOther[] = "other", kValue[] = "value";

PyObject* Zero(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  NoArgs("zero_", args, nargsf, kwnames);
  Tensor& t = TensorOf(self);
  {
    ReleaseIfGlobal r(t);
    t.zero_();
  }
  return Self(self);
}

PyObject* Copy(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  nb::handle a[1];
  ParseArgs("copy_", args, static_cast<size_t>(nargsf), kwnames, {"src"}, 1, a);
  Tensor& t = TensorOf(self);
  const Tensor& src = ArgTensor(a[0], "copy_", "src");
  {
    ReleaseIfGlobal r(t.is_global() ? t : src);
    t.copy_(src);
  }
  return Self(self);
}

// ---- Autograd ----

PyObject* RequiresGradInPlace(PyObject* self, PyObject* const* args, Py_ssize_t nargsf,
                              PyObject* kwnames) {
  nb::handle a[1] = {Py_True};
  ParseArgs("requires_grad_", args, static_cast<size_t>(nargsf), kwnames, {"requires_grad"}, 0, a);
  TensorOf(self).requires_grad_(ArgBool(a[0], "requires_grad_", "requires_grad"));
  return Self(self);
}

PyObject* RetainGrad(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  NoArgs("retain_grad", args, nargsf, kwnames);
  TensorOf(self).retain_grad();
  Py_RETURN_NONE;
}

PyObject* Version(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  NoArgs("_version", args, nargsf, kwnames);
  return NewInt(TensorOf(self).version());
}

// ---- Global tensors: a collective on this thread, so the GIL is released for the call ----

PyObject* ToGlobal(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  nb::handle a[2];
  ParseArgs("to_global", args, static_cast<size_t>(nargsf), kwnames, {"placement", "sbp"}, 2, a);
  if (!nb::isinstance<Placement>(a[0])) {
    throw nb::type_error((std::string("to_global(): argument 'placement' must be an "
                                      "oneflow_lite.placement, not ") +
                          nb::type_name(a[0].type()).c_str())
                             .c_str());
  }
  const Placement& placement = nb::cast<const Placement&>(a[0]);
  const Sbp sbp = ArgSbp(a[1]);
  const Tensor& t = TensorOf(self);
  Tensor out;
  {
    GilRelease r;
    out = t.to_global(placement, sbp);
  }
  return NewTensorObject(std::move(out));
}

PyObject* ToLocal(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  NoArgs("to_local", args, nargsf, kwnames);
  const Tensor& t = TensorOf(self);
  Tensor out;
  {
    GilRelease r;
    out = t.to_local();
  }
  return NewTensorObject(std::move(out));
}

using Fast = PyObject* (*)(PyObject*, PyObject* const*, Py_ssize_t, PyObject*);

// Every method turns the C++ exception it ends with into the Python error it stands for.
template <Fast F>
PyObject* Guarded(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  try {
    return F(self, args, nargsf, kwnames);
  } catch (...) {
    return RaiseCurrent();
  }
}
template <Fast F>
constexpr PyMethodDef Method(const char* name, const char* doc) {
  return {name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&Guarded<F>)),
          METH_FASTCALL | METH_KEYWORDS, doc};
}

// The definitions live as long as the methods made from them: the process.
PyMethodDef kMethods[] = {
    Method<&Size>("size", "The shape as a tuple, or the size of one dim."),
    Method<&Stride>("stride", "The strides, in elements."),
    Method<&StorageOffset>("storage_offset", "The offset into the storage, in elements."),
    Method<&Dim>("dim", "The number of dims."),
    Method<&Numel>("numel", "The number of elements."),
    Method<&IsContiguous>("is_contiguous", "Whether the strides are row-major and dense."),
    Method<&IsSetTo>("is_set_to", "Whether both are views of the same bytes, alike."),
    Method<&Len>("__len__", "The size of the first dim."),
    Method<&ExpandAs>("expand_as", "expand(other.shape)."),
    Method<&Transpose>("transpose", "The view with two dims swapped."),
    Method<&To>("to", "The tensor on a device and/or in a dtype (self when nothing changes)."),
    Method<&Cpu>("cpu", "to('cpu')."),
    Method<&InPlace<&AddInPlace, kAdd, kOther>>("add_", "self += other, in place."),
    Method<&InPlace<&SubInPlace, kSub, kOther>>("sub_", "self -= other, in place."),
    Method<&InPlace<&MulInPlace, kMul, kOther>>("mul_", "self *= other, in place."),
    Method<&InPlace<&DivInPlace, kDiv, kOther>>("div_", "self /= other, in place."),
    Method<&InPlace<&Fill, kFill, kValue>>("fill_", "Every element set to a number, in place."),
    Method<&Zero>("zero_", "Every element set to zero, in place."),
    Method<&Copy>("copy_", "The values of src (broadcast, from any device), in place."),
    Method<&RequiresGradInPlace>("requires_grad_", "Sets requires_grad; returns self."),
    Method<&RetainGrad>("retain_grad", "Keeps .grad of a non-leaf after backward."),
    Method<&Version>("_version", "How many in-place changes the storage has seen."),
    Method<&ToGlobal>("to_global", "The global tensor of a placement and sbp."),
    Method<&ToLocal>("to_local", "This rank's shard of a global tensor."),
    {nullptr, nullptr, 0, nullptr}};

// ---- Properties ----

using Get = PyObject* (*)(const Tensor&);
using Set = void (*)(PyObject* self, PyObject* value);

template <Get G>
PyObject* Getter(PyObject* self, void*) {
  try {
    return G(TensorOf(self));
  } catch (...) {
    return RaiseCurrent();
  }
}
template <Set S>
int Setter(PyObject* self, PyObject* value, void*) {
  try {
    if (value == nullptr) throw nb::type_error("the attribute cannot be deleted");
    S(self, value);
    return 0;
  } catch (...) {
    RaiseCurrent();
    return -1;
  }
}

PyObject* GetDType(const Tensor& t) {
  return nb::cast(DTypeObject(t.dtype()), nb::rv_policy::reference).release().ptr();
}
PyObject* GetDevice(const Tensor& t) { return nb::cast(t.device()).release().ptr(); }
PyObject* GetNdim(const Tensor& t) { return NewInt(t.dim()); }
PyObject* GetRequiresGrad(const Tensor& t) { return NewBool(t.requires_grad()); }
void SetRequiresGrad(PyObject* self, PyObject* value) {
  if (!PyBool_Check(value)) {
    throw nb::type_error((std::string("requires_grad must be a bool, not ") +
                          nb::type_name(nb::handle(value).type()).c_str())
                             .c_str());
  }
  TensorOf(self).requires_grad_(value == Py_True);
}
PyObject* GetIsLeaf(const Tensor& t) { return NewBool(t.is_leaf()); }
// The one object of the gradient (`t.grad is t.grad`, `p.grad = g` makes `p.grad is g`).
PyObject* GetGrad(const Tensor& t) {
  const Tensor g = t.grad();
  if (!g.defined()) Py_RETURN_NONE;
  return PublishedTensorObject(nb::handle(), g);
}
void SetGrad(PyObject* self, PyObject* g) {
  Tensor& t = TensorOf(self);
  if (g == Py_None) {
    t.set_grad(Tensor());
  } else if (IsTensor(g)) {
    t.set_grad(TensorOf(g));
    // The grad kept is g's own tensor unless set_grad detached it: `p.grad is g` then.
    const Tensor kept = t.grad();
    if (kept.impl() == TensorOf(g).impl()) nb::steal(PublishedTensorObject(g, kept));
  } else {
    throw nb::type_error((std::string("grad must be a Tensor or None, not ") +
                          nb::type_name(nb::handle(g).type()).c_str())
                             .c_str());
  }
}
PyObject* GetGradFnName(const Tensor& t) {
  const std::string name = t.grad_fn_name();
  return PyUnicode_FromStringAndSize(name.data(), static_cast<Py_ssize_t>(name.size()));
}
PyObject* GetIsGlobal(const Tensor& t) { return NewBool(t.is_global()); }
PyObject* GetPlacement(const Tensor& t) { return nb::cast(t.placement()).release().ptr(); }
PyObject* GetSbp(const Tensor& t) { return nb::make_tuple(t.sbp()).release().ptr(); }

template <Get G>
constexpr PyGetSetDef ReadOnly(const char* name, const char* doc) {
  return {name, &Getter<G>, nullptr, doc, nullptr};
}
template <Get G, Set S>
constexpr PyGetSetDef ReadWrite(const char* name, const char* doc) {
  return {name, &Getter<G>, &Setter<S>, doc, nullptr};
}

PyGetSetDef kProperties[] = {
    ReadOnly<&ShapeTuple>("shape", "The sizes, a tuple of ints."),
    ReadOnly<&GetDType>("dtype", "The element type."),
    ReadOnly<&GetDevice>("device", "The device the values live on."),
    ReadOnly<&GetNdim>("ndim", "The number of dims."),
    ReadWrite<&GetRequiresGrad, &SetRequiresGrad>("requires_grad",
                                                  "Whether autograd records ops on it."),
    ReadOnly<&GetIsLeaf>("is_leaf", "Whether no recorded op made it."),
    ReadWrite<&GetGrad, &SetGrad>("grad", "The gradient backward accumulated, or None."),
    ReadOnly<&GetGradFnName>("_grad_fn_name", "The name of the node that made it."),
    ReadOnly<&GetIsGlobal>("is_global", "Whether it is a global tensor."),
    ReadOnly<&GetPlacement>("placement", "A global tensor's placement."),
    ReadOnly<&GetSbp>("sbp", "A global tensor's sbp, as a tuple."),
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyMethodDef kNoFunctions[] = {{nullptr, nullptr, 0, nullptr}};

}  // namespace

void BindTensor(nb::module_& m) {
  nb::handle type = MakeTensorType(m, "Tensor", TensorNumberSlots());
  BindMethodTable(m, type, kMethods, kNoFunctions);
  BindProperties(type, kProperties);
  m.def("_host_buffer_cache_bytes", &HostBufferCacheBytes);
  // nn.Parameter's constructor: t's tensor (the same storage and autograd state) as an object of
  // the subclass cls.
  m.def("_make_subclass",
        [](nb::handle cls, const Tensor& t) { return nb::steal(NewSubclassObject(cls, t)); });
}

}  // namespace ofl::python
