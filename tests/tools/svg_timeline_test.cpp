// Tests that the SVG timeline is well-formed XML (balanced tags, escaped text) with one lane per
// stream, one box with a tooltip per instruction, and a memory plot per device.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "tests/tools/trace_test_util.h"
#include "tools/vm_trace/svg_timeline.h"
#include "tools/vm_trace/trace_model.h"

namespace ofl::vm_trace {
namespace {

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// A small well-formedness check: every element closes in order, '<' never appears in text, and
// every '&' starts an entity. Returns an empty string when well-formed, else what is wrong.
std::string XmlProblem(const std::string& xml) {
  std::vector<std::string> open;
  size_t i = 0;
  if (xml.compare(0, 5, "<?xml") == 0) i = xml.find("?>") + 2;
  while (i < xml.size()) {
    const char c = xml[i];
    if (c == '&') {
      const size_t semi = xml.find(';', i);
      if (semi == std::string::npos || semi - i > 8) return "bare & at " + std::to_string(i);
      i = semi + 1;
      continue;
    }
    if (c != '<') {
      ++i;
      continue;
    }
    const size_t close = xml.find('>', i);
    if (close == std::string::npos) return "unterminated tag at " + std::to_string(i);
    std::string tag = xml.substr(i + 1, close - i - 1);
    if (tag.find('<') != std::string::npos) return "'<' inside a tag at " + std::to_string(i);
    if (Count(tag, "\"") % 2 != 0) return "unbalanced quotes in <" + tag + ">";
    if (!tag.empty() && tag[0] == '/') {
      const std::string name = tag.substr(1);
      if (open.empty() || open.back() != name) return "</" + name + "> closes nothing open";
      open.pop_back();
    } else if (tag.empty() || tag.back() != '/') {
      open.push_back(tag.substr(0, tag.find_first_of(" \t\n")));
    }
    i = close + 1;
  }
  if (!open.empty()) return "<" + open.back() + "> is never closed";
  return "";
}

std::string Render(const TraceModel& m) {
  std::ostringstream out;
  WriteSvg(m, out);
  return out.str();
}

TEST(SvgTimelineTest, WellFormedWithALanePerStreamAndABoxPerInstruction) {
  const TraceModel m = ParseTrace(testing::kHandMadeTrace);
  const std::string svg = Render(m);
  EXPECT_EQ(XmlProblem(svg), "");
  EXPECT_EQ(svg.find("<svg"), svg.find("?>") + 3);
  EXPECT_EQ(Count(svg, "<g class=\"lane\""), 2u);
  EXPECT_EQ(Count(svg, "data-stream=\"cpu:0/compute\""), 1u);
  EXPECT_EQ(Count(svg, "data-stream=\"cpu:0/h2d\""), 1u);
  EXPECT_EQ(Count(svg, "<rect class=\"instr"), 4u);
  EXPECT_EQ(Count(svg, "<title>"), 4u);
  EXPECT_NE(svg.find("<title>join #4 (Function) on cpu:0/compute"), std::string::npos);
  EXPECT_NE(svg.find("ERROR: join (instruction #4) failed: boom"), std::string::npos);
  EXPECT_EQ(Count(svg, "class=\"instr err\""), 1u);
  // One cross-stream edge whose both ends are in the trace (#1 -> #2, #2 -> #4).
  EXPECT_EQ(Count(svg, "<line class=\"dep\""), 2u);
}

TEST(SvgTimelineTest, DrawsAllocatedAndReservedPerDevice) {
  const std::string svg = Render(ParseTrace(testing::kHandMadeTrace));
  EXPECT_EQ(Count(svg, "<g class=\"memory\" data-device=\"cpu:0\""), 1u);
  EXPECT_EQ(Count(svg, "<polyline class=\"allocated\""), 1u);
  EXPECT_EQ(Count(svg, "<polyline class=\"reserved\""), 1u);
}

TEST(SvgTimelineTest, EscapesNamesFromTheTrace) {
  const TraceModel m = ParseTrace(R"([
    {"ph": "M", "name": "thread_name", "tid": 1, "args": {"name": "lane \"<1>\" & co"}},
    {"ph": "X", "name": "a<b&c>'d", "tid": 1, "ts": 0, "dur": 1}])");
  const std::string svg = Render(m);
  EXPECT_EQ(XmlProblem(svg), "");
  EXPECT_NE(svg.find("data-stream=\"lane &quot;&lt;1&gt;&quot; &amp; co\""), std::string::npos);
  EXPECT_NE(svg.find("a&lt;b&amp;c&gt;&apos;d"), std::string::npos);
  EXPECT_EQ(svg.find("a<b"), std::string::npos);
}

TEST(SvgTimelineTest, XmlEscapeReplacesMarkupAndControlCharacters) {
  EXPECT_EQ(XmlEscape("plain"), "plain");
  EXPECT_EQ(XmlEscape("<&>\"'"), "&lt;&amp;&gt;&quot;&apos;");
  EXPECT_EQ(XmlEscape(std::string("a\x01z\n")), "a?z\n");
}

TEST(SvgTimelineTest, AnEmptyTraceIsStillAPicture) {
  const std::string svg = Render(ParseTrace(R"({"traceEvents": []})"));
  EXPECT_EQ(XmlProblem(svg), "");
  EXPECT_EQ(Count(svg, "<g class=\"lane\""), 0u);
  EXPECT_NE(svg.find("no memory counters"), std::string::npos);
}

TEST(SvgTimelineTest, WriteSvgFileRefusesAnUnwritablePath) {
  const TraceModel m = ParseTrace(testing::kHandMadeTrace);
  EXPECT_THROW(WriteSvgFile(m, ::testing::TempDir() + "/no_such_dir_ofl/out.svg"), TraceError);
}

}  // namespace
}  // namespace ofl::vm_trace
