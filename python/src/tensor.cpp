// oneflow_lite.Tensor: the C++ Tensor as a Python class. Every call parses its Python arguments
// before it issues work. Op calls keep the GIL (ReleaseIfGlobal, bindings.h); calls that copy bulk
// data or run a backward release it. The operators are the class's number slots (operators.cpp),
// the hottest methods raw vectorcall functions (fastcall.cpp), and the methods written in Python
// (numpy, __repr__, __getitem__, ...) are added by oneflow_lite/_tensor.py; item, tolist and the
// numpy read are host_reads.cpp's.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <Python.h>

#include <utility>

#include "python/src/bindings.h"

namespace ofl::python {
namespace {

using Release = GilRelease;

nb::tuple IntTuple(const int64_t* v, size_t n) {
  PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(n));
  if (t == nullptr) throw nb::python_error();
  for (size_t i = 0; i < n; ++i) PyTuple_SET_ITEM(t, i, PyLong_FromLongLong(v[i]));
  return nb::steal<nb::tuple>(t);
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
  TensorMethods cls(MakeTensorType(m, "Tensor", TensorNumberSlots()));
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
      .def("is_set_to", &Tensor::is_set_to, nb::arg("tensor"))
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
          "to",
          [](nb::handle self, nb::handle device) {
            const Tensor& t = TensorOf(self);
            Device d = ArgDevice(device, "to");
            Tensor out;
            {
              ReleaseIfGlobal r(t);
              out = t.to(d);
            }
            return nb::steal(ResultObject(self.ptr(), std::move(out)));
          },
          nb::arg("device"))
      .def("cpu", [](nb::handle self) {
        const Tensor& t = TensorOf(self);
        Tensor out;
        {
          ReleaseIfGlobal r(t);
          out = t.to(Device(DeviceType::kCPU, 0));
        }
        return nb::steal(ResultObject(self.ptr(), std::move(out)));
      });

  // In-place arithmetic (the operators are the class's number slots: operators.cpp).
  cls.def(
         "add_",
         [](nb::handle self, nb::handle o) {
           AddInPlace(TensorOf(self), o, "add_");
           return nb::borrow(self);
         },
         nb::arg("other").none())
      .def(
          "sub_",
          [](nb::handle self, nb::handle o) {
            SubInPlace(TensorOf(self), o, "sub_");
            return nb::borrow(self);
          },
          nb::arg("other").none())
      .def(
          "mul_",
          [](nb::handle self, nb::handle o) {
            MulInPlace(TensorOf(self), o, "mul_");
            return nb::borrow(self);
          },
          nb::arg("other").none())
      .def(
          "div_",
          [](nb::handle self, nb::handle o) {
            DivInPlace(TensorOf(self), o, "div_");
            return nb::borrow(self);
          },
          nb::arg("other").none())
      .def(
          "fill_",
          [](nb::handle self, nb::handle value) {
            FillInPlace(TensorOf(self), value);
            return nb::borrow(self);
          },
          nb::arg("value").none())
      .def("zero_",
           [](nb::handle self) {
             Tensor& t = TensorOf(self);
             {
               ReleaseIfGlobal r(t);
               t.zero_();
             }
             return nb::borrow(self);
           })
      .def(
          "copy_",
          [](nb::handle self, const Tensor& src) {
            Tensor& t = TensorOf(self);
            {
              ReleaseIfGlobal r(t.is_global() ? t : src);
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
            TensorOf(self).requires_grad_(v);
            return nb::borrow(self);
          },
          nb::arg("requires_grad") = true)
      .def_prop_ro("is_leaf", &Tensor::is_leaf)
      .def_prop_rw(
          "grad",
          [](const Tensor& t) -> nb::object {
            const Tensor g = t.grad();
            if (!g.defined()) return nb::none();
            return nb::steal(PublishedTensorObject(nb::handle(), g));
          },
          [](Tensor& t, nb::handle g) {
            if (g.is_none()) {
              t.set_grad(Tensor());
            } else if (IsTensor(g)) {
              t.set_grad(TensorOf(g));
              // The grad kept is g's own tensor unless set_grad detached it: `p.grad is g` then.
              const Tensor kept = t.grad();
              if (kept.impl() == TensorOf(g).impl()) nb::steal(PublishedTensorObject(g, kept));
            } else {
              throw nb::type_error((std::string("grad must be a Tensor or None, not ") +
                                    nb::type_name(g.type()).c_str())
                                       .c_str());
            }
          },
          nb::arg("value").none())
      .def_prop_ro("_grad_fn_name", &Tensor::grad_fn_name)
      .def("retain_grad", &Tensor::retain_grad)
      .def("_version", &Tensor::version);

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

  // The values as a new numpy array (bfloat16 as its uint16 bits) in host memory the array owns
  // (host_buffers.cpp: a large array's memory is reused once it died, with its pages mapped).
  // Waits for the writers; a global tensor's logical values (a collective).
  m.def("_host_buffer_cache_bytes", &HostBufferCacheBytes);
}

}  // namespace ofl::python
