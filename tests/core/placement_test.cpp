// Placement and Sbp: value semantics (copies, equality, ranks kept in the given order), str() as
// OneFlow prints them, rank lookup, and the InvalidArgument (naming the type, the argument and the
// values) for every rejected argument.
#include <gtest/gtest.h>

#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "oneflow_lite/error.h"
#include "oneflow_lite/placement.h"
#include "tests/ops/ops_test_util.h"

namespace ofl {
namespace {

using ops::testing::ExpectInvalid;

TEST(PlacementTest, KeepsDeviceTypeAndRanksInOrder) {
  const Placement p("cpu", {2, 0, 1});
  EXPECT_EQ(p.device_type(), "cpu");
  EXPECT_EQ(p.ranks(), (std::vector<int>{2, 0, 1}));
  EXPECT_EQ(p.size(), 3);
  EXPECT_EQ(p.str(), "Placement(type=\"cpu\", ranks=[2, 0, 1])");
  EXPECT_EQ(Placement("cuda", {0, 1, 2}).str(), "Placement(type=\"cuda\", ranks=[0, 1, 2])");
  EXPECT_EQ(Placement("cpu", {5}).str(), "Placement(type=\"cpu\", ranks=[5])");
}

TEST(PlacementTest, IndexOfIsThePositionInRanks) {
  const Placement p("cpu", {3, 1, 7});
  EXPECT_EQ(p.index_of(3), 0);
  EXPECT_EQ(p.index_of(1), 1);
  EXPECT_EQ(p.index_of(7), 2);
  EXPECT_EQ(p.index_of(0), -1);
  EXPECT_EQ(p.index_of(-1), -1);
  EXPECT_TRUE(p.contains(7));
  EXPECT_FALSE(p.contains(2));
}

TEST(PlacementTest, ValueSemantics) {
  const Placement a("cpu", {0, 1});
  Placement b = a;
  EXPECT_EQ(a, b);
  EXPECT_FALSE(a != b);
  b = Placement("cuda", {0, 1});
  EXPECT_NE(a, b);                         // device type differs
  EXPECT_NE(a, Placement("cpu", {1, 0}));  // order is part of the value: it fixes parallel ids
  EXPECT_NE(a, Placement("cpu", {0, 1, 2}));
  EXPECT_EQ(a, Placement("cpu", {0, 1}));
  EXPECT_EQ(a.ranks(), (std::vector<int>{0, 1}));  // the copy did not share state
}

TEST(PlacementTest, Streams) {
  std::ostringstream os;
  os << Placement("cpu", {0, 1});
  EXPECT_EQ(os.str(), "Placement(type=\"cpu\", ranks=[0, 1])");
}

TEST(PlacementTest, RejectsEmptyRanks) {
  ExpectInvalid([] { Placement("cpu", {}); }, {"Placement", "ranks", "non-empty", "[]", "cpu"});
}

TEST(PlacementTest, RejectsNegativeRank) {
  ExpectInvalid(
      [] {
        Placement("cpu", {0, -1, 2});
      },
      {"Placement", "rank -1", "index 1", "negative", "[0, -1, 2]"});
}

TEST(PlacementTest, RejectsDuplicateRank) {
  ExpectInvalid(
      [] {
        Placement("cpu", {1, 0, 1});
      },
      {"Placement", "rank 1", "twice", "index 0 and 2", "[1, 0, 1]"});
}

TEST(PlacementTest, RejectsEmptyDeviceType) {
  ExpectInvalid([] { Placement("", {0, 1}); }, {"Placement", "device_type", "non-empty", "[0, 1]"});
}

TEST(SbpTest, Kinds) {
  const Sbp s = Sbp::split(1);
  EXPECT_TRUE(s.is_split());
  EXPECT_FALSE(s.is_broadcast());
  EXPECT_FALSE(s.is_partial_sum());
  EXPECT_EQ(s.axis(), 1);
  const Sbp b = Sbp::broadcast();
  EXPECT_TRUE(b.is_broadcast());
  EXPECT_FALSE(b.is_split());
  EXPECT_FALSE(b.is_partial_sum());
  EXPECT_EQ(b.axis(), -1);
  const Sbp p = Sbp::partial_sum();
  EXPECT_TRUE(p.is_partial_sum());
  EXPECT_FALSE(p.is_split());
  EXPECT_FALSE(p.is_broadcast());
  EXPECT_EQ(p.axis(), -1);
}

TEST(SbpTest, StrAsOneFlowPrints) {
  EXPECT_EQ(Sbp::split(0).str(), "S(0)");
  EXPECT_EQ(Sbp::split(1).str(), "S(1)");
  EXPECT_EQ(Sbp::split(24).str(), "S(24)");
  EXPECT_EQ(Sbp::broadcast().str(), "B");
  EXPECT_EQ(Sbp::partial_sum().str(), "P");
  std::ostringstream os;
  os << Sbp::split(2) << " " << Sbp::partial_sum();
  EXPECT_EQ(os.str(), "S(2) P");
}

TEST(SbpTest, Equality) {
  EXPECT_EQ(Sbp::split(1), Sbp::split(1));
  EXPECT_NE(Sbp::split(0), Sbp::split(1));
  EXPECT_NE(Sbp::split(0), Sbp::broadcast());
  EXPECT_NE(Sbp::broadcast(), Sbp::partial_sum());
  EXPECT_EQ(Sbp::broadcast(), Sbp::broadcast());
  EXPECT_EQ(Sbp::partial_sum(), Sbp::partial_sum());
  Sbp s = Sbp::broadcast();
  s = Sbp::split(3);
  EXPECT_EQ(s, Sbp::split(3));
  EXPECT_FALSE(s != Sbp::split(3));
}

TEST(SbpTest, RejectsNegativeSplitAxis) {
  ExpectInvalid([] { Sbp::split(-1); }, {"Sbp::split", "axis -1", ">= 0"});
  ExpectInvalid([] { Sbp::split(-7); }, {"Sbp::split", "axis -7"});
}

}  // namespace
}  // namespace ofl
