// The table of settings (oneflow_lite/settings.h) against what is written and read elsewhere:
// docs/settings.md lists the same variables with the same types, accepted values and defaults
// (a variable added, removed or changed on one side only fails here); every default is a value
// its setting accepts; the library reads no OFL_ variable but through the table, and every entry
// is read somewhere.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "oneflow_lite/settings.h"

namespace ofl::settings {
namespace {

namespace fs = std::filesystem;

const fs::path kSourceDir = OFL_TEST_SOURCE_DIR;

std::string ReadFile(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// A cell as compared: its text without the backticks of code spans.
std::string Plain(const std::string& cell) {
  std::string out;
  for (char c : cell) {
    if (c != '`') out += c;
  }
  return Trim(out);
}

std::vector<std::string> Cells(const std::string& row) {
  std::vector<std::string> cells;
  std::string t = Trim(row);
  if (t.size() < 2 || t.front() != '|' || t.back() != '|') return cells;
  t = t.substr(1, t.size() - 2);
  size_t start = 0;
  while (true) {
    const size_t bar = t.find('|', start);
    cells.push_back(Trim(t.substr(start, bar == std::string::npos ? bar : bar - start)));
    if (bar == std::string::npos) break;
    start = bar + 1;
  }
  return cells;
}

struct DocRow {
  std::string type, accepted, default_value;
  int line = 0;
};

// The rows of the table whose header is "variable | type | accepted values | default | meaning".
std::map<std::string, DocRow> DocTable(std::vector<std::string>* problems) {
  std::map<std::string, DocRow> rows;
  std::istringstream in(ReadFile(kSourceDir / "docs" / "settings.md"));
  const std::vector<std::string> header = {"variable", "type", "accepted values", "default",
                                           "meaning"};
  std::string line;
  int n = 0;
  bool in_table = false;
  bool found = false;
  while (std::getline(in, line)) {
    ++n;
    const std::vector<std::string> cells = Cells(line);
    if (!in_table) {
      if (cells == header) {
        in_table = found = true;
        std::getline(in, line);  // | --- | ... |
        ++n;
      }
      continue;
    }
    if (cells.empty()) break;  // the table ends at its first line that is not a row
    if (cells.size() != header.size()) {
      problems->push_back("docs/settings.md:" + std::to_string(n) + ": a row of " +
                          std::to_string(cells.size()) + " cells, not 5");
      continue;
    }
    const std::string name = Plain(cells[0]);
    if (rows.count(name) != 0) {
      problems->push_back("docs/settings.md:" + std::to_string(n) + ": " + name + " again");
    }
    rows[name] = {Plain(cells[1]), Plain(cells[2]), Plain(cells[3]), n};
  }
  if (!found) problems->push_back("docs/settings.md: no table headed | variable | type | ...");
  return rows;
}

TEST(SettingsTableTest, DocsListTheSameVariablesTypesValuesAndDefaultsAsTheLibrary) {
  std::vector<std::string> problems;
  const std::map<std::string, DocRow> docs = DocTable(&problems);
  std::set<std::string> in_library;
  for (const Setting& s : Table()) {
    in_library.insert(s.name);
    auto it = docs.find(s.name);
    if (it == docs.end()) {
      problems.push_back(std::string(s.name) + ": in the library's table, not in docs/settings.md");
      continue;
    }
    const DocRow& row = it->second;
    const std::string at = "docs/settings.md:" + std::to_string(row.line) + ": " + s.name;
    if (row.type != TypeName(s.type)) {
      problems.push_back(at + ": type '" + row.type + "', the library's is '" + TypeName(s.type) +
                         "'");
    }
    if (row.accepted != AcceptedText(s)) {
      problems.push_back(at + ": accepted values '" + row.accepted + "', the library's are '" +
                         AcceptedText(s) + "'");
    }
    if (row.default_value != DefaultText(s)) {
      problems.push_back(at + ": default '" + row.default_value + "', the library's is '" +
                         DefaultText(s) + "'");
    }
  }
  for (const auto& [name, row] : docs) {
    if (in_library.count(name) == 0) {
      problems.push_back("docs/settings.md:" + std::to_string(row.line) + ": " + name +
                         " is not in the library's table (oneflow_lite/settings.cpp)");
    }
  }
  EXPECT_GE(docs.size(), 19u);
  for (const std::string& p : problems) ADD_FAILURE() << p;
}

TEST(SettingsTableTest, TheComparisonSeesAChangedRow) {
  // The check above compares what these render; a wrong range or default must not render alike.
  Setting s = Get("OFL_VM_HIGH_WATER_MARK");
  EXPECT_EQ(AcceptedText(s), "2..65536");
  EXPECT_EQ(DefaultText(s), "16384");
  s.hi = 65535;
  EXPECT_EQ(AcceptedText(s), "2..65535");
  EXPECT_EQ(AcceptedText(Get("OFL_VM_SYNC")), "0, 1");
  EXPECT_EQ(DefaultText(Get("OFL_TRACE")), "none");
  EXPECT_STREQ(TypeName(Get("OFL_LOG_LEVEL").type), "log level");
}

TEST(SettingsTableTest, EveryDefaultIsAValueItsSettingAccepts) {
  for (const Setting& s : Table()) {
    SCOPED_TRACE(s.name);
    EXPECT_NE(*s.meaning, '\0');
    std::vector<std::string> warnings;
    // The default written out as a value gives what nothing set gives, without a warning.
    const std::string def = s.default_value;
    const Reader unset([](const char*) -> const char* { return nullptr; }, &warnings);
    const Reader set([&def](const char*) { return def.c_str(); }, &warnings);
    switch (s.type) {
      case Type::kFlag:
        EXPECT_TRUE(def == "0" || def == "1");
        EXPECT_EQ(unset.Flag(s.name), set.Flag(s.name));
        break;
      case Type::kInteger:
        EXPECT_LE(s.lo, s.hi);
        EXPECT_EQ(std::to_string(unset.Int(s.name)), def);
        EXPECT_EQ(set.Int(s.name), unset.Int(s.name));
        break;
      case Type::kNumber:
        EXPECT_DOUBLE_EQ(set.Number(s.name), unset.Number(s.name));
        break;
      case Type::kString:
      case Type::kLogLevel:
        EXPECT_EQ(unset.String(s.name), def);
        if (!def.empty()) EXPECT_EQ(set.String(s.name), def);
        break;
    }
    EXPECT_TRUE(warnings.empty()) << warnings.front();
  }
}

// Library sources: every .cpp/.h/.cu/.cuh under the library's folders.
std::vector<fs::path> LibrarySources() {
  std::vector<fs::path> out;
  for (const char* dir : {"oneflow_lite", "vm", "kernels", "ops"}) {
    for (const auto& e : fs::recursive_directory_iterator(kSourceDir / dir)) {
      const std::string ext = e.path().extension().string();
      if (e.is_regular_file() && (ext == ".cpp" || ext == ".h" || ext == ".cu" || ext == ".cuh")) {
        out.push_back(e.path());
      }
    }
  }
  return out;
}

TEST(SettingsTableTest, TheLibraryReadsTheEnvironmentOnlyThroughTheTable) {
  // MPI's own variables are read where they are needed; they are not the library's settings.
  const std::set<std::string> mpi_readers = {"vm/vm_shutdown.cpp",
                                             "kernels/collective/collectives.cpp"};
  const std::vector<fs::path> sources = LibrarySources();
  ASSERT_GT(sources.size(), 50u);
  for (const fs::path& path : sources) {
    const std::string rel = fs::relative(path, kSourceDir).generic_string();
    if (rel == "oneflow_lite/settings.cpp") continue;
    std::istringstream in(ReadFile(path));
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      if (line.find("getenv(") == std::string::npos) continue;
      const std::string at = rel + ":" + std::to_string(n) + ": " + Trim(line);
      EXPECT_EQ(line.find("OFL_"), std::string::npos) << at;
      EXPECT_EQ(mpi_readers.count(rel), 1u)
          << at << " (read OFL_ settings through oneflow_lite/settings.h)";
    }
  }
}

TEST(SettingsTableTest, EveryEntryIsReadSomewhere) {
  // A getter call naming the variable in the library, the tools or the tests' helpers.
  std::string code;
  for (const fs::path& path : LibrarySources()) code += ReadFile(path);
  for (const char* dir : {"tools", "tests"}) {
    for (const auto& e : fs::recursive_directory_iterator(kSourceDir / dir)) {
      const std::string ext = e.path().extension().string();
      if (e.is_regular_file() && (ext == ".cpp" || ext == ".h") &&
          e.path().filename().string().rfind("settings", 0) != 0) {
        code += ReadFile(e.path());
      }
    }
  }
  for (const Setting& s : Table()) {
    bool read = false;
    for (const char* getter : {"Flag(\"", "Int(\"", "Number(\"", "String(\""}) {
      read = read || code.find(getter + std::string(s.name) + "\"") != std::string::npos;
    }
    EXPECT_TRUE(read) << s.name << ": in the table, read nowhere";
  }
}

}  // namespace
}  // namespace ofl::settings
