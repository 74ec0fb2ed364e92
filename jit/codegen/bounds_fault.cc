#include "jit/codegen/bounds_fault.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace pto::jit {

std::string BoundsFaultMessage(const char* kernel, const char* buffer, int64_t first, int64_t last,
                               int64_t extent, bool is_store) {
  const bool first_outside = first < 0 || first >= extent;
  const int64_t index = first_outside ? first : last;
  std::string message = absl::StrCat("pto: bounds fault in checked kernel ", kernel, ": ",
                                     is_store ? "store to " : "load from ", buffer, " at element ",
                                     index, ", outside its ", extent, " elements");
  if (first != last) {
    absl::StrAppend(&message, " (the access spans elements ", std::min(first, last), " to ",
                    std::max(first, last), ")");
  }
  return message;
}

void BoundsFault(const char* kernel, const char* buffer, int64_t first, int64_t last,
                 int64_t extent, int32_t is_store) {
  const std::string message = BoundsFaultMessage(kernel, buffer, first, last, extent, is_store);
  std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
  std::abort();
}

// A plain function of integer and pointer arguments: its C++ and C calling conventions agree.
const void* BoundsFaultAddress() { return reinterpret_cast<const void*>(&BoundsFault); }

}  // namespace pto::jit
