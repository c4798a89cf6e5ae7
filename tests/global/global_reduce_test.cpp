// Reductions and the softmax family on global tensors: sum, mean, amax, amin, logsumexp (over
// every set of dims, with and without keepdim), softmax and log_softmax (along every dim) give, for
// every input SBP, the logical value the same op gives on the whole tensor locally, with the output
// SBP of ops/sbp_rules.h's InferReduceSbp (a split on a summed dim gives partial sums; sum and
// mean keep a partial_sum; the others box what cannot pass to broadcast first).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "global_test_util.h"
#include "oneflow_lite/oneflow_lite.h"
#include "oneflow_lite/reductions.h"

namespace ofl::testing {
namespace {

using Op = std::function<Tensor(const Tensor&)>;

// For every SBP of an input of `shape`: op(global) == op(local whole tensor), and the output SBP
// is `want_sbp(in_sbp)`.
void Check(const std::string& name, const Shape& shape, const Op& op,
           const std::function<Sbp(const Sbp&)>& want_sbp) {
  const std::vector<float> v = Logical<float>(shape);
  const std::vector<float> want = op(tensor<float>(v, shape, Device("cpu"))).to_vector<float>();
  for (const Sbp& s : AllSbps(shape)) {
    SCOPED_TRACE(name + " of " + shape.str() + " " + s.str());
    const Tensor y = op(GlobalOf(v, shape, s));
    ASSERT_TRUE(y.is_global());
    EXPECT_EQ(y.sbp(), want_sbp(s)) << y.sbp().str();
    ExpectClose(y.to_vector<float>(), want);
  }
}

TEST(GlobalReduceTest, SumAndMeanOverEveryDimSet) {
  const Shape shape({5, 2, 3});
  const std::vector<std::vector<int64_t>> dim_sets = {{}, {0}, {1}, {2}, {0, 2}, {-1, 1}};
  for (const std::vector<int64_t>& dims : dim_sets) {
    for (bool keepdim : {false, true}) {
      std::vector<bool> reduced(3, dims.empty());
      for (int64_t d : dims) reduced[static_cast<size_t>((d + 3) % 3)] = true;
      auto kept = [&](const Sbp& s) {
        int dropped = 0;
        for (int d = 0; d < s.axis(); ++d) dropped += reduced[static_cast<size_t>(d)] ? 1 : 0;
        return keepdim ? s : Sbp::split(s.axis() - dropped);
      };
      const std::string what =
          "dims " + std::to_string(dims.size()) + " keepdim " + std::to_string(keepdim);
      Check(
          "sum " + what, shape, [&](const Tensor& x) { return x.sum(dims, keepdim); },
          [&](const Sbp& s) {
            if (!s.is_split()) return s;
            return reduced[static_cast<size_t>(s.axis())] ? Sbp::partial_sum() : kept(s);
          });
      Check(
          "mean " + what, shape, [&](const Tensor& x) { return x.mean(dims, keepdim); },
          [&](const Sbp& s) {
            if (!s.is_split()) return s;
            return reduced[static_cast<size_t>(s.axis())] ? Sbp::broadcast() : kept(s);
          });
      Check(
          "amax " + what, shape, [&](const Tensor& x) { return amax(x, dims, keepdim); },
          [&](const Sbp& s) {
            if (!s.is_split()) return Sbp::broadcast();
            return reduced[static_cast<size_t>(s.axis())] ? Sbp::broadcast() : kept(s);
          });
      Check(
          "logsumexp " + what, shape,
          [&](const Tensor& x) { return logsumexp(x * 0.3, dims, keepdim); },
          [&](const Sbp& s) {
            if (!s.is_split()) return Sbp::broadcast();  // a partial x * 0.3 is reduced first
            return reduced[static_cast<size_t>(s.axis())] ? Sbp::broadcast() : kept(s);
          });
    }
  }
}

TEST(GlobalReduceTest, SoftmaxAndLogSoftmaxAlongEveryDim) {
  const Shape shape({5, 3});
  for (int64_t dim : {0, 1, -1}) {
    const int row = static_cast<int>((dim + 2) % 2);
    auto want = [row](const Sbp& s) {
      return s.is_split() && s.axis() != row ? s : Sbp::broadcast();
    };
    Check(
        "softmax " + std::to_string(dim), shape,
        [dim](const Tensor& x) { return softmax(x * 0.5, dim); }, want);
    Check(
        "log_softmax " + std::to_string(dim), shape,
        [dim](const Tensor& x) { return log_softmax(x * 0.5, dim); }, want);
  }
}

}  // namespace
}  // namespace ofl::testing
