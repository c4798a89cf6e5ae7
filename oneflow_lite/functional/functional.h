// The op calls of the public API. Each validates its arguments and infers the output's shape
// synchronously (errors are thrown here, before anything is queued), then queues its work on the
// VM.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "oneflow_lite/device.h"
#include "oneflow_lite/dtype.h"
#include "oneflow_lite/memory_stats.h"
#include "oneflow_lite/shape.h"
#include "oneflow_lite/tensor.h"

// The op table's functions (ops/op_table.py, generated): expand, repeat, reshape, view, permute,
// narrow, contiguous, clone, add, sub, mul, div, sum, expand_backward, repeat_backward, ...
#include "oneflow_lite/generated/functions.h"

namespace ofl {

Tensor empty(const Shape& shape, DType dtype = DType::kFloat32,
             const Device& device = Device(DeviceType::kCPU, 0));
// Copies `data` (numel * element_size bytes, row-major) before returning.
Tensor from_host(const void* data, const Shape& shape, DType dtype,
                 const Device& device = Device(DeviceType::kCPU, 0));
template <class T>
Tensor tensor(const std::vector<T>& data, const Shape& shape,
              const Device& device = Device(DeviceType::kCPU, 0));
// A tensor viewing memory the caller owns, with no copy (torch::from_blob): `data` is the start
// of the storage, and the view is `shape`, `strides` and `storage_offset`, in elements (strides
// may be any values >= 0, 0 included; the storage spans from `data` to the last byte of the
// furthest element the view reaches). The device's memory must be host-accessible (cpu) or be
// CUDA device memory of that device; any other device (sim) is refused. `data` may be null only
// when the view has no element. The tensor is like any other: views, ops reading it, in-place ops
// writing it (into the caller's memory), autograd leaves.
//
// on_release (may be empty) is called exactly once, when the memory is the caller's again: after
// the last tensor viewing the storage died AND every instruction that used it completed. It runs
// on whichever thread frees the storage (the one dropping the last tensor, a VM worker, a thread
// waiting for the device) and must not call into oneflow_lite or wait for anything such a thread
// may hold (vm/THREADING.md, "Memory"); an exception from it is logged and dropped. It is not
// called in a forked child, nor for a tensor a thread still holds while the process exits (the
// memory goes with the process). If from_blob throws (InvalidArgument for its arguments,
// DeviceError for an unusable device, std::bad_alloc), on_release was not called and is
// destroyed uncalled; nothing else is kept.
Tensor from_blob(void* data, const Shape& shape, const std::vector<int64_t>& strides,
                 int64_t storage_offset, DType dtype, const Device& device,
                 std::function<void()> on_release);

// A number as the operand of an op beside the tensor `like` (PyTorch's "wrapped number"): a 0-dim
// tensor on like's device, of like's dtype unless the number is of a higher kind (bool < integer <
// float): int64 for an integer beside a bool tensor, float32 (the default float dtype) for a float
// beside an integer or bool one. So int32 + 5 stays int32, int32 + 2.5 is float32 and float16 +
// 2.5 float16. InvalidArgument naming `op` where that dtype cannot hold the number (Scalar::fits:
// "add: value 300 cannot be converted to type uint8 without overflow").
Tensor wrapped_number(const char* op, Scalar value, const Tensor& like);

// x @ weight^T + bias (bias undefined: none), as torch.nn.functional.linear: weight (out, in) or
// (in) (the output then loses its last dim); bias broadcasts to the output. The transposed weight
// goes to the GEMM in place (ofl::mm).
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());

// torch.gather: out[p] = x[p with its dim coordinate replaced by index[p]]; index int64 with x's
// number of dims, each dim but `dim` at most x's; the output has the index's shape. An index value
// outside 0 .. x.size(dim) - 1 fails the kernel: the error (InvalidArgument naming the value)
// reaches the next wait on the output, as a kernel's errors do; on CUDA it is a device fault, as
// PyTorch's device-side assert. Gradient: scatter_add into zeros.
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
// Tensor.scatter_add: a copy of self with src[p] added into the element p's index value picks
// along dim, the sums in a fixed order on every device. src of self's dtype; index as gather's
// against self, and at most src's size in every dim.
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);

// torch.index_select: x's elements at the int64 positions `index` (1-dim) along dim (a gather).
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
// torch.nn.functional.one_hot: int64 class values to an int64 tensor of x's shape plus a last dim
// of num_classes (-1: the largest value + 1), 1 at each value. Reads x's values (a wait, as
// PyTorch's): InvalidArgument for a negative value or one not below num_classes.
Tensor one_hot(const Tensor& x, int64_t num_classes = -1);

// torch.nn.functional.nll_loss: input (C) with a 0-dim target, (N, C) with target (N), or
// (N, C, d1, ...) with target (N, d1, ...) of int64 class indices; loss -input[class] times the
// class's weight (weight: one per class, of input's dtype; undefined: 1), 0 where the target is
// ignore_index; reduction "mean" (the weighted mean: the sum over the weights' sum), "sum" or
// "none". A class index outside 0 .. C - 1 fails as gather's index does.
Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                const std::string& reduction = "mean", int64_t ignore_index = -100);
// torch.nn.functional.cross_entropy: log_softmax over the class dim, then nll_loss; with
// label_smoothing e (0 .. 1) each loss is (1 - e) * nll + e / C * (the weighted sum of -log p over
// the classes). A float target of input's shape is class probabilities instead (loss
// -sum(p * log_softmax) over the class dim, "mean" over the other elements; ignore_index unused).
Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                     const std::string& reduction = "mean", int64_t ignore_index = -100,
                     double label_smoothing = 0.0);

// The arithmetic ops and comparisons with a number, a wrapped number (above) beside the tensor;
// the comparisons give bool tensors.
Tensor add(const Tensor& a, Scalar b);
Tensor sub(const Tensor& a, Scalar b);
Tensor mul(const Tensor& a, Scalar b);
Tensor div(const Tensor& a, Scalar b);
Tensor eq(const Tensor& a, Scalar b);
Tensor ne(const Tensor& a, Scalar b);
Tensor lt(const Tensor& a, Scalar b);
Tensor le(const Tensor& a, Scalar b);
Tensor gt(const Tensor& a, Scalar b);
Tensor ge(const Tensor& a, Scalar b);
// torch.pow with a tensor exponent: x ** exponent elementwise, broadcast, in their promoted type
// (integer powers exact: 2 ** 10 of int32 tensors is 1024; a negative integer exponent gives 0
// but for a base of 1 or -1); bool refused. A number base is a wrapped number (2 ** int tensor
// stays an integer, 2.5 ** it is float32). Gradients to both.
Tensor pow(const Tensor& x, const Tensor& exponent);
Tensor pow(Scalar self, const Tensor& exponent);
// max/min along a dim, (values, indices), and of the whole tensor; as the Tensor methods.
std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim = false);
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor max(const Tensor& x);
Tensor min(const Tensor& x);

// Every element the value converted to dtype: exactly for an integer (2^62 + 1 into int64), a
// double truncated toward zero (2.7 is 2), rounded to nearest for a floating dtype.
// InvalidArgument, naming the call, where the dtype cannot hold the value (Scalar::fits: 300 or
// -256 for uint8, NaN for any integer dtype), as PyTorch.
Tensor full(const Shape& shape, Scalar value, DType dtype = DType::kFloat32,
            const Device& device = Device(DeviceType::kCPU, 0));
Tensor zeros(const Shape& shape, DType dtype = DType::kFloat32,
             const Device& device = Device(DeviceType::kCPU, 0));
Tensor ones(const Shape& shape, DType dtype = DType::kFloat32,
            const Device& device = Device(DeviceType::kCPU, 0));

// torch.arange: start, start + step, ... up to end (excluded): ceil((end - start) / step) values.
// dtype unset: int64 when start, end and step are all integers, else float32. An integer dtype
// computes in int64 (a float start or step truncated first, as PyTorch's), a floating one in
// double, the same bits on every device. InvalidArgument for a step of 0, a range against the
// step's sign, a non-finite bound, bool.
Tensor arange(Scalar end, std::optional<DType> dtype = std::nullopt,
              const Device& device = Device(DeviceType::kCPU, 0));
Tensor arange(Scalar start, Scalar end, Scalar step = 1, std::optional<DType> dtype = std::nullopt,
              const Device& device = Device(DeviceType::kCPU, 0));
// torch.linspace: `steps` values from start to end evenly (float32 unless told another dtype),
// computed in double, the first half from start and the second from end (as PyTorch's), so both
// ends are exact. InvalidArgument for steps < 0, bool.
Tensor linspace(Scalar start, Scalar end, int64_t steps, std::optional<DType> dtype = std::nullopt,
                const Device& device = Device(DeviceType::kCPU, 0));
// x's shape, x's dtype and device unless told others: uninitialised, zeros, ones, value (which
// the dtype must hold, as full's).
Tensor empty_like(const Tensor& x, std::optional<DType> dtype = std::nullopt,
                  std::optional<Device> device = std::nullopt);
Tensor zeros_like(const Tensor& x, std::optional<DType> dtype = std::nullopt,
                  std::optional<Device> device = std::nullopt);
Tensor ones_like(const Tensor& x, std::optional<DType> dtype = std::nullopt,
                 std::optional<Device> device = std::nullopt);
Tensor full_like(const Tensor& x, Scalar value, std::optional<DType> dtype = std::nullopt,
                 std::optional<Device> device = std::nullopt);

// torch.cat: the tensors joined along dim, in the result type of their dtypes (cat of int32 and
// float32 is float32), on one device. Every tensor has the same number of dims and sizes but
// along dim; a 1-dim tensor of size 0 is skipped (PyTorch's legacy rule); any number of tensors.
// Gradient: each tensor's slice of g.
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
// torch.stack: tensors of one shape joined along a new dim (-(ndim + 1) .. ndim).
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
// torch.split: views of x along dim, each split_size long but the last (the rest).
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim = 0);
// torch.split with a list of sizes (they add up to x.size(dim)).
std::vector<Tensor> split_with_sizes(const Tensor& x, const std::vector<int64_t>& split_sizes,
                                     int64_t dim = 0);
// torch.chunk: at most `chunks` views of ceil(size / chunks) along dim (fewer when they run out;
// `chunks` empty ones for a dim of size 0).
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim = 0);

// Waits for all issued work; re-throws the first error raised inside the VM not yet reported.
void sync();
// Drains issued work, joins every VM worker (each after its device work completed), destroys the
// streams' events and native streams, returns the pools' memory nothing holds (a live tensor's,
// view's or DLPack capsule's stays valid, going back with the process). Call it before tearing down
// what the backends depend on (MPI_Finalize, the CUDA runtime); the exit hook calls it too.
// Idempotent. Afterwards every op, read and sync() throws ofl::Error; tensors may still die.
void shutdown();

MemoryStats memory_stats(const Device& device);
// Returns the device pool's cached blocks (whose work completed) to the device, and the cached
// host staging buffers of the device's type (those transfers to and from it go through).
void empty_cache(const Device& device);
// Restarts memory_stats(device)'s peak_allocated_bytes and peak_reserved_bytes from the current
// values, to measure the peak of one region of a program.
void reset_peak_memory_stats(const Device& device);
// Caps the device pool's reserved bytes (0 = no cap); makes out-of-memory testable.
void set_memory_limit(const Device& device, int64_t bytes);

namespace detail {
Tensor TensorFromVector(const void* data, size_t count, DType dtype, const Shape& shape,
                        const Device& device);
Tensor TensorFromBools(const std::vector<bool>& data, const Shape& shape, const Device& device);
}  // namespace detail

template <class T>
Tensor tensor(const std::vector<T>& data, const Shape& shape, const Device& device) {
  return detail::TensorFromVector(data.data(), data.size(), DTypeOf<T>::value, shape, device);
}
template <>
inline Tensor tensor<bool>(const std::vector<bool>& data, const Shape& shape,
                           const Device& device) {
  return detail::TensorFromBools(data, shape, device);
}

}  // namespace ofl
