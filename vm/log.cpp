#include "vm/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <string>
#include <vector>

#include "oneflow_lite/settings.h"

namespace ofl::vm {

namespace {
std::shared_ptr<spdlog::logger> MakeLogger() {
  // A bad OFL_LOG_LEVEL is reported through this logger once it has its (default) level.
  std::vector<std::string> warnings;
  const std::string level =
      settings::Reader(settings::Environment, &warnings).String("OFL_LOG_LEVEL");
  auto logger = spdlog::stderr_color_mt("oneflow_lite");
  logger->set_level(spdlog::level::from_str(level));
  logger->set_pattern("[%H:%M:%S.%f] [ofl] [%l] [tid %t] %v");
  for (const std::string& w : warnings) logger->warn("{}", w);
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
