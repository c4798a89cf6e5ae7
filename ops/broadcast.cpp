#include "ops/broadcast.h"

#include <string>

#include "oneflow_lite/error.h"
#include "ops/array_ops.h"

namespace ofl::ops {

Shape BroadcastShapes(const char* op, const Shape& a, const Shape& b) {
  const int n = std::max(a.ndim(), b.ndim());
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const int ia = a.ndim() - n + i, ib = b.ndim() - n + i;
    const int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1) {
      throw InvalidArgument(std::string(op) + ": the shapes " + a.str() + " and " + b.str() +
                            " do not broadcast: dim " + std::to_string(i - n) + " is " +
                            std::to_string(da) + " against " + std::to_string(db) +
                            " (sizes must be equal or 1)");
    }
    out[i] = da == 1 ? db : da;
  }
  return Shape(out);
}

Strides BroadcastStrides(const char* op, const Shape& in, const Strides& in_stride,
                         const Shape& out) {
  const int n = out.ndim(), k = in.ndim();
  if (k > n) {
    throw InvalidArgument(std::string(op) + ": shape " + in.str() + " cannot broadcast to " +
                          out.str() + " (more dims)");
  }
  std::vector<int64_t> stride(static_cast<size_t>(n), 0);
  for (int i = 0; i < n; ++i) {
    const int j = i - (n - k);
    if (j < 0) continue;
    if (in[j] == out[i]) {
      stride[i] = in_stride[j];
    } else if (in[j] != 1) {
      throw InvalidArgument(std::string(op) + ": shape " + in.str() + " cannot broadcast to " +
                            out.str() + ": dim " + std::to_string(j) + " is " +
                            std::to_string(in[j]) + " against " + std::to_string(out[i]));
    }
  }
  return Strides(stride);
}

std::vector<TensorMeta> InferBinary(const char* op, const std::vector<TensorMeta>& inputs,
                                    bool allow_integer) {
  const TensorMeta& a = inputs[0];
  const TensorMeta& b = inputs[1];
  CheckDType(op, a.dtype);
  CheckDType(op, b.dtype);
  if (a.dtype != b.dtype) {
    throw InvalidArgument(std::string(op) + ": the operands have different dtypes, " +
                          to_string(a.dtype) + " and " + to_string(b.dtype) +
                          " (no type promotion: convert one of them first)");
  }
  if (a.dtype == DType::kBool) {
    throw InvalidArgument(std::string(op) + ": dtype bool is not supported (arithmetic on bool)");
  }
  if (!allow_integer && !is_floating_point(a.dtype)) {
    throw InvalidArgument(std::string(op) + ": integer tensors (dtype " + to_string(a.dtype) +
                          ") cannot be divided: there is no type promotion to a floating dtype");
  }
  return {TensorMeta{BroadcastShapes(op, a.shape, b.shape), a.dtype}};
}

}  // namespace ofl::ops
