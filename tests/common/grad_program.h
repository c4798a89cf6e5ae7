// Random differentiable programs, for the determinism test (tests/functional/gradcheck_test.cpp)
// and the autograd fuzzer (tests/fuzz/autograd_fuzz.cpp): a program decoded from a choice source
// builds a chain of ops (views, copies, broadcast arithmetic, sums) over float64 leaves on one
// device, sums the result and runs backward. Replayed on two devices with the same choices, it must
// give bit-identical gradients.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"

namespace ofl::grad_program {

// The choices: next(n) returns a value in [0, n).
using Choose = std::function<int64_t(int64_t n)>;

struct Result {
  std::vector<std::vector<uint64_t>> grad_bits;  // one per leaf, in creation order
  std::string trace;                             // the ops applied, for a failure message
};

inline std::vector<uint64_t> Bits(const Tensor& t) {
  std::vector<double> v = t.to_vector<double>();
  std::vector<uint64_t> bits(v.size());
  if (!v.empty()) std::memcpy(bits.data(), v.data(), v.size() * sizeof(double));
  return bits;
}

inline Result Run(const Choose& next, const Device& device, int max_steps = 8) {
  Result r;
  std::vector<Tensor> leaves;
  int64_t seed = 0;
  auto leaf = [&](const std::vector<int64_t>& shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<double> v(static_cast<size_t>(n));
    for (size_t i = 0; i < v.size(); ++i) {
      // Values with many significant bits: a different summation order shows in the result.
      v[i] =
          (static_cast<double>((seed * 7919 + static_cast<int64_t>(i) * 104729) % 2003) - 1001.0) /
          997.0;
    }
    ++seed;
    Tensor t = ofl::tensor<double>(v, Shape(shape), device);
    t.requires_grad_();
    leaves.push_back(t);
    return t;
  };
  const int ndim = static_cast<int>(next(4));
  std::vector<int64_t> shape;
  for (int i = 0; i < ndim; ++i) shape.push_back(next(4) + (next(5) == 0 ? 0 : 1));
  Tensor t = leaf(shape);
  const int steps = static_cast<int>(next(max_steps)) + 1;
  for (int s = 0; s < steps; ++s) {
    const Shape cur = t.shape();
    const int nd = cur.ndim();
    const bool big = t.numel() > 2048;  // keep the program small: no more growth
    int64_t op = next(9);
    if (big && (op == 0 || op == 1)) op = 7;
    switch (op) {
      case 0: {  // expand: a new leading dim and the size-1 dims broadcast
        std::vector<int64_t> sizes{next(3) + 1};
        for (int i = 0; i < nd; ++i) sizes.push_back(cur[i] == 1 ? next(3) + 1 : -1);
        t = t.expand(sizes);
        r.trace += " expand";
        break;
      }
      case 1: {
        std::vector<int64_t> reps;
        for (int i = 0; i <= nd; ++i) reps.push_back(next(3) + (i == 0 ? 1 : 0) + (next(2)));
        t = t.repeat(reps);
        r.trace += " repeat";
        break;
      }
      case 2:
        t = t.reshape({-1});
        if (t.numel() > 0 && t.numel() % 2 == 0) t = t.reshape({2, -1});
        r.trace += " reshape";
        break;
      case 3: {
        std::vector<int64_t> dims;
        for (int i = nd - 1; i >= 0; --i) dims.push_back(i);
        t = t.permute(dims);
        r.trace += " permute";
        break;
      }
      case 4:
        if (nd > 0 && cur[0] > 0) {
          const int64_t start = next(cur[0]);
          t = t.narrow(0, start, next(cur[0] - start) + 1);
          r.trace += " narrow";
        }
        break;
      case 5:
        t = t.contiguous();
        r.trace += " contiguous";
        break;
      case 6: {  // arithmetic with a leaf broadcast against t
        std::vector<int64_t> other;
        for (int i = next(2); i < nd; ++i) other.push_back(next(2) == 0 ? 1 : cur[i]);
        Tensor w = leaf(other);
        switch (next(4)) {
          case 0:
            t = t + w;
            break;
          case 1:
            t = w - t;
            break;
          case 2:
            t = t * w;
            break;
          default:
            t = t / (w * w + 1.0);
            break;
        }
        r.trace += " arith" + Shape(other).str();
        break;
      }
      case 7:
        if (nd > 0) {
          t = t.sum({static_cast<int64_t>(next(nd))}, next(2) == 1);
          r.trace += " sum_dim";
        }
        break;
      default:
        t = t * t;
        r.trace += " square";
        break;
    }
  }
  t.sum().backward();
  for (const Tensor& l : leaves) r.grad_bits.push_back(Bits(l.grad()));
  return r;
}

}  // namespace ofl::grad_program
