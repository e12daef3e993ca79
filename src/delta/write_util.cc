#include "delta/write_util.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <random>

namespace sluice::delta {

namespace {

std::mt19937_64& Rng() {
  thread_local std::mt19937_64 rng;
  thread_local pid_t seeded_for = 0;
  pid_t pid = ::getpid();
  if (seeded_for != pid) {
    std::random_device rd;
    std::seed_seq seq{
        rd(),
        rd(),
        rd(),
        rd(),
        static_cast<unsigned>(pid),
        static_cast<unsigned>(std::chrono::steady_clock::now().time_since_epoch().count())};
    rng.seed(seq);
    seeded_for = pid;
  }
  return rng;
}

constexpr char kHex[] = "0123456789ABCDEF";

void AppendEscaped(std::string* out, unsigned char c) {
  out->push_back('%');
  out->push_back(kHex[c >> 4]);
  out->push_back(kHex[c & 0xF]);
}

}  // namespace

std::string NewUuid() {
  uint64_t hi = Rng()();
  uint64_t lo = Rng()();
  hi = (hi & 0xFFFFFFFFFFFF0FFFULL) | 0x0000000000004000ULL;  // version 4
  lo = (lo & 0x3FFFFFFFFFFFFFFFULL) | 0x8000000000000000ULL;  // variant 10
  char buf[37];
  std::snprintf(buf, sizeof(buf), "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(hi >> 32),
                static_cast<unsigned>((hi >> 16) & 0xFFFF), static_cast<unsigned>(hi & 0xFFFF),
                static_cast<unsigned>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xFFFFFFFFFFFFULL));
  return buf;
}

std::string EscapePartitionValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char ch : value) {
    unsigned char c = static_cast<unsigned char>(ch);
    bool escape = (c >= 0x01 && c <= 0x1F) || c == 0x7F;
    switch (c) {
      case '"':
      case '#':
      case '%':
      case '\'':
      case '*':
      case '/':
      case ':':
      case '=':
      case '?':
      case '\\':
      case '{':
      case '[':
      case ']':
      case '^':
        escape = true;
        break;
      default:
        break;
    }
    if (escape) {
      AppendEscaped(&out, c);
    } else {
      out.push_back(ch);
    }
  }
  return out;
}

std::string PartitionDirectory(const std::vector<std::string>& partition_columns,
                               const PartitionValues& values) {
  std::string dir;
  for (const std::string& col : partition_columns) {
    if (!dir.empty()) dir += '/';
    auto it = values.find(col);
    std::optional<std::string> v = it == values.end() ? std::nullopt : it->second;
    dir += EscapePartitionValue(col) + "=";
    dir += (v && !v->empty()) ? EscapePartitionValue(*v) : std::string(kHiveDefaultPartition);
  }
  return dir;
}

std::string EncodeLogPath(std::string_view relative_path) {
  std::string out;
  out.reserve(relative_path.size());
  for (char ch : relative_path) {
    unsigned char c = static_cast<unsigned char>(ch);
    bool keep =
        (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c >= 0x80;
    switch (c) {
      case '-':
      case '_':
      case '.':
      case '!':
      case '~':
      case '*':
      case '\'':
      case '(':
      case ')':
      case '/':
      case ':':
      case '@':
      case '&':
      case '=':
      case '+':
      case '$':
      case ',':
        keep = true;
        break;
      default:
        break;
    }
    if (keep) {
      out.push_back(ch);
    } else {
      AppendEscaped(&out, c);
    }
  }
  return out;
}

std::string DataFileName(int index, std::string_view uuid, std::string_view compression) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%05d", index);
  std::string ext = compression == "uncompressed" ? "" : std::string(compression) + ".";
  return "part-" + std::string(buf) + "-" + std::string(uuid) + ".c000." + ext + "parquet";
}

int64_t NowMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace sluice::delta
