#include "fs/local_cache.h"

#include <cstdlib>

#include "fs/file_system.h"

namespace sluice::fs {
namespace {

std::string CacheRoot() {
  const char* own = std::getenv("SLUICE_LOCAL_CACHE_DIR");
  if (own != nullptr && *own != '\0') return own;
  const char* tmp = std::getenv("TMPDIR");
  return JoinPath(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "sluice-cache");
}

bool Kept(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

}  // namespace

std::string LocalCacheDirFor(std::string_view path) {
  const std::string_view scheme = PathScheme(path);
  if (scheme.empty()) return std::string(path);
  std::string out = JoinPath(CacheRoot(), scheme);
  std::string_view rest = path.substr(scheme.size() + 1);  // after "<scheme>:"
  size_t pos = 0;
  while (pos <= rest.size()) {
    size_t slash = rest.find('/', pos);
    if (slash == std::string_view::npos) slash = rest.size();
    std::string part(rest.substr(pos, slash - pos));
    pos = slash + 1;
    if (part.empty()) continue;
    for (char& c : part) {
      if (!Kept(c)) c = '_';
    }
    if (part == "." || part == "..") part = "_";
    out = JoinPath(out, part);
  }
  return out;
}

}  // namespace sluice::fs
