#include "sources/start_time_file.h"

#include <algorithm>
#include <charconv>

namespace sluice::sources {
namespace {
constexpr size_t kWidth = 19;        // digits of the padded value
constexpr size_t kLegacyWidth = 13;  // a wall clock in ms, unpadded (Spark, older Sluice)
}  // namespace

std::string SerializeStartTime(int64_t start_ms) {
  std::string digits = std::to_string(start_ms);
  return "v1\n" + std::string(kWidth - std::min(kWidth, digits.size()), '0') + digits;
}

Result<int64_t> ParseStartTime(const std::string& text, const std::string& what) {
  if (text.rfind("v1\n", 0) != 0) {
    return Status::Corruption(what + " is malformed: expected its first line to be 'v1'" +
                              (text.empty() ? " (the file is empty)" : ""));
  }
  const char* b = text.data() + 3;
  const char* e = text.data() + text.size();
  while (e > b && (e[-1] == '\n' || e[-1] == '\r')) --e;
  const size_t n = static_cast<size_t>(e - b);
  const bool digits = n > 0 && std::all_of(b, e, [](char c) { return c >= '0' && c <= '9'; });
  int64_t v = 0;
  if (!digits || std::from_chars(b, e, v).ptr != e) {
    return Status::Corruption(what +
                              " is malformed: expected the start time in ms after 'v1', got '" +
                              std::string(b, e) + "'");
  }
  if (n != kWidth && !(n == kLegacyWidth && *b != '0')) {
    return Status::Corruption(
        what + " is malformed: its start time '" + std::string(b, e) + "' has " +
        std::to_string(n) +
        " digits where 19 (zero-padded) or 13 are written: the file was cut short or edited, and "
        "would replay different rows. Restore the file, or start the query on a new checkpoint");
  }
  return v;
}

Result<int64_t> ReadOrCreateStartTime(fs::FileSystem& fs, const std::string& path, int64_t now_ms,
                                      const std::string& kind) {
  const std::string what = kind + " source start file " + path;
  if (now_ms < 0) return Status::InvalidArgument(what + ": the clock reads before 1970");
  Result<std::string> text = fs.ReadFile(path);
  if (!text.ok() && !text.status().IsNotFound()) return text.status();
  if (!text.ok()) {
    Status st = fs.CreateIfAbsent(path, SerializeStartTime(now_ms));
    if (st.ok()) return now_ms;
    if (!st.IsAlreadyExists()) return st;
    text = fs.ReadFile(path);
    if (!text.ok()) return text.status();
  }
  return ParseStartTime(*text, what);
}

}  // namespace sluice::sources
