// libpto.so, as an embedder links it: the public API works through the shared library, and the
// library exports only pto:: symbols (LLVM, oneTBB, Abseil and protobuf internals stay hidden).
#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "pto/pto.h"

namespace {

TEST(LibPto, PublicApiThroughTheSharedLibrary) {
  absl::StatusOr<std::unique_ptr<pto::Runtime>> rt = pto::Runtime::Open();
  ASSERT_TRUE(rt.ok()) << rt.status();
  auto fn = (*rt)->Jit("axpy", [](pto::Value x, pto::Value y) { return x * 2.0f + y; });
  ASSERT_TRUE(fn.ok());
  std::vector<float> x = {1, 2, 3}, y = {10, 20, 30}, out(3);
  ASSERT_TRUE((*fn)->Call({pto::TensorView::Dense(x.data(), {3}), pto::TensorView::Dense(y.data(), {3})},
                          {pto::TensorView::Dense(out.data(), {3})})
                  .ok());
  EXPECT_EQ(out, (std::vector<float>{12, 24, 36}));
}

TEST(LibPto, ExportsOnlyPtoSymbols) {
  const std::string command =
      std::string("nm -D --defined-only --demangle ") + PTO_LIBRARY_PATH + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::array<char, 8192> line;
  int exported = 0;
  std::vector<std::string> foreign;
  while (fgets(line.data(), line.size(), pipe) != nullptr) {
    std::string l(line.data());
    if (!l.empty() && l.back() == '\n') l.pop_back();
    // "<address> <type> <name>"
    const size_t first = l.find(' '), second = l.find(' ', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string name = l.substr(second + 1);
    ++exported;
    const bool ours = name.rfind("pto::", 0) == 0 || name.rfind("typeinfo for pto::", 0) == 0 ||
                      name.rfind("typeinfo name for pto::", 0) == 0 ||
                      name.rfind("vtable for pto::", 0) == 0;
    if (!ours) foreign.push_back(name);
  }
  pclose(pipe);
  EXPECT_GT(exported, 20);
  EXPECT_TRUE(foreign.empty()) << foreign.size() << " non-pto symbols, first: " << foreign.front();
}

}  // namespace
