#include "vm/vm_config.h"

#include "oneflow_lite/settings.h"

namespace ofl::vm {

VmConfig ReadVmConfig(const std::function<const char*(const char*)>& lookup,
                      std::vector<std::string>* warnings) {
  const settings::Reader r(lookup, warnings);
  VmConfig c;
  c.sync_mode = r.Flag("OFL_VM_SYNC");
  c.spin_us = r.Int("OFL_VM_SPIN_US");
  c.high_water = r.Int("OFL_VM_HIGH_WATER_MARK");
  c.low_water = r.Int("OFL_VM_LOW_WATER_MARK", c.high_water / 2);
  if (c.low_water >= c.high_water) {
    // Each value is fine alone; together they are not. Keep the high mark, halve it for the low.
    r.Invalid("OFL_VM_LOW_WATER_MARK",
              "a value below the high-water mark " + std::to_string(c.high_water) +
                  " (OFL_VM_HIGH_WATER_MARK)",
              std::to_string(c.high_water / 2));
    c.low_water = c.high_water / 2;
  }
  c.wait_timeout_s = r.Number("OFL_VM_TIMEOUT_SECONDS");
  c.fold_releases = r.Flag("OFL_VM_FOLD_RELEASE");
  c.trace_path = r.String("OFL_TRACE");
  c.trace_vm = r.Flag("OFL_TRACE_VM");
  c.exit_stall_ms = r.Int("OFL_VM_EXIT_STALL_MS");
  c.inline_bytes = r.Int("OFL_VM_INLINE_BYTES");
  return c;
}

}  // namespace ofl::vm
