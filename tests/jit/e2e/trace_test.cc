// Runtime::StartTrace / StopTrace end to end: a two-kernel program called a few times on two
// threads. Each call is an event; each kernel's pieces cover its grid exactly once per call;
// kernels are compile events at the first call only, cache_load events in a Runtime that loads
// them from the cache; and the errors of misuse.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

using ops::HostTensor;

// One "ph": "X" event of the trace (the writer puts each on a line of its own).
struct Event {
  std::string name, cat, grid;
  int tid = 0;
  double ts = 0, dur = 0;
};

std::vector<Event> ReadEvents(const std::string& path) {
  std::ifstream in(path);
  std::vector<Event> events;
  std::string line;
  const std::regex complete(
      R"re(\{"ph": "X", "name": "([^"]*)", "cat": "([a-z_]+)", "pid": \d+, "tid": (\d+), "ts": ([0-9.]+), "dur": ([0-9.]+)(.*)\}$)re");
  const std::regex grid(R"re("grid": "rows \[(\d+), (\d+)\) cols \[(\d+), (\d+)\)")re");
  std::smatch m;
  while (std::getline(in, line)) {
    if (line.back() == ',') line.pop_back();
    if (!std::regex_match(line, m, complete)) continue;
    Event e{m[1], m[2], "", std::stoi(m[3]), std::stod(m[4]), std::stod(m[5])};
    const std::string rest = m[6];
    if (std::smatch g; std::regex_search(rest, g, grid)) {
      e.grid = g[1].str() + " " + g[2].str() + " " + g[3].str() + " " + g[4].str();
    }
    events.push_back(e);
  }
  return events;
}

struct Range {
  int64_t r0, r1, c0, c1;
};

Range ParseRange(const std::string& grid) {
  Range r{};
  std::istringstream(grid) >> r.r0 >> r.r1 >> r.c0 >> r.c1;
  return r;
}

class TraceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/pto_trace_test_" + std::to_string(::getpid());
    std::filesystem::create_directories(dir_);
    inputs_ = {HostTensor::Random({256, 128}, 1), HostTensor::Random({128, 96}, 2)};
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // softmax(x @ w): a matmul kernel (grid 256 x 96) and a softmax kernel (grid 256 x 1).
  absl::StatusOr<std::unique_ptr<Function>> Jit(Runtime& rt) {
    return rt.Jit("mm_softmax", [](Value x, Value w) { return softmax(matmul(x, w)); });
  }
  void CallTimes(Function& fn, int calls) {
    std::vector<float> out(256 * 96);
    const TensorView out_view = TensorView::Dense(out.data(), {256, 96});
    for (int c = 0; c < calls; ++c) {
      ASSERT_TRUE(fn(testing::Views(inputs_), {&out_view, 1}).ok());
    }
  }
  std::string dir_;
  std::vector<HostTensor> inputs_;
};

TEST_F(TraceTest, CallsKernelPiecesAndCompilesOnTwoThreads) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime({.intra_op_threads = 2});
  ASSERT_NE(rt, nullptr);
  auto fn = Jit(*rt);
  ASSERT_TRUE(fn.ok());
  const std::string path = dir_ + "/trace.json";
  ASSERT_TRUE(rt->StartTrace(path).ok());
  CallTimes(**fn, 3);
  absl::StatusOr<TraceSummary> summary = rt->StopTrace();
  ASSERT_TRUE(summary.ok()) << summary.status();
  const std::vector<Event> events = ReadEvents(path);
  EXPECT_EQ(summary->path, path);
  EXPECT_EQ(summary->events, static_cast<int64_t>(events.size()));
  int64_t per_thread = 0;
  for (const TraceThread& t : summary->threads) per_thread += t.events;
  EXPECT_EQ(per_thread, summary->events);

  std::vector<Event> calls;
  for (const Event& e : events) {
    if (e.cat == "call") calls.push_back(e);
  }
  ASSERT_EQ(calls.size(), 3u);
  for (const Event& c : calls) EXPECT_EQ(c.name, "mm_softmax");
  const std::map<std::string, int64_t> grid_cells = {{"f32_matmul", 256 * 96},
                                                     {"f32_softmax", 256 * 1}};
  for (size_t c = 0; c < calls.size(); ++c) {
    const double begin = calls[c].ts, end = calls[c].ts + calls[c].dur;
    // Each kernel's pieces of this call: disjoint, covering its grid.
    std::map<std::string, std::vector<Range>> pieces;
    int compiles = 0, shape_classes = 0;
    for (const Event& e : events) {
      if (e.ts < begin || e.ts > end) continue;
      if (e.cat == "kernel") pieces[e.name].push_back(ParseRange(e.grid));
      compiles += e.cat == "compile";
      shape_classes += e.cat == "shape_class";
    }
    ASSERT_EQ(pieces.size(), 2u) << "call " << c;
    for (const auto& [name, ranges] : pieces) {
      int64_t want = -1;
      for (const auto& [prefix, cells] : grid_cells) {
        if (name.rfind(prefix, 0) == 0) want = cells;
      }
      ASSERT_GT(want, 0) << name;
      int64_t cells = 0;
      for (size_t i = 0; i < ranges.size(); ++i) {
        cells += (ranges[i].r1 - ranges[i].r0) * (ranges[i].c1 - ranges[i].c0);
        for (size_t j = 0; j < i; ++j) {
          const bool overlap = ranges[i].r0 < ranges[j].r1 && ranges[j].r0 < ranges[i].r1 &&
                               ranges[i].c0 < ranges[j].c1 && ranges[j].c0 < ranges[i].c1;
          EXPECT_FALSE(overlap) << name << " call " << c;
        }
      }
      EXPECT_EQ(cells, want) << name << " call " << c;
    }
    EXPECT_EQ(compiles, c == 0 ? 2 : 0) << "call " << c;
    EXPECT_EQ(shape_classes, c == 0 ? 1 : 0) << "call " << c;
  }
  int64_t kernel_events = 0;
  for (const TraceThread& t : summary->threads) kernel_events += t.kernel_events;
  EXPECT_GE(kernel_events, 6);

  // Stopped: calls record nothing, and a second trace holds only its own calls.
  CallTimes(**fn, 1);
  const std::string second = dir_ + "/second.json";
  ASSERT_TRUE(rt->StartTrace(second).ok());
  CallTimes(**fn, 1);
  ASSERT_TRUE(rt->StopTrace().ok());
  int second_calls = 0, second_compiles = 0;
  for (const Event& e : ReadEvents(second)) {
    second_calls += e.cat == "call";
    second_compiles += e.cat == "compile";
  }
  EXPECT_EQ(second_calls, 1);
  EXPECT_EQ(second_compiles, 0);
}

TEST_F(TraceTest, KernelsLoadedFromTheCacheAreCacheLoadEvents) {
  const std::string cache = dir_ + "/cache";
  {
    std::unique_ptr<Runtime> rt = testing::OpenRuntime({.cache_path = cache});
    ASSERT_NE(rt, nullptr);
    auto fn = Jit(*rt);
    ASSERT_TRUE(fn.ok());
    CallTimes(**fn, 1);
  }
  std::unique_ptr<Runtime> rt = testing::OpenRuntime({.cache_path = cache});
  ASSERT_NE(rt, nullptr);
  auto fn = Jit(*rt);
  ASSERT_TRUE(fn.ok());
  const std::string path = dir_ + "/warm.json";
  ASSERT_TRUE(rt->StartTrace(path).ok());
  CallTimes(**fn, 1);
  ASSERT_TRUE(rt->StopTrace().ok());
  std::multiset<std::string> cats;
  for (const Event& e : ReadEvents(path)) cats.insert(e.cat);
  EXPECT_EQ(cats.count("cache_load"), 2u);
  EXPECT_EQ(cats.count("compile"), 0u);
  EXPECT_EQ(cats.count("call"), 1u);
}

TEST_F(TraceTest, MisuseIsFailedPreconditionAndABadPathPermissionDenied) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  ASSERT_NE(rt, nullptr);
  absl::StatusOr<TraceSummary> stopped = rt->StopTrace();
  EXPECT_EQ(stopped.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(stopped.status().message(),
            "no trace is being recorded: call Runtime::StartTrace first");
  absl::Status bad = rt->StartTrace(dir_ + "/missing/trace.json");
  EXPECT_EQ(bad.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(bad.message(),
            "cannot write the trace to " + dir_ + "/missing/trace.json: No such file or directory");
  const std::string path = dir_ + "/t.json";
  ASSERT_TRUE(rt->StartTrace(path).ok());
  absl::Status twice = rt->StartTrace(dir_ + "/u.json");
  EXPECT_EQ(twice.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(twice.message(),
            "a trace is being recorded already (to " + path + "): call StopTrace first");
  absl::StatusOr<TraceSummary> empty = rt->StopTrace();
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->events, 0);
  EXPECT_TRUE(empty->threads.empty());
}

}  // namespace
}  // namespace pto
