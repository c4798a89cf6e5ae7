// The matrix products written by hand: mm and bmm, which hand their operands to the ops (ops/
// matmul_op.h) in place when the strides of the last two dims are a GEMM layout (kernels/
// matmul.h: a contiguous or transposed view) and as a contiguous copy otherwise; matmul, which maps
// torch.matmul's shapes onto them; linear.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/matmul.h"
#include "oneflow_lite/error.h"
#include "oneflow_lite/functional/functional.h"
#include "oneflow_lite/functional/functor_util.h"
#include "oneflow_lite/functional/global_util.h"
#include "oneflow_lite/functional/op_call.h"
#include "ops/broadcast.h"
#include "ops/op_schema.h"

namespace ofl {

namespace {

// x itself when a GEMM reads its last two dims in place, else a contiguous copy. A global x is
// judged by this rank's shard (the layout its kernel reads); the copy keeps its SBP.
Tensor GemmReady(const Tensor& x) {
  const Tensor local = x.is_global() ? functional::ShardOf(x) : x;
  const int64_t nd = local.dim();
  if (nd < 2) return x;
  const Shape& s = local.shape();
  const std::vector<int64_t>& st = local.stride();
  kernels::GemmOperand layout;
  if (kernels::GemmLayoutOf(s[nd - 2], s[nd - 1], st[nd - 2], st[nd - 1], &layout)) return x;
  return x.contiguous();
}

Tensor Product(const ops::OpSchema& op, const Tensor& a, const Tensor& b) {
  functional::LocalImplOf(op.name.c_str(), a);
  functional::LocalImplOf(op.name.c_str(), b);
  return functional::Call(op, std::vector<Tensor>{GemmReady(a), GemmReady(b)}, Attrs(op.attrs))[0];
}

std::vector<int64_t> Dims(const Shape& s, int64_t begin, int64_t end) {
  return std::vector<int64_t>(s.begin() + begin, s.begin() + end);
}

}  // namespace

// The definitions, looked up once (as the generated functions keep theirs).
Tensor mm(const Tensor& x, const Tensor& mat2) {
  static const ops::OpSchema& op = ops::BuiltinOp("mm");
  return Product(op, x, mat2);
}
Tensor bmm(const Tensor& x, const Tensor& mat2) {
  static const ops::OpSchema& op = ops::BuiltinOp("bmm");
  return Product(op, x, mat2);
}

Tensor matmul(const Tensor& x, const Tensor& other) {
  functional::LocalImplOf("matmul", x);
  functional::LocalImplOf("matmul", other);
  const Shape sa = x.shape();  // logical, for a global tensor
  const Shape sb = other.shape();
  const int64_t na = sa.ndim(), nb = sb.ndim();
  if (na == 0 || nb == 0) {
    throw InvalidArgument("matmul: both arguments need at least 1 dim, got shapes " + sa.str() +
                          " and " + sb.str());
  }
  const int64_t k = sa[na - 1];
  const int64_t kb = nb == 1 ? sb[0] : sb[nb - 2];
  if (k != kb) {
    throw InvalidArgument("matmul: shapes " + sa.str() + " and " + sb.str() +
                          " cannot be multiplied (" + std::to_string(k) + " columns against " +
                          std::to_string(kb) + " rows)");
  }
  if (na <= 2 && nb <= 2) {
    const Tensor a2 = na == 1 ? x.reshape({1, k}) : x;
    const Tensor b2 = nb == 1 ? other.reshape({k, 1}) : other;
    const Tensor c = mm(a2, b2);
    if (na == 1 && nb == 1) return c.reshape({});
    if (na == 1) return c.reshape({sb[1]});
    if (nb == 1) return c.reshape({sa[0]});
    return c;
  }
  if (na >= 3 && nb <= 2) {
    // The batch folded into the rows: one mm of (batch * m) x k by k x n.
    const Tensor b2 = nb == 1 ? other.reshape({k, 1}) : other;
    std::vector<int64_t> out = Dims(sa, 0, na - 1);
    if (nb == 2) out.push_back(sb[1]);
    return mm(x.reshape({-1, k}), b2).reshape(out);
  }
  // Batched: the batch dims broadcast, each side viewed as (batch, rows, cols).
  const Tensor a3 = na == 1 ? x.reshape({1, k}) : x;
  const Tensor b3 = nb == 1 ? other.reshape({k, 1}) : other;
  const Shape& ta = a3.shape();
  const Shape& tb = b3.shape();
  const int64_t ra = ta.ndim(), rb = tb.ndim();
  const Shape batch =
      ops::BroadcastShapes("matmul", Shape(Dims(ta, 0, ra - 2)), Shape(Dims(tb, 0, rb - 2)));
  const int64_t m = ta[ra - 2], n = tb[rb - 1];
  std::vector<int64_t> ea = batch.vec(), eb = batch.vec();
  ea.insert(ea.end(), {m, k});
  eb.insert(eb.end(), {k, n});
  const Tensor c = bmm(a3.expand(ea).reshape({-1, m, k}), b3.expand(eb).reshape({-1, k, n}));
  std::vector<int64_t> out = batch.vec();
  if (na > 1) out.push_back(m);
  if (nb > 1) out.push_back(n);
  return c.reshape(out);
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  functional::LocalImplOf("linear", weight);
  const Shape& sw = weight.shape();
  if (sw.ndim() != 1 && sw.ndim() != 2) {
    throw InvalidArgument("linear: weight must have 1 or 2 dims, got shape " + sw.str());
  }
  if (sw.ndim() == 2 && bias.defined() && x.is_global() == weight.is_global() &&
      x.is_global() == bias.is_global() && x.dim() == 2 && bias.dim() == 1 &&
      x.shape()[1] == sw[1] && bias.shape()[0] == sw[0] && x.dtype() == weight.dtype() &&
      bias.dtype() == x.dtype() && x.dtype() != DType::kBool && x.device() == weight.device() &&
      x.device() == bias.device()) {
    // One node whose gradient takes each input's own layout (ops/linear_op.cpp).
    static const ops::OpSchema& op = ops::BuiltinOp("linear");
    return functional::Call(op, std::vector<Tensor>{x, weight, bias}, Attrs(op.attrs))[0];
  }
  const Tensor y = matmul(x, sw.ndim() == 2 ? weight.permute({1, 0}) : weight);
  return bias.defined() ? y + bias : y;
}

}  // namespace ofl
