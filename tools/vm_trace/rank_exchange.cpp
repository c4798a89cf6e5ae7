// Gathers the ranks' traces through global tensors (see rank_exchange.h).
#include "tools/vm_trace/rank_exchange.h"

#include <unistd.h>

#include <cstdint>
#include <numeric>

#include "oneflow_lite/oneflow_lite.h"

namespace ofl::vm_trace {

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

std::vector<RankTraceText> GatherRankTraces(const RankTraceText& mine) {
  const int world_size = ofl::world_size();
  std::vector<int> all(static_cast<size_t>(world_size));
  std::iota(all.begin(), all.end(), 0);
  const Placement world("cpu", all);
  const Device cpu("cpu");
  // Per rank: the payload's length and the trace's origin; the payload is "<host>\n<json>".
  const std::string payload = mine.host + "\n" + mine.json;
  const std::vector<int64_t> meta =
      tensor<int64_t>({static_cast<int64_t>(payload.size()), mine.origin_ns}, Shape({1, 2}), cpu)
          .to_global(world, Sbp::split(0))
          .to_vector<int64_t>();
  const std::vector<uint8_t> bytes =
      tensor<uint8_t>(std::vector<uint8_t>(payload.begin(), payload.end()),
                      Shape({static_cast<int64_t>(payload.size())}), cpu)
          .to_global(world, Sbp::split(0))
          .to_vector<uint8_t>();
  if (ofl::rank() != 0) return {};
  std::vector<RankTraceText> out;
  size_t at = 0;
  for (int r = 0; r < world_size; ++r) {
    const size_t len = static_cast<size_t>(meta[2 * static_cast<size_t>(r)]);
    if (at + len > bytes.size()) {
      throw Error("ofl_vm_trace: gathering the ranks' traces: rank " + std::to_string(r) + "'s " +
                  std::to_string(len) + " bytes run past the " + std::to_string(bytes.size()) +
                  " gathered");
    }
    const std::string text(bytes.begin() + static_cast<std::ptrdiff_t>(at),
                           bytes.begin() + static_cast<std::ptrdiff_t>(at + len));
    at += len;
    const size_t newline = text.find('\n');
    RankTraceText t;
    t.rank = r;
    t.origin_ns = meta[2 * static_cast<size_t>(r) + 1];
    t.host = text.substr(0, newline);
    t.json = newline == std::string::npos ? "" : text.substr(newline + 1);
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace ofl::vm_trace
