// Global tensors from Python: the process group (init_distributed, rank, world_size), placement
// and SBP. Tensor.to_global / to_local / placement / sbp are in tensor.cpp.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "python/src/bindings.h"

namespace ofl::python {

void BindGlobal(nb::module_& m) {
  m.def("init_distributed", &ofl::init_distributed, nb::call_guard<GilRelease>());
  // The exit hook's (oneflow_lite/_exit.py): an uncaught exception ends every rank of the job.
  m.def("_abort_job", &ofl::abort_job, nb::arg("why"), nb::call_guard<GilRelease>());
  m.def("rank", &ofl::rank);
  m.def("world_size", &ofl::world_size);

  nb::class_<Placement>(m, "placement")
      .def(
          "__init__",
          [](Placement* self, const std::string& type, nb::handle ranks) {
            if (!PyTuple_Check(ranks.ptr()) && !PyList_Check(ranks.ptr())) {
              (void)ArgIntSequence(ranks, "placement", "ranks");  // its TypeError
            }
            std::vector<int> r;
            for (nb::handle rank : nb::borrow<nb::sequence>(ranks)) {
              r.push_back(ArgInt32(rank, "placement", "ranks", 0));
            }
            new (self) Placement(type, std::move(r));
          },
          nb::arg("type"), nb::arg("ranks").none())
      .def_prop_ro("type", &Placement::device_type)
      .def_prop_ro("ranks", &Placement::ranks)
      .def("__repr__",
           [](const Placement& p) {
             std::string s = "oneflow_lite.placement(type=\"" + p.device_type() + "\", ranks=[";
             for (size_t i = 0; i < p.ranks().size(); ++i) {
               s += (i ? ", " : "") + std::to_string(p.ranks()[i]);
             }
             return s + "])";
           })
      .def("__eq__", [](const Placement& a, nb::handle b) {
        return nb::isinstance<Placement>(b) && a == nb::cast<const Placement&>(b);
      });

  nb::class_<Sbp>(m, "Sbp")
      .def_static(
          "split", [](nb::handle dim) { return Sbp::split(ArgInt32(dim, "split", "dim", 0)); },
          nb::arg("dim").none())
      .def_static("_broadcast", &Sbp::broadcast)
      .def_static("_partial_sum", &Sbp::partial_sum)
      .def_prop_ro(
          "dim",
          [](const Sbp& s) -> nb::object { return s.is_split() ? nb::int_(s.axis()) : nb::none(); })
      .def("__repr__",
           [](const Sbp& s) -> std::string {
             if (s.is_split())
               return "oneflow_lite.sbp.split(dim=" + std::to_string(s.axis()) + ")";
             return s.is_broadcast() ? "oneflow_lite.sbp.broadcast"
                                     : "oneflow_lite.sbp.partial_sum";
           })
      .def("__eq__",
           [](const Sbp& a, nb::handle b) {
             return nb::isinstance<Sbp>(b) && a == nb::cast<const Sbp&>(b);
           })
      .def("__hash__", [](const Sbp& s) { return nb::hash(nb::str(s.str().c_str())); });
}

}  // namespace ofl::python
