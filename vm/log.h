// The VM's logger (spdlog). Level from OFL_LOG_LEVEL (trace, debug, info, warn, error, off;
// default warn). At debug every instruction's issue, start and end is logged with its id and
// stream.
#pragma once

#include <spdlog/logger.h>

namespace ofl::vm {

spdlog::logger& Logger();
bool LogDebugEnabled();

}  // namespace ofl::vm
