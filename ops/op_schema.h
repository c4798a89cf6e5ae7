// OpSchema: what the runtime knows about one op, made from its definition (one file under ops/ per
// built-in op, or a program's ofl::OpDef): inputs, outputs, the argument checks and the output
// shapes and dtypes (infer), how its kernel sees the operands, which tensors its backward needs,
// and the backward itself, written with public ops. The one generic dispatch path
// (oneflow_lite/functional/dispatch.h) and the autograd engine read nothing else.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "oneflow_lite/device.h"
#include "oneflow_lite/extension.h"
#include "oneflow_lite/shape.h"
#include "oneflow_lite/tensor.h"

namespace ofl::ops {

// What a backward knows of one input or output of the forward call, saved or not.
struct ArgInfo {
  Shape shape;
  DType dtype = DType::kFloat32;
  Device device;
};

// What a backward gets: the tensors the op asked to save (undefined where it did not), the
// shapes, dtypes and devices of every input and output, and the call's attributes.
struct GradContext {
  uint64_t needs_input_grad;  // bit i: input i wants a gradient (others may be left undefined)
  const std::vector<Tensor>& inputs;
  const std::vector<Tensor>& outputs;
  const std::vector<ArgInfo>& input_info;
  const std::vector<ArgInfo>& output_info;
  const std::vector<int64_t>& attrs;
  bool needs(int i) const { return (needs_input_grad >> i) & 1; }
};

using InferFn = std::function<std::vector<TensorMeta>(const std::vector<TensorMeta>& inputs,
                                                      const std::vector<int64_t>& attrs)>;
// One gradient per input, each of its input's shape and dtype (an undefined Tensor where the input
// gets none). grad_outputs has one defined gradient per output (zeros where none arrived).
using BackwardFn =
    std::function<std::vector<Tensor>(const GradContext& ctx, const std::vector<Tensor>& grads)>;

struct OpSchema {
  std::string name;
  int num_inputs = 1;
  int num_outputs = 1;
  // Null for the built-in ops that have their own functor (the view ops, whose output shares the
  // input's storage; see functional.h); such ops are recorded by autograd but not call_op'able.
  InferFn infer;
  // The kernel's op name (defaults to `name`).
  std::string kernel;
  // The kernel sees every input expanded (stride 0) to outputs[0]'s shape: the broadcasting of the
  // elementwise ops.
  bool broadcast_inputs = false;
  // When set, the kernel sees outputs[0] as this contiguous shape (same element count): a sum
  // that drops its reduced dims is computed by "reduce_sum_to" into the keepdim shape.
  std::function<Shape(const std::vector<TensorMeta>& inputs, const std::vector<int64_t>& attrs)>
      kernel_output_shape;
  // Which inputs and outputs the backward reads (bit i: input / output i). Only these are kept
  // alive by the graph, and their versions checked before the backward runs.
  uint64_t save_inputs = 0;
  uint64_t save_outputs = 0;
  BackwardFn backward;        // null: backward() through the op throws, naming it
  std::string backward_name;  // "AddBackward"
  bool builtin = true;

  // The kernel per device type, looked up on first use and again after any later register_kernel
  // (kernels::RegistryGeneration); made by RegisterOp.
  struct KernelSlots {
    std::atomic<KernelFn> fn[kMaxDeviceTypes] = {};
    std::atomic<uint64_t> generation[kMaxDeviceTypes] = {};
  };
  std::shared_ptr<KernelSlots> kernel_slots;
};

// Registers a schema (kept for the life of the process). InvalidArgument when the name is taken.
const OpSchema* RegisterOp(OpSchema schema);
// Null when no op has that name.
const OpSchema* FindOp(const std::string& name);
// The registered schema of a built-in op, for its functor (throws Error if it is missing).
const OpSchema& BuiltinOp(const char* name);

// For the built-in op files: registers the schema that `make()` returns while the library loads.
struct OpRegistrar {
  explicit OpRegistrar(OpSchema (*make)()) { RegisterOp(make()); }
};

// "Add" for "add", "RepeatBackward" for "repeat_backward": the default backward node names.
std::string CamelCase(const std::string& name);

// Bit mask helpers for save_inputs / save_outputs.
constexpr uint64_t Bit(int i) { return i < 64 ? uint64_t{1} << i : 0; }

}  // namespace ofl::ops

#define OFL_OP_CONCAT_INNER(a, b) a##b
#define OFL_OP_CONCAT(a, b) OFL_OP_CONCAT_INNER(a, b)
// In an op file: OFL_REGISTER_OP(MakeAddOp); where `OpSchema MakeAddOp()` defines the op.
#define OFL_REGISTER_OP(make) \
  static const ::ofl::ops::OpRegistrar OFL_OP_CONCAT(ofl_op_registrar_, __LINE__)(&make)
