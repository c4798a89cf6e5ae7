// The optimizers' multi-tensor step on the test device: a step of every parameter is one
// instruction per device and dtype (counted in a trace), and gives the per-op step's values (the
// path a non-contiguous parameter takes), for SGD with momentum and nesterov, Adam with amsgrad and
// AdamW; parameters sharing a storage, a strided gradient, and parameters without a gradient.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "oneflow_lite/functional/optim_step.h"
#include "oneflow_lite/oneflow_lite.h"
#include "oneflow_lite/optim.h"
#include "oneflow_lite/trace.h"
#include "tests/functional/functional_test_util.h"
#include "tests/vm/trace_json_check.h"

namespace ofl::testing {
namespace {

// Leaf parameters of these shapes, values drawn from `seed`; contiguous, or each one a transposed
// view of a contiguous buffer (same values, strides that the multi-tensor kernel refuses).
std::vector<Tensor> Params(uint64_t seed, bool contiguous, DType dtype = DType::kFloat64) {
  manual_seed(seed);
  std::vector<Tensor> out;
  for (const Shape& s : {Shape({3, 4}), Shape({5, 2}), Shape({7, 1})}) {
    Tensor t =
        randn(Shape({s[1], s[0]}), dtype, TestDevice()).permute({1, 0});  // values of shape s
    if (contiguous) t = t.contiguous();
    t = t.detach();
    t.requires_grad_(true);
    EXPECT_EQ(t.is_contiguous(), contiguous || s[1] == 1);
    out.push_back(t);
  }
  return out;
}

// A loss whose gradient depends on the parameters: sum(w * p^2) + sum(p).
void Backward(const std::vector<Tensor>& params) {
  Tensor loss;
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor w =
        full(params[i].shape(), 0.5 + static_cast<double>(i), params[i].dtype(), TestDevice());
    Tensor term = (w * params[i] * params[i]).sum() + params[i].sum();
    loss = loss.defined() ? loss + term : term;
  }
  loss.backward();
}

void ExpectSameValues(const std::vector<Tensor>& a, const std::vector<Tensor>& b, double tol,
                      const std::string& what) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const std::vector<double> x = a[i].to(DType::kFloat64).contiguous().to_vector<double>();
    const std::vector<double> y = b[i].to(DType::kFloat64).contiguous().to_vector<double>();
    ASSERT_EQ(x.size(), y.size());
    for (size_t j = 0; j < x.size(); ++j) {
      EXPECT_NEAR(x[j], y[j], tol * std::max(1.0, std::abs(y[j])))
          << what << ": parameter " << i << " element " << j;
    }
  }
}

using MakeOpt = std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)>;

std::map<std::string, MakeOpt> Optimizers() {
  return {
      {"sgd",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::SGD>(p, optim::SGDOptions(0.1));
       }},
      {"sgd momentum nesterov wd",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::SGD>(
             p, optim::SGDOptions(0.1).momentum(0.9).nesterov(true).weight_decay(0.01));
       }},
      {"sgd momentum dampening",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::SGD>(p,
                                             optim::SGDOptions(0.1).momentum(0.8).dampening(0.3));
       }},
      {"adam amsgrad wd",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::Adam>(
             p, optim::AdamOptions(0.05).amsgrad(true).weight_decay(0.1));
       }},
      {"adamw",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::AdamW>(p, optim::AdamOptions(0.05).weight_decay(0.1));
       }},
  };
}

TEST(OptimStepTest, TheMultiTensorStepGivesThePerOpStepsValues) {
  for (const auto& [name, make] : Optimizers()) {
    std::vector<Tensor> fused = Params(5, true), per_op = Params(5, false);
    ExpectSameValues(fused, per_op, 0, name + " (the start)");
    std::unique_ptr<optim::Optimizer> a = make(fused), b = make(per_op);
    for (int step = 0; step < 4; ++step) {
      a->zero_grad();
      b->zero_grad();
      // The second parameter skips a step: its step count falls behind the others'.
      std::vector<Tensor> fa = fused, pb = per_op;
      if (step == 1) {
        fa.erase(fa.begin() + 1);
        pb.erase(pb.begin() + 1);
      }
      Backward(fa);
      Backward(pb);
      a->step();
      b->step();
    }
    ExpectSameValues(fused, per_op, 1e-13, name);
  }
}

TEST(OptimStepTest, Float32AndFloat16StepsFollowTheFloat64Step) {
  for (const auto& [name, make] : Optimizers()) {
    for (DType dtype : {DType::kFloat32, DType::kFloat16}) {
      std::vector<Tensor> wide = Params(6, true), narrow = Params(6, true, dtype);
      std::unique_ptr<optim::Optimizer> a = make(wide), b = make(narrow);
      for (int step = 0; step < 3; ++step) {
        a->zero_grad();
        b->zero_grad();
        Backward(wide);
        Backward(narrow);
        a->step();
        b->step();
      }
      ExpectSameValues(narrow, wide, dtype == DType::kFloat32 ? 1e-5 : 5e-3,
                       name + " in " + to_string(dtype));
    }
  }
}

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "ofl_" + std::to_string(getpid()) + "_" + name;
}

// The ops of the instructions `fn` issues, counted from a trace.
std::map<std::string, int> OpsOf(const std::function<void()>& fn) {
  sync();
  const bool was = trace::is_tracing();
  const std::string scratch = TempPath("before.json");
  if (was) trace::stop(scratch);
  trace::start();
  fn();
  const std::string path = TempPath("optim_step.json");
  trace::stop(path);
  if (was) trace::start();
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  ParsedTrace t;
  ParseAndCheckTrace(ss.str(), &t);
  std::map<std::string, int> ops;
  for (const auto& [id, e] : t.instrs) ++ops[e["args"]["op"].get<std::string>()];
  std::remove(path.c_str());
  std::remove(scratch.c_str());
  return ops;
}

TEST(OptimStepTest, AStepIsOneInstructionPerDeviceAndDType) {
  std::vector<Tensor> params = Params(7, true);
  std::vector<Tensor> more = Params(8, true, DType::kFloat32);
  params.insert(params.end(), more.begin(), more.end());
  for (const auto& [name, make] : Optimizers()) {
    std::unique_ptr<optim::Optimizer> opt = make(params);
    for (int step = 0; step < 2; ++step) {  // the first step makes the states
      opt->zero_grad();
      Backward(params);
      const bool adam = name.rfind("adam", 0) == 0;
      const std::map<std::string, int> ops = OpsOf([&] { opt->step(); });
      std::map<std::string, int> want = {{adam ? "adam_step" : "sgd_step", 2}};
      const bool amsgrad = name.find("amsgrad") != std::string::npos;
      if (adam && step == 0) want["fill_"] = 6 * (amsgrad ? 3 : 2);  // the zero moments
      EXPECT_EQ(ops, want) << name << " step " << step;
    }
  }
}

TEST(OptimStepTest, SharedStoragesStridedGradientsAndMissingGradientsTakeTheRightPath) {
  // Two parameters viewing one storage, the second of them take the per-op path: each still gets
  // its own update, as separate parameters do.
  const Tensor base = randn(Shape({2, 6}), DType::kFloat64, TestDevice());
  Tensor a = base.narrow(0, 0, 1).detach(), b = base.narrow(0, 1, 1).detach();
  a.requires_grad_(true);
  b.requires_grad_(true);
  Tensor c = base.narrow(0, 0, 1).contiguous().detach(),
         d = base.narrow(0, 1, 1).contiguous().detach();
  c.requires_grad_(true);
  d.requires_grad_(true);
  optim::Adam shared({a, b}, optim::AdamOptions(0.1)), separate({c, d}, optim::AdamOptions(0.1));
  for (int step = 0; step < 3; ++step) {
    shared.zero_grad();
    separate.zero_grad();
    Backward({a, b});
    Backward({c, d});
    shared.step();
    separate.step();
  }
  ExpectSameValues({a, b}, {c, d}, 1e-13, "shared storage");

  // A strided gradient is read through a contiguous copy; a parameter without one stays put.
  std::vector<Tensor> p = Params(9, true), q = Params(9, true);
  optim::SGD x(p, optim::SGDOptions(0.1).momentum(0.9)), y(q, optim::SGDOptions(0.1).momentum(0.9));
  for (int step = 0; step < 2; ++step) {
    const Tensor g = randn(Shape({4, 3}), DType::kFloat64, TestDevice());
    p[0].set_grad(g.permute({1, 0}));  // strides (1, 3)
    q[0].set_grad(g.permute({1, 0}).contiguous());
    x.step();
    y.step();
  }
  ExpectSameValues(p, q, 0, "strided gradient");
  ExpectSameValues({p[1], p[2]}, {Params(9, true)[1], Params(9, true)[2]}, 0, "no gradient");
}

TEST(OptimStepTest, ListsOfDifferentLengthsAreRefused) {
  std::vector<Tensor> p = Params(10, true);
  ExpectThrowWith<InvalidArgument>(
      [&] {
        (void)functional::AdamStep(p, {p[0].grad()}, p, p, {}, {1, 1, 1},
                                   functional::AdamStepArgs{});
      },
      {"adam_step", "grads has 1 entries for 3 parameters"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        (void)functional::SgdStep(p, p, {}, {}, functional::SgdStepArgs{0.1, 0.9});
      },
      {"sgd_step", "bufs has 0 entries for 3 parameters"});
  ExpectRuntimeWorks();
}

}  // namespace
}  // namespace ofl::testing
