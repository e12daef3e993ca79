#include "delta/paths.h"

#include <cctype>

#include "fs/file_system.h"

namespace sluice::delta {

namespace {
int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

Result<std::string> PercentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    int hi = i + 1 < text.size() ? Hex(text[i + 1]) : -1;
    int lo = i + 2 < text.size() ? Hex(text[i + 2]) : -1;
    if (hi < 0 || lo < 0)
      return Status::Corruption("bad percent escape in path '" + std::string(text) + "'");
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

Result<std::string> ResolveLogPath(const std::string& table_root, std::string_view log_path) {
  SLUICE_ASSIGN_OR_RETURN(std::string decoded, PercentDecode(log_path));
  // Absolute URIs: scheme ":" ...
  size_t colon = log_path.find(':');
  size_t slash = log_path.find('/');
  bool has_scheme = colon != std::string_view::npos && colon > 0 &&
                    (slash == std::string_view::npos || colon < slash);
  if (has_scheme) {
    for (size_t i = 0; i < colon; ++i) {
      char c = log_path[i];
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.'))
        has_scheme = false;
    }
  }
  if (has_scheme) {
    std::string scheme = std::string(log_path.substr(0, colon));
    if (scheme == "file") {
      std::string rest = decoded.substr(colon + 1);
      // file:///abs -> /abs ; file://host/abs -> /abs (host ignored) ; file:/abs -> /abs
      if (rest.rfind("//", 0) == 0) {
        size_t p = rest.find('/', 2);
        rest = p == std::string::npos ? "/" : rest.substr(p);
      }
      return rest;
    }
    return decoded;  // s3://..., abfss://...: storage URI as is
  }
  if (!decoded.empty() && decoded[0] == '/') return decoded;
  return fs::JoinPath(table_root, decoded);
}

}  // namespace sluice::delta
