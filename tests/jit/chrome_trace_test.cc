// The Chrome trace writer (jit/chrome_trace.h): exact JSON for known events, string escaping,
// and the error for a path it cannot write.
#include "jit/chrome_trace.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace pto::jit {
namespace {

TEST(ChromeTrace, JsonStringEscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(JsonString("plain"), "\"plain\"");
  EXPECT_EQ(JsonString("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(JsonString("l1\nl2\tx\r"), "\"l1\\nl2\\tx\\r\"");
  EXPECT_EQ(JsonString(std::string("\x01\x1f", 2)), "\"\\u0001\\u001f\"");
  EXPECT_EQ(JsonString("caf\xc3\xa9"), "\"caf\xc3\xa9\"");  // UTF-8 passes through
}

std::vector<TimelineEvent> TwoEvents() {
  TimelineEvent call;
  call.name = "mlp";
  call.category = EventCategory::kCall;
  call.tid = 1;
  call.start_us = 1.5;
  call.duration_us = 100.25;
  call.args = {{"inputs", "[2, 3]"}};
  TimelineEvent piece;
  piece.name = "f32_\"odd\"";
  piece.category = EventCategory::kKernel;
  piece.tid = 2;
  piece.start_us = 10;
  piece.duration_us = 20;
  piece.kernel = 2;
  piece.arena_slot = 1;
  piece.lo[1] = 64;
  piece.hi[0] = 8;
  piece.hi[1] = 128;
  return {call, piece};
}

TEST(ChromeTrace, GridRangeText) {
  const int64_t lo[2] = {0, 64}, hi[2] = {32, 128};
  EXPECT_EQ(GridRangeText(lo, hi), "rows [0, 32) cols [64, 128)");
}

TEST(ChromeTrace, CompleteEventsAndThreadNames) {
  const std::string pid = absl::StrCat(::getpid());
  const std::string json =
      ChromeTraceJson(TwoEvents(), {{1, "main (thread 1)"}, {2, "thread 2"}}, "pto");
  const std::string want =
      "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n"
      "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " +
      pid +
      ", \"tid\": 0, \"args\": {\"name\": \"pto\"}},\n"
      "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " +
      pid +
      ", \"tid\": 1, \"args\": {\"name\": \"main (thread 1)\"}},\n"
      "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " +
      pid +
      ", \"tid\": 2, \"args\": {\"name\": \"thread 2\"}},\n"
      "{\"ph\": \"X\", \"name\": \"mlp\", \"cat\": \"call\", \"pid\": " +
      pid +
      ", \"tid\": 1, \"ts\": 1.500, \"dur\": 100.250, \"args\": {\"inputs\": \"[2, 3]\"}},\n"
      "{\"ph\": \"X\", \"name\": \"f32_\\\"odd\\\"\", \"cat\": \"kernel\", \"pid\": " +
      pid +
      ", \"tid\": 2, \"ts\": 10.000, \"dur\": 20.000, \"args\": {\"grid\": \"rows [0, 8) "
      "cols [64, 128)\", \"kernel\": 2, \"arena slot\": 1}}\n"
      "]}\n";
  EXPECT_EQ(json, want);
}

TEST(ChromeTrace, WritesTheFileAndReportsAnUnwritablePath) {
  const std::string path = ::testing::TempDir() + "/chrome_trace_test.json";
  ASSERT_TRUE(WriteChromeTrace(path, TwoEvents(), {{1, "t"}}, "pto").ok());
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), ChromeTraceJson(TwoEvents(), {{1, "t"}}, "pto"));
  std::remove(path.c_str());
  const absl::Status s = WriteChromeTrace("/nonexistent-dir/t.json", {}, {}, "pto");
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message(),
            "cannot write the trace to /nonexistent-dir/t.json: No such file or directory");
}

}  // namespace
}  // namespace pto::jit
