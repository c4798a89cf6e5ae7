// Helpers for the global-tensor suites: the world placement, a deterministic logical value, its
// slices, each rank's local piece of it under an SBP, and error-message checks.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"
#include "ops/sbp_rules.h"
#include "tests/ops/ops_test_util.h"
#include "vm/virtual_machine.h"
#include "vm/vm_testing.h"

namespace ofl::testing {

// The fixture of tests where a collective's part fails on one rank: skipped with fewer than 2
// ranks; the VM's hang timeout is 60 s during the test (so that a collective left unpaired fails
// with a hang report instead of hanging the suite) and restored after, once Disarm() has undone
// the test's injected faults.
class OneRankFailsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
    saved_timeout_ = vm::VirtualMachine::Get().wait_timeout();
    vm::VmTesting::SetWaitTimeout(60);
  }
  void TearDown() override {
    if (world_size() < 2) return;
    Disarm();
    vm::VmTesting::SetWaitTimeout(saved_timeout_);
  }
  virtual void Disarm() {}

 private:
  double saved_timeout_ = 0;
};

inline Placement World() {
  std::vector<int> ranks;
  for (int r = 0; r < world_size(); ++r) ranks.push_back(r);
  return Placement("cpu", ranks);
}

// The same ranks' sim placement, and the sim device this rank's shards live on there (the
// node-local rank modulo the sim devices).
inline Placement SimOf(const Placement& p) { return Placement("sim", p.ranks()); }
inline Placement SimWorld() { return SimOf(World()); }
inline Device MySim() {
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  const int r = local != nullptr ? std::atoi(local) : rank();
  return Device(DeviceType::kSim, r % device_count(DeviceType::kSim));
}

// Logical value: element i is (i % 7) + 1 (small integers, exact in every type).
template <class T>
std::vector<T> Logical(const Shape& shape) {
  std::vector<T> v(shape.numel());
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<T>(static_cast<int>(i % 7) + 1);
  return v;
}

// The slice [start, start + size) of `v` (shape `shape`) along `axis`, row-major.
template <class T>
std::vector<T> Slice(const std::vector<T>& v, const Shape& shape, int axis, int64_t start,
                     int64_t size) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[d];
  for (int d = axis + 1; d < shape.ndim(); ++d) inner *= shape[d];
  std::vector<T> out;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = start; k < start + size; ++k) {
      for (int64_t i = 0; i < inner; ++i) out.push_back(v[(o * shape[axis] + k) * inner + i]);
    }
  }
  return out;
}

inline Shape WithDim(Shape s, int axis, int64_t size) {
  std::vector<int64_t> d(s.begin(), s.end());
  d[axis] = size;
  return Shape(d);
}

// This rank's local piece of the logical value under `sbp` (P: index 0 holds the value minus the
// others' ones; bool P: index 0 holds it all, since a bool sum is an OR).
template <class T>
Tensor LocalPiece(const std::vector<T>& logical, const Shape& shape, const Sbp& sbp, int me,
                  int n) {
  if (sbp.is_split()) {
    const ops::SplitRange r = ops::BalancedSplit(shape[sbp.axis()], n, me);
    return tensor<T>(Slice(logical, shape, sbp.axis(), r.start, r.size),
                     WithDim(shape, sbp.axis(), r.size), Device("cpu"));
  }
  if (sbp.is_broadcast()) return tensor<T>(logical, shape, Device("cpu"));
  std::vector<T> piece(logical.size());
  for (size_t i = 0; i < piece.size(); ++i) {
    if constexpr (std::is_same_v<T, bool>) {
      piece[i] = me == 0 ? logical[i] : false;
    } else {
      piece[i] =
          me == 0 ? static_cast<T>(static_cast<double>(logical[i]) - (n - 1)) : static_cast<T>(1);
    }
  }
  return tensor<T>(piece, shape, Device("cpu"));
}

// The global tensor over `p` (the world's cpu placement by default) whose logical value is
// `logical`, laid out by `sbp`; on a sim placement each rank's shard is on its own sim device.
inline Tensor GlobalOf(const std::vector<float>& logical, const Shape& shape, const Sbp& sbp,
                       const Placement& p = World()) {
  const int me = std::max(p.index_of(rank()), 0);  // outside: any tensor
  return LocalPiece<float>(logical, shape, sbp, me, p.size())
      .to(p.device_type() == "sim" ? MySim() : Device("cpu"))
      .to_global(p, sbp);
}

// Element by element within rel * |want| + abs.
inline void ExpectClose(const std::vector<float>& got, const std::vector<float>& want,
                        double rel = 1e-5, double abs = 1e-6) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], rel * std::fabs(want[i]) + abs) << "element " << i;
  }
}

inline std::vector<Sbp> AllSbps(const Shape& shape) {
  std::vector<Sbp> s = {Sbp::broadcast(), Sbp::partial_sum()};
  for (int a = 0; a < shape.ndim(); ++a) s.push_back(Sbp::split(a));
  return s;
}

using ops::testing::ExpectInvalid;

}  // namespace ofl::testing
