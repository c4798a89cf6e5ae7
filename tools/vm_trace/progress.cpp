// Draws the progress line (see progress.h).
#include "tools/vm_trace/progress.h"

#include <unistd.h>

#include <utility>

namespace ofl::vm_trace {

bool StderrIsTerminal() { return isatty(STDERR_FILENO) == 1; }

Progress::Progress(std::string label, bool enabled, std::FILE* out)
    : label_(std::move(label)),
      enabled_(enabled),
      out_(out),
      begin_(std::chrono::steady_clock::now()) {}

Progress::~Progress() { Clear(); }

void Progress::Update(int64_t done, int64_t total) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!drawn_ && now - begin_ < std::chrono::milliseconds(300)) return;  // short runs: no line
  if (drawn_ && done < total && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  const double pct = total > 0 ? 100.0 * static_cast<double>(done) / total : 100.0;
  constexpr int kBar = 30;
  const int filled = static_cast<int>(pct / 100.0 * kBar);
  std::fprintf(out_, "\r%s [%.*s%*s] %lld/%lld (%.0f%%)\033[K", label_.c_str(), filled,
               "##############################", kBar - filled, "", static_cast<long long>(done),
               static_cast<long long>(total), pct);
  std::fflush(out_);
  drawn_ = true;
}

void Progress::Status(const std::string& text, bool now) {
  if (!enabled_) return;
  if (!now && !drawn_ && std::chrono::steady_clock::now() - begin_ < std::chrono::milliseconds(300))
    return;
  std::fprintf(out_, "\r%s: %s\033[K", label_.c_str(), text.c_str());
  std::fflush(out_);
  drawn_ = true;
}

void Progress::Clear() {
  if (!drawn_) return;
  std::fprintf(out_, "\r\033[K");
  std::fflush(out_);
  drawn_ = false;
}

}  // namespace ofl::vm_trace
