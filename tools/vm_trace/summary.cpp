// Computes and prints the trace summary (see summary.h).
#include "tools/vm_trace/summary.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "tools/vm_trace/global_trace.h"

namespace ofl::vm_trace {
namespace {

CriticalPath FindCriticalPath(const TraceModel& model) {
  const size_t n = model.instrs.size();
  std::vector<double> best(n, 0);
  std::vector<int64_t> prev(n, -1);
  CriticalPath path;
  int64_t tail = -1;
  for (size_t i = 0; i < n; ++i) {
    const TraceInstr& in = model.instrs[i];
    double longest_pred = 0;
    for (uint64_t d : in.deps) {
      const int64_t j = model.IndexOf(d);
      // Edges point to earlier instructions; anything else (or outside the trace) is ignored.
      if (j < 0 || static_cast<size_t>(j) >= i) continue;
      if (prev[i] < 0 || best[j] > longest_pred) {
        longest_pred = best[j];
        prev[i] = j;
      }
    }
    best[i] = longest_pred + std::max(0.0, in.duration());
    if (tail < 0 || best[i] > path.run_us) {
      path.run_us = best[i];
      tail = static_cast<int64_t>(i);
    }
  }
  for (int64_t i = tail; i >= 0; i = prev[i]) path.ids.push_back(model.instrs[i].id);
  std::reverse(path.ids.begin(), path.ids.end());
  return path;
}

std::string Bytes(int64_t b) {
  char buf[64];
  const double v = static_cast<double>(b);
  if (std::llabs(b) >= (int64_t{1} << 30)) {
    std::snprintf(buf, sizeof buf, "%.2f GiB", v / (1 << 30));
  } else if (std::llabs(b) >= (int64_t{1} << 20)) {
    std::snprintf(buf, sizeof buf, "%.2f MiB", v / (1 << 20));
  } else if (std::llabs(b) >= 1024) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", v / 1024);
  } else {
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(b));
  }
  return buf;
}

// Replays a pool's events over addresses and returns the largest free range inside its segments
// at the end, or -1 when an event lacks an address or a block lies outside every known segment
// (the trace began after the segment was obtained).
int64_t LargestFreeBlock(const std::vector<PoolEvent>& events) {
  std::map<uint64_t, int64_t> segments, blocks;  // address -> bytes
  for (const PoolEvent& e : events) {
    if (e.address == 0) return -1;
    if (e.kind == "segment_alloc") {
      segments[e.address] = e.bytes;
    } else if (e.kind == "segment_free") {
      segments.erase(e.address);
    } else if (e.kind == "alloc") {
      blocks[e.address] = e.bytes;
    } else if (e.kind == "free") {
      blocks.erase(e.address);
    }
  }
  if (segments.empty()) return -1;
  int64_t largest = 0;
  auto block = blocks.begin();
  for (const auto& [seg, seg_bytes] : segments) {
    const uint64_t seg_end = seg + static_cast<uint64_t>(seg_bytes);
    if (block != blocks.end() && block->first < seg) return -1;  // a block outside any segment
    uint64_t cursor = seg;
    for (; block != blocks.end() && block->first < seg_end; ++block) {
      if (block->first > cursor) {
        largest = std::max<int64_t>(largest, static_cast<int64_t>(block->first - cursor));
      }
      cursor = std::max<uint64_t>(cursor, block->first + static_cast<uint64_t>(block->second));
    }
    if (cursor < seg_end) {
      largest = std::max<int64_t>(largest, static_cast<int64_t>(seg_end - cursor));
    }
  }
  if (block != blocks.end()) return -1;
  return largest;
}

}  // namespace

double UnionLength(std::vector<std::pair<double, double>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  double total = 0;
  double cur_start = 0, cur_end = -std::numeric_limits<double>::infinity();
  for (const auto& [s, e] : intervals) {
    if (s > cur_end) {
      if (cur_end > cur_start) total += cur_end - cur_start;
      cur_start = s;
      cur_end = e;
    } else {
      cur_end = std::max(cur_end, e);
    }
  }
  if (cur_end > cur_start) total += cur_end - cur_start;
  return total;
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(p / 100.0 * static_cast<double>(values.size()));
  const size_t idx = static_cast<size_t>(std::max(1.0, rank)) - 1;
  return values[std::min(idx, values.size() - 1)];
}

Summary Summarize(const TraceModel& model) {
  Summary s;
  s.instructions = static_cast<int64_t>(model.instrs.size());
  double begin = std::numeric_limits<double>::infinity();
  double end = -std::numeric_limits<double>::infinity();
  std::map<std::string, std::vector<const TraceInstr*>> by_op;
  std::map<int64_t, std::vector<std::pair<double, double>>> by_lane;
  for (const TraceInstr& in : model.instrs) {
    begin = std::min({begin, in.issue, in.start});
    end = std::max(end, in.end);
    by_op[OpFamily(in)].push_back(&in);
    by_lane[in.tid].emplace_back(in.start, in.end);
    if (!in.error.empty()) ++s.errors;
    for (size_t k = 0; k < in.deps.size(); ++k) {
      if (model.IndexOf(in.deps[k]) < 0) continue;
      ++s.dep_edges;
      if (k < in.cross_stream.size() && in.cross_stream[k]) ++s.cross_stream_edges;
    }
  }
  s.span_us = model.instrs.empty() ? 0 : std::max(0.0, end - begin);

  for (const auto& [op, instrs] : by_op) {
    OpStats o;
    o.op = op;
    o.count = static_cast<int64_t>(instrs.size());
    std::vector<double> latency, run;
    for (const TraceInstr* in : instrs) {
      latency.push_back(in->latency());
      run.push_back(in->duration());
      o.total_run_us += in->duration();
      if (!in->error.empty()) ++o.errors;
    }
    o.p50_latency_us = Percentile(latency, 50);
    o.p99_latency_us = Percentile(latency, 99);
    o.p50_run_us = Percentile(run, 50);
    s.ops.push_back(std::move(o));
  }
  std::stable_sort(s.ops.begin(), s.ops.end(),
                   [](const OpStats& a, const OpStats& b) { return a.count > b.count; });

  for (const TraceLane& lane : model.lanes) {
    LaneStats l;
    l.name = lane.name;
    auto it = by_lane.find(lane.tid);
    if (it != by_lane.end()) {
      l.instructions = static_cast<int64_t>(it->second.size());
      l.busy_us = UnionLength(it->second);
    }
    l.busy_fraction = s.span_us > 0 ? std::min(1.0, l.busy_us / s.span_us) : 0;
    s.lanes.push_back(std::move(l));
  }

  s.critical_path = FindCriticalPath(model);

  // Pools: events give hits and counts; counters (or the events' own totals) give the bytes.
  std::map<std::string, PoolStats> pools;
  for (const auto& [device, events] : model.pool) {
    PoolStats& p = pools[device];
    p.device = device;
    p.largest_free_block = LargestFreeBlock(events);
    for (const PoolEvent& e : events) {
      if (e.kind == "alloc") {
        ++p.allocs;
        if (e.hit) ++p.hits;
      } else if (e.kind == "free") {
        ++p.frees;
      } else if (e.kind == "segment_alloc") {
        ++p.segment_allocs;
      } else if (e.kind == "segment_free") {
        ++p.segment_frees;
      }
      if (e.allocated >= 0 && e.reserved >= 0) {
        p.has_memory = true;
        p.peak_allocated = std::max(p.peak_allocated, e.allocated);
        p.peak_reserved = std::max(p.peak_reserved, e.reserved);
        p.end_allocated = e.allocated;
        p.end_reserved = e.reserved;
      }
    }
  }
  for (const auto& [device, samples] : model.memory) {
    PoolStats& p = pools[device];
    p.device = device;
    if (samples.empty()) continue;
    p.has_memory = true;
    p.peak_allocated = 0;
    p.peak_reserved = 0;
    for (const MemorySample& m : samples) {
      p.peak_allocated = std::max(p.peak_allocated, m.allocated);
      p.peak_reserved = std::max(p.peak_reserved, m.reserved);
    }
    p.end_allocated = samples.back().allocated;
    p.end_reserved = samples.back().reserved;
  }
  if (model.pool.empty()) {
    // No pool track: count the allocations the instructions themselves recorded.
    int64_t allocs = 0, hits = 0;
    for (const TraceInstr& in : model.instrs) {
      for (const TraceAlloc& a : in.allocs) {
        ++allocs;
        if (a.hit) ++hits;
      }
    }
    if (allocs > 0) {
      const std::string device = pools.size() == 1 ? pools.begin()->first : "all devices";
      PoolStats& p = pools[device];
      p.device = device;
      p.allocs = allocs;
      p.hits = hits;
    }
  }
  for (auto& [device, p] : pools) {
    if (p.allocs > 0) p.hit_rate = static_cast<double>(p.hits) / static_cast<double>(p.allocs);
    s.pools.push_back(p);
  }
  return s;
}

void PrintSummary(const Summary& s, const TraceModel& model, std::FILE* out,
                  size_t max_path_lines) {
  std::fprintf(out, "\n== summary: %lld instructions over %.1f us",
               static_cast<long long>(s.instructions), s.span_us);
  if (!model.format.empty()) std::fprintf(out, " (%s", model.format.c_str());
  if (!model.format.empty() && !model.version.empty())
    std::fprintf(out, ", oneflow_lite %s", model.version.c_str());
  if (!model.format.empty()) std::fprintf(out, ")");
  std::fprintf(out, "; %lld dependence edges (%lld cross-stream); %lld failed\n",
               static_cast<long long>(s.dep_edges), static_cast<long long>(s.cross_stream_edges),
               static_cast<long long>(s.errors));
  if (s.instructions == 0) {
    std::fprintf(out, "the trace holds no instructions\n");
  } else {
    // As wide as the longest op name (collectives' are long), up to a limit.
    int width = 24;
    for (const OpStats& o : s.ops) width = std::max(width, static_cast<int>(o.op.size()));
    width = std::min(width, 64);
    std::fprintf(out, "\n%-*s %8s %14s %14s %12s %14s\n", width, "op", "count", "p50 issue->end",
                 "p99 issue->end", "p50 run", "total run");
    for (const OpStats& o : s.ops) {
      std::fprintf(out, "%-*s %8lld %11.1f us %11.1f us %9.1f us %11.1f us%s\n", width,
                   o.op.c_str(), static_cast<long long>(o.count), o.p50_latency_us,
                   o.p99_latency_us, o.p50_run_us, o.total_run_us,
                   o.errors > 0 ? ("  (" + std::to_string(o.errors) + " failed)").c_str() : "");
    }
    std::fprintf(out, "\n%-24s %8s %12s %8s\n", "stream", "instrs", "busy", "busy %");
    for (const LaneStats& l : s.lanes) {
      std::fprintf(out, "%-24s %8lld %9.1f us %7.1f%%\n", l.name.c_str(),
                   static_cast<long long>(l.instructions), l.busy_us, 100.0 * l.busy_fraction);
    }
    const CriticalPath& cp = s.critical_path;
    std::fprintf(out,
                 "\ncritical path: %zu instruction(s), %.1f us of run time (%.1f%% of the span)\n",
                 cp.ids.size(), cp.run_us, s.span_us > 0 ? 100.0 * cp.run_us / s.span_us : 0.0);
    const size_t n = cp.ids.size();
    const size_t keep = std::max<size_t>(2, max_path_lines);
    for (size_t k = 0; k < n; ++k) {
      if (n > keep && k == keep / 2) {
        std::fprintf(out, "  ... %zu more ...\n", n - keep);
        k = n - (keep - keep / 2) - 1;
        continue;
      }
      const TraceInstr& in = model.instrs[static_cast<size_t>(model.IndexOf(cp.ids[k]))];
      std::fprintf(out, "  %s#%-6llu %-20s %-16s %9.1f us\n", k == 0 ? "  " : "->",
                   static_cast<unsigned long long>(in.id), in.op.c_str(), in.stream.c_str(),
                   in.duration());
    }
  }
  if (s.pools.empty()) {
    std::fprintf(out, "\nallocator: the trace records no allocations\n");
  }
  for (const PoolStats& p : s.pools) {
    std::fprintf(out, "\nallocator %s: ", p.device.c_str());
    if (p.allocs > 0) {
      std::fprintf(out, "%lld allocations: %lld served from the cache, %lld not (hit rate %.1f%%)",
                   static_cast<long long>(p.allocs), static_cast<long long>(p.hits),
                   static_cast<long long>(p.allocs - p.hits), 100.0 * p.hit_rate);
    } else {
      std::fprintf(out, "no allocations");
    }
    if (p.frees > 0 || p.segment_allocs > 0 || p.segment_frees > 0) {
      std::fprintf(out, "\n  %lld frees; segments: %lld obtained, %lld returned",
                   static_cast<long long>(p.frees), static_cast<long long>(p.segment_allocs),
                   static_cast<long long>(p.segment_frees));
    }
    std::fprintf(out, "\n");
    if (p.has_memory) {
      std::fprintf(out,
                   "  peak allocated %s, peak reserved %s\n"
                   "  at the end: allocated %s, reserved %s, fragmentation (reserved - allocated) "
                   "%s\n",
                   Bytes(p.peak_allocated).c_str(), Bytes(p.peak_reserved).c_str(),
                   Bytes(p.end_allocated).c_str(), Bytes(p.end_reserved).c_str(),
                   Bytes(p.fragmentation()).c_str());
      if (p.largest_free_block >= 0) {
        std::fprintf(out,
                     "  largest free block at the end %s (the largest request the cache could "
                     "serve without growing)\n",
                     Bytes(p.largest_free_block).c_str());
      }
    }
  }
}

}  // namespace ofl::vm_trace
