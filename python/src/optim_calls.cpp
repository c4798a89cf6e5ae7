// The multi-tensor optimizer steps for ofl.optim (oneflow_lite/functional/optim_step.h):
// _C._adam_step and _C._sgd_step take the parameter group's lists and return the indices the
// kernels left, which the Python optimizer updates op by op.
#include <nanobind/stl/vector.h>

#include <Python.h>

#include <cstdint>
#include <string>
#include <vector>

#include "oneflow_lite/functional/optim_step.h"
#include "python/src/arg_parser.h"
#include "python/src/bindings.h"

namespace ofl::python {
namespace {

std::vector<int64_t> Left(const std::vector<size_t>& left) {
  return std::vector<int64_t>(left.begin(), left.end());
}

}  // namespace

void BindOptimCalls(nb::module_& m) {
  m.def(
      "_adam_step",
      [](nb::handle params, nb::handle grads, nb::handle exp_avgs, nb::handle exp_avg_sqs,
         nb::handle max_exp_avg_sqs, std::vector<int64_t> steps, double lr, double beta1,
         double beta2, double eps, double weight_decay, bool amsgrad, bool decoupled,
         bool maximize) {
        const char* fn = "_adam_step";
        functional::AdamStepArgs args{lr,           beta1,   beta2,     eps,
                                      weight_decay, amsgrad, decoupled, maximize};
        return Left(functional::AdamStep(
            TensorList(params, fn, "params"), TensorList(grads, fn, "grads"),
            TensorList(exp_avgs, fn, "exp_avgs"), TensorList(exp_avg_sqs, fn, "exp_avg_sqs"),
            TensorList(max_exp_avg_sqs, fn, "max_exp_avg_sqs"), steps, args));
      },
      nb::arg("params"), nb::arg("grads"), nb::arg("exp_avgs"), nb::arg("exp_avg_sqs"),
      nb::arg("max_exp_avg_sqs"), nb::arg("steps"), nb::arg("lr"), nb::arg("beta1"),
      nb::arg("beta2"), nb::arg("eps"), nb::arg("weight_decay"), nb::arg("amsgrad"),
      nb::arg("decoupled"), nb::arg("maximize"));
  m.def(
      "_sgd_step",
      [](nb::handle params, nb::handle grads, nb::handle bufs, std::vector<bool> firsts, double lr,
         double momentum, double dampening, double weight_decay, bool nesterov, bool maximize) {
        const char* fn = "_sgd_step";
        functional::SgdStepArgs args{lr, momentum, dampening, weight_decay, nesterov, maximize};
        return Left(functional::SgdStep(TensorList(params, fn, "params"),
                                        TensorList(grads, fn, "grads"),
                                        TensorList(bufs, fn, "bufs"), firsts, args));
      },
      nb::arg("params"), nb::arg("grads"), nb::arg("bufs"), nb::arg("firsts"), nb::arg("lr"),
      nb::arg("momentum"), nb::arg("dampening"), nb::arg("weight_decay"), nb::arg("nesterov"),
      nb::arg("maximize"));
}

}  // namespace ofl::python
