#include "tools/npy.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/ir/dtype.h"
#include "ops/host_tensor.h"

namespace pto::tools {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A .npy file: magic, version, little-endian header length, header, data.
std::string NpyBytes(int major, const std::string& header, const std::string& data = "") {
  std::string out = "\x93NUMPY";
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  const int width = major == 1 ? 2 : 4;
  for (int i = 0; i < width; ++i)
    out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  return out + header + data;
}

// `dict` padded with spaces and a newline as numpy does, so the data starts at a multiple of
// `align` (64 since numpy 1.14, 16 before).
std::string Padded(const std::string& dict, int major = 1, size_t align = 64) {
  const size_t preamble = major == 1 ? 10 : 12;
  const size_t pad = align - (preamble + dict.size() + 1) % align;
  return dict + std::string(pad, ' ') + "\n";
}

std::string FloatBytes(const std::vector<float>& values) {
  std::string out;
  for (float v : values) {
    const uint32_t bits = std::bit_cast<uint32_t>(v);
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
  }
  return out;
}

void ExpectError(const absl::StatusOr<NpyArray>& result, absl::StatusCode code,
                 const std::string& substring) {
  ASSERT_FALSE(result.ok()) << "expected: " << substring;
  EXPECT_EQ(result.status().code(), code) << result.status();
  EXPECT_THAT(std::string(result.status().message()), HasSubstr(substring));
}

constexpr char kDict23[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";

TEST(NpyTest, SerializeIsByteExactNumpyFormat) {
  // numpy.save(f, np.arange(6, dtype='<f4').reshape(2, 3)) before numpy 1.24 (which added
  // spare room for the shape): a 59-byte dict, 58 spaces and a newline; data at byte 128.
  NpyArray a{{2, 3}, {0, 1, 2, 3, 4, 5}};
  absl::StatusOr<std::string> bytes = SerializeNpy(a);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  const std::string header = std::string(kDict23) + std::string(58, ' ') + "\n";
  EXPECT_EQ(*bytes, NpyBytes(1, header, FloatBytes({0, 1, 2, 3, 4, 5})));
  EXPECT_EQ(bytes->size(), 128u + 24u);
}

TEST(NpyTest, SerializeShapes) {
  // Python's tuple repr: (), (5,), (0,); data at 64 bytes.
  struct Case {
    std::vector<int64_t> shape;
    std::vector<float> data;
    std::string shape_text;
  };
  for (const Case& c : std::vector<Case>{{{}, {7}, "()"},
                                         {{5}, {1, 2, 3, 4, 5}, "(5,)"},
                                         {{0}, {}, "(0,)"},
                                         {{3, 0, 2}, {}, "(3, 0, 2)"}}) {
    absl::StatusOr<std::string> bytes = SerializeNpy({c.shape, c.data});
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    const std::string dict =
        "{'descr': '<f4', 'fortran_order': False, 'shape': " + c.shape_text + ", }";
    EXPECT_EQ(*bytes, NpyBytes(1, Padded(dict), FloatBytes(c.data))) << c.shape_text;
  }
}

TEST(NpyTest, SerializeAlignedHeaderGetsAFullPad) {
  // numpy adds 64 spaces when the header would already end on the boundary:
  // 10 + 117 (this dict) + 1 == 128.
  std::vector<int64_t> shape(21, 1);
  shape[0] = 10;
  const std::string dict =
      "{'descr': '<f4', 'fortran_order': False, 'shape': "
      "(10, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), }";
  ASSERT_EQ(dict.size(), 117u);
  absl::StatusOr<std::string> bytes = SerializeNpy({shape, std::vector<float>(10, 1.0f)});
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, NpyBytes(1, dict + std::string(64, ' ') + "\n",
                             FloatBytes(std::vector<float>(10, 1.0f))));
}

TEST(NpyTest, RoundTripKeepsBits) {
  const float denormal = std::numeric_limits<float>::denorm_min();
  NpyArray a{{2, 4},
             {0.0f, -0.0f, 1.5f, -3.25e-7f, std::numeric_limits<float>::infinity(),
              std::numeric_limits<float>::quiet_NaN(), denormal, 1e38f}};
  absl::StatusOr<std::string> bytes = SerializeNpy(a);
  ASSERT_TRUE(bytes.ok());
  absl::StatusOr<NpyArray> back = ParseNpy(*bytes, "mem.npy");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->shape, a.shape);
  ASSERT_EQ(back->data.size(), a.data.size());
  for (size_t i = 0; i < a.data.size(); ++i) {
    EXPECT_EQ(std::bit_cast<uint32_t>(back->data[i]), std::bit_cast<uint32_t>(a.data[i])) << i;
  }
}

TEST(NpyTest, ParseScalarOneDimAndEmpty) {
  absl::StatusOr<NpyArray> scalar =
      ParseNpy(NpyBytes(1, Padded("{'descr': '<f4', 'fortran_order': False, 'shape': (), }"),
                        FloatBytes({2.5f})),
               "s.npy");
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  EXPECT_TRUE(scalar->shape.empty());
  EXPECT_THAT(scalar->data, ElementsAre(2.5f));

  absl::StatusOr<NpyArray> vec =
      ParseNpy(NpyBytes(1, Padded("{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }"),
                        FloatBytes({1, 2, 3, 4, 5})),
               "v.npy");
  ASSERT_TRUE(vec.ok()) << vec.status();
  EXPECT_THAT(vec->shape, ElementsAre(5));
  EXPECT_THAT(vec->data, ElementsAre(1, 2, 3, 4, 5));

  absl::StatusOr<NpyArray> empty = ParseNpy(
      NpyBytes(1, Padded("{'descr': '<f4', 'fortran_order': False, 'shape': (4, 0), }")), "e.npy");
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_THAT(empty->shape, ElementsAre(4, 0));
  EXPECT_TRUE(empty->data.empty());
}

TEST(NpyTest, ParseHeaderVariants) {
  const std::string data = FloatBytes({0, 1, 2, 3, 4, 5});
  const std::vector<std::pair<std::string, std::string>> variants = {
      {"numpy 1.14+ format 1.0", NpyBytes(1, Padded(kDict23), data)},
      // numpy >= 1.24 reserves room to grow the first dim: 21 - len(repr(2)) spaces more.
      {"numpy 1.24+ growth padding", NpyBytes(1, Padded(kDict23 + std::string(20, ' ')), data)},
      {"format 2.0", NpyBytes(2, Padded(kDict23, 2), data)},
      {"format 3.0", NpyBytes(3, Padded(kDict23, 3), data)},
      {"numpy < 1.14, 16-byte alignment", NpyBytes(1, Padded(kDict23, 1, 16), data)},
      {"Python 2 longs",
       NpyBytes(1, Padded("{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }"), data)},
      {"other key order, double quotes, no trailing comma",
       NpyBytes(1, "{\"shape\":(2,3),\"fortran_order\":False,\"descr\":\"<f4\"}", data)},
      {"spaces everywhere",
       NpyBytes(1, " {  'descr' : '<f4' ,\n 'fortran_order' : False , 'shape' : ( 2 , 3 , ) , } \n",
                data)},
  };
  for (const auto& [what, bytes] : variants) {
    absl::StatusOr<NpyArray> a = ParseNpy(bytes, what);
    ASSERT_TRUE(a.ok()) << what << ": " << a.status();
    EXPECT_THAT(a->shape, ElementsAre(2, 3)) << what;
    EXPECT_THAT(a->data, ElementsAre(0, 1, 2, 3, 4, 5)) << what;
  }
}

TEST(NpyTest, BadMagic) {
  ExpectError(ParseNpy("PK\x03\x04 not numpy at all", "zip.npy"),
              absl::StatusCode::kInvalidArgument, "zip.npy: not a .npy file");
  ExpectError(ParseNpy("", "empty.npy"), absl::StatusCode::kInvalidArgument,
              "empty.npy: not a .npy file");
}

TEST(NpyTest, TruncatedPreamble) {
  ExpectError(ParseNpy(std::string("\x93NUMPY\x01", 7), "t.npy"), absl::StatusCode::kDataLoss,
              "t.npy: truncated in the .npy preamble (7 bytes)");
  ExpectError(ParseNpy(std::string("\x93NUMPY\x02\x00\x10\x00", 10), "t2.npy"),
              absl::StatusCode::kDataLoss, "t2.npy: truncated in the .npy preamble (10 bytes)");
}

TEST(NpyTest, UnknownVersion) {
  std::string bytes = NpyBytes(1, Padded(kDict23), FloatBytes({0, 1, 2, 3, 4, 5}));
  bytes[6] = 4;
  ExpectError(ParseNpy(bytes, "v4.npy"), absl::StatusCode::kUnimplemented,
              "v4.npy: .npy format version 4.0 is not supported");
  bytes[6] = 1;
  bytes[7] = 1;
  ExpectError(ParseNpy(bytes, "v11.npy"), absl::StatusCode::kUnimplemented,
              "format version 1.1 is not supported");
}

TEST(NpyTest, TruncatedHeader) {
  std::string bytes = NpyBytes(1, Padded(kDict23));
  bytes.resize(40);
  ExpectError(ParseNpy(bytes, "h.npy"), absl::StatusCode::kDataLoss,
              "h.npy: header is truncated: expected 118 bytes, got 30");
}

TEST(NpyTest, MalformedHeaders) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{'descr' '<f4'}", "expected ':'"},
      {"'descr': '<f4'", "expected '{'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } junk", "expected the end"},
      {"{'descr': '<f4, }", "unterminated string"},
      {"{'descr': '<f4', 'fortran_order': Maybe}", "expected a value"},
      {"{'shape': (2, 3 3)}", "expected ',' or ')'"},
      {"{3: 4}", "a key is not a string"},
      {"{'shape': (99999999999999999999,)}", "integer out of range"},
  };
  for (const auto& [header, message] : cases) {
    ExpectError(ParseNpy(NpyBytes(1, header), "m.npy"), absl::StatusCode::kInvalidArgument,
                "m.npy: malformed header: " + message);
  }
}

// The header parser descends once per '(' or '[': a header of a million of them is an error,
// not a stack overflow.
TEST(NpyTest, DeeplyNestedHeaderIsAnError) {
  for (const char open : {'(', '['}) {
    const std::string header = "{'shape': " + std::string(1000000, open) + "}";
    ExpectError(ParseNpy(NpyBytes(2, header), "n.npy"), absl::StatusCode::kInvalidArgument,
                "n.npy: malformed header: values nested more than 32 deep at header offset 42");
  }
}

TEST(NpyTest, MissingExtraAndDuplicateKeys) {
  ExpectError(ParseNpy(NpyBytes(1, "{'descr': '<f4', 'fortran_order': False}"), "k.npy"),
              absl::StatusCode::kInvalidArgument, "k.npy: header has no 'shape' key");
  ExpectError(ParseNpy(NpyBytes(1,
                                "{'descr': '<f4', 'fortran_order': False, 'shape': (), "
                                "'align': True}"),
                       "k.npy"),
              absl::StatusCode::kInvalidArgument, "k.npy: header has an unexpected key 'align'");
  ExpectError(
      ParseNpy(NpyBytes(1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False}"), "k.npy"),
      absl::StatusCode::kInvalidArgument, "key 'descr' appears twice");
}

TEST(NpyTest, UnsupportedDescrs) {
  for (const char* descr : {"<i8", ">f4", "|b1", "|u1", "<f2", ">i4", "<u4", ">f8", "f4"}) {
    const std::string dict =
        std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (1,), }";
    const absl::StatusOr<NpyArray> r = ParseNpy(NpyBytes(1, Padded(dict), "12345678"), "d.npy");
    EXPECT_EQ(r.status(),
              absl::InvalidArgumentError(std::string("d.npy: descr '") + descr +
                                         "' is not supported (only '<f4', '<i4' or '<f8')"));
  }
  const absl::StatusOr<NpyArray> r = ParseNpy(
      NpyBytes(1, "{'descr': [('x', '<f4')], 'fortran_order': False, 'shape': (1,)}"), "s.npy");
  EXPECT_EQ(r.status(), absl::InvalidArgumentError(
                            "s.npy: descr is a structured dtype, which is not supported (only "
                            "'<f4', '<i4' or '<f8')"));
}

std::string Int32Bytes(const std::vector<int32_t>& values) {
  std::string out;
  for (int32_t v : values) {
    const uint32_t bits = std::bit_cast<uint32_t>(v);
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
  }
  return out;
}

std::string DoubleBytes(const std::vector<double>& values) {
  std::string out;
  for (double v : values) {
    const uint64_t bits = std::bit_cast<uint64_t>(v);
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
  }
  return out;
}

TEST(NpyTest, I32IsByteExactAndRoundTrips) {
  const std::vector<int32_t> values = {0, -1, 2147483647, -2147483647 - 1, 7, 256};
  const NpyArray a = ops::HostTensor::I32({2, 3}, values);
  const std::string want = NpyBytes(
      1, Padded("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }"), Int32Bytes(values));
  absl::StatusOr<std::string> bytes = SerializeNpy(a);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, want);
  absl::StatusOr<NpyArray> back = ParseNpy(want, "i.npy");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->dtype, ir::DType::kI32);
  EXPECT_EQ(back->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(back->data.empty());
  EXPECT_EQ(back->I32Values(), values);
}

TEST(NpyTest, F64IsByteExactAndRoundTrips) {
  const std::vector<double> values = {0.1, -1e300, 5e-324, std::numeric_limits<double>::infinity(),
                                      -0.0};
  NpyArray a = ops::HostTensor::Zeros({5}, ir::DType::kF64);
  a.wide = values;
  const std::string want = NpyBytes(
      1, Padded("{'descr': '<f8', 'fortran_order': False, 'shape': (5,), }"), DoubleBytes(values));
  absl::StatusOr<std::string> bytes = SerializeNpy(a);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, want);
  absl::StatusOr<NpyArray> back = ParseNpy(want, "d.npy");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->dtype, ir::DType::kF64);
  EXPECT_TRUE(back->data.empty());
  ASSERT_EQ(back->wide.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(std::bit_cast<uint64_t>(back->wide[i]), std::bit_cast<uint64_t>(values[i])) << i;
  }
  // A NaN's payload survives too.
  a = ops::HostTensor::Zeros({}, ir::DType::kF64);
  a.wide = {std::bit_cast<double>(uint64_t{0x7ff8000000000123})};
  bytes = SerializeNpy(a);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  back = ParseNpy(*bytes, "nan.npy");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->shape, std::vector<int64_t>{});
  EXPECT_EQ(std::bit_cast<uint64_t>(back->wide[0]), uint64_t{0x7ff8000000000123});
}

TEST(NpyTest, F32ReadsAsF32) {
  absl::StatusOr<NpyArray> a =
      ParseNpy(NpyBytes(2, Padded(kDict23, 2), FloatBytes({0, 1, 2, 3, 4, 5})), "f.npy");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->dtype, ir::DType::kF32);
  EXPECT_TRUE(a->wide.empty());
  EXPECT_THAT(a->data, ElementsAre(0, 1, 2, 3, 4, 5));
}

TEST(NpyTest, WideDtypesTruncatedAndTrailing) {
  const std::string f8 = Padded("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }");
  ExpectError(ParseNpy(NpyBytes(1, f8, DoubleBytes({1}) + "1234"), "short.npy"),
              absl::StatusCode::kDataLoss,
              "short.npy: data is truncated: shape (2,) needs 16 bytes, the file has 12");
  ExpectError(ParseNpy(NpyBytes(1, f8, DoubleBytes({1, 2}) + "z"), "long.npy"),
              absl::StatusCode::kInvalidArgument,
              "long.npy: 1 unexpected bytes after the 16 data bytes of shape (2,)");
  const std::string i4 = Padded("{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }");
  ExpectError(ParseNpy(NpyBytes(1, i4, Int32Bytes({1, 2})), "short.npy"),
              absl::StatusCode::kDataLoss,
              "short.npy: data is truncated: shape (3,) needs 12 bytes, the file has 8");
}

TEST(NpyTest, SerializeRejectsWhatNpyCannotHold) {
  NpyArray half{{1}, {1.0f}};
  half.dtype = ir::DType::kF16;
  EXPECT_EQ(SerializeNpy(half).status(),
            absl::InvalidArgumentError("dtype f16 has no .npy descr here (f32, i32 and f64 do)"));
  NpyArray ints = ops::HostTensor::I32({3}, {1, 2, 3});
  ints.wide[1] = 0.5;
  EXPECT_EQ(SerializeNpy(ints).status(),
            absl::InvalidArgumentError("i32 element 1 is 0.5, not an int32"));
  ints.wide[1] = 4294967296.0;
  EXPECT_EQ(SerializeNpy(ints).status(),
            absl::InvalidArgumentError("i32 element 1 is 4294967296, not an int32"));
  // The stored size is the dtype's storage: an f64 array's `data` does not count.
  NpyArray wide = ops::HostTensor::Zeros({2}, ir::DType::kF64);
  wide.wide.pop_back();
  wide.data = {1, 2};
  EXPECT_EQ(SerializeNpy(wide).status(),
            absl::InvalidArgumentError("shape (2,) has 2 elements but data has 1"));
}

TEST(NpyTest, FortranOrder) {
  ExpectError(ParseNpy(NpyBytes(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3)}",
                                FloatBytes({0, 1, 2, 3, 4, 5})),
                       "f.npy"),
              absl::StatusCode::kUnimplemented,
              "f.npy: fortran_order True (column-major) is not supported");
  ExpectError(ParseNpy(NpyBytes(1, "{'descr': '<f4', 'fortran_order': 0, 'shape': ()}"), "f.npy"),
              absl::StatusCode::kInvalidArgument,
              "f.npy: header 'fortran_order' must be True or False");
}

TEST(NpyTest, BadShapes) {
  for (const char* shape : {"[2, 3]", "(2, -3)", "(2, '3')", "5"}) {
    const std::string dict =
        std::string("{'descr': '<f4', 'fortran_order': False, 'shape': ") + shape + "}";
    ExpectError(ParseNpy(NpyBytes(1, dict), "b.npy"), absl::StatusCode::kInvalidArgument,
                "b.npy: header 'shape' must be a tuple of non-negative ints");
  }
  ExpectError(ParseNpy(NpyBytes(1,
                                "{'descr': '<f4', 'fortran_order': False, "
                                "'shape': (4294967296, 4294967296)}"),
                       "big.npy"),
              absl::StatusCode::kInvalidArgument,
              "big.npy: shape (4294967296, 4294967296) is too large");
}

TEST(NpyTest, TruncatedData) {
  std::string bytes = NpyBytes(1, Padded(kDict23), FloatBytes({0, 1, 2, 3, 4}) + "xy");
  ExpectError(ParseNpy(bytes, "short.npy"), absl::StatusCode::kDataLoss,
              "short.npy: data is truncated: shape (2, 3) needs 24 bytes, the file has 22");
}

TEST(NpyTest, TrailingBytes) {
  std::string bytes = NpyBytes(1, Padded(kDict23), FloatBytes({0, 1, 2, 3, 4, 5}) + "z");
  ExpectError(ParseNpy(bytes, "long.npy"), absl::StatusCode::kInvalidArgument,
              "long.npy: 1 unexpected bytes after the 24 data bytes of shape (2, 3)");
}

TEST(NpyTest, SerializeRejectsInconsistentArrays) {
  absl::StatusOr<std::string> s = SerializeNpy({{2, 3}, {1, 2, 3}});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.status().message(), "shape (2, 3) has 6 elements but data has 3");
  s = SerializeNpy({{-1}, {}});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.status().message(), "shape (-1,) has a negative dim or is too large");
}

TEST(NpyTest, FileRoundTrip) {
  const std::string path = ::testing::TempDir() + "/npy_test_round_trip.npy";
  NpyArray a{{3, 1, 2}, {1, 2, 3, 4, 5, 6}};
  ASSERT_TRUE(WriteNpy(path, a).ok());
  absl::StatusOr<NpyArray> back = ReadNpy(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->shape, a.shape);
  EXPECT_EQ(back->data, a.data);
  // i32 and f64 files too.
  const NpyArray ints = ops::HostTensor::I32({2}, {-5, 9});
  ASSERT_TRUE(WriteNpy(path, ints).ok());
  back = ReadNpy(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->dtype, ir::DType::kI32);
  EXPECT_EQ(back->I32Values(), ints.I32Values());
  NpyArray wide = ops::HostTensor::Zeros({1, 2}, ir::DType::kF64);
  wide.Set(0, 1.0 / 3.0);
  wide.Set(1, -2e-310);
  ASSERT_TRUE(WriteNpy(path, wide).ok());
  back = ReadNpy(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->dtype, ir::DType::kF64);
  EXPECT_EQ(back->shape, wide.shape);
  EXPECT_EQ(back->wide, wide.wide);
  std::remove(path.c_str());
}

TEST(NpyTest, FileErrorsNameThePath) {
  const std::string missing = ::testing::TempDir() + "/no_such_array.npy";
  ExpectError(ReadNpy(missing), absl::StatusCode::kNotFound, missing);

  const std::string bad_dir = ::testing::TempDir() + "/no_such_dir/a.npy";
  absl::Status s = WriteNpy(bad_dir, {{1}, {1}});
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr(bad_dir));

  s = WriteNpy(::testing::TempDir() + "/x.npy", {{2}, {1}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("x.npy: shape (2,) has 2 elements"));

  // Errors found while parsing a file name it.
  const std::string bad = ::testing::TempDir() + "/npy_test_bad.npy";
  std::FILE* f = std::fopen(bad.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fputs("not numpy", f);
  std::fclose(f);
  ExpectError(ReadNpy(bad), absl::StatusCode::kInvalidArgument, bad + ": not a .npy file");
  std::remove(bad.c_str());
}

}  // namespace
}  // namespace pto::tools
