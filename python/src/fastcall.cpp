// The hottest calls as raw CPython vectorcall functions (METH_FASTCALL): Tensor.expand, repeat,
// reshape, view and permute with their sizes as *ints or one sequence, and ofl.empty, zeros and
// ones with (*size, dtype=, device=, requires_grad=). They skip the argument tuple and the
// overload dispatch of a nanobind function, which cost more than the op's own bookkeeping on tiny
// tensors (README, "Python": the Python layer's cost per call). Everything else is nanobind's.
#include <Python.h>

#include <cstring>
#include <string>
#include <vector>

#include "python/src/bindings.h"

namespace ofl::python {
namespace {

// The exception being handled as the Python error it stands for; returns null for the caller.
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

// *ints or one tuple/list of ints, as ArgInts does for a nanobind argument tuple.
std::vector<int64_t> FastInts(PyObject* const* args, Py_ssize_t nargs, const char* fn,
                              const char* arg) {
  if (nargs == 1 && (PyTuple_Check(args[0]) || PyList_Check(args[0]))) {
    return ArgIntSequence(args[0], fn, arg);
  }
  std::vector<int64_t> out(static_cast<size_t>(nargs));
  for (Py_ssize_t i = 0; i < nargs; ++i) out[i] = ArgInt(args[i], fn, arg);
  return out;
}

PyObject* Return(Tensor t) { return nb::cast(std::move(t)).release().ptr(); }

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
    const Tensor& t = *nb::inst_ptr<Tensor>(self);
    std::vector<int64_t> v = FastInts(args, nargs, M::kName, M::kArg);
    ReleaseIfGlobal r(t);
    return Return(M::Run(t, v));
  } catch (...) {
    return RaiseCurrent();
  }
}

template <class M>
PyMethodDef SizesMethodDef() {
  return {M::kName, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&SizesMethod<M>)),
          METH_FASTCALL, nullptr};
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
    nb::handle dtype = Py_None, device = Py_None, requires_grad = Py_False;
    if (kwnames != nullptr) {
      const Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
      for (Py_ssize_t i = 0; i < nkw; ++i) {
        const char* key = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, i));
        if (key == nullptr) return nullptr;
        PyObject* value = args[nargs + i];
        if (std::strcmp(key, "dtype") == 0) {
          dtype = value;
        } else if (std::strcmp(key, "device") == 0) {
          device = value;
        } else if (std::strcmp(key, "requires_grad") == 0) {
          requires_grad = value;
        } else {
          throw nb::type_error(
              (std::string(F::kName) + "() got an unexpected keyword argument '" + key + "'")
                  .c_str());
        }
      }
    }
    if (!PyBool_Check(requires_grad.ptr())) {
      throw nb::type_error((std::string(F::kName) +
                            "(): argument 'requires_grad' must be a bool, not " +
                            nb::type_name(requires_grad.type()).c_str())
                               .c_str());
    }
    Shape shape(FastInts(args, nargs, F::kName, "size"));
    Tensor t =
        F::Run(shape, ArgDType(dtype, F::kName, DType::kFloat32), ArgDevice(device, F::kName));
    if (requires_grad.ptr() == Py_True) t.requires_grad_(true);
    return Return(std::move(t));
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
PyMethodDef kMethods[] = {SizesMethodDef<ExpandM>(), SizesMethodDef<RepeatM>(),
                          SizesMethodDef<ReshapeM>(), SizesMethodDef<ViewM>(),
                          SizesMethodDef<PermuteM>()};
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
