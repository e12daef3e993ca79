#include "fs/crash_point.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>

#include "common/logging.h"
#include "fs/file_system.h"

namespace sluice::fs {
namespace {

std::mutex g_fail_mu;
std::string g_fail_armed_text;  // g_fail_mu: the variable's value the count belongs to
long long g_failed = 0;         // g_fail_mu: failures injected for g_fail_armed_text
bool g_fail_warned = false;     // g_fail_mu

}  // namespace

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

Status MaybeInjectFailure(std::string_view point) {
  const char* env = std::getenv(kFailAtEnvVar);
  if (env == nullptr || *env == '\0') return Status::OK();
  std::lock_guard<std::mutex> lock(g_fail_mu);
  if (g_fail_armed_text != env) {
    g_fail_armed_text = env;
    g_failed = 0;
    g_fail_warned = false;
  }
  std::string_view armed;
  long long times = 0;
  if (!ParseCrashAt(env, &armed, &times)) {
    if (!g_fail_warned) {
      SLUICE_LOG(kWarning) << kFailAtEnvVar << "='" << env
                           << "' is not <point> or <point>:<n> (n >= 1); ignored";
      g_fail_warned = true;
    }
    return Status::OK();
  }
  if (armed != point || g_failed >= times) return Status::OK();
  ++g_failed;
  return Status::IOError("injected failure at " + std::string(armed) + " (" + kFailAtEnvVar + ", " +
                         std::to_string(g_failed) + " of " + std::to_string(times) + ")");
}

void ResetInjectedFailuresForTesting() {
  std::lock_guard<std::mutex> lock(g_fail_mu);
  g_fail_armed_text.clear();
  g_failed = 0;
  g_fail_warned = false;
}

Status CrashPoint(FileSystem& fs, std::string_view point, std::string_view context) {
  Status st = fs.MaybeCrash(point);
  if (st.ok()) st = MaybeInjectFailure(point);
  return st.ok() ? st : st.WithContext(context);
}

}  // namespace sluice::fs
