// The multi-tensor optimizer-step kernels "adam_step" and "sgd_step" of the device in
// OFL_TEST_DEVICE (the CPU's when unset): several tensors in one call (one past the CPU's parallel
// threshold, one empty), each with its own step count, against torch.optim's formulas written here
// in double, for every flag (amsgrad, AdamW's decoupled decay, maximize, momentum, the first
// momentum step, nesterov, dampening, weight decay) and every float dtype; and the argument errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/optim_step.h"
#include "oneflow_lite/error.h"
#include "tests/kernels/kernel_test_util.h"

namespace ofl::kernels::testing {
namespace {

const std::vector<DType>& StepDTypes() {
  static const std::vector<DType> d = {DType::kFloat64, DType::kFloat32, DType::kFloat16,
                                       DType::kBFloat16};
  return d;
}

double Tolerance(DType d) {
  switch (d) {
    case DType::kFloat64:
      return 1e-12;
    case DType::kFloat32:
      return 2e-6;
    case DType::kFloat16:
      return 2e-3;
    default:
      return 1.6e-2;
  }
}

// One tensor's operands as host buffers of `dtype`.
struct Operand {
  Buffer buf;
  TensorArg arg;
  Operand(int64_t n, DType dtype, const std::vector<double>& values) {
    buf.words.assign(static_cast<size_t>(n) * element_size(dtype) / 8 + 2, 0);
    buf.bytes = static_cast<size_t>(n) * element_size(dtype);
    for (int64_t j = 0; j < n; ++j) {
      StoreDouble(buf.data() + j * element_size(dtype), dtype, values[static_cast<size_t>(j)]);
    }
    arg.data = buf.data();
    arg.shape = Shape({n});
    arg.stride = Shape({1});
    arg.dtype = dtype;
  }
  double at(int64_t j) const {
    return LoadAsDouble(buf.data() + j * element_size(arg.dtype), arg.dtype);
  }
};

std::vector<double> Values(std::mt19937_64& rng, int64_t n, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = u(rng);
  return v;
}

// The values as the dtype holds them (the reference starts from what the kernel reads).
std::vector<double> Rounded(const std::vector<double>& v, DType d) {
  Operand o(static_cast<int64_t>(v.size()), d, v);
  std::vector<double> out(v.size());
  for (size_t j = 0; j < v.size(); ++j) out[j] = o.at(static_cast<int64_t>(j));
  return out;
}

// Tensor sizes: a small one, one past the CPU kernel's parallel threshold, an empty one.
const std::vector<int64_t>& Sizes() {
  static const std::vector<int64_t> s = {37, (64 << 10) + 5, 0};
  return s;
}

struct AdamCase {
  bool amsgrad, decoupled, maximize;
  double wd;
};

TEST(OptimStepKernelTest, AdamMatchesTheFormulasForEveryFlagAndDType) {
  const double lr = 0.01, b1 = 0.9, b2 = 0.99, eps = 1e-6;
  const std::vector<AdamCase> cases = {{false, false, false, 0.0},
                                       {true, false, true, 0.1},
                                       {false, true, false, 0.05},
                                       {true, true, true, 0.05}};
  std::mt19937_64 rng(11);
  for (DType dtype : StepDTypes()) {
    for (const AdamCase& c : cases) {
      SCOPED_TRACE(to_string(dtype) + " amsgrad=" + std::to_string(c.amsgrad) +
                   " decoupled=" + std::to_string(c.decoupled) +
                   " maximize=" + std::to_string(c.maximize) + " wd=" + std::to_string(c.wd));
      const int per = c.amsgrad ? 4 : 3;
      std::vector<Operand> ops;  // per tensor: g, p, m, v (, vmax)
      std::vector<std::vector<double>> want;
      std::vector<int64_t> steps;
      ops.reserve(Sizes().size() * 5);
      for (size_t i = 0; i < Sizes().size(); ++i) {
        const int64_t n = Sizes()[i];
        const int64_t t = static_cast<int64_t>(i) * 3 + 1;  // 1, 4, 7
        steps.push_back(t);
        const std::vector<double> g = Rounded(Values(rng, n, -1, 1), dtype);
        std::vector<double> p = Rounded(Values(rng, n, -1, 1), dtype);
        std::vector<double> m = Rounded(Values(rng, n, -0.1, 0.1), dtype);
        std::vector<double> v = Rounded(Values(rng, n, 0, 0.01), dtype);
        std::vector<double> vmax = Rounded(Values(rng, n, 0, 0.02), dtype);
        ops.emplace_back(n, dtype, g);
        ops.emplace_back(n, dtype, p);
        ops.emplace_back(n, dtype, m);
        ops.emplace_back(n, dtype, v);
        if (c.amsgrad) ops.emplace_back(n, dtype, vmax);
        const double bias1 = 1 - std::pow(b1, static_cast<double>(t));
        const double bias2 = 1 - std::pow(b2, static_cast<double>(t));
        for (int64_t j = 0; j < n; ++j) {
          const size_t k = static_cast<size_t>(j);
          double gj = c.maximize ? -g[k] : g[k];
          if (c.decoupled) {
            p[k] *= 1 - lr * c.wd;
          } else {
            gj += c.wd * p[k];
          }
          m[k] = b1 * m[k] + (1 - b1) * gj;
          v[k] = b2 * v[k] + (1 - b2) * gj * gj;
          double vv = v[k];
          if (c.amsgrad) vv = vmax[k] = std::max(vmax[k], v[k]);
          p[k] -= lr / bias1 * m[k] / (std::sqrt(vv) / std::sqrt(bias2) + eps);
        }
        want.push_back(p);
        want.push_back(m);
        want.push_back(v);
        if (c.amsgrad) want.push_back(vmax);
      }
      KernelContext ctx;
      const size_t each = static_cast<size_t>(per) + 1;
      for (size_t i = 0; i < Sizes().size(); ++i) {
        ctx.inputs.push_back(ops[i * each].arg);
        for (int j = 0; j < per; ++j) ctx.outputs.push_back(ops[i * each + 1 + j].arg);
      }
      ctx.attributes =
          Attrs(AdamStepAttrs(), lr, b1, b2, eps, c.wd, c.amsgrad, c.decoupled, c.maximize, steps);
      RunKernel("adam_step", ctx);
      for (size_t i = 0; i < Sizes().size(); ++i) {
        for (int j = 0; j < per; ++j) {
          const Operand& got = ops[i * each + 1 + j];
          const std::vector<double>& w = want[i * static_cast<size_t>(per) + j];
          int bad = 0;
          for (int64_t e = 0; e < Sizes()[i] && bad < 3; ++e) {
            const double x = w[static_cast<size_t>(e)];
            if (std::abs(got.at(e) - x) > Tolerance(dtype) * std::max(1.0, std::abs(x))) {
              ADD_FAILURE() << "tensor " << i << " operand " << j << " element " << e << ": got "
                            << got.at(e) << ", want " << x;
              ++bad;
            }
          }
        }
      }
    }
  }
}

struct SgdCase {
  double momentum, dampening, wd;
  bool nesterov, maximize;
};

TEST(OptimStepKernelTest, SgdMatchesTheFormulasForEveryFlagAndDType) {
  const double lr = 0.05;
  const std::vector<SgdCase> cases = {{0.0, 0.0, 0.0, false, false},
                                      {0.9, 0.0, 0.01, true, false},
                                      {0.8, 0.3, 0.0, false, true},
                                      {0.5, 0.0, 0.2, false, false}};
  std::mt19937_64 rng(12);
  for (DType dtype : StepDTypes()) {
    for (const SgdCase& c : cases) {
      SCOPED_TRACE(to_string(dtype) + " momentum=" + std::to_string(c.momentum) + " nesterov=" +
                   std::to_string(c.nesterov) + " maximize=" + std::to_string(c.maximize));
      const int per = c.momentum != 0 ? 2 : 1;
      std::vector<Operand> ops;  // per tensor: g, p (, buf)
      std::vector<std::vector<double>> want;
      std::vector<int64_t> firsts;
      ops.reserve(Sizes().size() * 3);
      for (size_t i = 0; i < Sizes().size(); ++i) {
        const int64_t n = Sizes()[i];
        const bool first = i == 1;  // the big tensor's buffer starts this step
        firsts.push_back(first ? 1 : 0);
        const std::vector<double> g = Rounded(Values(rng, n, -1, 1), dtype);
        std::vector<double> p = Rounded(Values(rng, n, -1, 1), dtype);
        // A first step's buffer holds garbage the kernel must not read.
        std::vector<double> buf = first ? std::vector<double>(static_cast<size_t>(n), NAN)
                                        : Rounded(Values(rng, n, -0.5, 0.5), dtype);
        ops.emplace_back(n, dtype, g);
        ops.emplace_back(n, dtype, p);
        if (per > 1) ops.emplace_back(n, dtype, buf);
        for (int64_t j = 0; j < n; ++j) {
          const size_t k = static_cast<size_t>(j);
          double d = c.maximize ? -g[k] : g[k];
          d += c.wd * p[k];
          if (c.momentum != 0) {
            buf[k] = first ? d : c.momentum * buf[k] + (1 - c.dampening) * d;
            d = c.nesterov ? d + c.momentum * buf[k] : buf[k];
          }
          p[k] -= lr * d;
        }
        want.push_back(p);
        if (per > 1) want.push_back(buf);
      }
      KernelContext ctx;
      const size_t each = static_cast<size_t>(per) + 1;
      for (size_t i = 0; i < Sizes().size(); ++i) {
        ctx.inputs.push_back(ops[i * each].arg);
        for (int j = 0; j < per; ++j) ctx.outputs.push_back(ops[i * each + 1 + j].arg);
      }
      ctx.attributes =
          Attrs(SgdStepAttrs(), lr, c.momentum, c.dampening, c.wd, c.nesterov, c.maximize, firsts);
      RunKernel("sgd_step", ctx);
      for (size_t i = 0; i < Sizes().size(); ++i) {
        for (int j = 0; j < per; ++j) {
          const Operand& got = ops[i * each + 1 + j];
          const std::vector<double>& w = want[i * static_cast<size_t>(per) + j];
          int bad = 0;
          for (int64_t e = 0; e < Sizes()[i] && bad < 3; ++e) {
            const double x = w[static_cast<size_t>(e)];
            if (!(std::abs(got.at(e) - x) <= Tolerance(dtype) * std::max(1.0, std::abs(x)))) {
              ADD_FAILURE() << "tensor " << i << " operand " << j << " element " << e << ": got "
                            << got.at(e) << ", want " << x;
              ++bad;
            }
          }
        }
      }
    }
  }
}

void ExpectStepError(const std::string& op, const KernelContext& ctx,
                     const std::vector<std::string>& parts) {
  try {
    RunKernel(op, ctx);
    ADD_FAILURE() << op << " accepted bad arguments";
  } catch (const InvalidArgument& e) {
    for (const std::string& p : parts) {
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << " lacks " << p;
    }
  }
}

TEST(OptimStepKernelTest, BadArgumentsNameTheKernelAndTheValues) {
  std::vector<double> four(4, 0.5);
  Operand g(4, DType::kFloat32, four), p(4, DType::kFloat32, four), m(4, DType::kFloat32, four),
      v(4, DType::kFloat32, four);
  auto adam = [&](std::vector<int64_t> steps, double wd = 0) {
    KernelContext ctx;
    ctx.inputs = {g.arg};
    ctx.outputs = {p.arg, m.arg, v.arg};
    ctx.attributes =
        Attrs(AdamStepAttrs(), 0.1, 0.9, 0.999, 1e-8, wd, false, false, false, std::move(steps));
    return ctx;
  };
  ExpectStepError("adam_step", adam({0}), {"adam_step", "steps[0] is 0"});
  ExpectStepError("adam_step", adam({1, 2}), {"adam_step", "steps has 2 entries for 1 tensors"});
  KernelContext missing = adam({1});
  missing.outputs.pop_back();
  ExpectStepError("adam_step", missing, {"adam_step", "3 * n outputs", "got 1 and 2"});
  KernelContext shape = adam({1});
  shape.outputs[1].shape = Shape({2, 2});
  shape.outputs[1].stride = Shape({2, 1});
  ExpectStepError("adam_step", shape, {"adam_step", "output 1 has shape (2,2), its parameter (4)"});
  KernelContext strided = adam({1});
  strided.inputs[0].shape = Shape({2});
  strided.inputs[0].stride = Shape({2});
  for (TensorArg& o : strided.outputs) {
    o.shape = Shape({2});
    o.stride = Shape({1});
  }
  ExpectStepError("adam_step", strided, {"adam_step", "gradient 0 must be contiguous"});
  KernelContext ints = adam({1});
  for (TensorArg& o : ints.outputs) o.dtype = DType::kInt32;
  ints.inputs[0].dtype = DType::kInt32;
  ExpectStepError("adam_step", ints, {"adam_step", "dtype int32 is not supported"});
  KernelContext mixed = adam({1});
  mixed.inputs[0].dtype = DType::kFloat16;
  ExpectStepError("adam_step", mixed, {"adam_step", "gradient 0 is float16", "float32"});
  KernelContext sgd;
  sgd.inputs = {g.arg};
  sgd.outputs = {p.arg};
  sgd.attributes = Attrs(SgdStepAttrs(), 0.1, 0.9, 0.0, 0.0, false, false, std::vector<int64_t>{0});
  ExpectStepError("sgd_step", sgd, {"sgd_step", "2 * n outputs", "got 1 and 1"});
  KernelContext no_attrs;
  no_attrs.inputs = {g.arg};
  no_attrs.outputs = {p.arg};
  ExpectStepError("sgd_step", no_attrs, {"sgd_step", "expects the attributes", "got none"});
}

}  // namespace
}  // namespace ofl::kernels::testing
