// Shared by the trace tool's tests: a small hand-made ofl-trace-1 document whose summary is known
// exactly, and a check that a recorded trace is self-consistent.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "tools/vm_trace/trace_model.h"

namespace ofl::vm_trace::testing {

// Two streams. #1 from_host (compute, 0-10 us) feeds #2 copy (h2d, 10-40, a cross-stream edge)
// and #3 copy (compute, 10-15); #4 join (compute, 40-50) waits for both copies. Issue times are
// 0, 1, 2, 3. Pool cpu:0: a miss, a hit, a free; counters peak at 256 allocated / 1024 reserved
// and end at 128 / 1024.
inline const char* kHandMadeTrace = R"json({
  "displayTimeUnit": "ns",
  "otherData": {"format": "ofl-trace-1", "version": "0.1.0"},
  "traceEvents": [
    {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "oneflow_lite"}},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "cpu:0/compute"}},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "cpu:0/h2d"}},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1000, "args": {"name": "issue (thread 0)"}},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2000, "args": {"name": "pool cpu:0"}},
    {"ph": "X", "name": "from_host", "cat": "AccessBlobByCallback", "pid": 1, "tid": 1, "ts": 0, "dur": 10,
     "args": {"id": 1, "policy": "AccessBlobByCallback", "op": "from_host", "stream": "cpu:0/compute",
              "reads": [], "writes": [7], "deps": [], "cross_stream": [],
              "issue": 0, "ready": 0, "start": 0, "end": 10,
              "allocs": [{"blob": 7, "bytes": 100, "hit": false}], "frees": []}},
    {"ph": "X", "name": "copy", "cat": "OpCall", "pid": 1, "tid": 2, "ts": 10, "dur": 30,
     "args": {"id": 2, "policy": "OpCall", "op": "copy", "stream": "cpu:0/h2d",
              "reads": [7], "writes": [8], "deps": [1], "cross_stream": [true],
              "issue": 1, "ready": 10, "start": 10, "end": 40, "attrs": "sizes=[4, 5]",
              "allocs": [{"blob": 8, "bytes": 100, "hit": true}], "frees": []}},
    {"ph": "X", "name": "copy", "cat": "OpCall", "pid": 1, "tid": 1, "ts": 10, "dur": 5,
     "args": {"id": 3, "policy": "OpCall", "op": "copy", "stream": "cpu:0/compute",
              "reads": [7], "writes": [9], "deps": [1], "cross_stream": [false],
              "issue": 2, "ready": 10, "start": 10, "end": 15, "allocs": [], "frees": []}},
    {"ph": "X", "name": "join", "cat": "Function", "pid": 1, "tid": 1, "ts": 40, "dur": 10,
     "args": {"id": 4, "policy": "Function", "op": "join", "stream": "cpu:0/compute",
              "reads": [8, 9], "writes": [], "deps": [2, 3, 99], "cross_stream": [true, false, false],
              "issue": 3, "ready": 40, "start": 40, "end": 50, "allocs": [], "frees": [7],
              "error": "join (instruction #4) failed: boom"}},
    {"ph": "i", "s": "t", "name": "issue join", "pid": 1, "tid": 1000, "ts": 3, "args": {"id": 4}},
    {"ph": "s", "id": 1, "name": "dep", "cat": "dep", "pid": 1, "tid": 1, "ts": 10},
    {"ph": "f", "bp": "e", "id": 1, "name": "dep", "cat": "dep", "pid": 1, "tid": 2, "ts": 10},
    {"ph": "i", "s": "t", "name": "alloc", "pid": 1, "tid": 2000, "ts": 0,
     "args": {"bytes": 100, "hit": false, "blob": 7, "owner": "from_host", "allocated": 128, "reserved": 1024}},
    {"ph": "i", "s": "t", "name": "segment_alloc", "pid": 1, "tid": 2000, "ts": 0,
     "args": {"bytes": 1024, "blob": 0, "owner": "from_host", "allocated": 128, "reserved": 1024}},
    {"ph": "i", "s": "t", "name": "alloc", "pid": 1, "tid": 2000, "ts": 10,
     "args": {"bytes": 100, "hit": true, "blob": 8, "owner": "copy", "allocated": 256, "reserved": 1024}},
    {"ph": "i", "s": "t", "name": "free", "pid": 1, "tid": 2000, "ts": 50,
     "args": {"bytes": 128, "blob": 7, "owner": "join", "allocated": 128, "reserved": 1024}},
    {"ph": "C", "name": "memory cpu:0", "pid": 1, "ts": 0, "args": {"allocated": 128, "reserved": 1024}},
    {"ph": "C", "name": "memory cpu:0", "pid": 1, "ts": 10, "args": {"allocated": 256, "reserved": 1024}},
    {"ph": "C", "name": "memory cpu:0", "pid": 1, "ts": 50, "args": {"allocated": 128, "reserved": 1024}}
  ]
})json";

// Every instruction appears once, its edges point to earlier instructions, and its times are
// ordered issue <= ready <= start <= end.
inline void ExpectConsistent(const TraceModel& model) {
  for (size_t i = 0; i < model.instrs.size(); ++i) {
    const TraceInstr& in = model.instrs[i];
    SCOPED_TRACE("instruction #" + std::to_string(in.id) + " " + in.op);
    if (i > 0) EXPECT_LT(model.instrs[i - 1].id, in.id);
    for (uint64_t d : in.deps) EXPECT_LT(d, in.id);
    EXPECT_EQ(in.deps.size(), in.cross_stream.size());
    EXPECT_LE(in.issue, in.ready);
    EXPECT_LE(in.ready, in.start);
    EXPECT_LE(in.start, in.end);
  }
}

}  // namespace ofl::vm_trace::testing
