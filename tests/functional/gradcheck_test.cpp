// Gradient checks: every op's backward against central finite differences in float64, on random
// shapes (0-size and 0-dim tensors, broadcasting, permuted and narrowed inputs), on the test
// device; and random differentiable programs giving bit-identical gradients on cpu and sim:0.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tests/common/grad_program.h"
#include "tests/functional/functional_test_util.h"

namespace ofl::testing {
namespace {

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

Tensor Make(const std::vector<double>& v, const Dims& shape, bool requires_grad) {
  Tensor t = ofl::tensor<double>(v, Shape(shape), TestDevice());
  if (requires_grad) t.requires_grad_();
  return t;
}

std::vector<double> RandomValues(std::mt19937_64& rng, const Dims& shape) {
  std::uniform_real_distribution<double> dist(0.5, 2.0);  // away from 0: div stays smooth
  std::vector<double> v(static_cast<size_t>(Numel(shape)));
  for (double& x : v) x = (rng() & 1 ? 1 : -1) * dist(rng);
  return v;
}

// loss = sum(f(inputs) * weights) with fixed random weights; its gradient by autograd against
// (loss(x + h) - loss(x - h)) / 2h for every input element.
void CheckGradients(const std::string& what, const Fn& f, const std::vector<Dims>& shapes,
                    uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<double>> values;
  for (const Dims& s : shapes) values.push_back(RandomValues(rng, s));
  auto loss = [&](const std::vector<std::vector<double>>& vals, bool grad,
                  std::vector<Tensor>* leaves) {
    std::vector<Tensor> in;
    for (size_t i = 0; i < shapes.size(); ++i) in.push_back(Make(vals[i], shapes[i], grad));
    if (leaves) *leaves = in;
    Tensor y = f(in);
    std::mt19937_64 wrng(seed ^ 0x9e3779b97f4a7c15ull);
    Tensor w = Make(RandomValues(wrng, y.shape().vec()), y.shape().vec(), false);
    return (y * w).sum();
  };
  std::vector<Tensor> leaves;
  Tensor l = loss(values, true, &leaves);
  std::vector<Tensor> grads = autograd::grad({l}, leaves, {}, false, /*allow_unused=*/true);
  const double h = 1e-6;
  for (size_t i = 0; i < shapes.size(); ++i) {
    std::vector<double> analytic = grads[i].defined() ? grads[i].to_vector<double>()
                                                      : std::vector<double>(values[i].size(), 0.0);
    ASSERT_EQ(analytic.size(), values[i].size()) << what;
    for (size_t k = 0; k < values[i].size(); ++k) {
      auto plus = values, minus = values;
      plus[i][k] += h;
      minus[i][k] -= h;
      NoGradGuard no_grad;
      const double numeric = (loss(plus, false, nullptr).to_vector<double>()[0] -
                              loss(minus, false, nullptr).to_vector<double>()[0]) /
                             (2 * h);
      EXPECT_NEAR(analytic[k], numeric, 1e-6 * std::max(1.0, std::fabs(numeric)))
          << what << ": input " << i << " element " << k;
    }
  }
}

// Second derivatives: H(x) = sum_i <d loss / d x_i, v_i> for fixed random directions v, its
// gradient by autograd through a first gradient taken with create_graph, against central
// differences of H (whose first gradients are taken without create_graph).
void CheckSecondDerivatives(const std::string& what, const Fn& f, const std::vector<Dims>& shapes,
                            uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<double>> values, dirs;
  for (const Dims& s : shapes) values.push_back(RandomValues(rng, s));
  for (const Dims& s : shapes) dirs.push_back(RandomValues(rng, s));
  auto h_of = [&](const std::vector<std::vector<double>>& vals, bool create_graph,
                  std::vector<Tensor>* leaves) {
    std::vector<Tensor> in;
    for (size_t i = 0; i < shapes.size(); ++i) in.push_back(Make(vals[i], shapes[i], true));
    if (leaves) *leaves = in;
    Tensor y = f(in);
    std::mt19937_64 wrng(seed ^ 0x9e3779b97f4a7c15ull);
    Tensor w = Make(RandomValues(wrng, y.shape().vec()), y.shape().vec(), false);
    const Tensor loss = (y * w).sum();
    const std::vector<Tensor> g =
        autograd::grad({loss}, in, {}, false, /*allow_unused=*/true, create_graph);
    Tensor h = zeros(Shape(std::vector<int64_t>{}), DType::kFloat64, TestDevice());
    for (size_t i = 0; i < g.size(); ++i) {
      if (g[i].defined()) h = h + (g[i] * Make(dirs[i], shapes[i], false)).sum();
    }
    return h;
  };
  std::vector<Tensor> leaves;
  const Tensor h = h_of(values, true, &leaves);
  std::vector<Tensor> second;
  if (h.requires_grad()) {
    second = autograd::grad({h}, leaves, {}, false, /*allow_unused=*/true);
  } else {
    second.resize(leaves.size());  // H does not depend on x: every second derivative is 0
  }
  const double eps = 1e-6;
  for (size_t i = 0; i < shapes.size(); ++i) {
    std::vector<double> analytic = second[i].defined() ? second[i].to_vector<double>()
                                                       : std::vector<double>(values[i].size(), 0.0);
    ASSERT_EQ(analytic.size(), values[i].size()) << what;
    for (size_t k = 0; k < values[i].size(); ++k) {
      auto plus = values, minus = values;
      plus[i][k] += eps;
      minus[i][k] -= eps;
      const double numeric = (h_of(plus, false, nullptr).to_vector<double>()[0] -
                              h_of(minus, false, nullptr).to_vector<double>()[0]) /
                             (2 * eps);
      EXPECT_NEAR(analytic[k], numeric, 1e-5 * std::max(1.0, std::fabs(numeric)))
          << what << ": input " << i << " element " << k;
    }
  }
}

// Right-aligned broadcast partners of `shape`: some dims set to 1, some leading dims dropped.
Dims Partner(std::mt19937_64& rng, const Dims& shape) {
  Dims out;
  for (size_t i = rng() % 2; i < shape.size(); ++i) out.push_back(rng() % 2 ? 1 : shape[i]);
  return out;
}

Dims RandomShape(std::mt19937_64& rng, bool allow_empty) {
  Dims s;
  const int nd = static_cast<int>(rng() % 4);
  for (int i = 0; i < nd; ++i) s.push_back(static_cast<int64_t>(rng() % 3) + (allow_empty ? 0 : 1));
  return s;
}

TEST(GradCheckTest, ArithmeticWithBroadcasting) {
  std::mt19937_64 rng(1);
  for (int round = 0; round < 12; ++round) {
    const Dims a = RandomShape(rng, round % 4 == 3);
    const Dims b = Partner(rng, a);
    const std::string shapes = Str(a) + " and " + Str(b);
    CheckGradients(
        "add " + shapes, [](auto& x) { return x[0] + x[1]; }, {a, b}, round);
    CheckGradients(
        "sub " + shapes, [](auto& x) { return x[1] - x[0]; }, {a, b}, round);
    CheckGradients(
        "mul " + shapes, [](auto& x) { return x[0] * x[1]; }, {a, b}, round);
    CheckGradients(
        "div " + shapes, [](auto& x) { return x[0] / x[1]; }, {a, b}, round);
    CheckGradients(
        "scalars " + shapes, [](auto& x) { return (2.0 - x[0]) * 3.0 / x[0] + (-x[0]) - 1.5; }, {a},
        round);
  }
}

TEST(GradCheckTest, SumsOverEveryDimSet) {
  std::mt19937_64 rng(2);
  for (int round = 0; round < 10; ++round) {
    const Dims s = RandomShape(rng, round % 3 == 2);
    CheckGradients(
        "sum all " + Str(s), [](auto& x) { return x[0].sum(); }, {s}, round);
    if (s.empty()) continue;
    const int64_t d = static_cast<int64_t>(rng() % s.size());
    const bool keep = rng() % 2;
    CheckGradients(
        "sum dim " + std::to_string(d) + " of " + Str(s),
        [d, keep](auto& x) { return x[0].sum({d - 1 < 0 ? d : d - 1}, keep); }, {s}, round);
  }
}

TEST(GradCheckTest, ViewAndCopyOps) {
  CheckGradients(
      "expand",
      [](auto& x) {
        return x[0].expand({2, 4, 2, 3});
      },
      {{4, 1, 3}}, 3);
  CheckGradients(
      "expand 0-dim",
      [](auto& x) {
        return x[0].expand({3, 2});
      },
      {{}}, 4);
  CheckGradients(
      "expand to 0",
      [](auto& x) {
        return x[0].expand({0, 3});
      },
      {{1, 3}}, 5);
  CheckGradients(
      "repeat",
      [](auto& x) {
        return x[0].repeat({2, 1, 3});
      },
      {{2, 2}}, 6);
  CheckGradients(
      "repeat 0",
      [](auto& x) {
        return x[0].repeat({0, 2});
      },
      {{2}}, 7);
  CheckGradients(
      "reshape of a permuted view",
      [](auto& x) {
        return x[0].permute({1, 0}).reshape({3, 2});
      },
      {{2, 3}}, 8);
  CheckGradients(
      "permute 3d",
      [](auto& x) {
        return x[0].permute({2, 0, 1}) * 1.0;
      },
      {{2, 3, 2}}, 9);
  CheckGradients(
      "narrow of a narrowed input", [](auto& x) { return x[0].narrow(1, 1, 2).narrow(0, -2, 2); },
      {{3, 4}}, 10);
  CheckGradients(
      "narrow to 0", [](auto& x) { return x[0].narrow(0, 1, 0); }, {{3}}, 11);
  CheckGradients(
      "contiguous",
      [](auto& x) {
        return x[0].permute({1, 0}).contiguous();
      },
      {{2, 3}}, 12);
  CheckGradients(
      "to cpu and back", [](auto& x) { return x[0].to(Device("cpu")).to(TestDevice()) * x[0]; },
      {{3}}, 13);
  CheckGradients(
      "expand_backward", [](auto& x) { return ofl::expand_backward(x[0], Shape({3})); }, {{2, 3}},
      14);
  CheckGradients(
      "repeat_backward", [](auto& x) { return ofl::repeat_backward(x[0], Shape({2}), {3}); }, {{6}},
      15);
  CheckGradients(
      "broadcast arithmetic on a permuted, narrowed input",
      [](auto& x) {
        return x[0].permute({1, 0}).narrow(0, 1, 2) * x[1];
      },
      {{3, 3}, {1, 3}}, 16);
}

// The elementwise-unary ops, on random shapes (0-dim and 0-size included) and on a permuted,
// narrowed input; the ops defined only for positive inputs take |x| (the values stay away from
// 0, so |x| and relu are smooth there).
TEST(GradCheckTest, UnaryOps) {
  const std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> ops = {
      {"neg", [](const Tensor& x) { return ofl::neg(x); }},
      {"abs", [](const Tensor& x) { return ofl::abs(x); }},
      {"sign", [](const Tensor& x) { return ofl::sign(x) * x; }},
      {"relu", [](const Tensor& x) { return ofl::relu(x); }},
      {"exp", [](const Tensor& x) { return ofl::exp(x); }},
      {"log", [](const Tensor& x) { return ofl::log(ofl::abs(x)); }},
      {"sqrt", [](const Tensor& x) { return ofl::sqrt(ofl::abs(x)); }},
      {"rsqrt", [](const Tensor& x) { return ofl::rsqrt(ofl::abs(x)); }},
      {"sin", [](const Tensor& x) { return ofl::sin(x); }},
      {"cos", [](const Tensor& x) { return ofl::cos(x); }},
      {"tanh", [](const Tensor& x) { return ofl::tanh(x); }},
      {"sigmoid", [](const Tensor& x) { return ofl::sigmoid(x); }},
      {"erf", [](const Tensor& x) { return ofl::erf(x); }},
      {"silu", [](const Tensor& x) { return ofl::silu(x); }},
      {"gelu", [](const Tensor& x) { return ofl::gelu(x); }},
      {"gelu tanh", [](const Tensor& x) { return ofl::gelu(x, "tanh"); }},
      {"pow 3", [](const Tensor& x) { return ofl::pow(x, 3.0); }},
      {"pow 0", [](const Tensor& x) { return ofl::pow(x, 0.0) * x; }},
      {"pow -1.5", [](const Tensor& x) { return ofl::pow(ofl::abs(x), -1.5); }},
  };
  std::mt19937_64 rng(17);
  uint64_t seed = 100;
  for (const auto& op : ops) {
    const std::string name = op.first;
    const std::function<Tensor(const Tensor&)>& f = op.second;  // (a lambda captures no binding)
    for (int round = 0; round < 3; ++round) {
      const Dims s = RandomShape(rng, round == 2);
      CheckGradients(
          name + " " + Str(s), [&f](auto& x) { return f(x[0]); }, {s}, ++seed);
    }
    CheckGradients(
        name + " of a permuted, narrowed input",
        [&f](auto& x) {
          return f(x[0].permute({1, 0}).narrow(0, 1, 2));
        },
        {{3, 4}}, ++seed);
  }
}

// The differentiable pointwise ops with broadcasting (random values: no ties, no value on a
// clamp bound), where with a condition from a comparison, and on a permuted, narrowed input.
TEST(GradCheckTest, PointwiseOps) {
  std::mt19937_64 rng(23);
  for (int round = 0; round < 8; ++round) {
    const Dims a = RandomShape(rng, round % 4 == 3);
    const Dims b = Partner(rng, a);
    const std::string shapes = Str(a) + " and " + Str(b);
    CheckGradients(
        "maximum " + shapes, [](auto& x) { return ofl::maximum(x[0], x[1]); }, {a, b}, round);
    CheckGradients(
        "minimum " + shapes, [](auto& x) { return ofl::minimum(x[1], x[0]); }, {a, b}, round);
    CheckGradients(
        "where " + shapes, [](auto& x) { return ofl::where(x[1] > 0, x[0], x[1]); }, {a, b}, round);
    CheckGradients(
        "clamp " + Str(a), [](auto& x) { return ofl::clamp(x[0], -1.2, 1.1); }, {a}, round);
    CheckGradients(
        "clamp_min " + Str(a), [](auto& x) { return ofl::clamp_min(x[0], 0.3) * x[0]; }, {a},
        round);
    CheckGradients(
        "clamp_max " + Str(a), [](auto& x) { return ofl::clamp_max(x[0], -0.2); }, {a}, round);
  }
  CheckGradients(
      "maximum of permuted, narrowed inputs",
      [](auto& x) {
        return ofl::maximum(x[0].permute({1, 0}).narrow(0, 1, 2), x[1]);
      },
      {{3, 4}, {3}}, 99);
}

// The reductions beyond sum over random dim sets (random values: no ties).
TEST(GradCheckTest, Reductions) {
  std::mt19937_64 rng(29);
  for (int round = 0; round < 8; ++round) {
    const Dims s = RandomShape(rng, false);
    std::vector<int64_t> dims;
    for (size_t d = 0; d < s.size(); ++d) {
      if (rng() % 2) dims.push_back(static_cast<int64_t>(d));
    }
    const bool keep = round % 2;
    const std::string what = Str(s) + " over " + Str(dims) + (keep ? " keepdim" : "");
    CheckGradients(
        "mean " + what, [&](auto& x) { return ofl::mean(x[0], dims, keep); }, {s}, round);
    CheckGradients(
        "logsumexp " + what, [&](auto& x) { return ofl::logsumexp(x[0], dims, keep); }, {s}, round);
    if (Numel(s) == 0) continue;
    CheckGradients(
        "amax " + what, [&](auto& x) { return ofl::amax(x[0], dims, keep); }, {s}, round);
    CheckGradients(
        "amin " + what, [&](auto& x) { return ofl::amin(x[0], dims, keep); }, {s}, round);
    if (s.empty()) continue;
    const int64_t d = static_cast<int64_t>(rng() % s.size());
    CheckGradients(
        "max along " + std::to_string(d) + " of " + Str(s),
        [&](auto& x) { return std::get<0>(ofl::max(x[0], d, keep)); }, {s}, round);
  }
}

TEST(GradCheckTest, MatrixProducts) {
  // matmul's every shape rule (1-dim operands, batches broadcast or folded), transposed and
  // broadcast operands (read in place, or copied first), empty sizes, linear with its bias.
  const std::vector<std::pair<Dims, Dims>> cases = {
      {{3}, {3}},       {{2, 3}, {3}},       {{3}, {3, 4}},         {{2, 3}, {3, 4}},
      {{2, 2, 3}, {3}}, {{2, 2, 3}, {3, 4}}, {{3}, {2, 3, 4}},      {{2, 1, 2, 3}, {3, 3, 2}},
      {{2, 0}, {0, 3}}, {{0, 2}, {2, 3}},    {{2, 2, 3}, {2, 3, 1}}};
  int seed = 0;
  for (const auto& [a, b] : cases) {
    const std::string shapes = Str(a) + " @ " + Str(b);
    CheckGradients(
        "matmul " + shapes, [](auto& x) { return matmul(x[0], x[1]); }, {a, b}, ++seed);
  }
  CheckGradients(
      "mm of transposed operands",
      [](auto& x) {
        return mm(x[0].permute({1, 0}), x[1].permute({1, 0}));
      },
      {{3, 2}, {4, 3}}, ++seed);
  CheckGradients(
      "mm of a broadcast operand",
      [](auto& x) {
        return mm(x[0].expand({2, 3}), x[1]);
      },
      {{3}, {3, 2}}, ++seed);
  CheckGradients(
      "bmm of a narrowed operand", [](auto& x) { return bmm(x[0].narrow(2, 1, 3), x[1]); },
      {{2, 2, 5}, {2, 3, 2}}, ++seed);
  CheckGradients(
      "linear", [](auto& x) { return linear(x[0], x[1], x[2]); }, {{4, 3}, {2, 3}, {2}}, ++seed);
  CheckGradients(
      "linear of a batch, no bias", [](auto& x) { return linear(x[0], x[1]); }, {{2, 4, 3}, {2, 3}},
      ++seed);
}

TEST(GradCheckTest, SoftmaxAndLosses) {
  std::mt19937_64 rng(31);
  for (int round = 0; round < 8; ++round) {
    const Dims s = RandomShape(rng, round % 4 == 3);
    const int64_t d = s.empty() ? 0 : static_cast<int64_t>(rng() % s.size()) - (round % 2);
    const std::string what = Str(s) + " along " + std::to_string(d);
    CheckGradients(
        "softmax " + what, [d](auto& x) { return ofl::softmax(x[0], d); }, {s}, round);
    CheckGradients(
        "log_softmax " + what, [d](auto& x) { return ofl::log_softmax(x[0], d); }, {s}, round);
    CheckGradients(
        "softmax of a permuted input",
        [](auto& x) {
          return ofl::softmax(x[0].permute({1, 0}), 1);
        },
        {{2, 3}}, round);
    const Dims t = Partner(rng, s);
    for (const char* r : {"none", "mean", "sum"}) {
      CheckGradients(
          std::string("mse_loss ") + r + " " + Str(s) + " and " + Str(t),
          [r](auto& x) { return ofl::mse_loss(x[0], x[1], r); }, {s, t}, round);
    }
  }
}

TEST(GradCheckTest, ClassLosses) {
  const Tensor t = ofl::tensor<int64_t>({2, 0, -100, 1}, Shape({4}), TestDevice());
  for (const char* r : {"none", "mean", "sum"}) {
    CheckGradients(
        std::string("cross_entropy ") + r,
        [&](auto& x) { return ofl::cross_entropy(x[0], t, Tensor(), r); }, {{4, 3}}, 1);
    CheckGradients(
        std::string("cross_entropy weighted, smoothed ") + r,
        [&](auto& x) { return ofl::cross_entropy(x[0], t, x[1], r, -100, 0.2); }, {{4, 3}, {3}}, 2);
    CheckGradients(
        std::string("nll_loss ") + r, [&](auto& x) { return ofl::nll_loss(x[0], t, x[1], r); },
        {{4, 3}, {3}}, 3);
  }
  CheckGradients(
      "cross_entropy of probabilities",
      [&](auto& x) { return ofl::cross_entropy(x[0], ofl::softmax(x[1], 1)); }, {{2, 3}, {2, 3}},
      4);
  CheckGradients(
      "index_select",
      [&](auto& x) {
        return ofl::index_select(x[0], 1,
                                 ofl::tensor<int64_t>({2, 0, 2}, Shape({3}), TestDevice()));
      },
      {{2, 3}}, 5);
}

TEST(GradCheckTest, GatherAndScatterAdd) {
  // Repeated index values: the gradient of an element gathered twice adds both.
  const Tensor index = ofl::tensor<int64_t>({0, 2, 2, 1, 1, 1, 0, 0}, Shape({2, 4}), TestDevice());
  CheckGradients(
      "gather along 1", [&](auto& x) { return ofl::gather(x[0], 1, index); }, {{2, 3}}, 1);
  CheckGradients(
      "gather along 0 of a permuted input",
      [&](auto& x) {
        return ofl::gather(x[0].permute({1, 0}), 0, index.narrow(1, 0, 3));
      },
      {{3, 3}}, 2);
  CheckGradients(
      "scatter_add along 1",
      [&](auto& x) { return ofl::scatter_add(x[0], 1, index.narrow(1, 0, 3), x[1]); },
      {{2, 3}, {2, 3}}, 3);
  const Tensor scalar_index = ofl::tensor<int64_t>({0}, Shape({}), TestDevice());
  CheckGradients(
      "gather of a 0-dim tensor", [&](auto& x) { return ofl::gather(x[0], 0, scalar_index); }, {{}},
      4);
}

TEST(GradCheckTest, ShapeOps) {
  CheckGradients(
      "cat along 1 of a permuted, a narrowed and a legacy empty input",
      [](auto& x) {
        return ofl::cat({x[0].permute({1, 0}), x[1].narrow(1, 1, 2), x[2]}, 1);
      },
      {{3, 2}, {2, 4}, {0}}, 1);
  CheckGradients(
      "cat along -1 of a 0-size input",
      [](auto& x) {
        return ofl::cat({x[0], x[1]}, -1);
      },
      {{2, 0}, {2, 3}}, 2);
  CheckGradients(
      "stack along 1",
      [](auto& x) {
        return ofl::stack({x[0], x[1], x[0]}, 1);
      },
      {{2, 3}, {2, 3}}, 3);
  CheckGradients(
      "split and chunk",
      [](auto& x) {
        const std::vector<Tensor> a = ofl::split(x[0], 2, 1);
        const std::vector<Tensor> b = x[0].chunk(2, 0);
        return a[0] * a[1].narrow(1, 0, 2) + b[1].sum({0}, true).narrow(1, 0, 2) * a[2].sum();
      },
      {{4, 5}}, 4);
  CheckGradients(
      "flatten, squeeze and unsqueeze",
      [](auto& x) {
        return ofl::flatten(x[0].permute({2, 0, 1}), 1).unsqueeze(0) * x[1].squeeze().unsqueeze(-1);
      },
      {{2, 1, 3}, {1, 3, 1}}, 5);
  CheckGradients(
      "flatten of a 0-dim tensor", [](auto& x) { return ofl::flatten(x[0]) * 2.0; }, {{}}, 6);
}

TEST(GradCheckTest, SecondDerivativesThroughCreateGraph) {
  const std::vector<std::pair<std::string, Fn>> cases = {
      {"mul and div", [](auto& x) { return x[0] * x[1] / (x[1] * x[1] + 1.0); }},
      {"exp, log, sqrt",
       [](auto& x) { return exp(x[0] * 0.3) + log(x[1] * x[1]) + sqrt(x[1] * x[1]); }},
      {"tanh, sigmoid, sin, cos",
       [](auto& x) { return tanh(x[0]) * sigmoid(x[1]) + sin(x[0]) * cos(x[1]); }},
      {"gelu, silu, erf",
       [](auto& x) { return gelu(x[0]) + gelu(x[1], "tanh") + silu(x[0] * x[1]) + erf(x[1]); }},
      {"pow", [](auto& x) { return pow(abs(x[0]) + 0.5, x[1]) + pow(x[1], 3.0); }},
      {"reductions",
       [](auto& x) {
         return x[0].sum({1}, true) * x[1] + mean(x[1] * x[1], {0}) +
                logsumexp(x[0] * x[1], {1}, true);
       }},
      {"views and shapes",
       [](auto& x) {
         return (x[0].permute({1, 0}).reshape({6}) * x[1].flatten()).expand({2, 6}) +
                cat({x[0].narrow(1, 0, 2), x[1]}, 1).sum({1}, true).expand({2, 6});
       }},
      {"maximum, where, clamp",
       [](auto& x) {
         return maximum(x[0], x[1]) * x[0] + where(x[0] > 0.0, x[1] * x[1], x[0]) +
                clamp(x[0] * x[1], -1, 1);
       }},
  };
  uint64_t seed = 10;
  for (const auto& [name, f] : cases) CheckSecondDerivatives(name, f, {{2, 3}, {2, 3}}, seed++);
  CheckSecondDerivatives(
      "matmul and linear",
      [](auto& x) {
        return ofl::linear(tanh(ofl::matmul(x[0], x[1])), x[1].permute({1, 0}));
      },
      {{2, 3}, {3, 3}}, 20);
  CheckSecondDerivatives(
      "softmax, log_softmax", [](auto& x) { return softmax(x[0], 1) * log_softmax(x[1], 0); },
      {{2, 3}, {2, 3}}, 21);
  const Tensor target = ofl::tensor<int64_t>({2, 0}, Shape({2}), TestDevice());
  CheckSecondDerivatives(
      "cross_entropy with label smoothing",
      [&](auto& x) { return cross_entropy(x[0] * x[1], target, Tensor(), "mean", -100, 0.1); },
      {{2, 3}, {2, 3}}, 22);
  CheckSecondDerivatives(
      "cross_entropy fused (mean, an ignored row)",
      [&](auto& x) {
        const Tensor t3 = ofl::tensor<int64_t>({2, -100}, Shape({2}), TestDevice());
        // Scaled by a function of x: the backward's incoming gradient has a history too.
        return cross_entropy(x[0] * x[1], t3) * x[0].sum() +
               cross_entropy(x[1], target, Tensor(), "sum");
      },
      {{2, 3}, {2, 3}}, 28);
  CheckSecondDerivatives(
      "linear with its bias (one node)",
      [](auto& x) {
        return ofl::linear(tanh(x[0]), x[1], x[1].narrow(1, 0, 1).reshape({2}) * 2.0);
      },
      {{2, 3}, {2, 3}}, 29);
  CheckSecondDerivatives(
      "mse_loss", [](auto& x) { return mse_loss(x[0] * x[0], x[1]); }, {{2, 3}, {2, 3}}, 23);
  const Tensor index = ofl::tensor<int64_t>({0, 2, 2, 1}, Shape({2, 2}), TestDevice());
  CheckSecondDerivatives(
      "gather only",
      [&](auto& x) { return ofl::gather(x[0] * x[0], 1, index) * x[1].narrow(1, 0, 2); },
      {{2, 3}, {2, 3}}, 25);
  CheckSecondDerivatives(
      "repeat only",
      [&](auto& x) {
        return (x[0] * x[0]).repeat({1, 2}) * x[1].repeat({1, 2});
      },
      {{2, 3}, {2, 3}}, 26);
  CheckSecondDerivatives(
      "scatter_add only",
      [&](auto& x) {
        return ofl::scatter_add(x[0] * x[0], 1, index, x[1].narrow(1, 0, 2) * x[0].narrow(1, 0, 2));
      },
      {{2, 3}, {2, 3}}, 27);
  CheckSecondDerivatives(
      "gather and repeat",
      [&](auto& x) {
        return ofl::gather(x[0] * x[0], 1, index).repeat({1, 2}) * x[1].narrow(1, 0, 1);
      },
      {{2, 3}, {2, 3}}, 24);
}

TEST(GradCheckTest, CreateGraphKeepsTheGradsHistoryForBackward) {
  // d/dx of (d/dx x^3)^2 = d/dx 9 x^4 = 36 x^3, through backward(create_graph) and .grad.
  Tensor x = Make({1.5, -2.0}, {2}, true);
  autograd::backward({(x * x * x).sum()}, {}, false, /*create_graph=*/true);
  const Tensor g = x.grad();
  ASSERT_TRUE(g.requires_grad());
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{3 * 1.5 * 1.5, 3 * 4.0}));
  x.set_grad(Tensor());
  (g * g).sum().backward();
  const std::vector<double> gg = x.grad().to_vector<double>();
  EXPECT_NEAR(gg[0], 36 * 1.5 * 1.5 * 1.5, 1e-12);
  EXPECT_NEAR(gg[1], 36 * -8.0, 1e-12);
  ExpectThrowWith<InvalidArgument>([] { autograd::backward({}); }, {"backward: no tensors given"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        autograd::backward({(x * 2.0).sum()}, {Tensor(), Tensor()});
      },
      {"backward: 2 gradients for 1 tensors"});
  // Without create_graph the grad has no history.
  Tensor y = Make({2.0}, {1}, true);
  (y * y).sum().backward();
  EXPECT_FALSE(y.grad().requires_grad());
}

TEST(GradCheckTest, RandomProgramsGiveTheSameBitsOnCpuAndSim) {
  for (uint64_t seed = 0; seed < 40; ++seed) {
    auto run = [seed](const Device& d) {
      std::mt19937_64 rng(seed);
      return grad_program::Run([&rng](int64_t n) { return static_cast<int64_t>(rng() % n); }, d);
    };
    const grad_program::Result cpu = run(Device("cpu"));
    const grad_program::Result sim = run(Device("sim:0"));
    EXPECT_EQ(cpu.grad_bits, sim.grad_bits) << "seed " << seed << ":" << cpu.trace;
  }
}

}  // namespace
}  // namespace ofl::testing
