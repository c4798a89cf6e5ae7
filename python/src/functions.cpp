// Module functions of oneflow_lite._C: tensor creation (empty/zeros/ones/full and from a numpy
// buffer), autograd (grad, grad mode) and the runtime (sync, shutdown, memory, devices, tracing).
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <Python.h>

#include "python/src/bindings.h"

namespace ofl::python {
namespace {

using Release = GilRelease;

nb::dict StatsDict(const MemoryStats& s) {
  nb::dict d;
  d["allocated_bytes"] = s.allocated_bytes;
  d["reserved_bytes"] = s.reserved_bytes;
  d["peak_allocated_bytes"] = s.peak_allocated_bytes;
  d["peak_reserved_bytes"] = s.peak_reserved_bytes;
  d["alloc_requests"] = s.alloc_requests;
  d["cache_hits"] = s.cache_hits;
  d["cache_misses"] = s.cache_misses;
  d["ooms"] = s.ooms;
  d["pending_free_bytes"] = s.pending_free_bytes;
  return d;
}

}  // namespace

std::vector<Tensor> TensorList(nb::handle h, const char* fn, const char* arg) {
  if (IsTensor(h)) return {TensorOf(h)};
  if (!PyTuple_Check(h.ptr()) && !PyList_Check(h.ptr())) {
    throw nb::type_error((std::string(fn) + "(): argument '" + arg +
                          "' must be a Tensor or a sequence of Tensors, not " +
                          nb::type_name(h.type()).c_str())
                             .c_str());
  }
  std::vector<Tensor> out;
  for (nb::handle item : nb::borrow<nb::sequence>(h)) {
    if (item.is_none()) {
      out.emplace_back();
    } else if (IsTensor(item)) {
      out.push_back(TensorOf(item));
    } else {
      throw nb::type_error((std::string(fn) + "(): argument '" + arg + "' must hold Tensors, not " +
                            nb::type_name(item.type()).c_str())
                               .c_str());
    }
  }
  return out;
}

void BindFunctions(nb::module_& m) {
  // A copy of a C-contiguous host array (numpy) as a tensor of `dtype` with the same item size;
  // the caller's memory is free to change once this returns.
  m.def(
      "_from_buffer",
      [](nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu> a, const PyDType& dtype,
         nb::handle device) {
        if (a.itemsize() != element_size(dtype.value)) {
          throw InvalidArgument("tensor: an array of " + std::to_string(a.itemsize()) +
                                "-byte items cannot hold " + dtype.name);
        }
        std::vector<int64_t> dims(a.ndim());
        for (size_t i = 0; i < a.ndim(); ++i) dims[i] = a.shape(i);
        Device dev = ArgDevice(device, "tensor");
        const void* data = a.data();
        Release r;
        return ofl::from_host(data, Shape(dims), dtype.value, dev);
      },
      nb::arg("array"), nb::arg("dtype"), nb::arg("device").none());

  // Autograd
  nb::module_ ag = m.def_submodule("autograd", "oneflow_lite.autograd");
  ag.def(
      "grad",
      [](nb::handle outputs, nb::handle inputs, nb::handle grad_outputs, nb::handle retain_graph,
         bool create_graph, bool allow_unused) {
        std::vector<Tensor> outs = TensorList(outputs, "grad", "outputs");
        std::vector<Tensor> ins = TensorList(inputs, "grad", "inputs");
        std::vector<Tensor> gouts;
        if (!grad_outputs.is_none()) gouts = TensorList(grad_outputs, "grad", "grad_outputs");
        // retain_graph None is create_graph, as PyTorch's.
        const bool retain = retain_graph.is_none() ? create_graph : nb::cast<bool>(retain_graph);
        std::vector<Tensor> res;
        {
          Release r;
          res = autograd::grad(outs, ins, gouts, retain, allow_unused, create_graph);
        }
        nb::list l;
        for (Tensor& t : res) l.append(TensorOrNone(std::move(t)));
        return nb::tuple(l);
      },
      nb::arg("outputs").none(), nb::arg("inputs").none(), nb::arg("grad_outputs") = nb::none(),
      nb::arg("retain_graph") = nb::none(), nb::arg("create_graph") = false,
      nb::arg("allow_unused") = false);
  // The grad-mode context managers and decorators (no_grad, enable_grad, set_grad_enabled,
  // inference_mode) are autograd.py's, on these two.
  m.def("is_grad_enabled", &is_grad_enabled);
  m.def("_set_grad_enabled", &set_grad_enabled, nb::arg("mode"));
}

void BindRuntime(nb::module_& m) {
  m.def("sync", &ofl::sync, nb::call_guard<Release>());
  m.def("_gil_releases", &GilReleaseCount);
  // The package's atexit hook (oneflow_lite/_exit.py). With a daemon thread alive at exit, Python
  // never frees what that thread's frames hold: nanobind's leak report would list objects the
  // program did not leak.
  m.def("_at_exit", [](bool daemon_threads_alive) {
    AtExit();
    if (daemon_threads_alive) nb::set_leak_warnings(false);
  });
  m.def("shutdown", &ofl::shutdown, nb::call_guard<Release>());
  m.def(
      "memory_stats",
      [](nb::handle device) {
        Device d = ArgDevice(device, "memory_stats");
        return StatsDict(ofl::memory_stats(d));
      },
      nb::arg("device") = nb::none());
  m.def(
      "reset_peak_memory_stats",
      [](nb::handle device) {
        ofl::reset_peak_memory_stats(ArgDevice(device, "reset_peak_memory_stats"));
      },
      nb::arg("device") = nb::none());
  m.def(
      "empty_cache",
      [](nb::handle device) {
        Device d = ArgDevice(device, "empty_cache");
        if (d.is_cpu()) EmptyHostBufferCache();  // numpy()'s cached arrays, too
        Release r;
        ofl::empty_cache(d);
      },
      nb::arg("device") = nb::none());
  m.def(
      "set_memory_limit",
      [](nb::handle device, nb::handle bytes) {
        Device d = ArgDevice(device, "set_memory_limit");
        ofl::set_memory_limit(d, ArgInt(bytes, "set_memory_limit", "bytes"));
      },
      nb::arg("device").none(), nb::arg("bytes").none());
  m.def(
      "_memory_snapshot_json",
      [](nb::handle device) {
        Device d = ArgDevice(device, "memory_snapshot");
        MemorySnapshot s;
        {
          Release r;
          s = ofl::memory_snapshot(d);
        }
        return s.to_json();
      },
      nb::arg("device") = nb::none());
  m.def(
      "device_count",
      [](const std::string& type) {
        DeviceType t;
        if (!find_device_type(type, &t)) {
          throw InvalidArgument("device_count: unknown device type '" + type + "'");
        }
        return ofl::device_count(t);
      },
      nb::arg("type"));

  nb::module_ tr = m.def_submodule("trace", "oneflow_lite.trace");
  tr.def("start", &trace::start);
  tr.def("stop", &trace::stop, nb::arg("path"), nb::call_guard<Release>());
  tr.def("is_tracing", &trace::is_tracing);
}

}  // namespace ofl::python
