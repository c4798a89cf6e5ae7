// The hottest calls as raw CPython vectorcall functions: Tensor.expand, repeat, reshape, view and
// permute with their sizes as *ints or one sequence; contiguous, clone and detach; sum(dim=None,
// keepdim=False); backward(gradient=None, retain_graph=False); and ofl.empty, zeros and ones with
// (*size, dtype=, device=, requires_grad=). They skip the argument tuple and the overload dispatch
// of a nanobind function, which cost more than the op's own bookkeeping on tiny tensors
// (docs/benchmarks.md, "From Python": the Python layer's cost per call). The other methods are
// nanobind's.
#include <Python.h>

#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "python/src/bindings.h"

namespace ofl::python {

PyObject* RaiseCurrent() {
  try {
    throw;
  } catch (nb::python_error& e) {
    e.restore();
  } catch (const nb::builtin_exception& e) {
    PyObject* type = PyExc_RuntimeError;
    switch (e.type()) {
      case nb::exception_type::type_error:
        type = PyExc_TypeError;
        break;
      case nb::exception_type::index_error:
        type = PyExc_IndexError;
        break;
      case nb::exception_type::value_error:
        type = PyExc_ValueError;
        break;
      default:
        break;
    }
    PyErr_SetString(type, e.what());
  } catch (const Error& e) {
    SetErrorFor(e);
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

namespace {

// *ints or one tuple/list of ints, as ArgInts does for a nanobind argument tuple, in a vector the
// thread keeps, so that a call allocates nothing for its sizes: valid until this thread's next
// FastInts (the op it is passed to never calls back into Python). An argument's __index__ may
// call back into oneflow_lite, and so into FastInts on this thread: the sizes are parsed into
// memory of this call's own and stored in the thread's vector only once every one is read.
const std::vector<int64_t>& FastInts(PyObject* const* args, Py_ssize_t nargs, const char* fn,
                                     const char* arg) {
  static thread_local std::vector<int64_t> out;
  if (nargs == 1 && (PyTuple_Check(args[0]) || PyList_Check(args[0]))) {
    out = ArgIntSequence(args[0], fn, arg);
    return out;
  }
  constexpr Py_ssize_t kFew = 8;
  if (nargs <= kFew) {
    int64_t dims[kFew];
    for (Py_ssize_t i = 0; i < nargs; ++i) dims[i] = ArgInt(args[i], fn, arg);
    out.assign(dims, dims + nargs);
    return out;
  }
  std::vector<int64_t> many(static_cast<size_t>(nargs));
  for (Py_ssize_t i = 0; i < nargs; ++i) many[i] = ArgInt(args[i], fn, arg);
  out = std::move(many);
  return out;
}

// A size as *ints or one tuple/list of ints, made in place when it has few dims (no vector).
Shape FastShape(PyObject* const* args, Py_ssize_t nargs, const char* fn) {
  constexpr Py_ssize_t kFew = 6;
  if (nargs <= kFew && !(nargs == 1 && (PyTuple_Check(args[0]) || PyList_Check(args[0])))) {
    int64_t dims[kFew];
    for (Py_ssize_t i = 0; i < nargs; ++i) dims[i] = ArgInt(args[i], fn, "size");
    return Shape(dims, static_cast<int>(nargs));
  }
  return Shape(FastInts(args, nargs, fn, "size"));
}

// Matches keyword arguments to `names` (the slots of `out` after the `npos` positional ones
// already there): a TypeError naming `fn` for an unknown keyword or one given twice.
void ParseKeywords(const char* fn, PyObject* const* kwargs, PyObject* kwnames,
                   std::initializer_list<const char*> names, Py_ssize_t npos, nb::handle* out) {
  if (kwnames == nullptr) return;
  const Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t i = 0; i < nkw; ++i) {
    const char* key = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, i));
    if (key == nullptr) throw nb::python_error();
    Py_ssize_t slot = 0;
    for (const char* name : names) {
      if (std::strcmp(key, name) == 0) break;
      ++slot;
    }
    if (slot == static_cast<Py_ssize_t>(names.size())) {
      throw nb::type_error(
          (std::string(fn) + "() got an unexpected keyword argument '" + key + "'").c_str());
    }
    if (slot < npos) {
      throw nb::type_error(
          (std::string(fn) + "() got multiple values for argument '" + key + "'").c_str());
    }
    out[slot] = kwargs[i];
  }
}

// Up to names.size() positional arguments, then keywords, into `out` (left as it is where not
// given: the caller's defaults).
void ParseArgs(const char* fn, PyObject* const* args, size_t nargsf, PyObject* kwnames,
               std::initializer_list<const char*> names, nb::handle* out) {
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (nargs > static_cast<Py_ssize_t>(names.size())) {
    throw nb::type_error((std::string(fn) + "() takes at most " + std::to_string(names.size()) +
                          " arguments (" + std::to_string(nargs) + " given)")
                             .c_str());
  }
  for (Py_ssize_t i = 0; i < nargs; ++i) out[i] = args[i];
  ParseKeywords(fn, args + nargs, kwnames, names, nargs, out);
}

bool ArgBool(nb::handle h, const char* fn, const char* arg) {
  if (!PyBool_Check(h.ptr())) {
    throw nb::type_error((std::string(fn) + "(): argument '" + arg + "' must be a bool, not " +
                          nb::type_name(h.type()).c_str())
                             .c_str());
  }
  return h.ptr() == Py_True;
}

// Tensor.<name>(*sizes): one template per method, named by its Python name and argument.
struct ExpandM {
  static constexpr const char* kName = "expand";
  static constexpr const char* kArg = "sizes";
  static Tensor Run(const Tensor& t, const std::vector<int64_t>& v) { return t.expand(v); }
};
struct RepeatM {
  static constexpr const char* kName = "repeat";
  static constexpr const char* kArg = "sizes";
  static Tensor Run(const Tensor& t, const std::vector<int64_t>& v) { return t.repeat(v); }
};
struct ReshapeM {
  static constexpr const char* kName = "reshape";
  static constexpr const char* kArg = "shape";
  static Tensor Run(const Tensor& t, const std::vector<int64_t>& v) { return t.reshape(v); }
};
struct ViewM {
  static constexpr const char* kName = "view";
  static constexpr const char* kArg = "shape";
  static Tensor Run(const Tensor& t, const std::vector<int64_t>& v) { return t.view(v); }
};
struct PermuteM {
  static constexpr const char* kName = "permute";
  static constexpr const char* kArg = "dims";
  static Tensor Run(const Tensor& t, const std::vector<int64_t>& v) { return t.permute(v); }
};

template <class M>
PyObject* SizesMethod(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  try {
    const Tensor& t = TensorOf(self);
    const std::vector<int64_t>& v = FastInts(args, nargs, M::kName, M::kArg);
    ReleaseIfGlobal r(t);
    return NewTensorObject(M::Run(t, v));
  } catch (...) {
    return RaiseCurrent();
  }
}

template <class M>
PyMethodDef SizesMethodDef() {
  return {M::kName, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&SizesMethod<M>)),
          METH_FASTCALL, nullptr};
}

// Tensor.<name>() with no arguments, returning a tensor.
struct ContiguousM {
  static constexpr const char* kName = "contiguous";
  static Tensor Run(const Tensor& t) { return t.contiguous(); }
};
struct CloneM {
  static constexpr const char* kName = "clone";
  static Tensor Run(const Tensor& t) { return t.clone(); }
};
struct DetachM {
  static constexpr const char* kName = "detach";
  static Tensor Run(const Tensor& t) { return t.detach(); }
};

template <class M>
PyObject* NoArgsMethod(PyObject* self, PyObject*) {
  try {
    const Tensor& t = TensorOf(self);
    ReleaseIfGlobal r(t);
    return NewTensorObject(M::Run(t));
  } catch (...) {
    return RaiseCurrent();
  }
}

template <class M>
PyMethodDef NoArgsMethodDef() {
  return {M::kName, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&NoArgsMethod<M>)),
          METH_NOARGS, nullptr};
}

// Tensor.sum(dim=None, keepdim=False): dim an int or a tuple/list of ints.
PyObject* SumMethod(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  try {
    nb::handle a[2] = {Py_None, Py_False};
    ParseArgs("sum", args, nargsf, kwnames, {"dim", "keepdim"}, a);
    const bool keepdim = ArgBool(a[1], "sum", "keepdim");
    const Tensor& t = TensorOf(self);
    if (a[0].is_none()) {
      ReleaseIfGlobal r(t);
      Tensor s = t.sum();
      return NewTensorObject(
          keepdim ? s.reshape(std::vector<int64_t>(static_cast<size_t>(t.dim()), 1)) : s);
    }
    std::vector<int64_t> dims = PyTuple_Check(a[0].ptr()) || PyList_Check(a[0].ptr())
                                    ? ArgIntSequence(a[0], "sum", "dim")
                                    : std::vector<int64_t>{ArgInt(a[0], "sum", "dim")};
    ReleaseIfGlobal r(t);
    return NewTensorObject(t.sum(dims, keepdim));
  } catch (...) {
    return RaiseCurrent();
  }
}

// Tensor.backward(gradient=None, retain_graph=False). The GIL is released for the whole pass.
PyObject* BackwardMethod(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  try {
    nb::handle a[2] = {Py_None, Py_False};
    ParseArgs("backward", args, nargsf, kwnames, {"gradient", "retain_graph"}, a);
    const bool retain_graph = ArgBool(a[1], "backward", "retain_graph");
    Tensor g;
    if (IsTensor(a[0])) {
      g = TensorOf(a[0]);
    } else if (!a[0].is_none()) {
      throw nb::type_error(
          (std::string("backward(): argument 'gradient' must be a Tensor or None, not ") +
           nb::type_name(a[0].type()).c_str())
              .c_str());
    }
    const Tensor& t = TensorOf(self);
    {
      GilRelease r;
      t.backward(g, retain_graph);
    }
    Py_RETURN_NONE;
  } catch (...) {
    return RaiseCurrent();
  }
}

template <class F>
PyMethodDef KeywordsMethodDef(const char* name, F* f) {
  return {name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f)),
          METH_FASTCALL | METH_KEYWORDS, nullptr};
}

// ofl.empty / zeros / ones(*size, dtype=None, device=None, requires_grad=False).
struct EmptyF {
  static constexpr const char* kName = "empty";
  static Tensor Run(const Shape& s, DType d, const Device& dev) { return ofl::empty(s, d, dev); }
};
struct ZerosF {
  static constexpr const char* kName = "zeros";
  static Tensor Run(const Shape& s, DType d, const Device& dev) { return ofl::zeros(s, d, dev); }
};
struct OnesF {
  static constexpr const char* kName = "ones";
  static Tensor Run(const Shape& s, DType d, const Device& dev) { return ofl::ones(s, d, dev); }
};

template <class F>
PyObject* SizedFactory(PyObject*, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  try {
    const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    nb::handle kw[3] = {Py_None, Py_None, Py_False};  // dtype, device, requires_grad
    ParseKeywords(F::kName, args + nargs, kwnames, {"dtype", "device", "requires_grad"}, 0, kw);
    const bool requires_grad = ArgBool(kw[2], F::kName, "requires_grad");
    Shape shape = FastShape(args, nargs, F::kName);
    // zeros and ones are full() inside: checked here, so that the message names the call made.
    for (int i = 0; i < shape.ndim(); ++i) {
      if (shape[i] < 0) {
        throw InvalidArgument(std::string(F::kName) + ": shape " + shape.str() +
                              " has negative size " + std::to_string(shape[i]) + " at dim " +
                              std::to_string(i));
      }
    }
    Tensor t =
        F::Run(shape, ArgDType(kw[0], F::kName, DType::kFloat32), ArgDevice(kw[1], F::kName));
    if (requires_grad) t.requires_grad_(true);
    return NewTensorObject(std::move(t));
  } catch (...) {
    return RaiseCurrent();
  }
}

template <class F>
PyMethodDef SizedFactoryDef() {
  return {F::kName, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&SizedFactory<F>)),
          METH_FASTCALL | METH_KEYWORDS, nullptr};
}

// The definitions live as long as the functions made from them: the process.
PyMethodDef kMethods[] = {SizesMethodDef<ExpandM>(),
                          SizesMethodDef<RepeatM>(),
                          SizesMethodDef<ReshapeM>(),
                          SizesMethodDef<ViewM>(),
                          SizesMethodDef<PermuteM>(),
                          NoArgsMethodDef<ContiguousM>(),
                          NoArgsMethodDef<CloneM>(),
                          NoArgsMethodDef<DetachM>(),
                          KeywordsMethodDef("sum", &SumMethod),
                          KeywordsMethodDef("backward", &BackwardMethod)};
PyMethodDef kFactories[] = {SizedFactoryDef<EmptyF>(), SizedFactoryDef<ZerosF>(),
                            SizedFactoryDef<OnesF>()};

}  // namespace

void BindFastCalls(nb::module_& m, nb::handle tensor_type) {
  auto* type = reinterpret_cast<PyTypeObject*>(tensor_type.ptr());
  for (PyMethodDef& def : kMethods) {
    nb::object descr = nb::steal(PyDescr_NewMethod(type, &def));
    if (!descr.is_valid()) throw nb::python_error();
    tensor_type.attr(def.ml_name) = descr;
  }
  nb::object module_name = m.attr("__name__");
  for (PyMethodDef& def : kFactories) {
    nb::object fn = nb::steal(PyCFunction_NewEx(&def, nullptr, module_name.ptr()));
    if (!fn.is_valid()) throw nb::python_error();
    m.attr(def.ml_name) = fn;
  }
}

}  // namespace ofl::python
