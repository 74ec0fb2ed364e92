#include "jit/graph/graph_text.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "jit/graph/check_limits.h"
#include "jit/graph/graph_def.h"
#include "jit/graph/limits.h"
#include "proto/graph.pb.h"

namespace pto::graph {
namespace {

// Keeps the first error, with 1-based line and column (protobuf reports them 0-based).
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (!error_.empty()) return;
    error_ = absl::StrCat("line ", line + 1, ", column ", column + 1, ": ", message);
  }
  const std::string& error() const { return error_; }

 private:
  std::string error_;
};

absl::Status Prefixed(const absl::Status& status, const std::string& prefix) {
  return absl::Status(status.code(), absl::StrCat(prefix, ": ", status.message()));
}

}  // namespace

absl::Status ParseTextProto(std::string_view text, std::string_view what,
                            google::protobuf::Message* message) {
  FirstErrorCollector errors;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(std::string(text), message)) {
    return absl::InvalidArgumentError(errors.error().empty()
                                          ? absl::StrCat("malformed ", std::string(what), " text")
                                          : errors.error());
  }
  return absl::OkStatus();
}

absl::StatusOr<ir::Graph> ParseGraphText(std::string_view pbtxt) {
  if (absl::Status s = CheckLimit("GraphDef text size in bytes", static_cast<int64_t>(pbtxt.size()),
                                  kMaxGraphTextBytes, "kMaxGraphTextBytes");
      !s.ok()) {
    return s;
  }
  proto::GraphDef def;
  if (absl::Status s = ParseTextProto(pbtxt, "GraphDef", &def); !s.ok()) return s;
  return FromGraphDef(def);
}

std::string GraphToText(const ir::Graph& graph) {
  std::string text;
  google::protobuf::TextFormat::PrintToString(ToGraphDef(graph), &text);
  return text;
}

absl::StatusOr<ir::Graph> LoadGraphFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    int err = errno;
    return absl::ErrnoToStatus(err, absl::StrCat("cannot open graph file ", path));
  }
  // A file (or a pipe) larger than the limit is refused without reading it all.
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode)) {
    if (absl::Status s =
            CheckLimit("size in bytes", st.st_size, kMaxGraphTextBytes, "kMaxGraphTextBytes");
        !s.ok()) {
      std::fclose(f);
      return Prefixed(s, path);
    }
  }
  std::string text;
  char buf[1 << 16];
  size_t n;
  while (static_cast<int64_t>(text.size()) <= kMaxGraphTextBytes &&
         (n = std::fread(buf, 1, sizeof(buf), f)) > 0) {
    text.append(buf, n);
  }
  bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return absl::DataLossError(absl::StrCat("cannot read graph file ", path));
  absl::StatusOr<ir::Graph> graph = ParseGraphText(text);
  if (!graph.ok()) return Prefixed(graph.status(), path);
  return graph;
}

}  // namespace pto::graph
