// Random numbers through the public API on the test device: a seed repeats its draws, cpu and sim
// give the same numbers, saved generator states restore, each device type has its own generator;
// the distributions' ranges and moments, randint's bounds, randperm a permutation, uniform_ and
// normal_ in place (strided too), bernoulli and dropout (mask, scale, gradient), and the errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "oneflow_lite/random.h"
#include "tests/functional/functional_test_util.h"

namespace ofl::testing {
namespace {

double Mean(const std::vector<float>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}
double Var(const std::vector<float>& v) {
  const double m = Mean(v);
  double s = 0;
  for (float x : v) s += (x - m) * (x - m);
  return s / static_cast<double>(v.size());
}

TEST(RandomTest, ASeedRepeatsItsDraws) {
  manual_seed(123);
  const std::vector<float> a = rand(Shape({100}), DType::kFloat32, TestDevice()).to_vector<float>();
  const std::vector<float> b =
      randn(Shape({7, 3}), DType::kFloat32, TestDevice()).to_vector<float>();
  manual_seed(123);
  EXPECT_EQ(rand(Shape({100}), DType::kFloat32, TestDevice()).to_vector<float>(), a);
  EXPECT_EQ(randn(Shape({7, 3}), DType::kFloat32, TestDevice()).to_vector<float>(), b);
  EXPECT_NE(rand(Shape({100}), DType::kFloat32, TestDevice()).to_vector<float>(), a);
  EXPECT_EQ(initial_seed(TestDevice().type()), 123u);
}

TEST(RandomTest, CpuAndSimDrawTheSameNumbers) {
  for (uint64_t seed : {0ull, 5ull, 1ull << 40}) {
    manual_seed(seed);
    const Tensor c1 = randn(Shape({33, 5}), DType::kFloat64, Device("cpu"));
    const Tensor c2 = randint(-4, 9, Shape({40}), DType::kInt32, Device("cpu"));
    const Tensor c3 = randperm(50, DType::kInt64, Device("cpu"));
    manual_seed(seed);
    const Tensor s1 = randn(Shape({33, 5}), DType::kFloat64, Device("sim:0"));
    const Tensor s2 = randint(-4, 9, Shape({40}), DType::kInt32, Device("sim:0"));
    const Tensor s3 = randperm(50, DType::kInt64, Device("sim:0"));
    EXPECT_EQ(c1.to_vector<double>(), s1.to_vector<double>());
    EXPECT_EQ(c2.to_vector<int32_t>(), s2.to_vector<int32_t>());
    EXPECT_EQ(c3.to_vector<int64_t>(), s3.to_vector<int64_t>());
  }
}

TEST(RandomTest, StatesSaveAndRestoreEachDeviceTypesGenerator) {
  manual_seed(7);
  const RngState saved = get_rng_state(TestDevice().type());
  const std::vector<float> a = rand(Shape({10}), DType::kFloat32, TestDevice()).to_vector<float>();
  EXPECT_EQ(get_rng_state(TestDevice().type()).offset, saved.offset + 10);
  set_rng_state(saved, TestDevice().type());
  EXPECT_EQ(rand(Shape({10}), DType::kFloat32, TestDevice()).to_vector<float>(), a);
  // Another device type's draws leave this one's generator alone.
  const DeviceType other = TestDevice().is_cpu() ? DeviceType::kSim : DeviceType::kCPU;
  const RngState before = get_rng_state(TestDevice().type());
  (void)rand(Shape({5}), DType::kFloat32, Device(other, 0)).to_vector<float>();
  EXPECT_EQ(get_rng_state(TestDevice().type()), before);
}

TEST(RandomTest, DistributionsHaveTheirRangesAndMoments) {
  manual_seed(2026);
  const std::vector<float> u =
      rand(Shape({20000}), DType::kFloat32, TestDevice()).to_vector<float>();
  EXPECT_GE(*std::min_element(u.begin(), u.end()), 0.0f);
  EXPECT_LT(*std::max_element(u.begin(), u.end()), 1.0f);
  EXPECT_NEAR(Mean(u), 0.5, 0.01);
  EXPECT_NEAR(Var(u), 1.0 / 12, 0.005);
  const std::vector<float> z =
      randn(Shape({20000}), DType::kFloat32, TestDevice()).to_vector<float>();
  EXPECT_NEAR(Mean(z), 0.0, 0.03);
  EXPECT_NEAR(Var(z), 1.0, 0.05);
  const std::vector<int64_t> r =
      randint(-3, 4, Shape({5000}), DType::kInt64, TestDevice()).to_vector<int64_t>();
  std::vector<int> hits(7, 0);
  for (int64_t v : r) {
    ASSERT_GE(v, -3);
    ASSERT_LT(v, 4);
    ++hits[static_cast<size_t>(v + 3)];
  }
  for (int h : hits) EXPECT_GT(h, 550);  // 714 expected for each value
  std::vector<int64_t> p = randperm(1000, DType::kInt64, TestDevice()).to_vector<int64_t>();
  std::vector<int64_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> iota(1000);
  std::iota(iota.begin(), iota.end(), 0);
  EXPECT_EQ(sorted, iota);
  EXPECT_NE(p, iota);
  EXPECT_EQ(randperm(0, DType::kInt64, TestDevice()).numel(), 0);
  EXPECT_EQ(randperm(5, DType::kFloat32, TestDevice()).dtype(), DType::kFloat32);
}

TEST(RandomTest, InPlaceFillsAndLikeFunctions) {
  manual_seed(11);
  Tensor t = zeros(Shape({4, 6}), DType::kFloat64, TestDevice());
  t.uniform_(-2, -1);
  for (double v : t.to_vector<double>()) {
    EXPECT_GE(v, -2);
    EXPECT_LT(v, -1);
  }
  // A strided view: its elements drawn, the rest of the storage kept.
  Tensor base = zeros(Shape({4, 6}), DType::kFloat32, TestDevice());
  Tensor col = base.narrow(1, 2, 1);
  col.normal_(10, 0.5);
  const std::vector<float> all = base.to_vector<float>();
  for (int64_t i = 0; i < 24; ++i) {
    if (i % 6 == 2) {
      EXPECT_NEAR(all[i], 10, 3);
    } else {
      EXPECT_EQ(all[i], 0);
    }
  }
  const Tensor x = ones(Shape({3, 2}), DType::kFloat64, TestDevice());
  EXPECT_EQ(rand_like(x).dtype(), DType::kFloat64);
  EXPECT_EQ(randn_like(x, DType::kFloat16).shape(), Shape({3, 2}));
  EXPECT_EQ(randn_like(x).device(), TestDevice());
}

TEST(RandomTest, BernoulliAndDropout) {
  manual_seed(99);
  const Tensor probs = full(Shape({10000}), 0.3, DType::kFloat32, TestDevice());
  const std::vector<float> b = bernoulli(probs).to_vector<float>();
  EXPECT_NEAR(Mean(b), 0.3, 0.02);
  for (float v : b) ASSERT_TRUE(v == 0 || v == 1);
  EXPECT_NEAR(Mean(bernoulli(probs, 0.9).to_vector<float>()), 0.9, 0.02);

  Tensor x = full(Shape({2000}), 2.0, DType::kFloat64, TestDevice()).requires_grad_();
  const Tensor y = dropout(x, 0.25);
  const std::vector<double> yv = y.to_vector<double>();
  int zeros_seen = 0;
  for (double v : yv) {
    if (v == 0) {
      ++zeros_seen;
    } else {
      ASSERT_DOUBLE_EQ(v, 2.0 / 0.75);
    }
  }
  EXPECT_NEAR(zeros_seen / 2000.0, 0.25, 0.04);
  y.sum().backward();
  const std::vector<double> g = x.grad().to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) ASSERT_DOUBLE_EQ(g[i], yv[i] == 0 ? 0.0 : 1.0 / 0.75);
  const Tensor same = dropout(x, 0.5, /*training=*/false);
  EXPECT_EQ(same.to_vector<double>(), x.to_vector<double>());
  EXPECT_EQ(dropout(x, 1.0).to_vector<double>(), std::vector<double>(2000, 0.0));
}

TEST(RandomTest, ErrorsNameTheFunctionAndTheValues) {
  ExpectThrowWith<InvalidArgument>([] { rand(Shape({2}), DType::kInt32); },
                                   {"rand", "int32", "float dtype"});
  ExpectThrowWith<InvalidArgument>([] { randn(Shape({-1})); }, {"randn", "negative"});
  ExpectThrowWith<InvalidArgument>([] { randint(3, 3, Shape({2})); },
                                   {"randint", "high 3", "low 3"});
  ExpectThrowWith<InvalidArgument>([] { randint(INT64_MIN, INT64_MAX, Shape({2})); },
                                   {"randint", "wider than 2^63 - 1"});
  ExpectThrowWith<InvalidArgument>([] { randperm(-1); }, {"randperm", "-1"});
  ExpectThrowWith<InvalidArgument>([] { randperm(257, DType::kUInt8); },
                                   {"randperm: n 257 is too large for dtype uint8 (at most 256"});
  ExpectThrowWith<InvalidArgument>([] { randperm(2049, DType::kFloat16); },
                                   {"randperm", "float16", "at most 2048"});
  EXPECT_EQ(randperm(256, DType::kUInt8, TestDevice()).numel(), 256);
  ExpectThrowWith<InvalidArgument>([] { ones(Shape({2}), DType::kInt64).uniform_(); },
                                   {"uniform_", "int64"});
  ExpectThrowWith<InvalidArgument>([] { ones(Shape({2})).uniform_(1, 0); },
                                   {"uniform_", "from=1", "to=0"});
  ExpectThrowWith<InvalidArgument>([] { ones(Shape({2})).normal_(0, -1); }, {"normal_", "std=-1"});
  ExpectThrowWith<InvalidArgument>([] { dropout(ones(Shape({2})), 1.5); },
                                   {"dropout", "between 0 and 1", "1.5"});
  ExpectThrowWith<InvalidArgument>([] { bernoulli(ones(Shape({2})), -0.5); },
                                   {"bernoulli", "-0.5"});
  ExpectThrowWith<InvalidArgument>([] { rand_like(ones(Shape({2}), DType::kInt32)); },
                                   {"rand_like", "int32"});
  ExpectThrowWith<InvalidArgument>(
      [] {
        Tensor w = ones(Shape({2})).requires_grad_();
        w.uniform_();
      },
      {"uniform_", "a leaf that requires grad"});
  ExpectRuntimeWorks();
}

}  // namespace
}  // namespace ofl::testing
