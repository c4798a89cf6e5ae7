// The matrix products through the public API, on the test device: mm, bmm, matmul's shape rules
// (1-dim operands, batches broadcast and folded), linear, transposed operands read in place (no
// copy recorded) and others copied first, every dtype's values, and the errors.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tests/functional/functional_test_util.h"

namespace ofl::testing {
namespace {

Tensor F64(const std::vector<double>& v, const Shape& shape) {
  return tensor<double>(v, shape, TestDevice());
}

// 0, 1, 2, ... in `shape`, as float64.
Tensor Iota(const Shape& shape) {
  std::vector<double> v(static_cast<size_t>(shape.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  return F64(v, shape);
}

// The product of row-major a (m x k) and b (k x n) written out.
std::vector<double> Product(const std::vector<double>& a, const std::vector<double>& b, int64_t m,
                            int64_t k, int64_t n) {
  std::vector<double> c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t q = 0; q < k; ++q) c[i * n + j] += a[i * k + q] * b[q * n + j];
    }
  }
  return c;
}

void ExpectInvalidArgument(const std::function<void()>& fn, const std::string& piece) {
  ExpectThrowWith<InvalidArgument>(fn, {piece});
}

TEST(MatmulTest, MmAndBmm) {
  Tensor a = Iota(Shape({2, 3})), b = Iota(Shape({3, 4}));
  const Tensor c = mm(a, b);
  EXPECT_EQ(c.shape(), Shape({2, 4}));
  EXPECT_EQ(c.to_vector<double>(), Product(a.to_vector<double>(), b.to_vector<double>(), 2, 3, 4));
  EXPECT_EQ(a.mm(b).to_vector<double>(), c.to_vector<double>());
  Tensor ba = Iota(Shape({2, 2, 3})), bb = Iota(Shape({2, 3, 2}));
  const std::vector<double> got = bmm(ba, bb).to_vector<double>();
  const std::vector<double> av = ba.to_vector<double>(), bv = bb.to_vector<double>();
  for (int i = 0; i < 2; ++i) {
    const std::vector<double> want =
        Product(std::vector<double>(av.begin() + 6 * i, av.begin() + 6 * i + 6),
                std::vector<double>(bv.begin() + 6 * i, bv.begin() + 6 * i + 6), 2, 3, 2);
    EXPECT_EQ(std::vector<double>(got.begin() + 4 * i, got.begin() + 4 * i + 4), want);
  }
}

TEST(MatmulTest, MatmulShapeRules) {
  const Tensor v3 = Iota(Shape({3})), m23 = Iota(Shape({2, 3})), m34 = Iota(Shape({3, 4}));
  EXPECT_EQ(matmul(v3, v3).shape(), Shape({}));
  EXPECT_EQ(matmul(v3, v3).to_vector<double>(), (std::vector<double>{5}));
  EXPECT_EQ(matmul(m23, v3).shape(), Shape({2}));
  EXPECT_EQ(matmul(m23, v3).to_vector<double>(), (std::vector<double>{5, 14}));
  EXPECT_EQ(matmul(v3, m34).shape(), Shape({4}));
  EXPECT_EQ(matmul(v3, m34).to_vector<double>(), (std::vector<double>{20, 23, 26, 29}));
  EXPECT_EQ(m23.matmul(m34).to_vector<double>(), mm(m23, m34).to_vector<double>());
  // A batch by a matrix (folded into the rows), a vector by a batch, broadcast batches.
  const Tensor b = Iota(Shape({2, 2, 3}));
  EXPECT_EQ(matmul(b, m34).shape(), Shape({2, 2, 4}));
  EXPECT_EQ(matmul(b, v3).shape(), Shape({2, 2}));
  EXPECT_EQ(matmul(b, v3).to_vector<double>(), (std::vector<double>{5, 14, 23, 32}));
  EXPECT_EQ(matmul(v3, Iota(Shape({2, 3, 4}))).shape(), Shape({2, 4}));
  const Tensor lhs = Iota(Shape({2, 1, 2, 3})), rhs = Iota(Shape({3, 3, 2}));
  const Tensor out = matmul(lhs, rhs);
  EXPECT_EQ(out.shape(), Shape({2, 3, 2, 2}));
  // Entry (1, 2) is lhs[1, 0] @ rhs[2].
  const Tensor want = mm(lhs.narrow(0, 1, 1).reshape({2, 3}), rhs.narrow(0, 2, 1).reshape({3, 2}));
  EXPECT_EQ(out.narrow(0, 1, 1).narrow(1, 2, 1).reshape({2, 2}).to_vector<double>(),
            want.to_vector<double>());
  // Empty sizes: k = 0 gives zeros.
  EXPECT_EQ(matmul(zeros(Shape({2, 0}), DType::kFloat64, TestDevice()),
                   zeros(Shape({0, 3}), DType::kFloat64, TestDevice()))
                .to_vector<double>(),
            std::vector<double>(6, 0.0));
  EXPECT_EQ(matmul(Iota(Shape({0, 3})), m34).shape(), Shape({0, 4}));
}

TEST(MatmulTest, TransposedOperandsAreReadInPlace) {
  const Tensor a = Iota(Shape({3, 2})), b = Iota(Shape({4, 3}));
  const Tensor at = a.permute({1, 0}), bt = b.permute({1, 0});
  const std::vector<double> want =
      Product(at.contiguous().to_vector<double>(), bt.contiguous().to_vector<double>(), 2, 3, 4);
  EXPECT_EQ(mm(at, bt).to_vector<double>(), want);
  // A broadcast (stride 0) operand and a narrowed one with a gap are copied or read with ld.
  const Tensor row = Iota(Shape({3})).expand({2, 3});
  EXPECT_EQ(mm(row, b.permute({1, 0})).to_vector<double>(),
            mm(row.contiguous(), b.permute({1, 0}).contiguous()).to_vector<double>());
  const Tensor wide = Iota(Shape({2, 5}));
  EXPECT_EQ(mm(wide.narrow(1, 1, 3), b.permute({1, 0})).to_vector<double>(),
            mm(wide.narrow(1, 1, 3).contiguous(), b.permute({1, 0})).to_vector<double>());
  // An every-other-column view has no GEMM layout: copied, same values.
  const Tensor every_other = Iota(Shape({2, 6})).reshape({2, 3, 2}).narrow(2, 0, 1).reshape({2, 3});
  EXPECT_EQ(mm(every_other, Iota(Shape({3, 1}))).to_vector<double>(),
            mm(every_other.contiguous(), Iota(Shape({3, 1}))).to_vector<double>());
}

TEST(MatmulTest, EveryDTypeGivesItsOwnDType) {
  for (DType d : {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kUInt8, DType::kInt8,
                  DType::kInt16, DType::kInt32, DType::kInt64}) {
    const Tensor a = Iota(Shape({2, 3})).to(d), b = Iota(Shape({3, 2})).to(d);
    const Tensor c = mm(a, b);
    EXPECT_EQ(c.dtype(), d);
    EXPECT_EQ(c.to(DType::kFloat64).to_vector<double>(), (std::vector<double>{10, 13, 28, 40}))
        << to_string(d);
  }
}

TEST(MatmulTest, Linear) {
  const Tensor x = Iota(Shape({2, 3})), w = Iota(Shape({4, 3})),
               bias = F64({1, 2, 3, 4}, Shape({4}));
  const Tensor y = linear(x, w, bias);
  EXPECT_EQ(y.shape(), Shape({2, 4}));
  const std::vector<double> xw =
      Product(x.to_vector<double>(), w.permute({1, 0}).contiguous().to_vector<double>(), 2, 3, 4);
  std::vector<double> want = xw;
  for (size_t i = 0; i < want.size(); ++i) want[i] += static_cast<double>(i % 4 + 1);
  EXPECT_EQ(y.to_vector<double>(), want);
  EXPECT_EQ(linear(x, w).to_vector<double>(), xw);
  EXPECT_EQ(linear(Iota(Shape({5, 2, 3})), w).shape(), Shape({5, 2, 4}));
  EXPECT_EQ(linear(x, Iota(Shape({3}))).shape(), Shape({2}));
  // The gradients reach the weight and bias.
  Tensor wg = Iota(Shape({4, 3})).requires_grad_();
  Tensor bg = F64({0, 0, 0, 0}, Shape({4})).requires_grad_();
  linear(x, wg, bg).sum().backward();
  EXPECT_EQ(bg.grad().to_vector<double>(), (std::vector<double>{2, 2, 2, 2}));
  EXPECT_EQ(wg.grad().to_vector<double>(),
            (std::vector<double>{3, 5, 7, 3, 5, 7, 3, 5, 7, 3, 5, 7}));
}

TEST(MatmulTest, ErrorsNameTheOpAndTheShapes) {
  const Tensor m23 = Iota(Shape({2, 3})), m24 = Iota(Shape({2, 4}));
  ExpectInvalidArgument([&] { mm(m23, m24); },
                        "mm: input (2,3) and mat2 (2,4) cannot be multiplied (3 columns against 2 "
                        "rows)");
  ExpectInvalidArgument([&] { mm(m23, Iota(Shape({3}))); },
                        "mm: mat2 must be a 2-dim tensor, got shape (3)");
  ExpectInvalidArgument([&] { bmm(m23, m23); },
                        "bmm: input must be a 3-dim tensor, got shape (2,3)");
  ExpectInvalidArgument(
      [&] {
        bmm(Iota(Shape({2, 2, 3})), Iota(Shape({3, 3, 2})));
      },
      "bmm: input (2,2,3) and mat2 (3,3,2) cannot be multiplied (batch sizes "
      "differ)");
  ExpectInvalidArgument(
      [&] {
        mm(m23, Iota(Shape({3, 2})).to(DType::kFloat32));
      },
      "mm: expected input and mat2 to have the same dtype, got float64 and float32");
  ExpectInvalidArgument(
      [&] {
        mm(m23.to(DType::kBool), m23.to(DType::kBool).permute({1, 0}));
      },
      "mm: dtype bool is not supported");
  ExpectInvalidArgument([&] { matmul(m23, m24); },
                        "matmul: shapes (2,3) and (2,4) cannot be multiplied (3 columns against 2 "
                        "rows)");
  ExpectInvalidArgument([&] { matmul(Iota(Shape({3})), F64({2}, Shape({}))); },
                        "matmul: both arguments need at least 1 dim, got shapes (3) and ()");
  ExpectInvalidArgument(
      [&] {
        matmul(Iota(Shape({2, 2, 3})), Iota(Shape({3, 3, 2})));
      },
      "matmul: ");
  ExpectInvalidArgument(
      [&] {
        linear(m23, Iota(Shape({1, 4, 3})));
      },
      "linear: weight must have 1 or 2 dims, got shape (1,4,3)");
  // The runtime keeps working after each refusal.
  EXPECT_EQ(mm(m23, Iota(Shape({3, 1}))).to_vector<double>(), (std::vector<double>{5, 14}));
}

}  // namespace
}  // namespace ofl::testing
