// The hand-written vectorcall functions: Tensor.detach() and backward(gradient=None,
// retain_graph=False), ofl.empty, zeros and ones with (*size, dtype=, device=,
// requires_grad=), ofl.full, ofl.gather / scatter_add (PyTorch's order: an int between tensors),
// ofl.index_select, one_hot (which waits: it reads the values), ofl.nll_loss / cross_entropy (an
// optional weight tensor),
// and _C._max_dim / _min_dim (input, dim, keepdim=False), the
// (values, indices) pair that Tensor.max(dim) wraps in a named tuple (_tensor.py). The op table's
// methods and functions are generated (generated/python_ops.cpp); both skip the argument tuple and
// the overload dispatch of a nanobind function, which cost more than the op's own bookkeeping on
// tiny tensors (docs/benchmarks.md, "From Python": the Python layer's cost per call), and read
// their arguments with arg_parser.h.
#include <Python.h>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "oneflow_lite/distributed.h"
#include "python/src/arg_parser.h"
#include "python/src/bindings.h"
#include "python/src/global_args.h"

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

// Tensor.detach(): no op call (a new handle on the same storage, without history).
PyObject* DetachMethod(PyObject* self, PyObject*) {
  try {
    const Tensor& t = TensorOf(self);
    Tensor out;
    {
      ReleaseIfGlobal r(t);
      out = t.detach();
    }
    return NewTensorObject(std::move(out));
  } catch (...) {
    return RaiseCurrent();
  }
}

// Tensor.backward(gradient=None, retain_graph=None, create_graph=False): retain_graph None is
// create_graph, as PyTorch's. The GIL is released for the whole pass.
PyObject* BackwardMethod(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  try {
    nb::handle a[3] = {Py_None, Py_None, Py_False};
    ParseArgs("backward", args, nargsf, kwnames, {"gradient", "retain_graph", "create_graph"}, 0,
              a);
    const bool create_graph = ArgBool(a[2], "backward", "create_graph");
    const bool retain_graph =
        a[1].is_none() ? create_graph : ArgBool(a[1], "backward", "retain_graph");
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
      if (create_graph) {
        autograd::backward({t}, {g}, retain_graph, /*create_graph=*/true);
      } else {
        t.backward(g, retain_graph);
      }
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

// ofl.empty / zeros / ones(*size, dtype=None, device=None, requires_grad=False, placement=None,
// sbp=None): with placement and sbp, a global tensor of that logical size.
struct EmptyF {
  static constexpr const char* kName = "empty";
  static Tensor Run(const Shape& s, DType d, const Device& dev) { return ofl::empty(s, d, dev); }
  static Tensor Run(const Shape& s, DType d, const GlobalArgs& g) {
    return ofl::empty(s, d, g.placement, g.sbp);
  }
};
struct ZerosF {
  static constexpr const char* kName = "zeros";
  static Tensor Run(const Shape& s, DType d, const Device& dev) { return ofl::zeros(s, d, dev); }
  static Tensor Run(const Shape& s, DType d, const GlobalArgs& g) {
    return ofl::zeros(s, d, g.placement, g.sbp);
  }
};
struct OnesF {
  static constexpr const char* kName = "ones";
  static Tensor Run(const Shape& s, DType d, const Device& dev) { return ofl::ones(s, d, dev); }
  static Tensor Run(const Shape& s, DType d, const GlobalArgs& g) {
    return ofl::ones(s, d, g.placement, g.sbp);
  }
};

template <class F>
PyObject* SizedFactory(PyObject*, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  try {
    const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    // dtype, device, requires_grad, placement, sbp
    nb::handle kw[5] = {Py_None, Py_None, Py_False, Py_None, Py_None};
    ParseKeywords(F::kName, args + nargs, kwnames,
                  {"dtype", "device", "requires_grad", "placement", "sbp"}, 0, kw);
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
    const DType dtype = ArgDType(kw[0], F::kName, DType::kFloat32);
    Tensor t;
    if (const std::optional<GlobalArgs> g = ArgGlobal(F::kName, kw[3], kw[4], kw[1])) {
      GilRelease r;  // the placement's first use may build its communicators over MPI
      t = F::Run(shape, dtype, *g);
    } else {
      t = F::Run(shape, dtype, ArgDevice(kw[1], F::kName));
    }
    if (requires_grad) t.requires_grad_(true);
    return NewTensorObject(std::move(t));
  } catch (...) {
    return RaiseCurrent();
  }
}

// ofl.full(size, fill_value, dtype=None, device=None, requires_grad=False): the dtype follows
// the value when none is given, as PyTorch's (bool, int64, or float32).
PyObject* Full(PyObject*, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  try {
    nb::handle a[7] = {nullptr, nullptr, Py_None, Py_None, Py_False, Py_None, Py_None};
    ParseArgs("full", args, static_cast<size_t>(nargsf), kwnames,
              {"size", "fill_value", "dtype", "device", "requires_grad", "placement", "sbp"}, 2, a);
    Shape shape(PyLong_Check(a[0].ptr()) ? std::vector<int64_t>{ArgInt(a[0], "full", "size")}
                                         : ArgIntSequence(a[0], "full", "size"));
    Scalar v;
    if (!NumberAsScalar(a[1], "full", "fill_value", &v)) {
      throw nb::type_error((std::string("full(): argument 'fill_value' must be a number, not ") +
                            nb::type_name(a[1].type()).c_str())
                               .c_str());
    }
    const DType fallback = v.kind() == Scalar::Kind::kBool     ? DType::kBool
                           : v.kind() == Scalar::Kind::kDouble ? DType::kFloat32
                                                               : DType::kInt64;
    const DType d = ArgDType(a[2], "full", fallback);
    const bool requires_grad = ArgBool(a[4], "full", "requires_grad");
    Tensor t;
    if (const std::optional<GlobalArgs> g = ArgGlobal("full", a[5], a[6], a[3])) {
      GilRelease r;  // the placement's first use may build its communicators over MPI
      t = ofl::full(shape, v, d, g->placement, g->sbp);
    } else {
      t = ofl::full(shape, v, d, ArgDevice(a[3], "full"));
    }
    if (requires_grad) t.requires_grad_(true);
    return NewTensorObject(std::move(t));
  } catch (...) {
    return RaiseCurrent();
  }
}

// _C._max_dim / _min_dim(input, dim, keepdim=False) -> (values, indices).
template <bool kMax>
PyObject* ExtremeDim(PyObject*, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  const char* fn = kMax ? "max" : "min";
  try {
    nb::handle a[3] = {};
    ParseArgs(fn, args, static_cast<size_t>(nargsf), kwnames, {"input", "dim", "keepdim"}, 2, a);
    const Tensor& t = ArgTensor(a[0], fn, "input");
    const int64_t dim = ArgInt(a[1], fn, "dim");
    const bool keepdim = a[2] ? ArgBool(a[2], fn, "keepdim") : false;
    std::tuple<Tensor, Tensor> out;
    {
      ReleaseIfGlobal r(t);
      out = kMax ? ofl::max(t, dim, keepdim) : ofl::min(t, dim, keepdim);
    }
    PyObject* values = NewTensorObject(std::move(std::get<0>(out)));
    if (values == nullptr) return nullptr;
    PyObject* indices = NewTensorObject(std::move(std::get<1>(out)));
    if (indices == nullptr) {
      Py_DECREF(values);
      return nullptr;
    }
    PyObject* pair = PyTuple_Pack(2, values, indices);
    Py_DECREF(values);
    Py_DECREF(indices);
    return pair;
  } catch (...) {
    return RaiseCurrent();
  }
}

// _C.gather(input, dim, index) and _C.scatter_add(input, dim, index, src): PyTorch's argument
// order, an int between tensors (Tensor.gather / Tensor.scatter_add call them with self).
PyObject* Gather(PyObject*, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  try {
    nb::handle a[3] = {};
    ParseArgs("gather", args, static_cast<size_t>(nargsf), kwnames, {"input", "dim", "index"}, 3,
              a);
    const Tensor& t = ArgTensor(a[0], "gather", "input");
    const int64_t dim = ArgInt(a[1], "gather", "dim");
    const Tensor& index = ArgTensor(a[2], "gather", "index");
    Tensor out;
    {
      ReleaseIfGlobal r(t, index);
      out = ofl::gather(t, dim, index);
    }
    return NewTensorObject(std::move(out));
  } catch (...) {
    return RaiseCurrent();
  }
}

PyObject* ScatterAdd(PyObject*, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  try {
    nb::handle a[4] = {};
    ParseArgs("scatter_add", args, static_cast<size_t>(nargsf), kwnames,
              {"input", "dim", "index", "src"}, 4, a);
    const Tensor& t = ArgTensor(a[0], "scatter_add", "input");
    const int64_t dim = ArgInt(a[1], "scatter_add", "dim");
    const Tensor& index = ArgTensor(a[2], "scatter_add", "index");
    const Tensor& src = ArgTensor(a[3], "scatter_add", "src");
    Tensor out;
    {
      ReleaseIfGlobal r(t, index, src);
      out = ofl::scatter_add(t, dim, index, src);
    }
    return NewTensorObject(std::move(out));
  } catch (...) {
    return RaiseCurrent();
  }
}

// _C.index_select(input, dim, index) and one_hot(tensor, num_classes=-1).
PyObject* IndexSelect(PyObject*, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  try {
    nb::handle a[3] = {};
    ParseArgs("index_select", args, static_cast<size_t>(nargsf), kwnames, {"input", "dim", "index"},
              3, a);
    const Tensor& t = ArgTensor(a[0], "index_select", "input");
    const int64_t dim = ArgInt(a[1], "index_select", "dim");
    const Tensor& index = ArgTensor(a[2], "index_select", "index");
    Tensor out;
    {
      ReleaseIfGlobal r(t, index);
      out = ofl::index_select(t, dim, index);
    }
    return NewTensorObject(std::move(out));
  } catch (...) {
    return RaiseCurrent();
  }
}

PyObject* OneHot(PyObject*, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  try {
    nb::handle a[2] = {};
    ParseArgs("one_hot", args, static_cast<size_t>(nargsf), kwnames, {"tensor", "num_classes"}, 1,
              a);
    const Tensor& t = ArgTensor(a[0], "one_hot", "tensor");
    const int64_t classes = a[1] ? ArgInt(a[1], "one_hot", "num_classes") : -1;
    Tensor out;
    {
      GilRelease release;  // reads the values: a wait
      out = ofl::one_hot(t, classes);
    }
    return NewTensorObject(std::move(out));
  } catch (...) {
    return RaiseCurrent();
  }
}

// nll_loss(input, target, weight=None, reduction="mean", ignore_index=-100) and
// cross_entropy(..., label_smoothing=0.0): torch.nn.functional's, an optional tensor among them.
template <bool kCrossEntropy>
PyObject* ClassLoss(PyObject*, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  const char* fn = kCrossEntropy ? "cross_entropy" : "nll_loss";
  try {
    nb::handle a[6] = {};
    ParseArgs(fn, args, static_cast<size_t>(nargsf), kwnames,
              kCrossEntropy
                  ? std::initializer_list<const char*>{"input", "target", "weight", "reduction",
                                                       "ignore_index", "label_smoothing"}
                  : std::initializer_list<const char*>{"input", "target", "weight", "reduction",
                                                       "ignore_index"},
              2, a);
    const Tensor& input = ArgTensor(a[0], fn, "input");
    const Tensor& target = ArgTensor(a[1], fn, "target");
    Tensor weight;
    if (a[2] && !a[2].is_none()) weight = ArgTensor(a[2], fn, "weight");
    const std::string reduction = a[3] ? ArgString(a[3], fn, "reduction") : "mean";
    const int64_t ignore_index = a[4] ? ArgInt(a[4], fn, "ignore_index") : -100;
    const double smoothing = a[5] ? ArgDouble(a[5], fn, "label_smoothing") : 0.0;
    Tensor out;
    {
      ReleaseIfGlobal r(input, target);
      out = kCrossEntropy
                ? ofl::cross_entropy(input, target, weight, reduction, ignore_index, smoothing)
                : ofl::nll_loss(input, target, weight, reduction, ignore_index);
    }
    return NewTensorObject(std::move(out));
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
PyMethodDef kMethods[] = {
    {"detach", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&DetachMethod)),
     METH_NOARGS, nullptr},
    KeywordsMethodDef("backward", &BackwardMethod),
    {nullptr, nullptr, 0, nullptr}};
PyMethodDef kFactories[] = {SizedFactoryDef<EmptyF>(),
                            SizedFactoryDef<ZerosF>(),
                            SizedFactoryDef<OnesF>(),
                            KeywordsMethodDef("full", &Full),
                            KeywordsMethodDef("_max_dim", &ExtremeDim<true>),
                            KeywordsMethodDef("_min_dim", &ExtremeDim<false>),
                            KeywordsMethodDef("gather", &Gather),
                            KeywordsMethodDef("scatter_add", &ScatterAdd),
                            KeywordsMethodDef("index_select", &IndexSelect),
                            KeywordsMethodDef("one_hot", &OneHot),
                            KeywordsMethodDef("nll_loss", &ClassLoss<false>),
                            KeywordsMethodDef("cross_entropy", &ClassLoss<true>),
                            {nullptr, nullptr, 0, nullptr}};

}  // namespace

void BindFastCalls(nb::module_& m, nb::handle tensor_type) {
  BindMethodTable(m, tensor_type, kMethods, kFactories);
}

}  // namespace ofl::python
