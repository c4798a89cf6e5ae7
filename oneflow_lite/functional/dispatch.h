// The one generic path of an op call, driven by the op's definition (ops/op_schema.h): check the
// inputs, infer the outputs (errors thrown here, before anything is queued), then a view of the
// input, the ops it is composed of, or one OpCall with the op's kernel for the device type; then
// record the autograd node. A global input goes through the op's SBP signature to the same path on
// this rank's shard.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/kernel.h"
#include "oneflow_lite/tensor.h"
#include "ops/op_schema.h"

namespace ofl::functional {

std::vector<Tensor> Dispatch(const ops::OpSchema& op, const std::vector<Tensor>& inputs,
                             const std::vector<int64_t>& attrs);
// The single-input, single-output call (the built-in array ops): the same path without the
// vectors; a view op's call never builds one.
Tensor Dispatch(const ops::OpSchema& op, const Tensor& x, const std::vector<int64_t>& attrs);
// The kernel of `op` for `type`, cached in the schema until the next registration;
// InvalidArgument naming the op and the device type when there is none.
kernels::KernelFn KernelFor(const ops::OpSchema& op, DeviceType type);

}  // namespace ofl::functional
