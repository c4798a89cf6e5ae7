// Random numbers: one generator per device type, Philox-4x32-10 (kernels/random.h), so that the
// numbers of a seed, a shape and an order of calls are the same on cpu, sim and cuda and do not
// depend on the thread count. A draw takes the generator's (seed, offset) at the call, on the
// calling thread, and advances the offset by its element count; the kernel runs asynchronously
// like any op. manual_seed seeds every device type's generator, as torch.manual_seed.
#pragma once

#include <cstdint>
#include <optional>

#include "oneflow_lite/device.h"
#include "oneflow_lite/dtype.h"
#include "oneflow_lite/shape.h"
#include "oneflow_lite/tensor.h"

namespace ofl {

// A generator's state: draws made from a restored state repeat the draws made from the saved one.
struct RngState {
  uint64_t seed = 0;
  uint64_t offset = 0;
  bool operator==(const RngState& o) const { return seed == o.seed && offset == o.offset; }
};

// Every device type's generator to (seed, offset 0); later device types start there too. Before
// any call the seed is 67280421310721 (PyTorch's default).
void manual_seed(uint64_t seed);
// The seed the generator of `type` started from.
uint64_t initial_seed(DeviceType type = DeviceType::kCPU);
RngState get_rng_state(DeviceType type = DeviceType::kCPU);
void set_rng_state(const RngState& state, DeviceType type = DeviceType::kCPU);

// torch.rand / randn: uniform in [0, 1) and standard normal, of a float dtype.
Tensor rand(const Shape& shape, DType dtype = DType::kFloat32,
            const Device& device = Device(DeviceType::kCPU, 0));
Tensor randn(const Shape& shape, DType dtype = DType::kFloat32,
             const Device& device = Device(DeviceType::kCPU, 0));
// torch.randint: integers in low .. high - 1 (high > low), int64 unless told another dtype.
Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype = DType::kInt64,
               const Device& device = Device(DeviceType::kCPU, 0));
// torch.randperm: a random permutation of 0 .. n - 1 (Fisher-Yates, drawn on the host from the
// generator of the device's type), int64 unless told another dtype.
Tensor randperm(int64_t n, DType dtype = DType::kInt64,
                const Device& device = Device(DeviceType::kCPU, 0));
// x's shape and device, x's dtype unless told another (a float one).
Tensor rand_like(const Tensor& x, std::optional<DType> dtype = std::nullopt);
Tensor randn_like(const Tensor& x, std::optional<DType> dtype = std::nullopt);
// torch.bernoulli: 1 with probability p[i] (a float tensor of values in [0, 1]), else 0, in p's
// dtype; and with one probability p for every element of x's shape and dtype.
Tensor bernoulli(const Tensor& p);
Tensor bernoulli(const Tensor& x, double p);
// torch.nn.functional.dropout: in training, each element zeroed with probability p and the others
// scaled by 1 / (1 - p) (p = 1: all zeros); x itself when not training or p = 0. Gradient: the
// same mask and scale.
Tensor dropout(const Tensor& x, double p = 0.5, bool training = true);

}  // namespace ofl
