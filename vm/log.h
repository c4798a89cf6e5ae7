// The VM's logger (spdlog). Level from OFL_LOG_LEVEL (trace, debug, info, warn, error, critical,
// off; default warn), read through the table of settings (oneflow_lite/settings.h) when the logger
// is made: a name it does not accept is reported through the logger, at the default level. At
// debug every instruction's issue, start and end is logged with its id and stream.
#pragma once

#include <spdlog/logger.h>

namespace ofl::vm {

spdlog::logger& Logger();
bool LogDebugEnabled();

}  // namespace ofl::vm
