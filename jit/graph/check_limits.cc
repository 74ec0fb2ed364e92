#include "jit/graph/check_limits.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"
#include "jit/graph/limits.h"

namespace pto::graph {
namespace {

constexpr int64_t kSaturated = std::numeric_limits<int64_t>::max();

// |v|, saturated (|INT64_MIN| does not fit).
int64_t SaturatingAbs(int64_t v) {
  if (v == std::numeric_limits<int64_t>::min()) return kSaturated;
  return v < 0 ? -v : v;
}

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? kSaturated : r;
}

int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? kSaturated : r;
}

}  // namespace

absl::Status CheckLimit(absl::string_view what, int64_t value, int64_t limit,
                        absl::string_view limit_name) {
  if (value <= limit) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, " ", value, " exceeds the limit ", limit_name, " = ", limit));
}

absl::Status CheckNodeCounts(absl::string_view where, ir::OpKind op, int64_t inputs, int64_t ints) {
  if (op == ir::OpKind::kConcat) {
    if (absl::Status s = CheckLimit(absl::StrCat(where, ": input count"), inputs, kMaxConcatInputs,
                                    "kMaxConcatInputs");
        !s.ok()) {
      return s;
    }
  }
  return CheckLimit(absl::StrCat(where, ": ints count"), ints, kMaxRank, "kMaxRank");
}

absl::Status CheckDimCounts(absl::string_view where, int64_t terms, int64_t max_degree) {
  if (absl::Status s =
          CheckLimit(absl::StrCat(where, ": term count"), terms, kMaxDimTerms, "kMaxDimTerms");
      !s.ok()) {
    return s;
  }
  return CheckLimit(absl::StrCat(where, ": term degree"), max_degree, kMaxTermDegree,
                    "kMaxTermDegree");
}

absl::Status CheckShape(absl::string_view where, const ir::Shape& shape) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (absl::Status s = CheckLimit(absl::StrCat(where, ": rank"), rank, kMaxRank, "kMaxRank");
      !s.ok()) {
    return s;
  }
  int64_t shape_terms = 1;
  int64_t static_elements = 1;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t degree = 0;
    int64_t magnitude = 0;
    for (const auto& [mono, coeff] : shape[d].terms()) {
      degree = std::max(degree, static_cast<int64_t>(mono.size()));
      magnitude = SaturatingAdd(magnitude, SaturatingAbs(coeff));
    }
    const int64_t terms = static_cast<int64_t>(shape[d].terms().size());
    if (absl::Status s = CheckDimCounts(absl::StrCat(where, ": shape dim ", d), terms, degree);
        !s.ok()) {
      return s;
    }
    shape_terms = SaturatingMul(shape_terms, std::max<int64_t>(terms, 1));
    static_elements = SaturatingMul(static_elements, std::max<int64_t>(magnitude, 1));
  }
  if (absl::Status s = CheckLimit(absl::StrCat(where, ": product of the dims' term counts"),
                                  shape_terms, kMaxShapeTerms, "kMaxShapeTerms");
      !s.ok()) {
    return s;
  }
  return CheckLimit(absl::StrCat(where, ": static element count"), static_elements,
                    kMaxStaticElements, "kMaxStaticElements");
}

}  // namespace pto::graph
