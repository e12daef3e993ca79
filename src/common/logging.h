// Minimal leveled logging to stderr: SLUICE_LOG(kWarning) << "falling behind: " << ms << " ms";
//
// Thread safety: each message is formatted into its own buffer and written with one write(2),
// so lines from different threads never interleave. The level threshold is a global atomic,
// set from the CLI (--log-level) or SLUICE_LOG_LEVEL (debug|info|warning|error).
#pragma once

#include <sstream>
#include <string_view>

namespace sluice {

enum class LogLevel : int { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3, kOff = 4 };

void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();
// Parses "debug", "info", "warning"/"warn", "error", "off"; returns false on anything else.
bool ParseLogLevel(std::string_view text, LogLevel* out);

namespace internal {
class LogMessage {
 public:
  LogMessage(LogLevel level, const char* file, int line);
  ~LogMessage();
  std::ostream& stream() { return stream_; }

 private:
  LogLevel level_;
  std::ostringstream stream_;
};
}  // namespace internal

}  // namespace sluice

#define SLUICE_LOG(level)                                    \
  if (::sluice::LogLevel::level < ::sluice::GetLogLevel()) { \
  } else                                                     \
    ::sluice::internal::LogMessage(::sluice::LogLevel::level, __FILE__, __LINE__).stream()
