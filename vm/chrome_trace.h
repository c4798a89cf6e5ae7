// Writes what the VM recorded as Chrome Trace Event JSON ("ofl-trace-1", described in
// vm/TRACE_FORMAT.md) that Perfetto and chrome://tracing load: a track per stream, a track per
// issuing thread, flow arrows for dependence edges, and per device a counter of allocated and
// reserved bytes plus a track of pool events.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vm/trace.h"

namespace ofl::vm {

// The trace as JSON text. Timestamps are microseconds since origin_ns (0: since the earliest
// timestamp in the data). Streams the records name but stream_names lacks get tracks after the
// listed ones. Pool events are attributed to blobs first (AttributePoolEvents).
std::string ToChromeTraceJson(const std::vector<TraceRecord>& records,
                              const std::vector<PoolEventRecord>& pool_events,
                              const std::vector<std::string>& stream_names, int64_t origin_ns = 0);
std::string ToChromeTraceJson(const TraceSession& session);

// Writes ToChromeTraceJson(session) to `path`. Throws InvalidArgument naming the path (and the
// system's reason) when the file cannot be written.
void WriteChromeTrace(const std::string& path, const TraceSession& session);

// Where a process that is rank `rank` of `world` writes its OFL_TRACE file: `path` itself for one
// process, otherwise with ".rank<N>" before the file name's extension ("out.json" ->
// "out.rank1.json", "trace" -> "trace.rank1"), so that the ranks of an MPI job never share a file.
std::string PerRankTracePath(const std::string& path, int rank, int world);

}  // namespace ofl::vm
