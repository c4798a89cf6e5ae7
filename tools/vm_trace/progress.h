// Progress for long runs: a single self-rewriting line on stderr, drawn only when stderr is a
// terminal (so logs, pipes and CI output stay clean), only once a run has lasted 0.3 s, and at most
// ten times a second.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace ofl::vm_trace {

class Progress {
 public:
  // enabled: whether to draw at all (see StderrIsTerminal).
  Progress(std::string label, bool enabled, std::FILE* out = stderr);
  ~Progress();  // clears the line
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void Update(int64_t done, int64_t total);
  // A phase without a count ("reading the trace"); drawn under the same rules unless `now`.
  void Status(const std::string& text, bool now = false);
  void Clear();
  bool enabled() const { return enabled_; }

 private:
  std::string label_;
  bool enabled_;
  std::FILE* out_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point begin_;
  std::chrono::steady_clock::time_point last_{};
};

bool StderrIsTerminal();

}  // namespace ofl::vm_trace
