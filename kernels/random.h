// The random numbers of every device (the "random" kernel of cpu, sim and cuda, and randperm on the
// host): Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", the
// generator of cuRAND and PyTorch's CUDA), a pure function of a 128-bit counter and a 64-bit key.
// Element i of a call draws the block Philox(counter = offset + i, key = seed): its value depends
// on the seed, the call's offset and i alone, never on the device, the thread count or the launch
// shape, so cpu, sim and cuda give the same numbers (the same bits where the math is exact: the
// uniform and integer draws; normal goes through log and cos, whose last bit a device's library may
// round differently). The generator (oneflow_lite/functional/random_functors.cpp) advances its
// offset by the element count of each call, at the call.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/index_util.h"  // OFL_HOST_DEVICE
#include "kernels/kernel.h"

namespace ofl::kernels {

struct PhiloxBlock {
  uint32_t v[4];
};

OFL_HOST_DEVICE inline void MulHiLo(uint32_t a, uint32_t b, uint32_t* hi, uint32_t* lo) {
  const uint64_t p = static_cast<uint64_t>(a) * b;
  *hi = static_cast<uint32_t>(p >> 32);
  *lo = static_cast<uint32_t>(p);
}

// Philox-4x32 with 10 rounds of counter (c0 .. c3) under key (k0, k1).
OFL_HOST_DEVICE inline PhiloxBlock Philox4x32x10(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3,
                                                 uint32_t k0, uint32_t k1) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kW0;
      k1 += kW1;
    }
    uint32_t hi0, lo0, hi1, lo1;
    MulHiLo(kM0, c0, &hi0, &lo0);
    MulHiLo(kM1, c2, &hi1, &lo1);
    const uint32_t n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
  }
  return PhiloxBlock{{c0, c1, c2, c3}};
}

// The block of element `index` of a call at `offset` under `seed`: the 64-bit counter
// offset + index in words 0 and 1 (low first), words 2 and 3 zero.
OFL_HOST_DEVICE inline PhiloxBlock RandomBlock(uint64_t seed, uint64_t offset, uint64_t index) {
  const uint64_t c = offset + index;
  return Philox4x32x10(static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32), 0, 0,
                       static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

// 53 random bits of words a (high) and b as a double in [0, 1).
OFL_HOST_DEVICE inline double Uniform53(uint32_t a, uint32_t b) {
  const uint64_t bits = ((static_cast<uint64_t>(a) << 32) | b) >> 11;
  return static_cast<double>(bits) * (1.0 / 9007199254740992.0);  // 2^-53
}

// What a "random" kernel draws.
enum class RandomDist : int64_t {
  kUniform = 0,   // a + (b - a) * u, u in [0, 1) with as many random bits as the output's
                  // significand holds (11 float16, 8 bfloat16, 24 float32, 53 float64), so rand()
                  // never rounds up to 1
  kNormal = 1,    // a + b * z, z standard normal by Box-Muller of two 53-bit uniforms
  kIntegers = 2,  // low + (64 random bits mod span), span > 0: randint over low .. low + span - 1
};

struct RandomSpec {
  RandomDist dist = RandomDist::kUniform;
  uint64_t seed = 0;
  uint64_t offset = 0;
  double a = 0, b = 1;
  int64_t low = 0, span = 1;
  int bits = 24;  // the uniform's random bits: the output dtype's significand digits
};

// "random": no inputs, one contiguous output (any dtype for kIntegers, a float one otherwise),
// attributes "dist", "seed", "offset", "low", "span" (ints) and "a", "b" (doubles). Host code of
// every backend (kernels/random_spec.cpp).
RandomSpec CheckRandomArgs(const KernelContext& ctx);

// Element `index`'s value: kUniform and kNormal in double, kIntegers in int64.
OFL_HOST_DEVICE inline double RandomReal(const RandomSpec& s, uint64_t index) {
  const PhiloxBlock r = RandomBlock(s.seed, s.offset, index);
  if (s.dist == RandomDist::kUniform) {
    const double u = s.bits > 32 ? Uniform53(r.v[0], r.v[1])
                                 : static_cast<double>(r.v[0] >> (32 - s.bits)) /
                                       static_cast<double>(uint64_t{1} << s.bits);
    return s.a + (s.b - s.a) * u;
  }
  // Box-Muller: 1 - u in (0, 1] keeps the log finite.
  const double u1 = 1.0 - Uniform53(r.v[0], r.v[1]);
  const double u2 = Uniform53(r.v[2], r.v[3]);
  const double z = ::sqrt(-2.0 * ::log(u1)) * ::cos(6.283185307179586476925 * u2);
  return s.a + s.b * z;
}

OFL_HOST_DEVICE inline int64_t RandomInteger(const RandomSpec& s, uint64_t index) {
  const PhiloxBlock r = RandomBlock(s.seed, s.offset, index);
  const uint64_t bits = (static_cast<uint64_t>(r.v[0]) << 32) | r.v[1];
  return static_cast<int64_t>(static_cast<uint64_t>(s.low) + bits % static_cast<uint64_t>(s.span));
}

}  // namespace ofl::kernels
