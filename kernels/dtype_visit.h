// VisitDType: calls f(DTypeTag<T>{}) with the C++ type T that holds elements of a dtype, for the
// kernels that dispatch on every dtype (the casts). Host code of every backend: F16 and BF16 name
// how the backend stores float16 and bfloat16 (the CPU's ofl::float16, the CUDA kernels' Half).
#pragma once

#include <cstdint>
#include <string>

#include "oneflow_lite/dtype.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels {

template <class T>
struct DTypeTag {
  using type = T;
};

template <class F16, class BF16, class F>
void VisitDType(DType d, const char* op, F&& f) {
  switch (d) {
    case DType::kBool:
      return f(DTypeTag<bool>{});
    case DType::kUInt8:
      return f(DTypeTag<uint8_t>{});
    case DType::kInt8:
      return f(DTypeTag<int8_t>{});
    case DType::kInt16:
      return f(DTypeTag<int16_t>{});
    case DType::kInt32:
      return f(DTypeTag<int32_t>{});
    case DType::kInt64:
      return f(DTypeTag<int64_t>{});
    case DType::kFloat16:
      return f(DTypeTag<F16>{});
    case DType::kBFloat16:
      return f(DTypeTag<BF16>{});
    case DType::kFloat32:
      return f(DTypeTag<float>{});
    case DType::kFloat64:
      return f(DTypeTag<double>{});
  }
  throw InvalidArgument(std::string(op) + ": dtype value " + std::to_string(static_cast<int>(d)) +
                        " is not a DType");
}

}  // namespace ofl::kernels
