#include "oneflow_lite/settings.h"

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>

namespace ofl::settings {

namespace {

constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

Setting MakeFlag(const char* name, const char* def, const char* meaning) {
  return {name, Type::kFlag, def, 0, 1, "", meaning};
}
Setting MakeInteger(const char* name, int64_t lo, int64_t hi, const char* def,
                    const char* meaning) {
  return {name, Type::kInteger, def, lo, hi, "", meaning};
}
Setting MakeText(const char* name, Type type, const char* values, const char* def,
                 const char* meaning) {
  return {name, type, def, 0, 0, values, meaning};
}

}  // namespace

// docs/settings.md is this table for users (tests/core/settings_table_test.cpp compares them).
const std::vector<Setting>& Table() {
  static const std::vector<Setting> table = {
      MakeFlag("OFL_VM_SYNC", "0", "every instruction runs before its call returns"),
      MakeFlag("OFL_DISABLE_VIEW", "0", "expand makes a contiguous copy instead of a view"),
      MakeText("OFL_LOG_LEVEL", Type::kLogLevel,
               "trace, debug, info, warn, warning, error, err, critical, off", "warn",
               "the runtime's log level; debug logs every instruction"),
      MakeText("OFL_TRACE", Type::kString, "a file path", "",
               "record a Chrome trace of the VM, written to this file at exit"),
      MakeFlag("OFL_TRACE_VM", "0", "record the VM trace from the start"),
      MakeText("OFL_VM_TIMEOUT_SECONDS", Type::kNumber,
               "a finite number of seconds (<= 0: wait forever)", "300",
               "a wait that sees no instruction finish for this long throws a hang report"),
      MakeInteger("OFL_VM_HIGH_WATER_MARK", 2, int64_t{1} << 16, "16384",
                  "back-pressure: submitters block above this many instructions in flight"),
      MakeInteger("OFL_VM_LOW_WATER_MARK", 1, (int64_t{1} << 16) - 1, "8192",
                  "back-pressure: blocked submitters resume below this many (default: high / 2)"),
      MakeInteger("OFL_VM_SPIN_US", 0, 1000000, "50",
                  "microseconds a waiting thread spins before it sleeps"),
      MakeInteger("OFL_VM_INLINE_BYTES", 0, int64_t{1} << 40, "32768",
                  "op calls touching at most this many bytes may run on the issuing thread"),
      MakeFlag("OFL_VM_FOLD_RELEASE", "1", "fold a dead tensor's release into its last user"),
      MakeInteger("OFL_VM_EXIT_STALL_MS", 1, 3600000, "2000",
                  "at exit, how long queued work may stall before the process stops waiting"),
      MakeInteger("OFL_SIM_SEED", kInt64Min, kInt64Max, "12345",
                  "the simulated accelerator's seed for its streams' random delays"),
      MakeInteger("OFL_SIM_MAX_DELAY_US", 0, std::numeric_limits<int>::max(), "200",
                  "the simulated accelerator's largest random delay per task (0: none)"),
      MakeInteger("OFL_SIM_MEMORY_MB", 1, int64_t{1} << 20, "256",
                  "the simulated accelerator's memory per device, in MiB"),
      MakeFlag("OFL_CHECK_COLLECTIVES", "1",
               "every collective's agreement checks that all ranks issued the same one"),
      MakeText("OFL_TEST_DEVICE", Type::kString, "a device string", "cpu",
               "tests only: the device the functional, kernel and VM suites run on"),
      MakeText("OFL_CUDA_HOST_SMS", Type::kString, "comma-separated positive integers", "1,132",
               "tests only: the host grid's emulated devices, one per SM count"),
      MakeFlag("OFL_CUDA_HOST_WIDE_INDEX", "0",
               "tests only: every CUDA kernel on the host grid takes its 64-bit index path"),
  };
  return table;
}

namespace {

std::vector<std::string> Words(const std::string& list) {
  std::vector<std::string> words;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(", ", start);
    if (end == std::string::npos) end = list.size();
    words.push_back(list.substr(start, end - start));
    start = end + 2;
  }
  return words;
}

bool ParseInt(const char* v, int64_t lo, int64_t hi, int64_t* out) {
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(v, &end, 10);
  if (end == v || *end != '\0' || errno == ERANGE || x < lo || x > hi) return false;
  *out = static_cast<int64_t>(x);
  return true;
}

bool ParseNumber(const char* v, double* out) {
  char* end = nullptr;
  const double x = std::strtod(v, &end);
  if (end == v || *end != '\0' || !std::isfinite(x)) return false;
  *out = x;
  return true;
}

bool IsLevel(const Setting& s, const std::string& v) {
  for (const std::string& w : Words(s.values)) {
    if (w == v) return true;
  }
  return false;
}

// What a report says the setting needs.
std::string Need(const Setting& s) {
  switch (s.type) {
    case Type::kFlag:
    case Type::kInteger:
      return "an integer from " + std::to_string(s.lo) + " to " + std::to_string(s.hi);
    case Type::kLogLevel:
      return std::string("one of ") + s.values;
    case Type::kNumber:
    case Type::kString:
      break;
  }
  return s.values;
}

const Setting& Typed(const char* name, Type a, Type b) {
  const Setting& s = Get(name);
  if (s.type != a && s.type != b) {
    throw std::logic_error(std::string("settings: ") + name + " is a " + TypeName(s.type) +
                           ", not a " + TypeName(a));
  }
  return s;
}

}  // namespace

const Setting& Get(const std::string& name) {
  for (const Setting& s : Table()) {
    if (name == s.name) return s;
  }
  throw std::logic_error("settings: " + name + " is not in the table (oneflow_lite/settings.cpp)");
}

const char* TypeName(Type type) {
  switch (type) {
    case Type::kFlag:
      return "flag";
    case Type::kInteger:
      return "integer";
    case Type::kNumber:
      return "number";
    case Type::kString:
      return "string";
    case Type::kLogLevel:
      return "log level";
  }
  return "unknown";
}

std::string AcceptedText(const Setting& s) {
  switch (s.type) {
    case Type::kFlag:
      return "0, 1";
    case Type::kInteger:
      return std::to_string(s.lo) + ".." + std::to_string(s.hi);
    case Type::kNumber:
    case Type::kString:
    case Type::kLogLevel:
      break;
  }
  return s.values;
}

std::string DefaultText(const Setting& s) {
  return *s.default_value == '\0' ? std::string("none") : std::string(s.default_value);
}

const char* Environment(const char* name) { return std::getenv(name); }

std::string InvalidMessage(const std::string& name, const std::string& value,
                           const std::string& need, const std::string& fallback) {
  return name + "='" + value + "' is not valid: need " + need + "; using " + fallback + " instead";
}

void Report(const std::string& message) {
  static std::mutex mu;
  static auto* reported = new std::set<std::string>();  // kept: reports may come at exit
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!reported->insert(message).second) return;
  }
  const std::shared_ptr<spdlog::logger> log = spdlog::get("oneflow_lite");
  if (log) {
    log->warn("{}", message);
  } else {
    std::fprintf(stderr, "[ofl] [warning] %s\n", message.c_str());
  }
}

Reader::Reader(Lookup lookup, std::vector<std::string>* warnings)
    : lookup_(std::move(lookup)), warnings_(warnings) {}

std::string Reader::Raw(const char* name) const {
  const char* v = lookup_(name);
  return v == nullptr ? std::string() : std::string(v);
}

void Reader::Invalid(const char* name, const std::string& need, const std::string& fallback) const {
  const std::string message = InvalidMessage(name, Raw(name), need, fallback);
  if (warnings_ != nullptr) {
    warnings_->push_back(message);
  } else {
    Report(message);
  }
}

bool Reader::Flag(const char* name) const {
  const Setting& s = Typed(name, Type::kFlag, Type::kFlag);
  int64_t def = 0;
  ParseInt(s.default_value, 0, 1, &def);
  int64_t x = def;
  const char* v = lookup_(name);
  if (v != nullptr && *v != '\0' && !ParseInt(v, 0, 1, &x)) {
    Invalid(name, Need(s), s.default_value);
    x = def;
  }
  return x != 0;
}

int64_t Reader::Int(const char* name) const {
  const Setting& s = Typed(name, Type::kInteger, Type::kInteger);
  int64_t def = 0;
  ParseInt(s.default_value, s.lo, s.hi, &def);
  return Int(name, def);
}

int64_t Reader::Int(const char* name, int64_t fallback) const {
  const Setting& s = Typed(name, Type::kInteger, Type::kInteger);
  const char* v = lookup_(name);
  if (v == nullptr || *v == '\0') return fallback;
  int64_t x = 0;
  if (!ParseInt(v, s.lo, s.hi, &x)) {
    Invalid(name, Need(s), std::to_string(fallback));
    return fallback;
  }
  return x;
}

double Reader::Number(const char* name) const {
  const Setting& s = Typed(name, Type::kNumber, Type::kNumber);
  double def = 0;
  ParseNumber(s.default_value, &def);
  const char* v = lookup_(name);
  if (v == nullptr || *v == '\0') return def;
  double x = 0;
  if (!ParseNumber(v, &x)) {
    Invalid(name, Need(s), s.default_value);
    return def;
  }
  return x;
}

std::string Reader::String(const char* name) const {
  const Setting& s = Typed(name, Type::kString, Type::kLogLevel);
  const char* v = lookup_(name);
  if (v == nullptr || *v == '\0') return s.default_value;
  if (s.type == Type::kLogLevel && !IsLevel(s, v)) {
    Invalid(name, Need(s), s.default_value);
    return s.default_value;
  }
  return v;
}

bool Flag(const char* name) { return Reader().Flag(name); }
int64_t Int(const char* name) { return Reader().Int(name); }
double Number(const char* name) { return Reader().Number(name); }
std::string String(const char* name) { return Reader().String(name); }

}  // namespace ofl::settings
