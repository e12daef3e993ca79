#include "delta/write_util.h"

#include <cstdio>

#include "common/clock.h"

namespace sluice::delta {

namespace {

constexpr char kHex[] = "0123456789ABCDEF";

void AppendEscaped(std::string* out, unsigned char c) {
  out->push_back('%');
  out->push_back(kHex[c >> 4]);
  out->push_back(kHex[c & 0xF]);
}

}  // namespace

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

int64_t NowMillis() { return WallClockMs(); }

}  // namespace sluice::delta
