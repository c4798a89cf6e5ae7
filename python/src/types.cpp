// The extension's module, its error classes (the C++ exceptions as Python ones), the dtype and
// device types, and the argument parsing every binding uses.
#include <nanobind/stl/string.h>

#include <Python.h>

#include <limits>
#include <string_view>

#include "python/src/bindings.h"

namespace ofl::python {
namespace {

PyDType kDTypes[kNumDTypes] = {
    {DType::kBool, "bool"},       {DType::kUInt8, "uint8"},       {DType::kInt8, "int8"},
    {DType::kInt16, "int16"},     {DType::kInt32, "int32"},       {DType::kInt64, "int64"},
    {DType::kFloat16, "float16"}, {DType::kBFloat16, "bfloat16"}, {DType::kFloat32, "float32"},
    {DType::kFloat64, "float64"},
};

// The Python classes of the C++ errors, made at import and kept for the process's life.
PyObject* error_cls = nullptr;
PyObject* invalid_argument_cls = nullptr;
PyObject* out_of_memory_cls = nullptr;
PyObject* device_error_cls = nullptr;

PyObject* NewError(nb::module_& m, const char* name, PyObject* bases, const char* doc) {
  std::string qual = std::string("oneflow_lite.") + name;
  PyObject* cls = PyErr_NewExceptionWithDoc(qual.c_str(), doc, bases, nullptr);
  if (cls == nullptr) throw nb::python_error();
  m.attr(name) = nb::handle(cls);
  return cls;
}

std::string TypeName(nb::handle h) { return nb::type_name(h.type()).c_str(); }

// A Python int beyond 64 bits (PyTorch: "Overflow when unpacking long"), as Python's own
// OverflowError for an int that does not fit a C integer.
nb::python_error OverflowErrorFor(const char* fn, const char* arg) {
  PyErr_SetString(PyExc_OverflowError,
                  (std::string(fn) + "(): argument '" + arg +
                   "': the int does not fit in 64 bits (an integer operand must lie in "
                   "[-2**63, 2**64))")
                      .c_str());
  return nb::python_error();
}

bool IsFloat(nb::handle h) { return PyFloat_Check(h.ptr()); }

// A device's Python name: "cpu" for the one cpu device (as torch prints it), "<type>:<index>"
// for the others.
std::string DeviceName(const Device& d) { return d.is_cpu() ? "cpu" : d.str(); }

}  // namespace

bool PythonIsRunning() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsInitialized() && !Py_IsFinalizing();
#else
  return Py_IsInitialized() && !_Py_IsFinalizing();
#endif
}

void SetErrorFor(const Error& e) {
  // A wait that a signal's handler interrupted: the handler's exception (KeyboardInterrupt), not
  // the runtime's WaitInterrupted (nor an error some caller made of it).
  if (RestoreInterrupt()) return;
  PyObject* cls = error_cls;
  if (dynamic_cast<const InvalidArgument*>(&e) != nullptr) {
    cls = invalid_argument_cls;
  } else if (dynamic_cast<const OutOfMemory*>(&e) != nullptr) {
    cls = out_of_memory_cls;
  } else if (dynamic_cast<const DeviceError*>(&e) != nullptr) {
    cls = device_error_cls;
  }
  PyErr_SetString(cls, e.what());
}

PyDType* DTypeObject(DType d) { return &kDTypes[static_cast<int>(d)]; }

int64_t ArgInt(nb::handle h, const char* fn, const char* arg) {
  if (PyLong_CheckExact(h.ptr())) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
    if (overflow == 0) return v;
  } else if (!PyBool_Check(h.ptr()) && !IsFloat(h) && PyIndex_Check(h.ptr())) {
    nb::object i = nb::steal(PyNumber_Index(h.ptr()));
    if (!i.is_valid()) throw nb::python_error();
    return ArgInt(i, fn, arg);
  } else {
    throw nb::type_error(
        (std::string(fn) + "(): argument '" + arg + "' must be an int, not " + TypeName(h))
            .c_str());
  }
  throw nb::type_error((std::string(fn) + "(): argument '" + arg + "' is " + nb::repr(h).c_str() +
                        ", which does not fit in int64")
                           .c_str());
}

int ArgInt32(nb::handle h, const char* fn, const char* arg, int lo) {
  const int64_t v = ArgInt(h, fn, arg);
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  if (v < lo || v > kMax) {
    throw InvalidArgument(std::string(fn) + ": argument '" + arg + "' is " + std::to_string(v) +
                          ", out of range (expected " + std::to_string(lo) + " to " +
                          std::to_string(kMax) + ")");
  }
  return static_cast<int>(v);
}

std::vector<int64_t> ArgIntSequence(nb::handle seq, const char* fn, const char* arg) {
  if (!PyTuple_Check(seq.ptr()) && !PyList_Check(seq.ptr())) {
    throw nb::type_error((std::string(fn) + "(): argument '" + arg +
                          "' must be a tuple or list of ints, not " + TypeName(seq))
                             .c_str());
  }
  nb::sequence s = nb::borrow<nb::sequence>(seq);
  const size_t n = nb::len(s);
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = ArgInt(s[i], fn, arg);
  return out;
}

std::vector<int64_t> ArgInts(nb::handle args_tuple, const char* fn, const char* arg) {
  PyObject* t = args_tuple.ptr();
  const Py_ssize_t n = PyTuple_GET_SIZE(t);
  if (n == 1) {
    PyObject* only = PyTuple_GET_ITEM(t, 0);
    if (PyTuple_Check(only) || PyList_Check(only)) return ArgIntSequence(only, fn, arg);
  }
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) out[i] = ArgInt(PyTuple_GET_ITEM(t, i), fn, arg);
  return out;
}

Device ArgDevice(nb::handle h, const char* fn) {
  if (h.is_none()) return Device(DeviceType::kCPU, 0);
  if (nb::isinstance<Device>(h)) return nb::cast<Device>(h);
  if (PyUnicode_Check(h.ptr())) return Device(std::string_view(nb::cast<std::string>(h)));
  throw nb::type_error((std::string(fn) +
                        "(): argument 'device' must be an oneflow_lite.device or a str, not " +
                        TypeName(h))
                           .c_str());
}

DType ArgDType(nb::handle h, const char* fn, DType fallback) {
  if (h.is_none()) return fallback;
  if (nb::isinstance<PyDType>(h)) return nb::cast<PyDType*>(h)->value;
  throw nb::type_error((std::string(fn) +
                        "(): argument 'dtype' must be an oneflow_lite dtype (ofl.float32, ...), "
                        "not " +
                        TypeName(h))
                           .c_str());
}

bool NumberAsDouble(nb::handle h, double* out) {
  PyObject* o = h.ptr();
  if (PyFloat_Check(o)) {
    *out = PyFloat_AS_DOUBLE(o);
    return true;
  }
  if (PyLong_Check(o)) {  // bool too
    *out = PyLong_AsDouble(o);
    if (*out == -1.0 && PyErr_Occurred()) throw nb::python_error();
    return true;
  }
  // numpy scalars and other real numbers, but not tensors, arrays or strings.
  if (PyUnicode_Check(o) || PySequence_Check(o) || !PyNumber_Check(o)) return false;
  if (Py_TYPE(o)->tp_as_number == nullptr || Py_TYPE(o)->tp_as_number->nb_float == nullptr)
    return false;
  *out = PyFloat_AsDouble(o);
  if (*out == -1.0 && PyErr_Occurred()) throw nb::python_error();
  return true;
}

bool NumberAsScalar(nb::handle h, const char* fn, const char* arg, Scalar* out) {
  PyObject* o = h.ptr();
  if (PyBool_Check(o)) {
    *out = Scalar(o == Py_True);
    return true;
  }
  if (PyFloat_Check(o)) {
    *out = Scalar(PyFloat_AS_DOUBLE(o));
    return true;
  }
  // numpy's bool (numpy.bool, numpy.bool_ before numpy 2): a bool, not the int its deprecated
  // __index__ gives.
  const std::string_view type_name = Py_TYPE(o)->tp_name;
  if (type_name == "numpy.bool" || type_name == "numpy.bool_") {
    const int truth = PyObject_IsTrue(o);
    if (truth < 0) throw nb::python_error();
    *out = Scalar(truth != 0);
    return true;
  }
  // Python ints and numpy's integers (__index__) as integers: exact up to 64 bits.
  nb::object index;
  if (PyLong_Check(o)) {
    index = nb::borrow(o);
  } else if (!PyUnicode_Check(o) && !PySequence_Check(o) && PyIndex_Check(o)) {
    index = nb::steal(PyNumber_Index(o));
    if (!index.is_valid()) PyErr_Clear();  // no integer after all: a real number below
  }
  if (index.is_valid()) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (v == -1 && PyErr_Occurred()) throw nb::python_error();
    if (overflow == 0) {
      *out = Scalar(static_cast<int64_t>(v));
      return true;
    }
    if (overflow > 0) {
      const unsigned long long u = PyLong_AsUnsignedLongLong(index.ptr());
      if (!(u == static_cast<unsigned long long>(-1) && PyErr_Occurred())) {
        *out = Scalar(static_cast<uint64_t>(u));
        return true;
      }
      PyErr_Clear();
    }
    throw OverflowErrorFor(fn, arg);
  }
  double d;
  if (!NumberAsDouble(h, &d)) return false;
  *out = Scalar(d);
  return true;
}

nb::object TensorOrNone(Tensor t) {
  if (!t.defined()) return nb::none();
  return nb::steal(NewTensorObject(std::move(t)));
}

void BindErrors(nb::module_& m) {
  nb::object base = nb::steal(PyTuple_Pack(1, PyExc_RuntimeError));
  error_cls = NewError(m, "Error", base.ptr(),
                       "A oneflow_lite error (a RuntimeError); the message is the C++ one.");
  base = nb::steal(PyTuple_Pack(2, error_cls, PyExc_ValueError));
  invalid_argument_cls =
      NewError(m, "InvalidArgument", base.ptr(), "A bad argument (also a ValueError).");
  base = nb::steal(PyTuple_Pack(2, error_cls, PyExc_MemoryError));
  out_of_memory_cls = NewError(m, "OutOfMemory", base.ptr(),
                               "A device or pool out of memory (also a MemoryError).");
  base = nb::steal(PyTuple_Pack(1, error_cls));
  device_error_cls =
      NewError(m, "DeviceError", base.ptr(), "A device that cannot be used or that failed.");
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      SetErrorFor(e);
    }
  });
}

void BindTypes(nb::module_& m) {
  nb::class_<PyDType>(m, "dtype")
      .def_prop_ro("itemsize", [](const PyDType& d) { return element_size(d.value); })
      .def_prop_ro("is_floating_point", [](const PyDType& d) { return is_floating_point(d.value); })
      .def_prop_ro("name", [](const PyDType& d) { return d.name; })
      .def("__repr__", [](const PyDType& d) { return std::string("oneflow_lite.") + d.name; })
      .def("__reduce__", [](const PyDType& d) { return std::string(d.name); });
  for (PyDType& d : kDTypes) m.attr(d.name) = nb::cast(&d, nb::rv_policy::reference);
  // torch.promote_types and torch.can_cast.
  m.def(
      "promote_types",
      [](const PyDType& a, const PyDType& b) {
        return DTypeObject(promote_types(a.value, b.value));
      },
      nb::rv_policy::reference, nb::arg("type1"), nb::arg("type2"));
  m.def(
      "can_cast",
      [](const PyDType& from, const PyDType& to) { return can_cast(from.value, to.value); },
      nb::arg("from_"), nb::arg("to"));

  nb::class_<Device>(m, "device")
      .def(
          "__init__",
          [](Device* self, const std::string& spec) { new (self) Device(std::string_view(spec)); },
          nb::arg("spec"))
      .def(
          "__init__",
          [](Device* self, const std::string& type, nb::handle index) {
            DeviceType t;
            if (!find_device_type(type, &t)) {
              throw InvalidArgument("device: unknown device type '" + type + "'");
            }
            new (self) Device(t, ArgInt32(index, "device", "index", 0));
          },
          nb::arg("type"), nb::arg("index"))
      .def_prop_ro("type", [](const Device& d) { return to_string(d.type()); })
      .def_prop_ro("index", &Device::index)
      .def("__str__", &DeviceName)
      .def("__repr__",
           [](const Device& d) {
             return "device(type='" + to_string(d.type()) +
                    "', index=" + std::to_string(d.index()) + ")";
           })
      // Equal to its name only (str(d): "cpu", "sim:0"), not to the other spellings ("cpu:0",
      // "sim"): objects that are equal must hash alike, and the hash is that of the name.
      .def("__eq__",
           [](const Device& d, nb::handle other) {
             if (nb::isinstance<Device>(other)) return d == nb::cast<Device>(other);
             if (PyUnicode_Check(other.ptr())) return nb::cast<std::string>(other) == DeviceName(d);
             return false;
           })
      .def("__hash__", [](const Device& d) { return nb::hash(nb::str(DeviceName(d).c_str())); })
      .def("__reduce__", [](nb::handle self) {
        return nb::make_tuple(self.type(), nb::make_tuple(DeviceName(nb::cast<Device>(self))));
      });
  nb::implicitly_convertible<std::string, Device>();
}

}  // namespace ofl::python

NB_MODULE(_C, m) {
  using namespace ofl::python;
  InstallWaitHooks(nb::cast<unsigned long>(
      nb::module_::import_("threading").attr("main_thread")().attr("ident")));
  BindErrors(m);
  BindTypes(m);
  BindTensor(m);
  BindFunctions(m);
  BindRuntime(m);
  BindGlobal(m);
  BindDlpack(m);
  BindBenchCalls(m);
  BindFastCalls(m, m.attr("Tensor"));
  BindShapeCalls(m);
  BindRandomCalls(m, m.attr("Tensor"));
  BindOptimCalls(m);
  BindOpTable(m, m.attr("Tensor"));
  BindHostReads(m, m.attr("Tensor"));
}
