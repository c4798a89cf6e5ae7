// The table of every OFL_ environment setting: name, type, accepted values, default and meaning
// (docs/settings.md is the same table for users; tests/core/settings_table_test.cpp keeps the two
// equal). Every read of an OFL_ variable in the library goes through it, with one behaviour: unset
// or empty gives the default; a value the setting does not accept is reported once, naming the
// variable, the value and what is accepted, and the default is used
// ("OFL_VM_HIGH_WATER_MARK='1' is not valid: need an integer from 2 to 65536; using 16384
// instead"). A typo in a debugging switch must neither stop the program nor be silently ignored.
//
// Part of the core types: the VM, the kernels and the functional layer all read through it. The
// table logs nothing itself unless asked to: a Reader given a list of warnings adds its reports
// there for the caller to log (the VM does, through its logger); one without a list hands them to
// Report(), which makes each one at most once per process.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ofl::settings {

enum class Type {
  kFlag,      // 0 or 1
  kInteger,   // a whole decimal number in [lo, hi]
  kNumber,    // a finite decimal number
  kString,    // any text
  kLogLevel,  // one of the logger's level names
};

struct Setting {
  const char* name;
  Type type;
  const char* default_value;  // in the setting's own syntax; "" for none (strings only)
  int64_t lo;                 // kInteger: the accepted range (kFlag: 0, 1; else unused)
  int64_t hi;
  const char* values;   // kNumber, kString, kLogLevel: the accepted values in words
  const char* meaning;  // one line; "tests only: ..." for the variables only the tests read
};

// Every setting, in the order of docs/settings.md.
const std::vector<Setting>& Table();
// The entry of `name`. A name not in the table is a programming error: std::logic_error.
const Setting& Get(const std::string& name);

// How a setting is described in docs/settings.md's columns: "flag", "integer", "number",
// "string", "log level"; the accepted values ("0, 1", "2..65536", the values in words); the
// default ("none" when there is none).
const char* TypeName(Type type);
std::string AcceptedText(const Setting& s);
std::string DefaultText(const Setting& s);

// Where values come from: returns the variable's value, nullptr when it is unset.
using Lookup = std::function<const char*(const char*)>;
const char* Environment(const char* name);  // std::getenv

// The standard report of a bad value: "NAME='VALUE' is not valid: need NEED; using FALLBACK
// instead".
std::string InvalidMessage(const std::string& name, const std::string& value,
                           const std::string& need, const std::string& fallback);

// Hands a report to the runtime's logger when it exists (the same format and OFL_LOG_LEVEL as the
// VM's warnings), to stderr otherwise; a report made before in this process is dropped.
void Report(const std::string& message);

// Reads settings through `lookup`. Each getter checks that `name` is in the table with the
// getter's type (std::logic_error otherwise), returns the default when the variable is unset or
// empty, and reports a value that is not accepted (to *warnings when given, else to Report()) and
// returns the default instead.
class Reader {
 public:
  explicit Reader(Lookup lookup = Environment, std::vector<std::string>* warnings = nullptr);

  bool Flag(const char* name) const;
  int64_t Int(const char* name) const;
  // With the caller's fallback instead of the table's default, for a default that depends on
  // another setting (OFL_VM_LOW_WATER_MARK: half the high-water mark).
  int64_t Int(const char* name, int64_t fallback) const;
  double Number(const char* name) const;
  // A kString or kLogLevel setting.
  std::string String(const char* name) const;
  // The value as set, "" when unset (for a check that involves two settings).
  std::string Raw(const char* name) const;
  // Reports `name`'s current value as not valid (for a check that involves two settings).
  void Invalid(const char* name, const std::string& need, const std::string& fallback) const;

 private:
  Lookup lookup_;
  std::vector<std::string>* warnings_;
};

// The same from the environment, reports to Report().
bool Flag(const char* name);
int64_t Int(const char* name);
double Number(const char* name);
std::string String(const char* name);

}  // namespace ofl::settings
