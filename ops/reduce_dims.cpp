#include "ops/reduce_dims.h"

#include <string>

#include "oneflow_lite/error.h"

namespace ofl::ops {

int WrapDim(const char* op, int64_t dim, int ndim) {
  const int64_t lo = ndim == 0 ? -1 : -ndim, hi = ndim == 0 ? 0 : ndim - 1;
  if (dim < lo || dim > hi) {
    throw InvalidArgument(std::string(op) + ": dim " + std::to_string(dim) +
                          " is out of range for a " + std::to_string(ndim) +
                          "-dim tensor (expected " + std::to_string(lo) + " to " +
                          std::to_string(hi) + ")");
  }
  if (ndim == 0) return 0;
  return static_cast<int>(dim < 0 ? dim + ndim : dim);
}

std::vector<bool> ReducedDims(const char* op, int ndim, const IntList& dims) {
  std::vector<bool> reduced(static_cast<size_t>(ndim), dims.empty());
  for (int64_t d : dims) {
    const int w = WrapDim(op, d, ndim);
    if (ndim == 0) continue;  // a 0-dim tensor's dim 0 / -1 is the tensor itself
    if (reduced[static_cast<size_t>(w)]) {
      throw InvalidArgument(std::string(op) + ": dim " + std::to_string(w) +
                            " appears more than once in dims");
    }
    reduced[static_cast<size_t>(w)] = true;
  }
  return reduced;
}

Shape KeepdimShape(const Shape& in, const std::vector<bool>& reduced) {
  std::vector<int64_t> out(in.begin(), in.end());
  for (size_t i = 0; i < out.size(); ++i) {
    if (reduced[i]) out[i] = 1;
  }
  return Shape(out);
}

Shape DroppedShape(const Shape& in, const std::vector<bool>& reduced) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < reduced.size(); ++i) {
    if (!reduced[i]) out.push_back(in[static_cast<int>(i)]);
  }
  return Shape(out);
}

int64_t ReducedCount(const Shape& in, const std::vector<bool>& reduced) {
  int64_t n = 1;
  for (size_t i = 0; i < reduced.size(); ++i) {
    if (reduced[i]) n *= in[static_cast<int>(i)];
  }
  return n;
}

}  // namespace ofl::ops
