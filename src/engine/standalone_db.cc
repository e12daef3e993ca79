#include "engine/standalone_db.h"

#include <cstdint>
#include <cstring>

namespace sluice::engine::internal {

duckdb::shared_ptr<duckdb::DatabaseInstance> StandaloneDatabase() {
  // Leaked on purpose: batches may be destroyed during static destruction.
  static duckdb::DuckDB* const db = [] {
    duckdb::DBConfig config;
    config.options.autoinstall_known_extensions = false;
    config.options.autoload_known_extensions = false;
    config.SetOptionByName("threads", duckdb::Value::BIGINT(1));
    return new duckdb::DuckDB(nullptr, &config);
  }();
  return db->instance;
}

bool IsValidUtf8(const char* s, size_t n) {
  const auto* p = reinterpret_cast<const unsigned char*>(s);
  size_t i = 0;
  while (i < n) {
    // ASCII fast path, 8 bytes at a time.
    if (i + 8 <= n) {
      uint64_t w;
      std::memcpy(&w, p + i, 8);
      if ((w & 0x8080808080808080ull) == 0) {
        i += 8;
        continue;
      }
    }
    unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += len;
  }
  return true;
}

}  // namespace sluice::engine::internal
