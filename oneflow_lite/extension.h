// The device-backend and kernel-registration interface: how a new kind of device (an accelerator,
// a simulator, a remote device) plugs into oneflow_lite without a change to the library.
//
// A backend implements DeviceBackend (memory, streams, events, asynchronous copies) once per
// device *type*; kernels are registered per (op, device type). After
//
//   ofl::register_device_backend("mydev", std::make_shared<MyBackend>());
//   ofl::register_kernel("copy", "mydev", &MyCopy);  // and the other ops' kernels (contracts
//   below)
//
// Device("mydev:1") works with every public op, tensor()/from_host(), to_vector(), copy_to_host(),
// Tensor::to(), memory_stats(), empty_cache(), set_memory_limit(), memory_snapshot() and tracing.
//
// How the VM drives a backend (the contract a backend may rely on and must keep):
// - Each device index gets three streams (compute, h2d, d2h), each made with create_stream and
//   served by one VM worker thread, which calls set_device(index) once before its first work.
// - A kernel is *launched* when its KernelFn returns: it must only enqueue its work on
//   ctx.stream and return without waiting for the device. After the launch the VM records an
//   event on that stream; the work is *complete* when query_event says so.
// - Later work on the same stream is launched without waiting. Work on another stream of the same
//   device waits on the device: the VM calls stream_wait_event(its stream, that event). Work on
//   another device, and everything the host does with the data (to_vector, sync(), freeing memory
//   for other streams, empty_cache), waits until the event completed.
// - Device memory comes from allocate() in large segments that the VM's caching pool splits; the
//   host never dereferences a device pointer unless host_accessible() says it may. Host <-> device
//   transfers stage through allocate_host() memory and copy_async() on the h2d / d2h streams.
// - Methods may be called from any thread, concurrently for different streams.
// - Errors: throw ofl::DeviceError (or any std::exception) from any method; the VM poisons the work
//   it covers and re-throws the error at the next wait. query_event throws DeviceError for a fault
//   the device reported. A backend whose device cannot recover from a fault (CUDA's sticky errors)
//   throws DeviceFailed: the VM then marks that device failed, and every later op on it throws
//   DeviceError naming the first fault while other devices keep working.
//
// The kernel contracts of the built-in ops ("copy", "repeat", "reduce_sum_to", "add", "sub", "mul",
// "div", "fill", "empty") are written once, at the end of this file. A kernel reads the call's
// attributes by name from ctx.attributes (oneflow_lite/attrs.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "oneflow_lite/attrs.h"
#include "oneflow_lite/device.h"
#include "oneflow_lite/dtype.h"
#include "oneflow_lite/error.h"
#include "oneflow_lite/shape.h"
#include "oneflow_lite/tensor.h"

namespace ofl {

using NativeStream = void*;  // owned by the backend (a cudaStream_t for CUDA)
using NativeEvent = void*;   // owned by the backend (a cudaEvent_t for CUDA)

enum class CopyKind { kHostToDevice, kDeviceToHost, kDeviceToDevice };

// A fault the device cannot recover from: the VM marks the device failed (see above).
class DeviceFailed : public DeviceError {
 public:
  explicit DeviceFailed(const std::string& msg) : DeviceError(msg) {}
};

// One instance per device type; methods may be called from any thread.
class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  // Devices of this type on this machine; 0: the type exists, no device does.
  virtual int device_count() = 0;
  // Called on each VM worker thread before it runs work for `index`.
  virtual void set_device(int index) {}
  // Raw device memory, aligned to at least 64 bytes (256 is usual); nullptr when out of memory (the
  // pool then frees its cache and retries). Called for large segments, rarely.
  virtual void* allocate(int index, size_t bytes) = 0;
  // Takes back memory from allocate(). Once it is called the memory is the backend's, whether it
  // returns or throws: the VM forgets the pointer before the call and never passes it to
  // deallocate again (a throw is reported by the call that returned the memory, empty_cache() or
  // shutdown, after it tried every other segment). So a backend that frees and then reports an
  // error (cudaFree returning an earlier asynchronous error) must not be asked twice.
  virtual void deallocate(int index, void* ptr, size_t bytes) = 0;
  // Staging memory for host <-> device copies (pinned for CUDA). Default: 64-byte aligned malloc.
  virtual void* allocate_host(size_t bytes);
  virtual void deallocate_host(void* ptr, size_t bytes);  // owns ptr once called, as deallocate
  virtual NativeStream create_stream(int index) = 0;
  virtual void destroy_stream(int index, NativeStream stream) = 0;
  virtual NativeEvent create_event(int index) = 0;
  virtual void destroy_event(int index, NativeEvent event) = 0;
  // Marks all work issued to `stream` so far; re-recording an event moves the mark.
  virtual void record_event(NativeEvent event, NativeStream stream) = 0;
  // True once the marked work finished; throws DeviceError on a device fault.
  virtual bool query_event(NativeEvent event) = 0;
  // Blocks the calling thread until the marked work finished.
  virtual void synchronize_event(NativeEvent event) = 0;
  // Later work on `stream` waits for the marked work; the host does not wait.
  virtual void stream_wait_event(NativeStream stream, NativeEvent event) = 0;
  virtual void copy_async(void* dst, const void* src, size_t bytes, CopyKind kind,
                          NativeStream stream) = 0;

  // Optional properties. A synchronous backend finishes all work before a call returns (its events
  // are complete once recorded): the VM then records no events for it, so it costs nothing extra.
  virtual bool synchronous() const { return false; }
  // Whether the host may read and write device pointers directly (the CPU). When false, every host
  // transfer stages through allocate_host() and copy_async().
  virtual bool host_accessible() const { return false; }
  // Why device_count() is 0 ("no CUDA device is available: <the driver's reason>"): the error an
  // op on a device of this type then throws. Empty: the VM's generic "no such device" message.
  virtual std::string unavailable_reason() { return {}; }
  // The device's own view of its memory for an out-of-memory message ("device free 1.2 GiB of
  // 80 GiB"); empty when the backend cannot tell.
  virtual std::string memory_info(int index) { return {}; }
};

// Registers (or replaces, before any device of the type was used) the backend of a device type.
// `type` is a lower-case identifier ("mydev"). Throws InvalidArgument for a bad name, a null
// backend, a built-in type ("cpu", "sim", "cuda": register yours under a name of its own) and a
// type whose devices were used already (they hold memory and streams of the earlier backend).
void register_device_backend(const std::string& type, std::shared_ptr<DeviceBackend> backend);

// One operand as a kernel sees it.
struct TensorArg {
  void* data = nullptr;  // device pointer to the view's first element (offset applied); may be
                         // null when shape.numel() == 0
  Shape shape;
  Strides stride;  // in elements, one per dim
  DType dtype = DType::kFloat32;
};

// (The pragmas keep the deprecated member's own implicit construction from warning.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
struct KernelContext {
  std::vector<TensorArg> inputs, outputs;
  // The call's attributes, read by name: ctx.attributes.get_ints("repeats") (attrs.h).
  Attrs attributes;
  // Deprecated, kept one release: the integers of an op registered without attribute
  // declarations (OpDef::attrs empty), the same as attributes.get_ints("attrs"); empty for an op
  // with typed attributes.
  [[deprecated("read ctx.attributes by name")]] std::vector<int64_t> attrs;
  NativeStream stream = nullptr;  // launch here; return without waiting for the device
  int device_index = 0;
};
#pragma GCC diagnostic pop

using KernelFn = void (*)(const KernelContext&);

// Registers `fn` for `op` on `device_type` (a built-in type or one given to
// register_device_backend before). A later registration replaces an earlier one. Throws
// InvalidArgument for a null kernel, a device type without a backend, and an op the library does
// not have ("copy", "repeat", "reduce_sum_to", "empty"). An op call on a device type with no
// kernel for it throws InvalidArgument naming the op and the device type.
void register_kernel(const std::string& op, const std::string& device_type, KernelFn fn);

// ---- Ops defined outside the library ---------------------------------------------------------
// As the built-in ops are: the op's definition (checks, output shapes and dtypes, backward) with
// register_op, its kernel per device type with register_kernel(name, device_type, fn). call_op
// then runs it through the entry and stages every op call takes (check, infer, an OpCall on the
// VM, autograd's node; docs/op_pipeline.md).
struct TensorMeta {
  Shape shape;
  DType dtype;
};

using OpInferFn = std::function<std::vector<TensorMeta>(const std::vector<TensorMeta>& inputs,
                                                        const Attrs& attrs)>;
using OpBackwardFn = std::function<std::vector<Tensor>(
    const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs, const Attrs& attrs,
    const std::vector<Tensor>& grad_outputs)>;

// OpDef's functions. Each takes the attributes as `const Attrs&`; one written before typed
// attributes, taking the integers of an op without declarations as `const std::vector<int64_t>&`,
// is accepted too (deprecated, one release: it gets Attrs::LegacyInts()).
struct OpDefInfer : OpInferFn {
  OpDefInfer() = default;
  template <class F,
            std::enable_if_t<std::is_invocable_v<F&, const std::vector<TensorMeta>&, const Attrs&>,
                             int> = 0>
  OpDefInfer(F f) : OpInferFn(std::move(f)) {}  // NOLINT(google-explicit-constructor)
  template <
      class F,
      std::enable_if_t<
          !std::is_invocable_v<F&, const std::vector<TensorMeta>&, const Attrs&> &&
              std::is_invocable_v<F&, const std::vector<TensorMeta>&, const std::vector<int64_t>&>,
          int> = 0>
  [[deprecated("take the attributes as const ofl::Attrs&")]] OpDefInfer(F f)  // NOLINT
      : OpInferFn([f = std::move(f)](const std::vector<TensorMeta>& in, const Attrs& attrs) {
          return f(in, attrs.LegacyInts());
        }) {}
};
struct OpDefBackward : OpBackwardFn {
  OpDefBackward() = default;
  template <class F, std::enable_if_t<std::is_invocable_v<F&, const std::vector<Tensor>&,
                                                          const std::vector<Tensor>&, const Attrs&,
                                                          const std::vector<Tensor>&>,
                                      int> = 0>
  OpDefBackward(F f) : OpBackwardFn(std::move(f)) {}  // NOLINT(google-explicit-constructor)
  template <class F,
            std::enable_if_t<
                !std::is_invocable_v<F&, const std::vector<Tensor>&, const std::vector<Tensor>&,
                                     const Attrs&, const std::vector<Tensor>&> &&
                    std::is_invocable_v<F&, const std::vector<Tensor>&, const std::vector<Tensor>&,
                                        const std::vector<int64_t>&, const std::vector<Tensor>&>,
                int> = 0>
  [[deprecated("take the attributes as const ofl::Attrs&")]] OpDefBackward(F f)  // NOLINT
      : OpBackwardFn([f = std::move(f)](const std::vector<Tensor>& in,
                                        const std::vector<Tensor>& out, const Attrs& attrs,
                                        const std::vector<Tensor>& g) {
          return f(in, out, attrs.LegacyInts(), g);
        }) {}
};

struct OpDef {
  std::string name;  // lower-case identifier; not a built-in op's name
  int num_inputs = 1;
  int num_outputs = 1;
  // The op's attributes by name and type, in the order of a positional call ({{"alpha",
  // AttrType::kDouble}}). None declared: the op takes one int list named "attrs", call_op's
  // integers (deprecated, kept one release for ops written before typed attributes).
  std::vector<AttrDef> attrs;
  // Checks inputs and attrs (throws InvalidArgument naming the op, the argument and the values)
  // and returns the outputs' shapes and dtypes. Runs at the call, on the caller's thread.
  OpDefInfer infer;
  // Optional. The gradients of the inputs (an undefined Tensor where an input gets none), written
  // with public ops. Without it, backward() through the op throws InvalidArgument naming the op.
  OpDefBackward backward;
};
// InvalidArgument for a bad or taken name, a count below 0, no infer, and an attribute whose name
// is no lower-case identifier or is declared twice.
void register_op(OpDef def);
// Outputs are new contiguous tensors on the inputs' device; the kernel registered with
// register_kernel(name, device_type, fn) computes them (inputs arrive with their own strides).
// `attrs` by name, in any order: call_op("axpy", {x, y}, {{"alpha", 2.0}}); an int converts to a
// double or a scalar attribute, an int list to a shape. InvalidArgument: unknown op (named), wrong
// input count, inputs on different devices, no kernel for the device type (names the op and the
// type), an attribute the op does not declare, one missing or given twice, or one of another type
// (names the op, the attribute and the value). Built-in ops with a generic form ("add", "sum",
// ...) may be called this way too.
std::vector<Tensor> call_op(const std::string& name, const std::vector<Tensor>& inputs,
                            const NamedAttrs& attrs = {});
// Deprecated, kept one release: the integers of an op registered without attribute declarations.
// InvalidArgument for an op with typed attributes (the message lists them).
[[deprecated(
    "pass the attributes by name: call_op(name, inputs, {{\"alpha\", 2.0}})")]] std::vector<Tensor>
call_op(const std::string& name, const std::vector<Tensor>& inputs,
        const std::vector<int64_t>& attrs);

// Kernel contracts: what the kernel of each built-in op must do (the CPU kernels implement
// exactly these; every kernel of an op, on every device, throws the same InvalidArgument for bad
// arguments before it touches memory). Strides are in elements; an empty output does nothing (its
// data may be null); a 0-dim tensor has one element. Outputs are never aliased with an input unless
// a contract says so.
// "copy":  inputs[0] and outputs[0] have the same shape and dtype and any strides (an expanded
//          input has stride 0 on broadcast dims); outputs[0][idx] = inputs[0][idx] for every index.
// "repeat": inputs[0] has shape s (k dims, any strides); outputs[0] is contiguous with n >= k dims;
//          the attribute "repeats" (int list) holds the n repeat counts r; out.shape[i] = r[i] *
//          s'[i] where s' is s with n - k leading 1s; out[idx] = in[idx mod s'].
// "reduce_sum_to": inputs[0] has shape D (n dims, any strides); outputs[0] is contiguous with n
//          dims, each D[i] or 1; dims where the output is 1 and D is not are summed. Floats
//          accumulate in double in a fixed order (16-bit results rounded once; float16/bfloat16
//          may also sum into float32), integers exactly in 64 bits; bool throws InvalidArgument.
// "add", "sub", "mul", "div": inputs[0] (a), inputs[1] (b) and outputs[0] have the same shape and
//          dtype. The inputs have any strides (stride 0 on broadcast dims: this is how broadcasting
//          arrives); the output has any strides whose elements do not overlap, and may be exactly
//          the view of either input or of both (the same data pointer and strides: an in-place
//          a += b, or x *= x); no other overlap is allowed. out[idx] = a[idx] op b[idx]. Floating
//          dtypes compute in their own type (float16 and bfloat16 in float, rounded once to nearest
//          even); integers wrap around as two's complement. InvalidArgument for differing shapes or
//          dtypes, operand counts other than 2 and 1, dtype bool, and "div" on an integer dtype.
// "fill":  no inputs, one output with any non-overlapping strides and any dtype; the attribute
//          "value" (scalar) holds the value: a bool, an int64, a uint64 or a double (so that an
//          integer reaches an integer dtype exactly). Every element becomes the value converted to
//          the dtype: bool is value != 0, a double to an integer truncates toward zero as
//          static_cast does (wrapping to the width; NaN gives 0), an integer to an integer keeps
//          its low bits, floats round the exact value once to nearest even.
// "empty": no inputs, one output; nothing to do (the output only needs its memory).

}  // namespace ofl
