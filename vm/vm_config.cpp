#include "vm/vm_config.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace ofl::vm {

namespace {

class Reader {
 public:
  Reader(const std::function<const char*(const char*)>& lookup, std::vector<std::string>* warnings)
      : lookup_(lookup), warnings_(warnings) {}

  // An integer in [lo, hi]; anything else warns and keeps `fallback`.
  int64_t Int(const char* name, int64_t fallback, int64_t lo, int64_t hi) {
    const char* v = lookup_(name);
    if (v == nullptr || *v == '\0') return fallback;
    char* end = nullptr;
    errno = 0;
    const long long x = std::strtoll(v, &end, 10);
    if (end == v || *end != '\0' || errno == ERANGE || x < lo || x > hi) {
      Warn(name, v, "an integer from " + std::to_string(lo) + " to " + std::to_string(hi),
           std::to_string(fallback));
      return fallback;
    }
    return static_cast<int64_t>(x);
  }

  bool Flag(const char* name, bool fallback) { return Int(name, fallback ? 1 : 0, 0, 1) != 0; }

  double Double(const char* name, double fallback) {
    const char* v = lookup_(name);
    if (v == nullptr || *v == '\0') return fallback;
    char* end = nullptr;
    const double x = std::strtod(v, &end);
    if (end == v || *end != '\0' || !std::isfinite(x)) {
      char def[32];
      std::snprintf(def, sizeof def, "%g", fallback);
      Warn(name, v, "a finite number of seconds (<= 0: wait forever)", def);
      return fallback;
    }
    return x;
  }

  std::string String(const char* name) const {
    const char* v = lookup_(name);
    return v == nullptr ? std::string() : std::string(v);
  }

  void Warn(const std::string& name, const std::string& value, const std::string& want,
            const std::string& fallback) {
    warnings_->push_back(name + "='" + value + "' is not valid: need " + want + "; using " +
                         fallback + " instead");
  }

 private:
  const std::function<const char*(const char*)>& lookup_;
  std::vector<std::string>* warnings_;
};

}  // namespace

VmConfig ReadVmConfig(const std::function<const char*(const char*)>& lookup,
                      std::vector<std::string>* warnings) {
  Reader r(lookup, warnings);
  VmConfig c;
  c.sync_mode = r.Flag("OFL_VM_SYNC", c.sync_mode);
  c.spin_us = r.Int("OFL_VM_SPIN_US", c.spin_us, 0, 1000000);
  c.high_water = r.Int("OFL_VM_HIGH_WATER_MARK", c.high_water, 2, kMaxHighWater);
  c.low_water = r.Int("OFL_VM_LOW_WATER_MARK", c.high_water / 2, 1, kMaxHighWater - 1);
  if (c.low_water >= c.high_water) {
    // Each value is fine alone; together they are not. Keep the high mark, halve it for the low.
    r.Warn("OFL_VM_LOW_WATER_MARK", r.String("OFL_VM_LOW_WATER_MARK"),
           "a value below the high-water mark " + std::to_string(c.high_water) +
               " (OFL_VM_HIGH_WATER_MARK)",
           std::to_string(c.high_water / 2));
    c.low_water = c.high_water / 2;
  }
  c.wait_timeout_s = r.Double("OFL_VM_TIMEOUT_SECONDS", c.wait_timeout_s);
  c.fold_releases = r.Flag("OFL_VM_FOLD_RELEASE", c.fold_releases);
  c.trace_path = r.String("OFL_TRACE");
  c.trace_vm = r.Flag("OFL_TRACE_VM", c.trace_vm);
  c.exit_stall_ms = r.Int("OFL_VM_EXIT_STALL_MS", c.exit_stall_ms, 1, 3600000);
  c.inline_bytes = r.Int("OFL_VM_INLINE_BYTES", c.inline_bytes, 0, int64_t{1} << 40);
  return c;
}

}  // namespace ofl::vm
