// Which CUDA errors mark a device failed (kernels/cuda/cuda_check.h). Needs no GPU: the error
// helpers only name errors (cudaGetErrorName works without a device), and the completeness check
// reads the documentation of the enum cudaError in the toolkit's own driver_types.h, so that an
// error a new CUDA release documents as leaving the process unusable cannot be missed.
#ifdef OFL_TEST_BUILT_WITH_CUDA

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_check.h"

namespace ofl::kernels::cuda {
namespace {

// The words with which driver_types.h documents an error after which the context cannot be used
// (lower case; matched against the doc comment with its whitespace collapsed).
const char* const kUnusablePhrases[] = {
    "process must be terminated and relaunched",
    "the device cannot be used again",
    "all existing allocations are invalid",
    "all existing device memory allocations are invalid",
    "leaves the process in an inconsistent state",
};

struct EnumEntry {
  std::string name;
  long value = 0;
  std::string doc;  // the /** ... */ comment just before the entry, lower case, spaces collapsed
};

std::string Normalize(const std::string& comment) {
  std::string out;
  bool space = false;
  for (char c : comment) {
    if (c == '*' || std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// The entries of `enum cudaError` with their doc comments. A small scanner rather than a regex:
// comments, then `name = value` assignments, up to the closing brace.
std::vector<EnumEntry> ParseCudaErrorEnum(const std::string& text) {
  size_t pos = text.find("enum __device_builtin__ cudaError");
  if (pos == std::string::npos) pos = text.find("enum cudaError");
  if (pos == std::string::npos) return {};
  pos = text.find('{', pos);
  if (pos == std::string::npos) return {};
  std::vector<EnumEntry> entries;
  std::string doc;
  for (size_t i = pos + 1; i < text.size();) {
    if (text.compare(i, 2, "/*") == 0) {
      const size_t end = text.find("*/", i + 2);
      if (end == std::string::npos) break;
      if (text.compare(i, 3, "/**") == 0) doc = text.substr(i + 3, end - i - 3);
      i = end + 2;
    } else if (text.compare(i, 2, "//") == 0) {
      i = text.find('\n', i);
    } else if (text[i] == '}') {
      break;
    } else if (std::isalpha(static_cast<unsigned char>(text[i])) || text[i] == '_') {
      size_t j = i;
      while (j < text.size() &&
             (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) {
        ++j;
      }
      EnumEntry e;
      e.name = text.substr(i, j - i);
      while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) ++j;
      if (j < text.size() && text[j] == '=') {
        ++j;
        while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) ++j;
        size_t k = j;
        while (k < text.size() && std::isalnum(static_cast<unsigned char>(text[k]))) ++k;
        e.value = std::stol(text.substr(j, k - j), nullptr, 0);
        j = k;
      }
      e.doc = Normalize(doc);
      doc.clear();
      entries.push_back(std::move(e));
      i = j;
    } else {
      ++i;
    }
  }
  return entries;
}

bool DocumentedAsUnusable(const EnumEntry& e) {
  return std::any_of(std::begin(kUnusablePhrases), std::end(kUnusablePhrases),
                     [&](const char* phrase) { return e.doc.find(phrase) != std::string::npos; });
}

bool InTable(cudaError_t err) {
  const std::vector<StickyError>& table = StickyErrors();
  return std::any_of(table.begin(), table.end(),
                     [&](const StickyError& s) { return s.code == err; });
}

TEST(CudaStickyErrorTableTest, EveryEntryIsAKnownErrorWithAReasonOnce) {
  const std::vector<StickyError>& table = StickyErrors();
  ASSERT_FALSE(table.empty());
  std::set<int> seen;
  for (const StickyError& e : table) {
    const std::string name = cudaGetErrorName(e.code);
    EXPECT_EQ(name.rfind("cudaError", 0), 0u) << static_cast<int>(e.code) << ": " << name;
    EXPECT_TRUE(seen.insert(static_cast<int>(e.code)).second) << name << " is listed twice";
    ASSERT_NE(e.why, nullptr) << name;
    EXPECT_GT(std::string(e.why).size(), 10u) << name << ": no reason given";
    EXPECT_TRUE(IsSticky(e.code)) << name;
  }
}

TEST(CudaStickyErrorTableTest, StickyErrorsThrowDeviceFailedNamingCallAndError) {
  for (const StickyError& e : StickyErrors()) {
    const std::string name = cudaGetErrorName(e.code);
    try {
      ThrowCudaError(e.code, "cudaTestCall", "cuda:0");
    } catch (const DeviceFailed& f) {
      const std::string msg = f.what();
      EXPECT_NE(msg.find("cudaTestCall failed: " + name), std::string::npos) << msg;
      EXPECT_NE(msg.find("(cuda:0)"), std::string::npos) << msg;
      EXPECT_NE(msg.find("unusable until the process exits"), std::string::npos) << msg;
    } catch (const std::exception& other) {
      ADD_FAILURE() << name << ": not DeviceFailed: " << other.what();
    }
  }
}

TEST(CudaStickyErrorTableTest, RecoverableErrorsThrowDeviceErrorThatIsNotDeviceFailed) {
  for (const cudaError_t err :
       {cudaErrorInvalidValue, cudaErrorMemoryAllocation, cudaErrorNotReady,
        cudaErrorInvalidResourceHandle, cudaErrorInvalidDevice, cudaErrorInvalidConfiguration,
        cudaErrorLaunchOutOfResources, cudaErrorPeerAccessAlreadyEnabled, cudaErrorTooManyPeers,
        cudaErrorNoDevice, cudaErrorInsufficientDriver}) {
    const std::string name = cudaGetErrorName(err);
    EXPECT_FALSE(IsSticky(err)) << name;
    try {
      ThrowCudaError(err, "cudaTestCall");
    } catch (const DeviceFailed& f) {
      ADD_FAILURE() << name << " marked the device failed: " << f.what();
    } catch (const DeviceError& e) {
      EXPECT_NE(std::string(e.what()).find("cudaTestCall failed: " + name), std::string::npos)
          << e.what();
    }
  }
}

TEST(CudaStickyErrorTableTest, CheckThrowsOnlyForAFailedCall) {
  EXPECT_NO_THROW(Check(cudaSuccess, "cudaTestCall"));
  EXPECT_THROW(Check(cudaErrorIllegalAddress, "cudaTestCall"), DeviceFailed);
  EXPECT_THROW(Check(cudaErrorInvalidValue, "cudaTestCall"), DeviceError);
}

// Every error that CUDA's own header documents as leaving the process unusable is in the table.
TEST(CudaStickyErrorTableTest, TableHoldsEveryErrorDocumentedAsUnusableInDriverTypesH) {
  const std::string path = OFL_TEST_CUDA_DRIVER_TYPES_H;
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot read " << path;
  std::stringstream text;
  text << in.rdbuf();
  const std::vector<EnumEntry> entries = ParseCudaErrorEnum(text.str());
  // The scanner read the enum this runtime was built from: values agree with the compiled enum.
  ASSERT_GT(entries.size(), 50u) << "enum cudaError not parsed from " << path;
  std::vector<std::string> documented;
  for (const EnumEntry& e : entries) {
    if (e.name == "cudaSuccess") EXPECT_EQ(e.value, static_cast<long>(cudaSuccess));
    if (e.name == "cudaErrorIllegalAddress") {
      EXPECT_EQ(e.value, static_cast<long>(cudaErrorIllegalAddress));
    }
    if (!DocumentedAsUnusable(e)) continue;
    documented.push_back(e.name);
    const cudaError_t err = static_cast<cudaError_t>(e.value);
    EXPECT_STREQ(cudaGetErrorName(err), e.name.c_str()) << "value " << e.value;
    EXPECT_TRUE(InTable(err)) << e.name << " (" << e.value
                              << ") is documented as leaving the process unusable but is not in "
                                 "StickyErrors(): \""
                              << e.doc << "\"";
    EXPECT_TRUE(IsSticky(err)) << e.name;
  }
  // The phrases still match how the header words it (a change of wording would otherwise make
  // this test pass without checking anything).
  EXPECT_NE(std::find(documented.begin(), documented.end(), "cudaErrorIllegalAddress"),
            documented.end())
      << "no entry matched the phrases; read " << path << " again";
}

}  // namespace
}  // namespace ofl::kernels::cuda

#endif  // OFL_TEST_BUILT_WITH_CUDA
