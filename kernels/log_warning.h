// Warnings (and the rare error no caller receives) from code below the VM (device backends,
// collectives), which cannot use the VM's logger (vm/log.h): they go to the runtime's logger when
// the VM has made it (the same format and OFL_LOG_LEVEL as the VM's own warnings), to stderr
// otherwise.
#pragma once

#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>
#include <string>

namespace ofl::kernels {

inline void LogWarning(const std::string& message) {
  const std::shared_ptr<spdlog::logger> log = spdlog::get("oneflow_lite");
  if (log) {
    log->warn("{}", message);
  } else {
    std::fprintf(stderr, "[ofl] [warning] %s\n", message.c_str());
  }
}

// The same for an error no caller receives (the job ends, say).
inline void LogError(const std::string& message) {
  const std::shared_ptr<spdlog::logger> log = spdlog::get("oneflow_lite");
  if (log) {
    log->error("{}", message);
    log->flush();
  } else {
    std::fprintf(stderr, "[ofl] [error] %s\n", message.c_str());
  }
  std::fflush(stderr);
}

}  // namespace ofl::kernels
