// The placement= and sbp= keywords of the creation functions (ofl.empty, zeros, ones, full, rand,
// randn), as OneFlow's: both or neither, and no device= beside them (the placement decides the
// devices). A TypeError for a wrong type, naming the function.
#pragma once

#include <nanobind/nanobind.h>

#include <optional>
#include <string>

#include "oneflow_lite/placement.h"

namespace ofl::python {

namespace nb = nanobind;

// One sbp, or a tuple/list holding one; a TypeError naming `fn` otherwise.
inline Sbp ArgSbpOf(nb::handle h, const char* fn) {
  if ((PyTuple_Check(h.ptr()) || PyList_Check(h.ptr())) && nb::len(h) == 1) h = h[0];
  if (nb::isinstance<Sbp>(h)) return nb::cast<Sbp>(h);
  throw nb::type_error((std::string(fn) +
                        "(): argument 'sbp' must be an oneflow_lite.sbp (ofl.sbp.split(d), "
                        "ofl.sbp.broadcast, ofl.sbp.partial_sum), not " +
                        nb::type_name(h.type()).c_str())
                           .c_str());
}

struct GlobalArgs {
  Placement placement;
  Sbp sbp;
};

// The global layout asked for, or nullopt when neither keyword is given.
inline std::optional<GlobalArgs> ArgGlobal(const char* fn, nb::handle placement, nb::handle sbp,
                                           nb::handle device) {
  if (placement.is_none() && sbp.is_none()) return std::nullopt;
  if (placement.is_none() || sbp.is_none()) {
    throw nb::type_error(
        (std::string(fn) + "(): placement and sbp are given together (a global tensor)").c_str());
  }
  if (!device.is_none()) {
    throw nb::type_error((std::string(fn) +
                          "(): device cannot be given with placement (the placement decides the "
                          "devices)")
                             .c_str());
  }
  if (!nb::isinstance<Placement>(placement)) {
    throw nb::type_error((std::string(fn) +
                          "(): argument 'placement' must be an oneflow_lite.placement, not " +
                          nb::type_name(placement.type()).c_str())
                             .c_str());
  }
  return GlobalArgs{nb::cast<Placement>(placement), ArgSbpOf(sbp, fn)};
}

}  // namespace ofl::python
