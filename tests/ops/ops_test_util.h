// Helpers for the op-definition tests: checking that a call throws InvalidArgument whose message
// names given pieces (op, argument, values), and a layout oracle that knows nothing of the code
// under test (addresses are computed element by element).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "oneflow_lite/error.h"
#include "oneflow_lite/shape.h"

namespace ofl::ops::testing {

// Fails unless fn throws InvalidArgument with every piece in its message.
inline void ExpectInvalid(const std::function<void()>& fn, const std::vector<std::string>& pieces) {
  try {
    fn();
    ADD_FAILURE() << "no exception; expected InvalidArgument naming "
                  << ::testing::PrintToString(pieces);
  } catch (const InvalidArgument& e) {
    const std::string msg = e.what();
    for (const std::string& p : pieces) {
      EXPECT_NE(msg.find(p), std::string::npos) << "message lacks \"" << p << "\": " << msg;
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

inline std::vector<int64_t> Contiguous(const std::vector<int64_t>& shape) {
  std::vector<int64_t> stride(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    stride[i] = acc;
    acc *= shape[i] > 0 ? shape[i] : 1;
  }
  return stride;
}

inline int64_t Product(const std::vector<int64_t>& v) {
  int64_t n = 1;
  for (int64_t d : v) n *= d;
  return n;
}

// Row-major multi-index of element `linear` of `shape`.
inline std::vector<int64_t> Unravel(int64_t linear, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    idx[i] = linear % shape[i];
    linear /= shape[i];
  }
  return idx;
}

inline int64_t Address(const std::vector<int64_t>& idx, const std::vector<int64_t>& stride) {
  int64_t a = 0;
  for (size_t i = 0; i < idx.size(); ++i) a += idx[i] * stride[i];
  return a;
}

// Address of every element of (shape, stride) in row-major order.
inline std::vector<int64_t> Addresses(const std::vector<int64_t>& shape,
                                      const std::vector<int64_t>& stride) {
  const int64_t n = Product(shape);
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[i] = Address(Unravel(i, shape), stride);
  return out;
}

// Whether some strides address the row-major elements of `addr` as `shape`: true exactly when,
// for every dim of size > 1, stepping its index by one moves the address by the same amount
// wherever the step is taken.
inline bool ViewExists(const std::vector<int64_t>& addr, const std::vector<int64_t>& shape) {
  const int64_t n = Product(shape);
  if (n == 0) return true;
  int64_t block = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] > 1) {
      bool have = false;
      int64_t step = 0;
      for (int64_t l = 0; l < n; ++l) {
        if ((l / block) % shape[d] == shape[d] - 1) continue;
        const int64_t s = addr[l + block] - addr[l];
        if (!have) {
          step = s;
          have = true;
        } else if (s != step) {
          return false;
        }
      }
    }
    block *= shape[d];
  }
  return true;
}

inline std::string Str(const std::vector<int64_t>& v) { return ToString(v); }

}  // namespace ofl::ops::testing
