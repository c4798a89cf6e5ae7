// Module functions of oneflow_lite._C that take or give lists of tensors, or numbers for a range:
// cat (alias concat), stack, split, chunk, arange, linspace, and the *_like factories, in PyTorch's
// argument names and order. Each reads its arguments with the checks of arg_parser.h and calls the
// C++ function of the same name (oneflow_lite/functional/functional.h).
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <Python.h>

#include <optional>
#include <string>
#include <vector>

#include "python/src/arg_parser.h"
#include "python/src/bindings.h"

namespace ofl::python {
namespace {

std::vector<Tensor> Tensors(nb::handle h, const char* fn) {
  if (IsTensor(h) || (!PyTuple_Check(h.ptr()) && !PyList_Check(h.ptr()))) {
    throw nb::type_error((std::string(fn) +
                          "(): argument 'tensors' must be a tuple or list of Tensors, not " +
                          nb::type_name(h.type()).c_str())
                             .c_str());
  }
  std::vector<Tensor> out;
  size_t i = 0;
  for (nb::handle item : nb::borrow<nb::sequence>(h)) {
    if (!IsTensor(item)) {
      throw nb::type_error((std::string(fn) + "(): argument 'tensors' item " + std::to_string(i) +
                            " must be a Tensor, not " + nb::type_name(item.type()).c_str())
                               .c_str());
    }
    out.push_back(TensorOf(item));
    ++i;
  }
  return out;
}

nb::tuple TupleOf(std::vector<Tensor> v) {
  nb::list l;
  for (Tensor& t : v) l.append(nb::cast(std::move(t)));
  return nb::tuple(l);
}

Scalar Number(nb::handle h, const char* fn, const char* arg) {
  Scalar v;
  if (!NumberAsScalar(h, fn, arg, &v)) {
    throw nb::type_error((std::string(fn) + "(): argument '" + arg + "' must be a number, not " +
                          nb::type_name(h.type()).c_str())
                             .c_str());
  }
  return v;
}

std::optional<DType> OptDType(nb::handle h, const char* fn) {
  if (h.is_none()) return std::nullopt;
  return ArgDType(h, fn, DType::kFloat32);
}

Tensor Finish(Tensor t, bool requires_grad) {
  if (requires_grad) t.requires_grad_(true);
  return t;
}

// zeros_like and family: (input, *, dtype=None, device=None, requires_grad=False).
template <class F>
void DefLike(nb::module_& m, const char* name, F make) {
  m.def(
      name,
      [name, make](const Tensor& input, nb::handle dtype, nb::handle device, bool requires_grad) {
        std::optional<Device> dev;
        if (!device.is_none()) dev = ArgDevice(device, name);
        return Finish(make(input, OptDType(dtype, name), dev), requires_grad);
      },
      nb::arg("input"), nb::kw_only(), nb::arg("dtype") = nb::none(),
      nb::arg("device") = nb::none(), nb::arg("requires_grad") = false);
}

}  // namespace

void BindShapeCalls(nb::module_& m) {
  auto cat = [](nb::handle tensors, nb::handle dim) {
    return ofl::cat(Tensors(tensors, "cat"), ArgInt(dim, "cat", "dim"));
  };
  m.def("cat", cat, nb::arg("tensors"), nb::arg("dim") = 0);
  m.def("concat", cat, nb::arg("tensors"), nb::arg("dim") = 0);
  m.def(
      "stack",
      [](nb::handle tensors, nb::handle dim) {
        return ofl::stack(Tensors(tensors, "stack"), ArgInt(dim, "stack", "dim"));
      },
      nb::arg("tensors"), nb::arg("dim") = 0);
  m.def(
      "split",
      [](const Tensor& input, nb::handle size, nb::handle dim) {
        const int64_t d = ArgInt(dim, "split", "dim");
        if (PyTuple_Check(size.ptr()) || PyList_Check(size.ptr())) {
          return TupleOf(ofl::split_with_sizes(
              input, ArgIntSequence(size, "split", "split_size_or_sections"), d));
        }
        return TupleOf(ofl::split(input, ArgInt(size, "split", "split_size_or_sections"), d));
      },
      nb::arg("tensor"), nb::arg("split_size_or_sections"), nb::arg("dim") = 0);
  m.def(
      "chunk",
      [](const Tensor& input, nb::handle chunks, nb::handle dim) {
        return TupleOf(
            ofl::chunk(input, ArgInt(chunks, "chunk", "chunks"), ArgInt(dim, "chunk", "dim")));
      },
      nb::arg("input"), nb::arg("chunks"), nb::arg("dim") = 0);
  // arange(end) / arange(start, end, step=1), as torch.arange.
  m.def(
      "arange",
      [](nb::handle start, nb::handle end, nb::handle step, nb::handle dtype, nb::handle device,
         bool requires_grad) {
        const Scalar s = Number(start, "arange", "start");
        const Scalar st = Number(step, "arange", "step");
        const std::optional<DType> d = OptDType(dtype, "arange");
        const Device dev = ArgDevice(device, "arange");
        if (end.is_none())
          return Finish(ofl::arange(Scalar(int64_t{0}), s, st, d, dev), requires_grad);
        return Finish(ofl::arange(s, Number(end, "arange", "end"), st, d, dev), requires_grad);
      },
      nb::arg("start"), nb::arg("end") = nb::none(), nb::arg("step") = 1, nb::kw_only(),
      nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
      nb::arg("requires_grad") = false);
  m.def(
      "linspace",
      [](nb::handle start, nb::handle end, nb::handle steps, nb::handle dtype, nb::handle device,
         bool requires_grad) {
        return Finish(
            ofl::linspace(Number(start, "linspace", "start"), Number(end, "linspace", "end"),
                          ArgInt(steps, "linspace", "steps"), OptDType(dtype, "linspace"),
                          ArgDevice(device, "linspace")),
            requires_grad);
      },
      nb::arg("start"), nb::arg("end"), nb::arg("steps"), nb::kw_only(),
      nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
      nb::arg("requires_grad") = false);
  DefLike(m, "empty_like", [](const Tensor& x, std::optional<DType> d, std::optional<Device> dev) {
    return ofl::empty_like(x, d, dev);
  });
  DefLike(m, "zeros_like", [](const Tensor& x, std::optional<DType> d, std::optional<Device> dev) {
    return ofl::zeros_like(x, d, dev);
  });
  DefLike(m, "ones_like", [](const Tensor& x, std::optional<DType> d, std::optional<Device> dev) {
    return ofl::ones_like(x, d, dev);
  });
  m.def(
      "full_like",
      [](const Tensor& input, nb::handle value, nb::handle dtype, nb::handle device,
         bool requires_grad) {
        std::optional<Device> dev;
        if (!device.is_none()) dev = ArgDevice(device, "full_like");
        return Finish(ofl::full_like(input, Number(value, "full_like", "fill_value"),
                                     OptDType(dtype, "full_like"), dev),
                      requires_grad);
      },
      nb::arg("input"), nb::arg("fill_value"), nb::kw_only(), nb::arg("dtype") = nb::none(),
      nb::arg("device") = nb::none(), nb::arg("requires_grad") = false);
}

}  // namespace ofl::python
