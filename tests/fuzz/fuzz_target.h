// What every fuzz target in tests/fuzz/ provides: libFuzzer's entry point, run by a libFuzzer
// binary in the `fuzz` preset and by the regression test (regression_test.cc) in every build.
// A target returns 0 for every input; a broken invariant aborts through FUZZ_CHECK, so both
// libFuzzer and the regression test report it as a crash.
#ifndef PTO_TESTS_FUZZ_FUZZ_TARGET_H_
#define PTO_TESTS_FUZZ_FUZZ_TARGET_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace pto::fuzz {

// Prints `what` (with the file and line) and aborts.
[[noreturn]] void CheckFailed(const char* file, int line, std::string_view what);

// The input as text.
inline std::string_view AsText(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

// A directory of this process's own under $TMPDIR (or /tmp), made at the first call and
// removed with its contents when the process exits normally.
const std::string& ScratchDir();

}  // namespace pto::fuzz

// Aborts unless `condition` holds; `what` (a string_view) says what was expected.
#define FUZZ_CHECK(condition, what)                                         \
  do {                                                                      \
    if (!(condition)) ::pto::fuzz::CheckFailed(__FILE__, __LINE__, (what)); \
  } while (false)

#endif  // PTO_TESTS_FUZZ_FUZZ_TARGET_H_
