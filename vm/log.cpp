#include "vm/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <memory>

namespace ofl::vm {

namespace {
std::shared_ptr<spdlog::logger> MakeLogger() {
  auto logger = spdlog::stderr_color_mt("oneflow_lite");
  const char* level = std::getenv("OFL_LOG_LEVEL");
  logger->set_level(level ? spdlog::level::from_str(level) : spdlog::level::warn);
  logger->set_pattern("[%H:%M:%S.%f] [ofl] [%l] [tid %t] %v");
  return logger;
}
}  // namespace

spdlog::logger& Logger() {
  // Held forever: workers may log while static destructors run at exit.
  static auto* logger = new std::shared_ptr<spdlog::logger>(MakeLogger());
  return **logger;
}

bool LogDebugEnabled() {
  static const bool on = Logger().should_log(spdlog::level::debug);
  return on;
}

}  // namespace ofl::vm
