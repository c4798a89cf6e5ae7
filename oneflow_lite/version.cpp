// ofl::version(): the version this library was built as, baked in from the generated version.h.
#include "oneflow_lite/version.h"

namespace ofl {

const char* version() { return OFL_VERSION_STRING; }

}  // namespace ofl
