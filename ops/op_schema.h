// OpSchema: what the runtime knows about one op, made from its definition (one file under ops/ per
// built-in op, or a program's ofl::OpDef): inputs, outputs, the argument checks and the output
// shapes and dtypes (infer), how its kernel sees the operands, which tensors its backward needs,
// and the backward itself, written with public ops. The stages of an op call
// (oneflow_lite/functional/op_call.h) and the autograd engine read nothing else.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "oneflow_lite/attrs.h"
#include "oneflow_lite/device.h"
#include "oneflow_lite/extension.h"
#include "oneflow_lite/placement.h"
#include "oneflow_lite/shape.h"
#include "oneflow_lite/tensor.h"
#include "ops/array_ops.h"
#include "ops/sbp_rules.h"

namespace ofl::ops {

// What a backward knows of one input or output of the forward call, saved or not.
struct ArgInfo {
  Shape shape;  // a global tensor's logical shape
  DType dtype = DType::kFloat32;
  Device device;                       // a global tensor's shard's
  std::optional<Placement> placement;  // set for a global tensor
  Sbp sbp = Sbp::broadcast();          // a global tensor's
};

// What a backward gets: the tensors the op asked to save (undefined where it did not), the
// shapes, dtypes and devices of every input and output, and the call's attributes.
struct GradContext {
  uint64_t needs_input_grad;  // bit i: input i wants a gradient (others may be left undefined)
  const std::vector<Tensor>& inputs;
  const std::vector<Tensor>& outputs;
  const std::vector<ArgInfo>& input_info;
  const std::vector<ArgInfo>& output_info;
  const Attrs& attrs;
  // Zeros of a global argument's logical shape in `dtype`, broadcast over its placement (the
  // engine's; ops/grad_util.h's ZerosOfInput calls it).
  Tensor (*global_zeros)(const ArgInfo& info, DType dtype) = nullptr;
  bool needs(int i) const { return (needs_input_grad >> i) & 1; }
};

using InferFn = std::function<std::vector<TensorMeta>(const std::vector<TensorMeta>& inputs,
                                                      const Attrs& attrs)>;
// One gradient per input, each of its input's shape and dtype (an undefined Tensor where the input
// gets none). grad_outputs has one defined gradient per output (zeros where none arrived).
using BackwardFn =
    std::function<std::vector<Tensor>(const GradContext& ctx, const std::vector<Tensor>& grads)>;

// A view op's geometry: the output's shape, strides and offset (from the input's) over the
// input's storage, or nullopt where these strides allow no view (the input is then copied into a
// contiguous tensor first, and that one viewed). Checks its arguments as infer does.
using ViewFn = std::function<std::optional<ViewGeometry>(const Shape& shape, const Strides& stride,
                                                         DType dtype, const Attrs& attrs)>;
// An op made of other ops, called through the public op API (and so on every device); the whole
// call is recorded as one node of this op.
using ComposeFn =
    std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs, const Attrs& attrs)>;

// How a single-input op runs on a global tensor: what each rank knows of the call.
struct GlobalCall {
  const Shape& logical_in;
  const Sbp& in_sbp;  // the input's SBP as the op sees it (broadcast once boxed to it)
  const Shape& logical_out;
  const Attrs& attrs;  // the call's (logical) attributes
};
// The output SBP for the input's, or nullopt when no SBP passes through: the input is then boxed
// to broadcast first and the output is broadcast. Throws InvalidArgument (the same on every rank:
// it sees only logical shapes) for an SBP the op refuses.
using SbpFn = std::function<std::optional<Sbp>(const GlobalCall& call)>;
// The attributes this rank passes to the local op on its shard (physical_in) so that its output
// is its shard (physical_out) of the logical output under out_sbp.
using LocalAttrsFn = std::function<Attrs(const GlobalCall& call, const Sbp& out_sbp,
                                         const Shape& physical_in, const Shape& physical_out)>;

// Picks the signature for the inputs' SBPs (ops/sbp_rules.h); throws InvalidArgument (the same on
// every rank) for a call the op refuses.
using SbpSignatureFn = std::function<SbpSignature(const GlobalInputs& call)>;

// The forms an op runs in: what the local stage of a call (oneflow_lite/functional/op_call.h) does
// with it. A definition is exactly one of them, and what is peculiar to one op is data of its form.

// One OpCall of a kernel into new outputs (`infer` or `infer1` gives their shapes and dtypes).
struct KernelForm {
  // The kernel's op name; empty: the op's own (RegisterOp fills it in).
  std::string kernel;
  // The kernel sees every input expanded (stride 0) to outputs[0]'s shape: the broadcasting of
  // the elementwise ops.
  bool broadcast_inputs = false;
  // When set, the kernel sees outputs[0] as this contiguous shape (same element count), made from
  // inputs[0]: a sum that drops its reduced dims is computed by "reduce_sum_to" into the keepdim
  // shape.
  std::function<Shape(const TensorMeta& in0, const Attrs& attrs)> output_shape;
};

// A view of the input's storage (single input and output, the output of the input's dtype). Where
// the input's strides allow no view, a contiguous copy (the "copy" kernel) is viewed instead.
struct ViewForm {
  ViewFn geometry;
  // OFL_DISABLE_VIEW=1 makes this view a copy through the "copy" kernel (expand).
  bool copy_when_views_disabled = false;
  // A call whose view is the input's own geometry returns the input itself and records nothing
  // (contiguous of a contiguous tensor).
  bool unchanged_returns_input = false;
};

// The ops it is made of, each a call of its own through the public op API (so on every device);
// the whole call is recorded as one node of this op. `infer`, when set, checks the call first.
struct ComposeForm {
  ComposeFn compose;
};

// The kernel writes input 0's own view; the other inputs are seen as input 0's shape (broadcast).
// `infer` checks the call and returns input 0's meta. Autograd records it as PyTorch does: refused
// on a leaf that requires grad, and on a non-leaf it rebases the tensor's history onto a node of
// `node_op`.
struct InPlaceForm {
  // The kernel's op name; empty: the op's own (RegisterOp fills it in).
  std::string kernel;
  // The kernel reads input 0 before writing it (add_), or only writes it (copy_, fill_).
  bool reads_target = true;
  // The op whose backward, saved tensors and node name the recorded call takes ("add" for add_,
  // as PyTorch's AddBackward0); empty: this definition's own.
  std::string node_op;
};

// A copy to the device its "device" attribute (a string) names, by the copy engines of the two
// devices' backends (to). `infer1` checks the call.
struct DeviceCopyForm {};

using OpForm = std::variant<KernelForm, ViewForm, ComposeForm, InPlaceForm, DeviceCopyForm>;

// How the entry casts a call's inputs before its stages run, through the cast op (so autograd
// records the casts, and a cast input's gradient comes back in its own dtype). The result type of
// several inputs is PyTorch's (torch.result_type): the promoted dtype of the inputs with dims,
// unless the 0-dim ones are of a higher kind (bool < integer < float), which then join; so
// int32 (3,) with an int64 0-dim tensor stays int32, and with a float64 0-dim tensor becomes
// float64. A number operand is a 0-dim tensor the caller made in the dtype it stands for.
enum class InputCast : uint8_t {
  kNone,
  // Integer and bool inputs become float32, PyTorch's default float dtype: the floating functions
  // (exp, sqrt, sigmoid, ...) of an integer tensor, as torch.exp(int_tensor).
  kIntToFloat,
  // Integer and bool inputs become int64: sum, as torch.sum of an integer tensor.
  kIntToInt64,
  // Every input becomes the result type: add, sub, mul.
  kResultType,
  // The result type, and float32 when that is an integer or bool: true division (div).
  kResultTypeFloat,
  // Input 0 as it is, the others their result type: where(condition, x, y).
  kResultTypeAfterFirst,
  // In place: the other inputs become input 0's dtype, refused (InvalidArgument) when the result
  // type (kResultTypeFloat's for `division`) cannot be cast to it (can_cast): add_, sub_, mul_.
  kToTarget,
  kToTargetDivision,  // div_
  // In place: the other inputs become input 0's dtype, whatever theirs: copy_.
  kToTargetAlways,
};

struct OpSchema {
  std::string name;
  int id =
      -1;  // the registration's index (RegisterOp): where the call stages keep this op's kernels
  int num_inputs = 1;
  int num_outputs = 1;
  // Any number of inputs from 1 to 64 (num_inputs unused): cat.
  bool variadic_inputs = false;
  // The op's attributes by name and type; a call's Attrs are made for these declarations
  // (Attrs(op.attrs, values...)). RegisterOp names them after the op.
  AttrSchema attrs;
  // What a call does with the op (above).
  OpForm form;
  // Casts of the inputs at the entry (above).
  InputCast input_cast = InputCast::kNone;
  // Checks the inputs and attrs and gives the outputs' shapes and dtypes (kernel, compose and
  // in-place forms; a view's geometry does both).
  InferFn infer;
  // The same for a single-input, single-output op, without the vectors: a built-in op that sets it
  // runs its kernel form with no allocation beyond its output; it must check the output shape
  // (the call trusts it). RegisterOp makes `infer` from it.
  std::function<TensorMeta(const TensorMeta& in, const Attrs& attrs)> infer1;

  // The form, or null when the op has another.
  template <class Form>
  const Form* as() const {
    return std::get_if<Form>(&form);
  }
  bool is_view() const { return std::holds_alternative<ViewForm>(form); }
  bool is_inplace() const { return std::holds_alternative<InPlaceForm>(form); }
  // The kernel a call of this op runs: its kernel or in-place form's, "copy" for a view's copy.
  const std::string& kernel_name() const;

  // Which inputs and outputs the backward reads (bit i: input / output i). Only these are kept
  // alive by the graph, and their versions checked before the backward runs.
  uint64_t save_inputs = 0;
  uint64_t save_outputs = 0;
  // When set, replaces save_inputs for one call: the inputs the backward reads given which inputs
  // want a gradient (bit i: input i requires grad). mul's gradient for a reads b only, so a call
  // where only a requires grad keeps b alone, and a changed in place afterwards (an optimizer step
  // on a weight) does not fail the backward's version check.
  uint64_t (*save_inputs_for)(uint64_t needs_input_grad) = nullptr;
  BackwardFn backward;        // null: backward() through the op throws, naming it
  std::string backward_name;  // "AddBackward"
  bool builtin = true;

  // SBP signature for global inputs (single-input ops). Null: the op refuses global tensors.
  SbpFn sbp;
  LocalAttrsFn local_attrs;  // null: every rank passes the call's attrs
  // SBP signatures of an op of several inputs (each rank passes the call's attrs). Null: the op
  // refuses global tensors.
  SbpSignatureFn sbp_signature;
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
