// Draws the SVG timeline (see svg_timeline.h) with plain string output: lanes, boxes coloured by
// op, cross-stream dependence lines, a time axis, and step curves for the memory counters.
#include "tools/vm_trace/svg_timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

namespace ofl::vm_trace {
namespace {

constexpr double kLeft = 200;  // room for the lane names
constexpr double kRight = 24;
constexpr double kTop = 66;  // title and time axis
constexpr double kLaneHeight = 24;
constexpr double kLaneGap = 4;
constexpr double kPlotHeight = 130;
constexpr double kPlotGap = 44;
constexpr double kLegendHeight = 28;
constexpr size_t kLegendOps = 12;       // the most frequent ops get a swatch
constexpr size_t kMaxEdgeLines = 4000;  // beyond this the arrows would hide the boxes

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// Colours by op: distinct ones for the most frequent ops, then a stable hash of the name.
class OpColors {
 public:
  explicit OpColors(const std::vector<std::pair<size_t, std::string>>& ops_by_count) {
    static const char* const kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                                           "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
                                           "#9c755f", "#bab0ac", "#17becf", "#bcbd22"};
    for (size_t k = 0; k < ops_by_count.size() && k < std::size(kPalette); ++k) {
      colors_[ops_by_count[k].second] = kPalette[k];
    }
  }
  std::string operator()(const std::string& op) const {
    auto it = colors_.find(op);
    if (it != colors_.end()) return it->second;
    uint32_t h = 2166136261u;  // FNV-1a
    for (unsigned char c : op) h = (h ^ c) * 16777619u;
    char buf[40];
    std::snprintf(buf, sizeof buf, "hsl(%u,55%%,%u%%)", h % 360, 45 + (h >> 9) % 20);
    return buf;
  }

 private:
  std::map<std::string, std::string> colors_;
};

std::string TimeLabel(double us, double span_us) {
  char buf[32];
  if (span_us >= 2e6) {
    std::snprintf(buf, sizeof buf, "%.2f s", us / 1e6);
  } else if (span_us >= 2e3) {
    std::snprintf(buf, sizeof buf, "%.2f ms", us / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f us", us);
  }
  return buf;
}

std::string BytesLabel(double b) {
  char buf[32];
  if (b >= double(1 << 30)) {
    std::snprintf(buf, sizeof buf, "%.2f GiB", b / double(1 << 30));
  } else if (b >= double(1 << 20)) {
    std::snprintf(buf, sizeof buf, "%.2f MiB", b / double(1 << 20));
  } else if (b >= 1024) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f B", b);
  }
  return buf;
}

// 1, 2 or 5 times a power of ten, giving about `target` ticks over span.
double TickStep(double span, int target) {
  if (span <= 0) return 1;
  const double raw = span / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= m * mag) return m * mag;
  }
  return 10 * mag;
}

// Memory samples of a device: the counter track, or else the totals carried by pool events.
std::vector<MemorySample> MemoryOf(const TraceModel& model, const std::string& device) {
  auto it = model.memory.find(device);
  if (it != model.memory.end() && !it->second.empty()) return it->second;
  std::vector<MemorySample> out;
  auto p = model.pool.find(device);
  if (p != model.pool.end()) {
    for (const PoolEvent& e : p->second) {
      if (e.allocated >= 0 && e.reserved >= 0) out.push_back({e.ts, e.allocated, e.reserved});
    }
  }
  return out;
}

}  // namespace

std::string XmlEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // Control characters other than tab and newline are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') {
          out += '?';
        } else {
          out += c;
        }
    }
  }
  return out;
}

void WriteSvg(const TraceModel& model, std::ostream& out, const SvgOptions& options) {
  const double width = std::max(400, options.width);
  const double plot_w = width - kLeft - kRight;
  double t0 = 0, t1 = 1;
  if (!model.instrs.empty() || !model.memory.empty()) {
    t0 = model.begin();
    t1 = model.finish();
  }
  if (!(t1 > t0)) t1 = t0 + 1;
  const double span = t1 - t0;
  const double scale = plot_w / span;
  auto x_of = [&](double ts) { return kLeft + (ts - t0) * scale; };

  std::vector<std::string> devices;
  for (const auto& [device, samples] : model.memory) devices.push_back(device);
  for (const auto& [device, events] : model.pool) {
    if (std::find(devices.begin(), devices.end(), device) == devices.end() &&
        !MemoryOf(model, device).empty())
      devices.push_back(device);
  }

  std::map<std::string, size_t> op_counts;
  for (const TraceInstr& in : model.instrs) ++op_counts[in.op];
  std::vector<std::pair<size_t, std::string>> ops;  // (count, op), the most frequent first
  for (const auto& [op, n] : op_counts) ops.emplace_back(n, op);
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  const OpColors color_of(ops);

  std::map<int64_t, size_t> lane_of_tid;
  for (size_t i = 0; i < model.lanes.size(); ++i) lane_of_tid[model.lanes[i].tid] = i;
  const double lanes_h = static_cast<double>(model.lanes.size()) * (kLaneHeight + kLaneGap);
  const double legend_top = kTop + lanes_h + 8;
  const double plots_top = legend_top + kLegendHeight + kPlotGap - 16;
  const double plots_h =
      static_cast<double>(std::max<size_t>(1, devices.size())) * (kPlotHeight + kPlotGap) -
      kPlotGap;
  const double height = plots_top + plots_h + 16;

  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << Num(width) << "\" height=\""
      << Num(height) << "\" viewBox=\"0 0 " << Num(width) << " " << Num(height)
      << "\" font-family=\"monospace\" font-size=\"12\">\n";
  out << "<style>.instr:hover{stroke:#000;stroke-width:1.5} .err{stroke:#d00;stroke-width:1.5} "
         ".axis{stroke:#999;stroke-width:0.5} .dep{stroke:#555;stroke-width:0.6;opacity:0.5}"
         "</style>\n";
  out << "<rect x=\"0\" y=\"0\" width=\"" << Num(width) << "\" height=\"" << Num(height)
      << "\" fill=\"#fff\"/>\n";
  out << "<text x=\"8\" y=\"18\" font-size=\"15\" font-weight=\"bold\">" << XmlEscape(options.title)
      << "</text>\n";
  out << "<text x=\"8\" y=\"36\" fill=\"#444\">" << model.instrs.size() << " instructions on "
      << model.lanes.size() << " stream(s), " << XmlEscape(TimeLabel(span, span))
      << " (hover a box for details)</text>\n";

  // Time axis and grid.
  const double step = TickStep(span, 10);
  out << "<g class=\"time-axis\">\n";
  for (double t = 0; t <= span + 1e-9; t += step) {
    const double x = x_of(t0 + t);
    out << "<line class=\"axis\" x1=\"" << Num(x) << "\" y1=\"" << Num(kTop - 6) << "\" x2=\""
        << Num(x) << "\" y2=\"" << Num(kTop + lanes_h) << "\"/>"
        << "<text x=\"" << Num(x + 2) << "\" y=\"" << Num(kTop - 8) << "\" fill=\"#666\">"
        << XmlEscape(TimeLabel(t, span)) << "</text>\n";
  }
  out << "</g>\n";

  // Lanes with their boxes.
  std::vector<std::vector<const TraceInstr*>> per_lane(model.lanes.size());
  for (const TraceInstr& in : model.instrs) {
    auto it = lane_of_tid.find(in.tid);
    if (it != lane_of_tid.end()) per_lane[it->second].push_back(&in);
  }
  for (size_t li = 0; li < model.lanes.size(); ++li) {
    const double y = kTop + static_cast<double>(li) * (kLaneHeight + kLaneGap);
    out << "<g class=\"lane\" data-stream=\"" << XmlEscape(model.lanes[li].name) << "\">\n";
    out << "<rect x=\"" << Num(kLeft) << "\" y=\"" << Num(y) << "\" width=\"" << Num(plot_w)
        << "\" height=\"" << Num(kLaneHeight) << "\" fill=\"" << (li % 2 ? "#f4f4f4" : "#ececec")
        << "\"/>\n";
    out << "<text x=\"8\" y=\"" << Num(y + kLaneHeight / 2 + 4) << "\">"
        << XmlEscape(model.lanes[li].name) << " (" << per_lane[li].size() << ")</text>\n";
    for (const TraceInstr* in : per_lane[li]) {
      const double x = x_of(in->start);
      const double w = std::max(0.6, in->duration() * scale);
      if (in->complete > in->end) {
        // On an asynchronous device: a thin bar from the launch to the completion.
        out << "<rect class=\"device\" x=\"" << Num(x_of(in->end)) << "\" y=\""
            << Num(y + kLaneHeight - 5) << "\" width=\""
            << Num(std::max(0.6, (in->complete - in->end) * scale)) << "\" height=\"3\" fill=\""
            << color_of(in->op) << "\" opacity=\"0.5\"><title>" << XmlEscape(in->op) << " #"
            << in->id << " on the device: launched " << Num(in->end) << " us, complete "
            << Num(in->complete) << " us</title></rect>\n";
      }
      out << "<rect class=\"instr" << (in->error.empty() ? "" : " err") << "\" x=\"" << Num(x)
          << "\" y=\"" << Num(y + 2) << "\" width=\"" << Num(w) << "\" height=\""
          << Num(kLaneHeight - 4) << "\" fill=\"" << color_of(in->op)
          << (w > 3 ? "\" stroke=\"#fff\" stroke-width=\"0.5" : "") << "\"><title>"
          << XmlEscape(in->op) << " #" << in->id << " (" << XmlEscape(in->policy) << ") on "
          << XmlEscape(in->stream) << "\nissue " << Num(in->issue) << " us, ready "
          << Num(in->ready) << " us, start " << Num(in->start) << " us, end " << Num(in->end)
          << " us\nrun " << Num(in->duration()) << " us, issue-&gt;end " << Num(in->latency())
          << " us";
      if (!in->deps.empty()) {
        out << "\nwaited for";
        for (uint64_t d : in->deps) out << " #" << d;
      }
      if (!in->error.empty()) out << "\nERROR: " << XmlEscape(in->error);
      out << "</title></rect>\n";
    }
    out << "</g>\n";
  }

  // Cross-stream dependence edges: a line from the predecessor's end to the dependent's start.
  size_t edges = 0;
  std::ostringstream edge_svg;
  for (const TraceInstr& in : model.instrs) {
    for (size_t k = 0; k < in.deps.size() && edges < kMaxEdgeLines; ++k) {
      if (k >= in.cross_stream.size() || !in.cross_stream[k]) continue;
      const int64_t j = model.IndexOf(in.deps[k]);
      if (j < 0) continue;
      const TraceInstr& pred = model.instrs[static_cast<size_t>(j)];
      auto a = lane_of_tid.find(pred.tid), b = lane_of_tid.find(in.tid);
      if (a == lane_of_tid.end() || b == lane_of_tid.end()) continue;
      const double ya = kTop + a->second * (kLaneHeight + kLaneGap) + kLaneHeight / 2;
      const double yb = kTop + b->second * (kLaneHeight + kLaneGap) + kLaneHeight / 2;
      edge_svg << "<line class=\"dep\" x1=\"" << Num(x_of(pred.end)) << "\" y1=\"" << Num(ya)
               << "\" x2=\"" << Num(x_of(in.start)) << "\" y2=\"" << Num(yb) << "\"/>\n";
      ++edges;
    }
  }
  out << "<g class=\"deps\">\n" << edge_svg.str() << "</g>\n";

  // Legend: a swatch per op, the most frequent first.
  out << "<g class=\"legend\">\n";
  double lx = kLeft;
  for (size_t k = 0; k < ops.size() && k < kLegendOps; ++k) {
    const std::string label = ops[k].second + " (" + std::to_string(ops[k].first) + ")";
    out << "<rect x=\"" << Num(lx) << "\" y=\"" << Num(legend_top + 4) << "\" width=\"10\" "
        << "height=\"10\" fill=\"" << color_of(ops[k].second) << "\"/><text x=\"" << Num(lx + 14)
        << "\" y=\"" << Num(legend_top + 13) << "\">" << XmlEscape(label) << "</text>\n";
    lx += 14 + 7.3 * static_cast<double>(label.size()) + 16;
    if (lx > width - kRight - 120) break;
  }
  out << "</g>\n";

  // Memory curves, one plot per device.
  if (devices.empty()) {
    out << "<text x=\"8\" y=\"" << Num(plots_top + 16)
        << "\" fill=\"#666\">no memory counters in this trace</text>\n";
  }
  for (size_t di = 0; di < devices.size(); ++di) {
    const std::vector<MemorySample> samples = MemoryOf(model, devices[di]);
    const double top = plots_top + static_cast<double>(di) * (kPlotHeight + kPlotGap);
    int64_t peak = 1, peak_allocated = 0, peak_reserved = 0;
    for (const MemorySample& m : samples) {
      peak = std::max({peak, m.allocated, m.reserved});
      peak_allocated = std::max(peak_allocated, m.allocated);
      peak_reserved = std::max(peak_reserved, m.reserved);
    }
    auto y_of = [&](int64_t bytes) {
      return top + kPlotHeight - kPlotHeight * static_cast<double>(bytes) / peak;
    };
    out << "<g class=\"memory\" data-device=\"" << XmlEscape(devices[di]) << "\">\n";
    out << "<text x=\"8\" y=\"" << Num(top - 8) << "\" font-weight=\"bold\">memory "
        << XmlEscape(devices[di]) << "</text>\n";
    out << "<text x=\"" << Num(kLeft + 8) << "\" y=\"" << Num(top - 8)
        << "\"><tspan fill=\"#1f6fd1\">&#9632; allocated (peak "
        << XmlEscape(BytesLabel(static_cast<double>(peak_allocated)))
        << ")</tspan>  <tspan fill=\"#e07b00\">&#9632; reserved (peak "
        << XmlEscape(BytesLabel(static_cast<double>(peak_reserved))) << ")</tspan></text>\n";
    out << "<rect x=\"" << Num(kLeft) << "\" y=\"" << Num(top) << "\" width=\"" << Num(plot_w)
        << "\" height=\"" << Num(kPlotHeight) << "\" fill=\"#fafafa\" stroke=\"#ccc\"/>\n";
    out << "<text x=\"8\" y=\"" << Num(top + 12) << "\" fill=\"#666\">"
        << XmlEscape(BytesLabel(static_cast<double>(peak))) << "</text>\n";
    out << "<text x=\"8\" y=\"" << Num(top + kPlotHeight) << "\" fill=\"#666\">0</text>\n";
    for (int which = 0; which < 2; ++which) {
      std::ostringstream pts;
      double last_y = y_of(0);
      pts << Num(kLeft) << "," << Num(last_y);
      for (const MemorySample& m : samples) {
        const double x = std::clamp(x_of(m.ts), kLeft, kLeft + plot_w);
        const double y = y_of(which == 0 ? m.reserved : m.allocated);
        pts << " " << Num(x) << "," << Num(last_y) << " " << Num(x) << "," << Num(y);
        last_y = y;
      }
      pts << " " << Num(kLeft + plot_w) << "," << Num(last_y);
      out << "<polyline class=\"" << (which == 0 ? "reserved" : "allocated")
          << "\" fill=\"none\" stroke=\"" << (which == 0 ? "#e07b00" : "#1f6fd1")
          << "\" stroke-width=\"1.5\" points=\"" << pts.str() << "\"/>\n";
    }
    out << "</g>\n";
  }
  out << "</svg>\n";
}

void WriteSvgFile(const TraceModel& model, const std::string& path, const SvgOptions& options) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw TraceError(path + ": cannot open the file for writing");
  WriteSvg(model, f, options);
  f.flush();
  if (!f) throw TraceError(path + ": write error");
}

}  // namespace ofl::vm_trace
