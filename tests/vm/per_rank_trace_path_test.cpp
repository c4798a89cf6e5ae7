// Where each rank of an MPI job writes its OFL_TRACE file: never the same file as another rank.
#include <gtest/gtest.h>

#include "vm/chrome_trace.h"

namespace ofl::vm {
namespace {

TEST(PerRankTracePathTest, OneProcessWritesThePathItself) {
  EXPECT_EQ(PerRankTracePath("out.json", 0, 1), "out.json");
}

TEST(PerRankTracePathTest, EachRankGetsItsNumberBeforeTheExtension) {
  EXPECT_EQ(PerRankTracePath("out.json", 0, 4), "out.rank0.json");
  EXPECT_EQ(PerRankTracePath("/tmp/a.b/out.json", 3, 4), "/tmp/a.b/out.rank3.json");
  EXPECT_EQ(PerRankTracePath("trace", 1, 2), "trace.rank1");
  EXPECT_EQ(PerRankTracePath("/tmp/a.b/trace", 1, 2), "/tmp/a.b/trace.rank1");
  EXPECT_EQ(PerRankTracePath("dir/.trace", 1, 2), "dir/.trace.rank1");
}

}  // namespace
}  // namespace ofl::vm
