// The random functions of oneflow_lite._C (oneflow_lite/random.h) in PyTorch's argument names:
// manual_seed, initial_seed, get_rng_state / set_rng_state (a 16-byte uint8 tensor: the seed and
// the offset, little-endian), rand, randn, randint, randperm, rand_like, randn_like, bernoulli,
// dropout, and Tensor.uniform_ / normal_ / bernoulli.
#include <nanobind/stl/string.h>

#include <Python.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "oneflow_lite/distributed.h"
#include "oneflow_lite/random.h"
#include "python/src/arg_parser.h"
#include "python/src/bindings.h"
#include "python/src/global_args.h"

namespace ofl::python {
namespace {

DeviceType TypeOf(nb::handle device, const char* fn) { return ArgDevice(device, fn).type(); }

Tensor Finish(Tensor t, bool requires_grad) {
  if (requires_grad) t.requires_grad_(true);
  return t;
}

std::optional<DType> OptDType(nb::handle h, const char* fn) {
  if (h.is_none()) return std::nullopt;
  return ArgDType(h, fn, DType::kFloat32);
}

double ArgReal(nb::handle h, const char* fn, const char* arg) {
  double v = 0;
  if (PyBool_Check(h.ptr()) || !NumberAsDouble(h, &v)) {
    throw nb::type_error((std::string(fn) + "(): argument '" + arg + "' must be a number, not " +
                          nb::type_name(h.type()).c_str())
                             .c_str());
  }
  return v;
}

// rand / randn(*size, dtype=None, device=None, requires_grad=False, placement=None, sbp=None):
// with placement and sbp, a global tensor holding the numbers the local call draws.
template <Tensor (*kMake)(const Shape&, DType, const Device&),
          Tensor (*kMakeGlobal)(const Shape&, DType, const Placement&, const Sbp&)>
void DefSized(nb::module_& m, const char* name) {
  m.def(
      name,
      [name](nb::args size, nb::handle dtype, nb::handle device, bool requires_grad,
             nb::handle placement, nb::handle sbp) {
        const Shape shape(ArgInts(size, name, "size"));
        const DType d = ArgDType(dtype, name, DType::kFloat32);
        if (const std::optional<GlobalArgs> g = ArgGlobal(name, placement, sbp, device)) {
          Tensor t;
          {
            GilRelease r;  // the placement's first use may build its communicators over MPI
            t = kMakeGlobal(shape, d, g->placement, g->sbp);
          }
          return Finish(std::move(t), requires_grad);
        }
        return Finish(kMake(shape, d, ArgDevice(device, name)), requires_grad);
      },
      nb::arg("size"), nb::kw_only(), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
      nb::arg("requires_grad") = false, nb::arg("placement") = nb::none(),
      nb::arg("sbp") = nb::none());
}

}  // namespace

void BindRandomCalls(nb::module_& m, nb::handle tensor_type) {
  m.def(
      "manual_seed",
      [](nb::handle seed) {
        // Any int PyTorch takes: negative seeds are their two's complement, as torch.manual_seed.
        const int64_t s = ArgInt(seed, "manual_seed", "seed");
        ofl::manual_seed(static_cast<uint64_t>(s));
      },
      nb::arg("seed"));
  m.def(
      "initial_seed",
      [](nb::handle device) { return ofl::initial_seed(TypeOf(device, "initial_seed")); },
      nb::arg("device") = nb::none());
  m.def(
      "get_rng_state",
      [](nb::handle device) {
        const RngState s = ofl::get_rng_state(TypeOf(device, "get_rng_state"));
        std::vector<uint8_t> bytes(16);
        for (int i = 0; i < 8; ++i) {
          bytes[static_cast<size_t>(i)] = static_cast<uint8_t>(s.seed >> (8 * i));
          bytes[static_cast<size_t>(8 + i)] = static_cast<uint8_t>(s.offset >> (8 * i));
        }
        return ofl::tensor<uint8_t>(bytes, Shape(std::vector<int64_t>{16}));
      },
      nb::arg("device") = nb::none());
  m.def(
      "set_rng_state",
      [](const Tensor& state, nb::handle device) {
        if (state.dtype() != DType::kUInt8 || state.shape() != Shape(std::vector<int64_t>{16})) {
          throw InvalidArgument(
              "set_rng_state: the state must be a uint8 tensor of 16 bytes "
              "(from get_rng_state), got dtype " +
              to_string(state.dtype()) + " and shape " + state.shape().str());
        }
        const std::vector<uint8_t> b = state.to(Device(DeviceType::kCPU, 0)).to_vector<uint8_t>();
        RngState s;
        for (int i = 0; i < 8; ++i) {
          s.seed |= static_cast<uint64_t>(b[static_cast<size_t>(i)]) << (8 * i);
          s.offset |= static_cast<uint64_t>(b[static_cast<size_t>(8 + i)]) << (8 * i);
        }
        ofl::set_rng_state(s, TypeOf(device, "set_rng_state"));
      },
      nb::arg("new_state"), nb::arg("device") = nb::none());

  DefSized<static_cast<Tensor (*)(const Shape&, DType, const Device&)>(&ofl::rand),
           static_cast<Tensor (*)(const Shape&, DType, const Placement&, const Sbp&)>(&ofl::rand)>(
      m, "rand");
  DefSized<static_cast<Tensor (*)(const Shape&, DType, const Device&)>(&ofl::randn),
           static_cast<Tensor (*)(const Shape&, DType, const Placement&, const Sbp&)>(&ofl::randn)>(
      m, "randn");
  // randint(high, size) / randint(low, high, size), as torch.randint.
  m.def(
      "randint",
      [](nb::args args, nb::handle dtype, nb::handle device, bool requires_grad) {
        const size_t n = args.size();
        if (n != 2 && n != 3) {
          throw nb::type_error("randint(): takes (high, size) or (low, high, size)");
        }
        const int64_t low = n == 3 ? ArgInt(args[0], "randint", "low") : 0;
        const int64_t high = ArgInt(args[n - 2], "randint", "high");
        const nb::handle size = args[n - 1];
        if (!PyTuple_Check(size.ptr()) && !PyList_Check(size.ptr())) {
          throw nb::type_error((std::string("randint(): argument 'size' must be a tuple of ints, "
                                            "not ") +
                                nb::type_name(size.type()).c_str())
                                   .c_str());
        }
        const Shape shape(ArgIntSequence(size, "randint", "size"));
        return Finish(ofl::randint(low, high, shape, ArgDType(dtype, "randint", DType::kInt64),
                                   ArgDevice(device, "randint")),
                      requires_grad);
      },
      nb::arg("args"), nb::kw_only(), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
      nb::arg("requires_grad") = false);
  m.def(
      "randperm",
      [](nb::handle n, nb::handle dtype, nb::handle device, bool requires_grad) {
        return Finish(
            ofl::randperm(ArgInt(n, "randperm", "n"), ArgDType(dtype, "randperm", DType::kInt64),
                          ArgDevice(device, "randperm")),
            requires_grad);
      },
      nb::arg("n"), nb::kw_only(), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
      nb::arg("requires_grad") = false);
  m.def(
      "rand_like",
      [](const Tensor& input, nb::handle dtype, bool requires_grad) {
        return Finish(ofl::rand_like(input, OptDType(dtype, "rand_like")), requires_grad);
      },
      nb::arg("input"), nb::kw_only(), nb::arg("dtype") = nb::none(),
      nb::arg("requires_grad") = false);
  m.def(
      "randn_like",
      [](const Tensor& input, nb::handle dtype, bool requires_grad) {
        return Finish(ofl::randn_like(input, OptDType(dtype, "randn_like")), requires_grad);
      },
      nb::arg("input"), nb::kw_only(), nb::arg("dtype") = nb::none(),
      nb::arg("requires_grad") = false);
  auto bernoulli = [](const Tensor& input, nb::handle p) {
    if (p.is_none()) return ofl::bernoulli(input);
    return ofl::bernoulli(input, ArgReal(p, "bernoulli", "p"));
  };
  m.def("bernoulli", bernoulli, nb::arg("input"), nb::arg("p") = nb::none());
  m.def(
      "dropout",
      [](const Tensor& input, nb::handle p, bool training) {
        return ofl::dropout(input, ArgReal(p, "dropout", "p"), training);
      },
      nb::arg("input"), nb::arg("p") = 0.5, nb::arg("training") = true);

  nb::handle t = tensor_type;
  nb::setattr(t, "uniform_",
              nb::cpp_function(
                  [](nb::handle self, nb::handle from, nb::handle to) {
                    TensorOf(self).uniform_(ArgReal(from, "uniform_", "from"),
                                            ArgReal(to, "uniform_", "to"));
                    return nb::borrow(self);
                  },
                  nb::is_method(), nb::arg("from") = 0.0, nb::arg("to") = 1.0));
  nb::setattr(t, "normal_",
              nb::cpp_function(
                  [](nb::handle self, nb::handle mean, nb::handle std) {
                    TensorOf(self).normal_(ArgReal(mean, "normal_", "mean"),
                                           ArgReal(std, "normal_", "std"));
                    return nb::borrow(self);
                  },
                  nb::is_method(), nb::arg("mean") = 0.0, nb::arg("std") = 1.0));
  nb::setattr(t, "bernoulli",
              nb::cpp_function([bernoulli](nb::handle self,
                                           nb::handle p) { return bernoulli(TensorOf(self), p); },
                               nb::is_method(), nb::arg("p") = nb::none()));
}

}  // namespace ofl::python
