#include "python/src/arg_parser.h"

#include <cstring>
#include <string>

namespace ofl::python {

namespace {
[[noreturn]] void TypeError(const std::string& msg) { throw nb::type_error(msg.c_str()); }
}  // namespace

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
      TypeError(std::string(fn) + "() got an unexpected keyword argument '" + key + "'");
    }
    if (slot < npos) {
      TypeError(std::string(fn) + "() got multiple values for argument '" + key + "'");
    }
    out[slot] = kwargs[i];
  }
}

void ParseArgs(const char* fn, PyObject* const* args, size_t nargsf, PyObject* kwnames,
               std::initializer_list<const char*> names, size_t required, nb::handle* out) {
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (nargs > static_cast<Py_ssize_t>(names.size())) {
    TypeError(std::string(fn) + "() takes at most " + std::to_string(names.size()) +
              " arguments (" + std::to_string(nargs) + " given)");
  }
  for (Py_ssize_t i = 0; i < nargs; ++i) out[i] = args[i];
  ParseKeywords(fn, args + nargs, kwnames, names, nargs, out);
  size_t i = 0;
  for (const char* name : names) {
    if (i < required && out[i].ptr() == nullptr) {
      TypeError(std::string(fn) + "() missing required argument '" + name + "' (pos " +
                std::to_string(i + 1) + ")");
    }
    ++i;
  }
}

const std::vector<int64_t>& FastInts(PyObject* const* args, Py_ssize_t nargs, const char* fn,
                                     const char* arg) {
  // An argument's __index__ may call back into oneflow_lite, and so into FastInts on this thread:
  // the sizes are parsed into memory of this call's own and stored in the thread's vector only
  // once every one is read.
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

const Tensor& ArgTensor(nb::handle h, const char* fn, const char* arg) {
  if (h.ptr() == nullptr) {
    TypeError(std::string(fn) + "() missing required argument '" + arg + "'");
  }
  if (!IsTensor(h)) {
    TypeError(std::string(fn) + "(): argument '" + arg + "' must be a Tensor, not " +
              nb::type_name(h.type()).c_str());
  }
  return TensorOf(h);
}

Tensor ArgTensorOrNumber(nb::handle h, const char* fn, const char* arg, const Tensor& like) {
  if (h.ptr() == nullptr) {
    TypeError(std::string(fn) + "() missing required argument '" + arg + "'");
  }
  if (IsTensor(h)) return TensorOf(h);
  Scalar v;
  if (!NumberAsScalar(h, fn, arg, &v)) {
    TypeError(std::string(fn) + "(): argument '" + arg + "' must be a Tensor or a number, not " +
              nb::type_name(h.type()).c_str());
  }
  return wrapped_number(fn, v, like);
}

Scalar ArgScalar(nb::handle h, const char* fn, const char* arg) {
  Scalar v;
  if (h.ptr() == nullptr) {
    TypeError(std::string(fn) + "() missing required argument '" + arg + "'");
  }
  if (!NumberAsScalar(h, fn, arg, &v)) {
    TypeError(std::string(fn) + "(): argument '" + arg + "' must be a number, not " +
              nb::type_name(h.type()).c_str());
  }
  return v;
}

bool ArgBool(nb::handle h, const char* fn, const char* arg) {
  if (!PyBool_Check(h.ptr())) {
    TypeError(std::string(fn) + "(): argument '" + arg + "' must be a bool, not " +
              nb::type_name(h.type()).c_str());
  }
  return h.ptr() == Py_True;
}

double ArgDouble(nb::handle h, const char* fn, const char* arg) {
  double v = 0;
  if (PyBool_Check(h.ptr()) || !NumberAsDouble(h, &v)) {
    TypeError(std::string(fn) + "(): argument '" + arg + "' must be a number, not " +
              nb::type_name(h.type()).c_str());
  }
  return v;
}

std::string ArgString(nb::handle h, const char* fn, const char* arg) {
  if (!PyUnicode_Check(h.ptr())) {
    TypeError(std::string(fn) + "(): argument '" + arg + "' must be a str, not " +
              nb::type_name(h.type()).c_str());
  }
  Py_ssize_t n = 0;
  const char* s = PyUnicode_AsUTF8AndSize(h.ptr(), &n);
  if (s == nullptr) throw nb::python_error();
  return std::string(s, static_cast<size_t>(n));
}

std::vector<int64_t> ArgIntList(nb::handle h, const char* fn, const char* arg) {
  if (PyTuple_Check(h.ptr()) || PyList_Check(h.ptr())) return ArgIntSequence(h, fn, arg);
  return {ArgInt(h, fn, arg)};
}

std::vector<int64_t> ArgIntListOrNone(nb::handle h, const char* fn, const char* arg) {
  if (h.ptr() == nullptr || h.is_none()) return {};
  return ArgIntList(h, fn, arg);
}

void BindMethodTable(nb::module_& m, nb::handle tensor_type, PyMethodDef* methods,
                     PyMethodDef* functions) {
  auto* type = reinterpret_cast<PyTypeObject*>(tensor_type.ptr());
  for (PyMethodDef* def = methods; def->ml_name != nullptr; ++def) {
    nb::object descr = nb::steal(PyDescr_NewMethod(type, def));
    if (!descr.is_valid()) throw nb::python_error();
    tensor_type.attr(def->ml_name) = descr;
  }
  nb::object module_name = m.attr("__name__");
  for (PyMethodDef* def = functions; def->ml_name != nullptr; ++def) {
    nb::object fn = nb::steal(PyCFunction_NewEx(def, nullptr, module_name.ptr()));
    if (!fn.is_valid()) throw nb::python_error();
    m.attr(def->ml_name) = fn;
  }
}

void BindProperties(nb::handle tensor_type, PyGetSetDef* defs) {
  auto* type = reinterpret_cast<PyTypeObject*>(tensor_type.ptr());
  for (PyGetSetDef* def = defs; def->name != nullptr; ++def) {
    nb::object descr = nb::steal(PyDescr_NewGetSet(type, def));
    if (!descr.is_valid()) throw nb::python_error();
    tensor_type.attr(def->name) = descr;
  }
}

}  // namespace ofl::python
