#include "jit/chrome_trace.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace pto::jit {

std::string JsonString(std::string_view text) {
  std::string out = "\"";
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          absl::StrAppendFormat(&out, "\\u%04x", c);
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

std::string GridRangeText(const int64_t lo[2], const int64_t hi[2]) {
  return absl::StrCat("rows [", lo[0], ", ", hi[0], ") cols [", lo[1], ", ", hi[1], ")");
}

std::string ChromeTraceJson(const std::vector<TimelineEvent>& events,
                            const std::vector<TimelineThread>& threads,
                            std::string_view process_name) {
  const int pid = static_cast<int>(::getpid());
  std::string out = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  absl::StrAppend(&out, "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": ", pid,
                  ", \"tid\": 0, \"args\": {\"name\": ", JsonString(process_name), "}}");
  for (const TimelineThread& t : threads) {
    absl::StrAppend(&out, ",\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": ", pid,
                    ", \"tid\": ", t.tid, ", \"args\": {\"name\": ", JsonString(t.name), "}}");
  }
  for (const TimelineEvent& e : events) {
    absl::StrAppendFormat(&out,
                          ",\n{\"ph\": \"X\", \"name\": %s, \"cat\": \"%s\", \"pid\": %d, "
                          "\"tid\": %d, \"ts\": %.3f, \"dur\": %.3f",
                          JsonString(e.name), EventCategoryName(e.category), pid, e.tid, e.start_us,
                          e.duration_us);
    if (!e.args.empty() || e.kernel >= 0) {
      out += ", \"args\": {";
      if (e.kernel >= 0) {
        absl::StrAppend(&out, "\"grid\": \"", GridRangeText(e.lo, e.hi),
                        "\", \"kernel\": ", e.kernel, ", \"arena slot\": ", e.arena_slot);
      }
      for (size_t i = 0; i < e.args.size(); ++i) {
        absl::StrAppend(&out, i > 0 || e.kernel >= 0 ? ", " : "", JsonString(e.args[i].first), ": ",
                        JsonString(e.args[i].second));
      }
      out += "}";
    }
    out += "}";
  }
  out += "\n]}\n";
  return out;
}

absl::Status WriteChromeTrace(const std::string& path, const std::vector<TimelineEvent>& events,
                              const std::vector<TimelineThread>& threads,
                              std::string_view process_name) {
  const std::string json = ChromeTraceJson(events, threads, process_name);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write the trace to ", path, ": ", std::strerror(errno)));
  }
  const bool written = std::fwrite(json.data(), 1, json.size(), f) == json.size();
  const int write_errno = errno;
  if (std::fclose(f) != 0 || !written) {
    return absl::PermissionDeniedError(absl::StrCat("cannot write the trace to ", path, ": ",
                                                    std::strerror(written ? errno : write_errno)));
  }
  return absl::OkStatus();
}

}  // namespace pto::jit
