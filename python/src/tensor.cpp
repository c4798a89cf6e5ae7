// oneflow_lite.Tensor: the C++ Tensor as a Python class. Every call that issues work or may wait
// (back-pressure, reads, backward) parses its Python arguments first, then releases the GIL for
// the C++ call. The methods written in Python (numpy, tolist, item, __repr__, __getitem__, ...)
// are added to the class by oneflow_lite/_tensor.py.
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <Python.h>

#include <utility>

#include "python/src/bindings.h"

namespace ofl::python {
namespace {

using Release = nb::gil_scoped_release;

nb::tuple IntTuple(const int64_t* v, size_t n) {
  PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(n));
  if (t == nullptr) throw nb::python_error();
  for (size_t i = 0; i < n; ++i) PyTuple_SET_ITEM(t, i, PyLong_FromLongLong(v[i]));
  return nb::steal<nb::tuple>(t);
}

// A binary op with a tensor or a Python number on the other side (`reflected`: the other side
// is the left operand); NotImplemented for anything else, so Python raises its own TypeError (or
// tries the other operand's method). `op` takes (Tensor, Tensor), (Tensor, double) and (double,
// Tensor).
template <class Op>
nb::object Binary(const Tensor& a, nb::handle b, bool reflected, Op op) {
  Tensor out;
  if (nb::isinstance<Tensor>(b)) {
    const Tensor& bt = *nb::inst_ptr<Tensor>(b);
    ReleaseIfGlobal r(a.is_global() ? a : bt);
    out = reflected ? op(bt, a) : op(a, bt);
  } else {
    double v;
    if (!NumberAsDouble(b, &v)) return nb::borrow(Py_NotImplemented);
    ReleaseIfGlobal r(a);
    out = reflected ? op(v, a) : op(a, v);
  }
  return nb::cast(std::move(out));
}

// Defines the operator `name` and its reflected form `rname`.
template <class Op>
void DefBinary(nb::class_<Tensor>& cls, const char* name, const char* rname, Op op) {
  cls.def(
      name, [op](const Tensor& a, nb::handle b) { return Binary(a, b, false, op); },
      nb::arg("other").none());
  cls.def(
      rname, [op](const Tensor& a, nb::handle b) { return Binary(a, b, true, op); },
      nb::arg("other").none());
}

// The tensor `value` as a 0-dim tensor of t's dtype and device, for in-place ops with a number.
Tensor ScalarLike(const Tensor& t, double value) {
  return ofl::full(Shape(std::vector<int64_t>{}), value, t.dtype(), t.device());
}

// In-place add_/sub_ with a tensor or a number; returns self.
template <class Op>
nb::object InPlace(nb::handle self, nb::handle other, const char* fn, Op op) {
  Tensor& t = *nb::inst_ptr<Tensor>(self);
  if (nb::isinstance<Tensor>(other)) {
    const Tensor& o = *nb::inst_ptr<Tensor>(other);
    ReleaseIfGlobal r(t.is_global() ? t : o);
    op(t, o);
  } else {
    double v;
    if (!NumberAsDouble(other, &v)) {
      throw nb::type_error((std::string(fn) +
                            "(): argument 'other' must be a Tensor or a number, "
                            "not " +
                            nb::type_name(other.type()).c_str())
                               .c_str());
    }
    ReleaseIfGlobal r(t);
    op(t, ScalarLike(t, v));
  }
  return nb::borrow(self);
}

std::vector<int64_t> SumDims(nb::handle dim) {
  if (PyTuple_Check(dim.ptr()) || PyList_Check(dim.ptr())) {
    return ArgIntSequence(dim, "sum", "dim");
  }
  return {ArgInt(dim, "sum", "dim")};
}

Tensor Sum(const Tensor& t, nb::handle dim, bool keepdim) {
  ReleaseIfGlobal r(t);
  if (dim.is_none()) {
    Tensor s = t.sum();
    return keepdim ? s.reshape(std::vector<int64_t>(static_cast<size_t>(t.dim()), 1)) : s;
  }
  std::vector<int64_t> dims = SumDims(dim);
  return t.sum(dims, keepdim);
}

// The `sbp` argument of to_global: one sbp, or a tuple/list holding one.
Sbp ArgSbp(nb::handle h) {
  if ((PyTuple_Check(h.ptr()) || PyList_Check(h.ptr())) && nb::len(h) == 1) h = h[0];
  if (nb::isinstance<Sbp>(h)) return nb::cast<Sbp>(h);
  throw nb::type_error((std::string("to_global(): argument 'sbp' must be an oneflow_lite.sbp "
                                    "(ofl.sbp.split(d), ofl.sbp.broadcast, ofl.sbp.partial_sum), "
                                    "not ") +
                        nb::type_name(h.type()).c_str())
                           .c_str());
}

}  // namespace

void BindTensor(nb::module_& m) {
  nb::class_<Tensor> cls(m, "Tensor");
  // Geometry
  cls.def_prop_ro("shape",
                  [](const Tensor& t) {
                    const Shape& s = t.shape();
                    return IntTuple(s.begin(), static_cast<size_t>(s.ndim()));
                  })
      .def(
          "size",
          [](const Tensor& t, nb::handle dim) -> nb::object {
            const Shape& s = t.shape();
            if (dim.is_none()) return IntTuple(s.begin(), static_cast<size_t>(s.ndim()));
            int64_t d = ArgInt(dim, "size", "dim");
            const int64_t n = s.ndim();
            if (d < -n || d >= n) {
              throw nb::index_error(("size(): dim " + std::to_string(d) +
                                     " is out of range for a " + std::to_string(n) + "-dim tensor")
                                        .c_str());
            }
            return nb::int_(s[d < 0 ? d + n : d]);
          },
          nb::arg("dim") = nb::none())
      .def("stride",
           [](const Tensor& t) {
             const std::vector<int64_t>& s = t.stride();
             return IntTuple(s.data(), s.size());
           })
      .def("storage_offset", &Tensor::storage_offset)
      .def_prop_ro(
          "dtype", [](const Tensor& t) { return DTypeObject(t.dtype()); }, nb::rv_policy::reference)
      .def_prop_ro("device", &Tensor::device)
      .def_prop_ro("ndim", &Tensor::dim)
      .def("dim", &Tensor::dim)
      .def("numel", &Tensor::numel)
      .def("is_contiguous", &Tensor::is_contiguous)
      .def("__len__", [](const Tensor& t) {
        if (t.dim() == 0) throw nb::type_error("len() of a 0-d tensor");
        return t.shape()[0];
      });

  // Array ops (views where the strides allow). expand, repeat, reshape, view and permute are
  // fastcall.cpp's.
  cls.def(
         "expand_as",
         [](const Tensor& t, const Tensor& other) {
           std::vector<int64_t> v = other.shape().vec();
           ReleaseIfGlobal r(t);
           return t.expand(v);
         },
         nb::arg("other"))
      .def(
          "transpose",
          [](const Tensor& t, nb::handle d0, nb::handle d1) {
            int64_t a = ArgInt(d0, "transpose", "dim0"), b = ArgInt(d1, "transpose", "dim1");
            const int64_t n = t.dim();
            for (int64_t d : {a, b}) {
              const int64_t lo = n == 0 ? -1 : -n, hi = n == 0 ? 0 : n - 1;
              if (d < lo || d > hi) {
                throw InvalidArgument("transpose: dim " + std::to_string(d) +
                                      " is out of range for a " + std::to_string(n) +
                                      "-dim tensor (expected " + std::to_string(lo) + " to " +
                                      std::to_string(hi) + ")");
              }
            }
            std::vector<int64_t> perm(static_cast<size_t>(n));
            for (int64_t i = 0; i < n; ++i) perm[i] = i;
            if (n > 0) std::swap(perm[(a + n) % n], perm[(b + n) % n]);
            ReleaseIfGlobal r(t);
            return t.permute(perm);
          },
          nb::arg("dim0").none(), nb::arg("dim1").none())
      .def(
          "narrow",
          [](const Tensor& t, nb::handle dim, nb::handle start, nb::handle length) {
            int64_t d = ArgInt(dim, "narrow", "dim"), s = ArgInt(start, "narrow", "start"),
                    l = ArgInt(length, "narrow", "length");
            ReleaseIfGlobal r(t);
            return t.narrow(d, s, l);
          },
          nb::arg("dim").none(), nb::arg("start").none(), nb::arg("length").none())
      .def("contiguous",
           [](const Tensor& t) {
             ReleaseIfGlobal r(t);
             return t.contiguous();
           })
      .def("clone",
           [](const Tensor& t) {
             ReleaseIfGlobal r(t);
             return t.clone();
           })
      .def("detach", &Tensor::detach)
      .def(
          "to",
          [](const Tensor& t, nb::handle device) {
            Device d = ArgDevice(device, "to");
            Release r;
            return t.to(d);
          },
          nb::arg("device"))
      .def(
          "cpu", [](const Tensor& t) { return t.to(Device(DeviceType::kCPU, 0)); },
          nb::call_guard<Release>())
      .def("sum", &Sum, nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);

  // Arithmetic: a tensor or a number on either side.
  DefBinary(cls, "__add__", "__radd__", [](const auto& x, const auto& y) { return x + y; });
  DefBinary(cls, "__sub__", "__rsub__", [](const auto& x, const auto& y) { return x - y; });
  DefBinary(cls, "__mul__", "__rmul__", [](const auto& x, const auto& y) { return x * y; });
  DefBinary(cls, "__truediv__", "__rtruediv__", [](const auto& x, const auto& y) { return x / y; });
  cls.def("__neg__",
          [](const Tensor& a) {
            ReleaseIfGlobal r(a);
            return -a;
          })
      .def(
          "__iadd__",
          [](nb::handle self, nb::handle o) {
            return InPlace(self, o, "__iadd__", [](Tensor& t, const Tensor& x) { t.add_(x); });
          },
          nb::arg("other").none())
      .def(
          "__isub__",
          [](nb::handle self, nb::handle o) {
            return InPlace(self, o, "__isub__", [](Tensor& t, const Tensor& x) { t.sub_(x); });
          },
          nb::arg("other").none())
      .def(
          "__imul__",
          [](nb::handle self, nb::handle o) -> nb::object {
            Tensor& t = *nb::inst_ptr<Tensor>(self);
            double v;
            if (NumberAsDouble(o, &v)) {
              Release r;
              t.mul_(v);
            } else if (nb::isinstance<Tensor>(o)) {
              // No mul_ by a tensor in the C++ API: the product, written back in place.
              const Tensor& x = *nb::inst_ptr<Tensor>(o);
              Release r;
              t.copy_(t * x);
            } else {
              return nb::borrow(Py_NotImplemented);
            }
            return nb::borrow(self);
          },
          nb::arg("other").none())
      .def(
          "add_",
          [](nb::handle self, nb::handle o) {
            return InPlace(self, o, "add_", [](Tensor& t, const Tensor& x) { t.add_(x); });
          },
          nb::arg("other").none())
      .def(
          "sub_",
          [](nb::handle self, nb::handle o) {
            return InPlace(self, o, "sub_", [](Tensor& t, const Tensor& x) { t.sub_(x); });
          },
          nb::arg("other").none())
      .def(
          "mul_",
          [](nb::handle self, nb::handle o) {
            double v;
            if (!NumberAsDouble(o, &v)) {
              throw nb::type_error((std::string("mul_(): argument 'value' must be a number, not ") +
                                    nb::type_name(o.type()).c_str())
                                       .c_str());
            }
            Tensor& t = *nb::inst_ptr<Tensor>(self);
            {
              Release r;
              t.mul_(v);
            }
            return nb::borrow(self);
          },
          nb::arg("value").none())
      .def(
          "fill_",
          [](nb::handle self, nb::handle value) {
            double v;
            if (!NumberAsDouble(value, &v)) {
              throw nb::type_error(
                  (std::string("fill_(): argument 'value' must be a number, not ") +
                   nb::type_name(value.type()).c_str())
                      .c_str());
            }
            Tensor& t = *nb::inst_ptr<Tensor>(self);
            {
              Release r;
              t.fill_(v);
            }
            return nb::borrow(self);
          },
          nb::arg("value").none())
      .def("zero_",
           [](nb::handle self) {
             Tensor& t = *nb::inst_ptr<Tensor>(self);
             {
               Release r;
               t.zero_();
             }
             return nb::borrow(self);
           })
      .def(
          "copy_",
          [](nb::handle self, const Tensor& src) {
            Tensor& t = *nb::inst_ptr<Tensor>(self);
            {
              Release r;
              t.copy_(src);
            }
            return nb::borrow(self);
          },
          nb::arg("src"));

  // Autograd
  cls.def_prop_rw(
         "requires_grad", [](const Tensor& t) { return t.requires_grad(); },
         [](Tensor& t, bool v) { t.requires_grad_(v); })
      .def(
          "requires_grad_",
          [](nb::handle self, bool v) {
            nb::inst_ptr<Tensor>(self)->requires_grad_(v);
            return nb::borrow(self);
          },
          nb::arg("requires_grad") = true)
      .def_prop_ro("is_leaf", &Tensor::is_leaf)
      .def_prop_rw(
          "grad", [](const Tensor& t) { return TensorOrNone(t.grad()); },
          [](Tensor& t, nb::handle g) {
            if (g.is_none()) {
              t.set_grad(Tensor());
            } else if (nb::isinstance<Tensor>(g)) {
              t.set_grad(*nb::inst_ptr<Tensor>(g));
            } else {
              throw nb::type_error((std::string("grad must be a Tensor or None, not ") +
                                    nb::type_name(g.type()).c_str())
                                       .c_str());
            }
          },
          nb::arg("value").none())
      .def_prop_ro("_grad_fn_name", &Tensor::grad_fn_name)
      .def("retain_grad", &Tensor::retain_grad)
      .def("_version", &Tensor::version)
      .def(
          "backward",
          [](const Tensor& t, nb::handle gradient, bool retain_graph) {
            Tensor g;
            if (!gradient.is_none()) {
              if (!nb::isinstance<Tensor>(gradient)) {
                throw nb::type_error(
                    (std::string("backward(): argument 'gradient' must be a Tensor or None, "
                                 "not ") +
                     nb::type_name(gradient.type()).c_str())
                        .c_str());
              }
              g = *nb::inst_ptr<Tensor>(gradient);
            }
            Release r;
            t.backward(g, retain_graph);
          },
          nb::arg("gradient") = nb::none(), nb::arg("retain_graph") = false);

  // Global tensors
  cls.def(
         "to_global",
         [](const Tensor& t, const Placement& placement, nb::handle sbp) {
           Sbp s = ArgSbp(sbp);
           Release r;
           return t.to_global(placement, s);
         },
         nb::arg("placement"), nb::arg("sbp").none())
      .def("to_local", &Tensor::to_local, nb::call_guard<Release>())
      .def_prop_ro("is_global", &Tensor::is_global)
      .def_prop_ro("placement", &Tensor::placement)
      .def_prop_ro("sbp", [](const Tensor& t) { return nb::make_tuple(t.sbp()); });

  // Reads into a C-contiguous numpy array of the tensor's shape and item size (Tensor.numpy).
  m.def("_read_into", [](const Tensor& t, nb::ndarray<nb::c_contig, nb::device::cpu> out) {
    const size_t nbytes = out.nbytes();
    void* data = out.data();
    Release r;
    t.copy_to_host(data, nbytes);
  });
}

}  // namespace ofl::python
