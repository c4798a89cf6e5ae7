// ofl_vm_trace: runs a built-in workload through the VM with tracing on (the demo by default),
// prints its results, one line per instruction and a summary, and writes the trace as Chrome JSON
// (Perfetto, chrome://tracing) or as an SVG timeline; `summarize` does the same for any recorded
// trace. Exit codes: 0 success, 1 the workload failed, 2 a usage or file error.
#include <CLI/CLI.hpp>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"
#include "oneflow_lite/settings.h"
#include "tools/vm_trace/global_trace.h"
#include "tools/vm_trace/instruction_table.h"
#include "tools/vm_trace/progress.h"
#include "tools/vm_trace/rank_exchange.h"
#include "tools/vm_trace/rank_summary.h"
#include "tools/vm_trace/summary.h"
#include "tools/vm_trace/svg_timeline.h"
#include "tools/vm_trace/trace_model.h"
#include "tools/vm_trace/trace_recorder.h"
#include "tools/vm_trace/workloads.h"
#include "vm/virtual_machine.h"

namespace {

using ofl::vm_trace::TraceError;

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
// Above this many instructions the table is left out unless --table asks for it.
constexpr size_t kTableLimit = 300;

const char* kFooter = R"(
SUMMARIZE
  ofl_vm_trace summarize TRACE.json [--svg OUT.svg] [--table] [--path-lines N] [--rank N]
  reads a recorded trace and prints its summary (and, with --table, the instruction table);
  --svg also draws its timeline; of a merged trace, --rank N picks the rank they show.
  See 'ofl_vm_trace summarize --help'.

WORKLOADS
%WORKLOADS%

GLOBAL (several processes)
  mpiexec -n 4 ofl_vm_trace --workload global --chrome global.json
  runs a global-tensor program on 4 ranks. Each rank records its own trace; rank 0 gathers
  them (through global tensors) and writes one Chrome trace with a process per rank ("rank N",
  its streams as threads), every time moved onto the earliest rank's trace start (steady_clock,
  which the processes of one host share; clocks of different hosts are not aligned), and for
  each collective flow arrows (cat "collective") from the rank that arrived last to each rank
  that waited for it. Collectives are paired across ranks by their op name's "#<seq> over
  [<ranks>]". Only rank 0 writes files and prints: rank 0's table and summary, then per rank its
  busy time (non-collective run time plus the collectives' transfers), the time it waited in
  collectives (per collective: the last rank's start - its own start) and how often it arrived
  last; summarize prints the same for the file. Without mpiexec it runs as one process and
  writes an ordinary trace.

OUTPUT
  Without summarize, the workload's results are printed, then one line per instruction (when
  there are at most 300, or with --table): id, policy, op, stream, blobs read/written, what it
  waited for (#id(fifo) = a predecessor on the same stream, ordered by the queue; #id(event) = a
  cross-stream wait), allocation (bytes, pool hit or miss), the blobs of dead tensors freed right
  after it ran, and issue -> ready -> start -> end in microseconds since the trace began.
  The summary lists per op the count and the p50/p99 issue->end latency; per stream the busy
  fraction (time covered by its instructions / the trace's span); the critical path (the chain
  of dependence edges with the most run time, by instruction id); and per device the caching
  pool's hit rate, peak allocated/reserved bytes and fragmentation (reserved - allocated at the
  end, and the largest free block when the trace holds the pool's addresses).

TRACE FORMAT ("ofl-trace-1")
  Chrome Trace Event JSON that https://ui.perfetto.dev and chrome://tracing open: one track per
  VM stream (tid 1 + stream index, named "cpu:0/compute" ...), an "issue" track with an instant
  per issued instruction, one "X" event per instruction whose args hold id, policy, op, stream,
  reads, writes, deps, cross_stream, issue, ready, start, end, allocs, frees (and error), flow
  arrows ("s"/"f", cat "dep") for dependence edges, a counter "memory <device>" with allocated
  and reserved bytes, and pool instants (alloc/free/segment_alloc/segment_free) on a
  "pool <device>" track. Times are microseconds since the trace started. A merged trace (see
  GLOBAL) holds a process per rank. summarize reads any file of this kind, and any Chrome trace
  with "X" events.

ENVIRONMENT
  OFL_TRACE=<path.json>  record a trace of any oneflow_lite program (written at exit), then
                         look at it with: ofl_vm_trace summarize <path.json> --svg out.svg
                         (for ofl_vm_trace itself it works like --chrome <path.json>)
  OFL_LOG_LEVEL=<level>  the VM's log level: trace, debug, info, warn (default), error, off;
                         debug logs every instruction as [#id stream] issued/start/done
  OFL_VM_SYNC=1          every op waits and throws at its call (a trace of serial execution)
  OFL_DISABLE_VIEW=1     expand runs as a copy op instead of a view

EXIT STATUS
  0 success; 1 the workload failed (a device this build cannot use, such as cuda:0 without
  CUDA, or an error raised inside the VM); 2 a bad flag or value, an unknown workload, an
  unreadable or invalid trace file, or an output file that cannot be written.

EXAMPLES
  ofl_vm_trace                                   the demo: results, instruction table, summary
  ofl_vm_trace --workload fanout --chrome f.json --svg f.svg
  ofl_vm_trace --workload stress --iters 100000 --chrome s.json
  mpiexec -n 4 ofl_vm_trace --workload global --chrome g.json && ofl_vm_trace summarize g.json
  OFL_TRACE=my.json ./my_program && ofl_vm_trace summarize my.json --svg my.svg)";

std::string FooterText() {
  std::string workloads;
  for (const auto& w : ofl::vm_trace::Workloads()) {
    char line[96];
    std::snprintf(line, sizeof line, "  %-8s (--iters: %s, default %lld)\n", w.name.c_str(),
                  w.iters_meaning.c_str(), static_cast<long long>(w.default_iters));
    workloads += line;
    workloads += "           " + w.help + "\n";
  }
  if (!workloads.empty()) workloads.pop_back();
  std::string footer = kFooter;
  footer.replace(footer.find("%WORKLOADS%"), 11, workloads);
  return footer;
}

// Opens an output file now, so that a bad path fails before the workload runs.
std::unique_ptr<std::ofstream> OpenOutput(const std::string& path, const char* flag) {
  auto f = std::make_unique<std::ofstream>(path, std::ios::binary | std::ios::trunc);
  if (!*f) throw TraceError(std::string(flag) + " " + path + ": cannot open the file for writing");
  return f;
}

// Two file arguments naming one file would have the second write over the first (or over the
// trace being read): refuse before anything is opened.
void RefuseSameFile(const std::string& a, const char* a_flag, const std::string& b,
                    const char* b_flag) {
  if (a.empty() || b.empty()) return;
  std::error_code ec_a, ec_b;
  const std::filesystem::path pa = std::filesystem::weakly_canonical(a, ec_a);
  const std::filesystem::path pb = std::filesystem::weakly_canonical(b, ec_b);
  if (a == b || (!ec_a && !ec_b && pa == pb)) {
    throw TraceError(std::string(a_flag) + " and " + b_flag + " both name " + b +
                     "; give each its own file");
  }
}

void PrintPoolTotals(size_t instructions) {
  std::printf("\n%zu instructions", instructions);
  std::vector<std::string> seen;
  for (ofl::vm::Stream* s : ofl::vm::VirtualMachine::Get().devices().streams()) {
    const std::string device = s->device().str();
    bool dup = false;
    for (const std::string& d : seen) dup = dup || d == device;
    if (dup) continue;
    seen.push_back(device);
    const ofl::MemoryStats st = s->pool()->stats();
    std::printf(
        "; %s pool: allocated %lld B, reserved %lld B, peak allocated %lld B, %lld requests, "
        "%lld hits, %lld misses",
        device.c_str(), static_cast<long long>(st.allocated_bytes),
        static_cast<long long>(st.reserved_bytes), static_cast<long long>(st.peak_allocated_bytes),
        static_cast<long long>(st.alloc_requests), static_cast<long long>(st.cache_hits),
        static_cast<long long>(st.cache_misses));
  }
  std::printf("\n");
}

struct TableChoice {
  bool force_on = false;
  bool force_off = false;
  bool Show(size_t n) const { return force_on || (!force_off && n <= kTableLimit); }
};

void MaybePrintTable(const ofl::vm_trace::TraceModel& model, const TableChoice& table) {
  if (table.Show(model.instrs.size())) {
    ofl::vm_trace::PrintInstructionTable(model, stdout);
  } else if (!table.force_off) {
    std::printf("\n(%zu instructions: the per-instruction table is left out; --table prints it)\n",
                model.instrs.size());
  }
}

// The model whose table, summary and timeline are shown: the trace itself, or one rank of a merged
// trace (*rank < 0: the first; set to the rank chosen).
const ofl::vm_trace::TraceModel& DetailOf(const ofl::vm_trace::TraceModel& model, int* rank,
                                          const std::string& source) {
  if (!model.merged()) {
    if (*rank > 0) {
      throw TraceError("--rank " + std::to_string(*rank) + ": " + source +
                       " is the trace of one process, not a merged trace of several ranks");
    }
    *rank = 0;
    return model;
  }
  if (*rank < 0) *rank = model.ranks.front().rank;
  for (const ofl::vm_trace::RankModel& r : model.ranks) {
    if (r.rank == *rank) return r.model;
  }
  throw TraceError("--rank " + std::to_string(*rank) + ": " + source + " holds ranks " +
                   std::to_string(model.ranks.front().rank) + " to " +
                   std::to_string(model.ranks.back().rank));
}

void PrintRankHeading(const ofl::vm_trace::TraceModel& model, int rank) {
  if (!model.merged()) return;
  std::printf(
      "\n== a merged trace of %zu ranks; up to \"== ranks\" below: rank %d's instructions and "
      "summary (summarize --rank N shows another's)\n",
      model.ranks.size(), rank);
}

void PrintRanks(const ofl::vm_trace::TraceModel& model) {
  if (!ofl::vm_trace::HasRankSummary(model)) return;
  ofl::vm_trace::PrintRankSummary(ofl::vm_trace::SummarizeRanks(model), stdout);
}

int Summarize(const std::string& path, const std::string& svg, const TableChoice& table,
              size_t max_path_lines, int rank) {
  std::unique_ptr<std::ofstream> svg_out;
  if (!svg.empty()) svg_out = OpenOutput(svg, "--svg");
  ofl::vm_trace::TraceModel model;
  {
    ofl::vm_trace::Progress progress("ofl_vm_trace", ofl::vm_trace::StderrIsTerminal());
    std::error_code ec;
    const uintmax_t bytes = std::filesystem::file_size(path, ec);
    if (!ec && bytes >= (uintmax_t{32} << 20)) {
      progress.Status("reading " + path + " (" + std::to_string(bytes >> 20) + " MiB)", true);
    }
    model = ofl::vm_trace::LoadTrace(path);
  }
  const ofl::vm_trace::TraceModel& detail = DetailOf(model, &rank, path);
  std::printf("trace %s\n", path.c_str());
  PrintRankHeading(model, rank);
  TableChoice t = table;
  if (!t.force_on) t.force_off = true;  // summarize prints the table only when asked
  MaybePrintTable(detail, t);
  ofl::vm_trace::PrintSummary(ofl::vm_trace::Summarize(detail), detail, stdout, max_path_lines);
  PrintRanks(model);
  if (svg_out) {
    ofl::vm_trace::SvgOptions options;
    options.title = "oneflow_lite VM trace: " + path;
    if (model.merged()) options.title += " (rank " + std::to_string(rank) + ")";
    ofl::vm_trace::WriteSvg(detail, *svg_out, options);
    svg_out->flush();
    if (!*svg_out) throw TraceError("--svg " + svg + ": write error");
    std::printf("\nwrote the SVG timeline to %s (open it in a browser)\n", svg.c_str());
  }
  return kExitOk;
}

int RunWorkload(const std::string& workload, const std::string& device_spec, int64_t iters,
                const std::string& chrome, const std::string& svg, const TableChoice& table,
                size_t max_path_lines) {
  std::unique_ptr<ofl::Device> device;
  try {
    device = std::make_unique<ofl::Device>(device_spec);
  } catch (const ofl::InvalidArgument& e) {
    std::fprintf(stderr, "ofl_vm_trace: --device %s: %s\n", device_spec.c_str(), e.what());
    return kExitUsage;
  }
  // The global workload: every rank records its own trace and rank 0 merges them into one.
  const bool global = workload == "global";
  if (global && !device->is_cpu()) {
    std::fprintf(stderr, "ofl_vm_trace: --device %s: the global workload's placements are on cpu\n",
                 device_spec.c_str());
    return kExitUsage;
  }
  if (global) ofl::init_distributed();
  const int rank = global ? ofl::rank() : 0;
  const bool merge = global && ofl::world_size() > 1;
  const bool lead = rank == 0;  // only rank 0 writes files and prints
  std::unique_ptr<std::ofstream> chrome_out, svg_out;
  if (lead && !chrome.empty()) chrome_out = OpenOutput(chrome, "--chrome");
  if (lead && !svg.empty()) svg_out = OpenOutput(svg, "--svg");
  try {
    ofl::vm::VirtualMachine::Get().devices().GetStream(*device);
  } catch (const ofl::DeviceError& e) {
    std::fprintf(stderr, "ofl_vm_trace: --device %s: %s\n", device_spec.c_str(), e.what());
    return kExitFailed;
  }

  ofl::vm_trace::WorkloadOptions options;
  options.device = *device;
  options.iters = iters;
  ofl::vm_trace::Progress progress("ofl_vm_trace: " + workload,
                                   lead && ofl::vm_trace::StderrIsTerminal());
  options.progress = [&progress](int64_t done, int64_t total) { progress.Update(done, total); };

  ofl::vm_trace::TraceRecorder recorder;
  recorder.Start();
  std::string failure;
  try {
    ofl::vm_trace::RunWorkload(workload, options);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  progress.Status("writing the trace");
  std::string json = recorder.Stop();
  if (merge) {
    // A collective: every rank takes part, even one whose workload failed.
    std::vector<ofl::vm_trace::RankTraceText> traces = ofl::vm_trace::GatherRankTraces(
        {rank, recorder.origin_ns(), ofl::vm_trace::HostName(), std::move(json)});
    if (!lead) {
      if (failure.empty()) return kExitOk;
      std::fprintf(stderr, "ofl_vm_trace: rank %d: workload %s failed: %s\n", rank,
                   workload.c_str(), failure.c_str());
      return kExitFailed;
    }
    progress.Status("merging the ranks' traces");
    json = ofl::vm_trace::MergeRankTraces(traces);
  }
  if (chrome_out) {
    *chrome_out << json;
    chrome_out->flush();
    if (!*chrome_out) throw TraceError("--chrome " + chrome + ": write error");
  }
  // The recorder ended the session OFL_TRACE started, so the library will not write it at exit.
  const std::string env_path = ofl::settings::String("OFL_TRACE");
  if (!env_path.empty() && env_path != chrome) {
    std::ofstream f(env_path, std::ios::binary | std::ios::trunc);
    f << json;
    f.flush();
    if (!f) throw TraceError("OFL_TRACE=" + env_path + ": cannot write the file");
  }
  progress.Status("reading the trace back");
  const ofl::vm_trace::TraceModel model = ofl::vm_trace::ParseTrace(json, "the recorded trace");
  int shown_rank = -1;
  const ofl::vm_trace::TraceModel& detail = DetailOf(model, &shown_rank, "the recorded trace");
  progress.Clear();
  PrintRankHeading(model, shown_rank);
  MaybePrintTable(detail, table);
  PrintPoolTotals(detail.instrs.size());
  ofl::vm_trace::PrintSummary(ofl::vm_trace::Summarize(detail), detail, stdout, max_path_lines);
  PrintRanks(model);
  if (svg_out) {
    ofl::vm_trace::SvgOptions svg_options;
    svg_options.title = "oneflow_lite VM trace: workload " + workload + " on " + device->str();
    if (merge) svg_options.title += " (rank 0)";
    ofl::vm_trace::WriteSvg(detail, *svg_out, svg_options);
    svg_out->flush();
    if (!*svg_out) throw TraceError("--svg " + svg + ": write error");
  }
  if (chrome_out) {
    std::printf(
        "\nwrote the trace to %s (open it in https://ui.perfetto.dev or chrome://tracing)%s\n",
        chrome.c_str(), merge ? ": one process per rank" : "");
  }
  if (!env_path.empty() && env_path != chrome) {
    std::printf("\nwrote the trace to %s (OFL_TRACE)\n", env_path.c_str());
  }
  if (svg_out) {
    std::printf("wrote the SVG timeline to %s (open it in a browser)%s\n", svg.c_str(),
                merge ? ": rank 0's" : "");
  }
  if (!failure.empty()) {
    std::fflush(stdout);
    std::fprintf(stderr, "ofl_vm_trace: workload %s failed: %s\n", workload.c_str(),
                 failure.c_str());
    return kExitFailed;
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(
      "ofl_vm_trace: see what oneflow_lite's virtual machine did.\n"
      "Runs a built-in workload with tracing on (the demo when no flag is given), prints its\n"
      "results, one line per instruction and a summary, and can write the trace as Chrome JSON\n"
      "and as an SVG timeline. 'ofl_vm_trace summarize TRACE.json' does the same for a recorded\n"
      "trace (for instance one written by any program run with OFL_TRACE=TRACE.json).\n",
      "ofl_vm_trace");
  app.footer(FooterText());
  app.get_formatter()->column_width(30);

  std::vector<std::string> names;
  for (const auto& w : ofl::vm_trace::Workloads()) names.push_back(w.name);
  std::string workload = "demo";
  std::string device = "cpu";
  int64_t iters = 0;
  std::string chrome, svg;
  TableChoice table;
  size_t max_path_lines = 24;

  auto* workload_opt = app.add_option("--workload,-w", workload, "the workload to run")
                           ->check(CLI::IsMember(names))
                           ->type_name("NAME");
  auto* device_opt =
      app.add_option("--device,-d", device,
                     "where it runs: cpu, sim:N (the simulated asynchronous accelerator) or cuda:N")
          ->type_name("DEVICE")
          ->capture_default_str();
  const CLI::Validator at_least_one(
      [](std::string& v) -> std::string {
        char* end = nullptr;
        errno = 0;
        const long long n = std::strtoll(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || n < 1)
          return "must be a positive integer, got '" + v + "'";
        // strtoll saturates out of range; the clamped value would then run (almost) forever.
        if (errno == ERANGE) {
          return "must be a positive integer of at most " + std::to_string(LLONG_MAX) + ", got '" +
                 v + "' (too large)";
        }
        return "";
      },
      "N>=1");
  // CLI11's own range check would print the whole double range; name what a rank is instead.
  const CLI::Validator rank_number(
      [](std::string& v) -> std::string {
        char* end = nullptr;
        errno = 0;
        const long long n = std::strtoll(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || n < 0 || n > INT_MAX || errno == ERANGE)
          return "must be a rank: an integer from 0 to " + std::to_string(INT_MAX) + ", got '" + v +
                 "'";
        return "";
      },
      "N>=0");
  auto* iters_opt =
      app.add_option("--iters,-n", iters, "the workload's size (see WORKLOADS; default: its own)")
          ->check(at_least_one)
          ->type_name("N");
  auto* chrome_opt = app.add_option("--chrome", chrome,
                                    "write the trace as Chrome JSON (Perfetto, chrome://tracing)")
                         ->type_name("OUT.json");
  app.add_option("--svg", svg, "write an SVG timeline (streams, instructions, memory)")
      ->type_name("OUT.svg");
  auto* table_on = app.add_flag("--table", table.force_on, "always print the instruction table");
  auto* table_off = app.add_flag("--no-table", table.force_off, "never print it");
  table_on->excludes(table_off);
  app.add_option("--path-lines", max_path_lines,
                 "how many critical-path lines the summary shows (the middle is elided)")
      ->check(at_least_one)
      ->type_name("N")
      ->capture_default_str();

  std::string trace_path, summarize_svg;
  CLI::App* summarize = app.add_subcommand(
      "summarize", "read a recorded trace (ofl-trace-1 or any Chrome trace) and print its summary");
  summarize->add_option("trace", trace_path, "the trace file (JSON)")
      ->required()
      ->type_name("TRACE.json");
  summarize->add_option("--svg", summarize_svg, "also write its SVG timeline")
      ->type_name("OUT.svg");
  summarize->add_flag("--table", table.force_on, "also print the instruction table");
  int summarize_rank = -1;
  summarize
      ->add_option("--rank", summarize_rank,
                   "of a merged trace (--workload global under mpiexec): the rank whose "
                   "instructions, summary and timeline are shown (default: the first)")
      ->check(rank_number)
      ->type_name("N");
  summarize->fallthrough();  // --path-lines (and misplaced workload flags, refused below)
  app.require_subcommand(0, 1);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::fprintf(stderr, "ofl_vm_trace: %s (see ofl_vm_trace --help)\n", e.what());
    return kExitUsage;
  }

  try {
    if (summarize->parsed()) {
      const std::string& out_svg = summarize_svg.empty() ? svg : summarize_svg;
      RefuseSameFile(trace_path, "the trace to read", out_svg, "--svg");
      for (CLI::Option* o : {workload_opt, device_opt, iters_opt, chrome_opt}) {
        if (o->count() > 0) {
          std::fprintf(stderr, "ofl_vm_trace: %s applies to a workload run, not to summarize\n",
                       o->get_name().c_str());
          return kExitUsage;
        }
      }
      return Summarize(trace_path, summarize_svg.empty() ? svg : summarize_svg, table,
                       max_path_lines, summarize_rank);
    }
    RefuseSameFile(chrome, "--chrome", svg, "--svg");
    return RunWorkload(workload, device, iters, chrome, svg, table, max_path_lines);
  } catch (const TraceError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "ofl_vm_trace: %s\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "ofl_vm_trace: %s\n", e.what());
    return kExitFailed;
  }
}
