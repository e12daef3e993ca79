#include "state/rocksdb_logger.h"

#include <cstdarg>
#include <cstdio>
#include <vector>

#include "common/logging.h"

namespace sluice::state {
namespace {

class RocksDbLogger final : public rocksdb::Logger {
 public:
  explicit RocksDbLogger(std::string dir)
      : rocksdb::Logger(rocksdb::InfoLogLevel::WARN_LEVEL), dir_(std::move(dir)) {}

  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override {
    if (level < GetInfoLogLevel() || level == rocksdb::InfoLogLevel::HEADER_LEVEL) return;
    const LogLevel ours = level >= rocksdb::InfoLogLevel::ERROR_LEVEL  ? LogLevel::kWarning
                          : level == rocksdb::InfoLogLevel::WARN_LEVEL ? LogLevel::kDebug
                                                                       : LogLevel::kOff;
    if (ours == LogLevel::kOff || ours < GetLogLevel()) return;
    const std::string text = Format(format, ap);
    if (ours == LogLevel::kWarning) {
      SLUICE_LOG(kWarning) << "RocksDB state database " << dir_ << ": " << text;
    } else {
      SLUICE_LOG(kDebug) << "RocksDB state database " << dir_ << ": " << text;
    }
  }
  // RocksDB's messages without a level are informational.
  void Logv(const char* format, va_list ap) override {
    Logv(rocksdb::InfoLogLevel::INFO_LEVEL, format, ap);
  }

 private:
  static std::string Format(const char* format, va_list ap) {
    va_list copy;
    va_copy(copy, ap);
    char small[512];
    const int n = std::vsnprintf(small, sizeof(small), format, copy);
    va_end(copy);
    if (n < 0) return format;
    if (static_cast<size_t>(n) < sizeof(small)) return std::string(small, static_cast<size_t>(n));
    std::vector<char> big(static_cast<size_t>(n) + 1);
    va_copy(copy, ap);
    std::vsnprintf(big.data(), big.size(), format, copy);
    va_end(copy);
    return std::string(big.data(), static_cast<size_t>(n));
  }

  const std::string dir_;
};

}  // namespace

std::shared_ptr<rocksdb::Logger> NewRocksDbLogger(std::string dir) {
  return std::make_shared<RocksDbLogger>(std::move(dir));
}

}  // namespace sluice::state
