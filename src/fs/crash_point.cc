#include "fs/crash_point.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>

namespace sluice::fs {

bool ParseCrashAt(std::string_view value, std::string_view* point, long long* hit) {
  *hit = 1;
  *point = value;
  size_t colon = value.rfind(':');
  if (colon != std::string_view::npos) {
    std::string_view digits = value.substr(colon + 1);
    if (digits.empty() || digits.size() > 18) return false;
    long long n = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return false;
      n = n * 10 + (c - '0');
    }
    if (n < 1) return false;
    *hit = n;
    *point = value.substr(0, colon);
  }
  return !point->empty();
}

void MaybeCrashProcess(std::string_view point) {
  // Only hits of the armed point are counted; one counter suffices since one point is armed.
  static std::atomic<long long> hits{0};
  const char* env = std::getenv(kCrashAtEnvVar);
  if (env == nullptr || *env == '\0') return;
  std::string_view armed;
  long long n = 0;
  if (!ParseCrashAt(env, &armed, &n) || armed != point) return;
  if (hits.fetch_add(1) + 1 != n) return;
  std::string line = "sluice: crash point ";
  line.append(point);
  line += " reached (SLUICE_CRASH_AT)\n";
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
  ::_exit(kCrashExitCode);
}

}  // namespace sluice::fs
