// The elementwise-unary ops, one kernel family on every device: their names, which dtypes each
// takes, and the math of one element, written once for the CPU kernels (kernels/cpu/
// unary_kernel.cpp) and the CUDA kernels (kernels/cuda/unary_kernel.cu), which the host grid runs
// on the CPU. Floats compute in their own type (float16 and bfloat16 in float, rounded once to
// the output); the integer ops (neg, abs, sign, relu) in the integer's own unsigned type of at
// least 32 bits, so negation wraps as two's complement (abs of the most negative value is itself,
// as PyTorch's).
#pragma once

#include <math.h>  // the C functions, which CUDA's device code and the host both have

#include <cstdint>
#include <type_traits>

#include "kernels/index_util.h"  // OFL_HOST_DEVICE

namespace ofl::kernels {

enum class UnaryOp : uint8_t {
  kNeg,
  kAbs,
  kSign,
  kRelu,  // the integer ops end here: below, floating dtypes only
  kExp,
  kLog,
  kSqrt,
  kRsqrt,
  kSin,
  kCos,
  kTanh,
  kSigmoid,
  kErf,
  kSilu,
  kGelu,      // exact: x * Phi(x)
  kGeluTanh,  // approximate="tanh"
  kPow,       // x ** exponent (a double attribute)
};
constexpr int kNumUnaryOps = static_cast<int>(UnaryOp::kPow) + 1;

// The op's name ("neg", ..., "gelu" for both gelus, "pow_scalar").
const char* UnaryOpName(UnaryOp op);
// Whether the op has integer kernels (neg, abs, sign, relu); the others take floats only.
constexpr bool UnaryTakesIntegers(UnaryOp op) { return op <= UnaryOp::kRelu; }

// What an op reads besides its input.
struct UnaryParams {
  double exponent = 1.0;  // kPow
};

namespace unary_detail {
template <class C>
OFL_HOST_DEVICE inline C Exp(C x) {
  if constexpr (std::is_same_v<C, float>) {
    return ::expf(x);
  } else {
    return ::exp(x);
  }
}
template <class C>
OFL_HOST_DEVICE inline C Log(C x) {
  if constexpr (std::is_same_v<C, float>) {
    return ::logf(x);
  } else {
    return ::log(x);
  }
}
template <class C>
OFL_HOST_DEVICE inline C Sqrt(C x) {
  if constexpr (std::is_same_v<C, float>) {
    return ::sqrtf(x);
  } else {
    return ::sqrt(x);
  }
}
template <class C>
OFL_HOST_DEVICE inline C Sin(C x) {
  if constexpr (std::is_same_v<C, float>) {
    return ::sinf(x);
  } else {
    return ::sin(x);
  }
}
template <class C>
OFL_HOST_DEVICE inline C Cos(C x) {
  if constexpr (std::is_same_v<C, float>) {
    return ::cosf(x);
  } else {
    return ::cos(x);
  }
}
template <class C>
OFL_HOST_DEVICE inline C Tanh(C x) {
  if constexpr (std::is_same_v<C, float>) {
    return ::tanhf(x);
  } else {
    return ::tanh(x);
  }
}
template <class C>
OFL_HOST_DEVICE inline C Erf(C x) {
  if constexpr (std::is_same_v<C, float>) {
    return ::erff(x);
  } else {
    return ::erf(x);
  }
}
template <class C>
OFL_HOST_DEVICE inline C Pow(C x, double p) {
  if constexpr (std::is_same_v<C, float>) {
    return ::powf(x, static_cast<float>(p));
  } else {
    return ::pow(x, p);
  }
}
template <class C>
OFL_HOST_DEVICE inline C Abs(C x) {
  if constexpr (std::is_same_v<C, float>) {
    return ::fabsf(x);
  } else {
    return ::fabs(x);
  }
}
template <class C>
OFL_HOST_DEVICE inline C Sigmoid(C x) {
  return C(1) / (C(1) + Exp(-x));
}
}  // namespace unary_detail

// One element of a floating op, computed in C (float or double).
template <UnaryOp kOp, class C>
OFL_HOST_DEVICE inline C ApplyFloat(C x, const UnaryParams& p) {
  using namespace unary_detail;  // NOLINT(google-build-using-namespace): the math above
  if constexpr (kOp == UnaryOp::kNeg) {
    return -x;
  } else if constexpr (kOp == UnaryOp::kAbs) {
    return Abs(x);
  } else if constexpr (kOp == UnaryOp::kSign) {
    // NaN stays NaN, as PyTorch's sign; +-0 give 0.
    return x > C(0) ? C(1) : x < C(0) ? C(-1) : x == C(0) ? C(0) : x;
  } else if constexpr (kOp == UnaryOp::kRelu) {
    return x > C(0) ? x : x == x ? C(0) : x;  // NaN stays NaN
  } else if constexpr (kOp == UnaryOp::kExp) {
    return Exp(x);
  } else if constexpr (kOp == UnaryOp::kLog) {
    return Log(x);
  } else if constexpr (kOp == UnaryOp::kSqrt) {
    return Sqrt(x);
  } else if constexpr (kOp == UnaryOp::kRsqrt) {
    return C(1) / Sqrt(x);
  } else if constexpr (kOp == UnaryOp::kSin) {
    return Sin(x);
  } else if constexpr (kOp == UnaryOp::kCos) {
    return Cos(x);
  } else if constexpr (kOp == UnaryOp::kTanh) {
    return Tanh(x);
  } else if constexpr (kOp == UnaryOp::kSigmoid) {
    return Sigmoid(x);
  } else if constexpr (kOp == UnaryOp::kErf) {
    return Erf(x);
  } else if constexpr (kOp == UnaryOp::kSilu) {
    return x * Sigmoid(x);
  } else if constexpr (kOp == UnaryOp::kGelu) {
    return x * C(0.5) * (C(1) + Erf(x * C(0.70710678118654752440)));
  } else if constexpr (kOp == UnaryOp::kGeluTanh) {
    const C inner = C(0.79788456080286535588) * (x + C(0.044715) * x * x * x);
    return C(0.5) * x * (C(1) + Tanh(inner));
  } else {
    return Pow(x, p.exponent);
  }
}

// One element of an integer op (UnaryTakesIntegers), T the stored type, U the unsigned type it
// computes in.
template <UnaryOp kOp, class T, class U>
OFL_HOST_DEVICE inline T ApplyInteger(T x) {
  if constexpr (kOp == UnaryOp::kNeg) {
    return static_cast<T>(U(0) - static_cast<U>(x));
  } else if constexpr (!std::is_signed_v<T>) {
    return kOp == UnaryOp::kSign ? static_cast<T>(x != T(0)) : x;  // abs, relu: x itself
  } else if constexpr (kOp == UnaryOp::kAbs) {
    return x < T(0) ? static_cast<T>(U(0) - static_cast<U>(x)) : x;
  } else if constexpr (kOp == UnaryOp::kSign) {
    return static_cast<T>((T(0) < x) - (x < T(0)));
  } else {
    static_assert(kOp == UnaryOp::kRelu, "an integer unary op");
    return x > T(0) ? x : T(0);
  }
}

}  // namespace ofl::kernels
