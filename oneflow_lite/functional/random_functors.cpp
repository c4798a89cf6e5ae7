// The generators and the random functions of oneflow_lite/random.h: the random_ op (ops/
// random_op.cpp) into a new contiguous tensor, or into the tensor itself (uniform_, normal_) when
// it is contiguous; randperm on the host; bernoulli and dropout made of public ops.
#include "oneflow_lite/random.h"

#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "kernels/random.h"
#include "oneflow_lite/autograd.h"
#include "oneflow_lite/distributed.h"
#include "oneflow_lite/functional/functional.h"
#include "oneflow_lite/functional/functor_util.h"
#include "oneflow_lite/functional/global_protocol.h"
#include "oneflow_lite/functional/global_util.h"
#include "oneflow_lite/functional/op_call.h"
#include "ops/array_ops.h"
#include "ops/op_schema.h"

namespace ofl {

namespace {

constexpr uint64_t kDefaultSeed = 67280421310721ull;

// The generators, by device type, under one lock (draws are reserved on the calling thread).
struct Generators {
  std::mutex mu;
  uint64_t base_seed = kDefaultSeed;
  std::map<DeviceType, RngState> states;

  RngState& Of(DeviceType type) {  // mu held
    auto it = states.find(type);
    if (it == states.end()) it = states.emplace(type, RngState{base_seed, 0}).first;
    return it->second;
  }
};

Generators& Gens() {
  static Generators* g = new Generators();  // never destroyed: draws may come during exit
  return *g;
}

// The (seed, offset) of a draw of `count` elements on `device`'s type, the offset advanced.
RngState Reserve(const Device& device, uint64_t count) {
  Generators& g = Gens();
  std::lock_guard<std::mutex> lock(g.mu);
  RngState& s = g.Of(device.type());
  const RngState taken = s;
  s.offset += count;
  return taken;
}

void CheckFloat(const char* fn, DType dtype) {
  ops::CheckDType(fn, dtype);
  if (!is_floating_point(dtype)) {
    throw InvalidArgument(std::string(fn) + ": dtype " + to_string(dtype) +
                          " is not supported (a float dtype is)");
  }
}

// Fills `t` (contiguous, on its device) by the random_ op.
void Draw(const Tensor& t, kernels::RandomDist dist, double a, double b, int64_t low,
          int64_t span) {
  static const ops::OpSchema& op = ops::BuiltinOp("random_");
  const RngState s = Reserve(t.device(), static_cast<uint64_t>(t.numel()));
  functional::Call(op, t,
                   Attrs(op.attrs, static_cast<int64_t>(dist), static_cast<int64_t>(s.seed),
                         static_cast<int64_t>(s.offset), a, b, low, span));
}

Tensor NewRandom(const char* fn, const Shape& shape, DType dtype, const Device& device,
                 kernels::RandomDist dist, double a, double b) {
  CheckFloat(fn, dtype);
  ops::CheckShape(fn, "size", shape, element_size(dtype));
  Tensor t = functional::NewTensor(shape, dtype, device);
  Draw(t, dist, a, b, 0, 1);
  return t;
}

// uniform_ and normal_: into the tensor when it is contiguous, else through a contiguous draw.
Tensor& DrawInto(const char* fn, Tensor& self, kernels::RandomDist dist, double a, double b) {
  const TensorImpl& t = functional::ImplOf(fn, self);
  CheckFloat(fn, t.dtype());
  if (is_grad_enabled() && self.requires_grad() && self.is_leaf()) {
    throw InvalidArgument(std::string(fn) +
                          ": a leaf that requires grad is being used in an in-place operation; "
                          "run it under NoGradGuard (as nn.init does)");
  }
  if (ops::IsContiguous(t.shape(), t.stride())) {
    Draw(self, dist, a, b, 0, 1);
  } else {
    Tensor c = functional::NewTensor(t.shape(), t.dtype(), t.device());
    Draw(c, dist, a, b, 0, 1);
    self.copy_(c);
  }
  return self;
}

}  // namespace

void manual_seed(uint64_t seed) {
  Generators& g = Gens();
  std::lock_guard<std::mutex> lock(g.mu);
  g.base_seed = seed;
  g.states.clear();
}

uint64_t initial_seed(DeviceType type) {
  Generators& g = Gens();
  std::lock_guard<std::mutex> lock(g.mu);
  return g.Of(type).seed;
}

RngState get_rng_state(DeviceType type) {
  Generators& g = Gens();
  std::lock_guard<std::mutex> lock(g.mu);
  return g.Of(type);
}

void set_rng_state(const RngState& state, DeviceType type) {
  Generators& g = Gens();
  std::lock_guard<std::mutex> lock(g.mu);
  g.Of(type) = state;
}

Tensor rand(const Shape& shape, DType dtype, const Device& device) {
  return NewRandom("rand", shape, dtype, device, kernels::RandomDist::kUniform, 0.0, 1.0);
}

Tensor randn(const Shape& shape, DType dtype, const Device& device) {
  return NewRandom("randn", shape, dtype, device, kernels::RandomDist::kNormal, 0.0, 1.0);
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype, const Device& device) {
  if (high <= low) {
    throw InvalidArgument("randint: high " + std::to_string(high) + " must be above low " +
                          std::to_string(low) + " (the draws are low .. high - 1)");
  }
  const __int128 span = static_cast<__int128>(high) - low;
  if (span > INT64_MAX) {
    throw InvalidArgument("randint: the range " + std::to_string(low) + " .. " +
                          std::to_string(high) + " is wider than 2^63 - 1");
  }
  ops::CheckDType("randint", dtype);
  ops::CheckShape("randint", "size", shape, element_size(dtype));
  Tensor t = functional::NewTensor(shape, dtype, device);
  Draw(t, kernels::RandomDist::kIntegers, 0, 0, low, static_cast<int64_t>(span));
  return t;
}

Tensor randperm(int64_t n, DType dtype, const Device& device) {
  if (n < 0) {
    throw InvalidArgument("randperm: n must be non-negative, got " + std::to_string(n));
  }
  ops::CheckDType("randperm", dtype);
  if (dtype == DType::kBool) throw InvalidArgument("randperm: dtype bool is not supported");
  // Every value 0 .. n - 1 must be exact in dtype, as PyTorch checks (an integer dtype up to its
  // maximum + 1, a float one up to 2^significand bits).
  int64_t most = std::numeric_limits<int64_t>::max();
  switch (dtype) {
    case DType::kUInt8:
      most = 256;
      break;
    case DType::kInt8:
      most = 128;
      break;
    case DType::kInt16:
      most = 32768;
      break;
    case DType::kInt32:
      most = int64_t{1} << 31;
      break;
    case DType::kFloat16:
      most = 2048;
      break;
    case DType::kBFloat16:
      most = 256;
      break;
    case DType::kFloat32:
      most = int64_t{1} << 24;
      break;
    case DType::kFloat64:
      most = int64_t{1} << 53;
      break;
    default:
      break;
  }
  if (n > most) {
    throw InvalidArgument("randperm: n " + std::to_string(n) + " is too large for dtype " +
                          to_string(dtype) + " (at most " + std::to_string(most) +
                          ", so that every value is exact)");
  }
  const RngState s = Reserve(device, static_cast<uint64_t>(n));
  std::vector<int64_t> p(static_cast<size_t>(n));
  std::iota(p.begin(), p.end(), int64_t{0});
  kernels::RandomSpec spec;
  spec.dist = kernels::RandomDist::kIntegers;
  spec.seed = s.seed;
  spec.offset = s.offset;
  for (int64_t i = n - 1; i > 0; --i) {
    spec.span = i + 1;
    std::swap(p[static_cast<size_t>(i)],
              p[static_cast<size_t>(kernels::RandomInteger(spec, static_cast<uint64_t>(i)))]);
  }
  const Tensor t = tensor<int64_t>(p, Shape(std::vector<int64_t>{n}), device);
  return dtype == DType::kInt64 ? t : t.to(dtype);
}

namespace {
// rand_like / randn_like. A global x gives a global tensor of its placement and SBP (partial_sum:
// broadcast) holding the numbers the local call on the whole logical tensor draws: every rank
// draws the whole tensor from the generator (which every rank advances alike, ranks outside the
// placement included) and keeps its shard, so the values do not depend on the layout or the rank
// count.
Tensor RandomLike(const char* fn, const Tensor& x, std::optional<DType> dtype,
                  kernels::RandomDist dist) {
  const TensorImpl& t = functional::LocalImplOf(fn, x);
  const DType out = dtype ? *dtype : t.dtype();
  const GlobalMeta* g = t.global().get();
  if (g == nullptr) return NewRandom(fn, t.shape(), out, t.device(), dist, 0.0, 1.0);
  const Sbp sbp = g->sbp.is_partial_sum() ? Sbp::broadcast() : g->sbp;
  if (!g->placement.contains(ofl::rank())) {
    CheckFloat(fn, out);
    (void)Reserve(functional::PlacementDevice(g->placement),
                  static_cast<uint64_t>(g->logical_shape.numel()));
    return functional::GlobalOverShard(functional::EmptyShard(out), g->placement, sbp,
                                       g->logical_shape);
  }
  const Tensor whole = NewRandom(fn, g->logical_shape, out,
                                 functional::PlacementDevice(g->placement), dist, 0.0, 1.0);
  NoGradGuard no_grad;
  return functional::GlobalOverShard(whole, g->placement, Sbp::broadcast(), g->logical_shape)
      .to_global(g->placement, sbp);
}
}  // namespace

Tensor rand_like(const Tensor& x, std::optional<DType> dtype) {
  return RandomLike("rand_like", x, dtype, kernels::RandomDist::kUniform);
}

Tensor randn_like(const Tensor& x, std::optional<DType> dtype) {
  return RandomLike("randn_like", x, dtype, kernels::RandomDist::kNormal);
}

Tensor& Tensor::uniform_(double from, double to) {
  if (!(from <= to) || !std::isfinite(from) || !std::isfinite(to)) {
    throw InvalidArgument("uniform_: expects from <= to, both finite, got from=" +
                          std::to_string(from) + " and to=" + std::to_string(to));
  }
  return DrawInto("uniform_", *this, kernels::RandomDist::kUniform, from, to);
}

Tensor& Tensor::normal_(double mean, double std) {
  if (!(std >= 0) || !std::isfinite(std) || !std::isfinite(mean)) {
    throw InvalidArgument("normal_: expects std >= 0 and a finite mean, got mean=" +
                          std::to_string(mean) + " and std=" + std::to_string(std));
  }
  return DrawInto("normal_", *this, kernels::RandomDist::kNormal, mean, std);
}

Tensor bernoulli(const Tensor& p) {
  const TensorImpl& t = functional::LocalImplOf("bernoulli", p);
  CheckFloat("bernoulli", t.dtype());
  NoGradGuard no_grad;
  return lt(rand_like(p), p).to(t.dtype());
}

Tensor bernoulli(const Tensor& x, double p) {
  const TensorImpl& t = functional::LocalImplOf("bernoulli", x);
  CheckFloat("bernoulli", t.dtype());
  if (!(p >= 0 && p <= 1)) {
    throw InvalidArgument("bernoulli: p must be in 0 .. 1, got " + std::to_string(p));
  }
  NoGradGuard no_grad;
  return lt(rand_like(x), p).to(t.dtype());
}

Tensor dropout(const Tensor& x, double p, bool training) {
  const TensorImpl& t = functional::LocalImplOf("dropout", x);
  if (!(p >= 0 && p <= 1)) {
    throw InvalidArgument("dropout: probability has to be between 0 and 1, but got " +
                          std::to_string(p));
  }
  if (!training || p == 0) return x;
  CheckFloat("dropout", t.dtype());
  if (p == 1) return x * zeros_like(x);
  Tensor mask;
  {
    NoGradGuard no_grad;
    mask = ge(rand_like(x), p).to(t.dtype()) * (1.0 / (1.0 - p));
  }
  return x * mask;
}

}  // namespace ofl
