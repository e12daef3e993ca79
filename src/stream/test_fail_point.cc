#include "stream/test_fail_point.h"

#include <cstdlib>
#include <mutex>

#include "common/logging.h"

namespace sluice::stream {
namespace {

std::mutex g_mu;
std::string g_armed_text;  // g_mu: the variable's value the count belongs to
int64_t g_failed = 0;      // g_mu: failures injected for g_armed_text
bool g_warned = false;     // g_mu

}  // namespace

std::optional<FailPointSpec> ParseFailPointSpec(std::string_view text) {
  FailPointSpec spec;
  size_t colon = text.find(':');
  spec.point = std::string(text.substr(0, colon));
  if (spec.point.empty()) return std::nullopt;
  if (colon != std::string_view::npos) {
    std::string n(text.substr(colon + 1));
    if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos || n.size() > 9) {
      return std::nullopt;
    }
    spec.times = std::stoll(n);
    if (spec.times < 1) return std::nullopt;
  }
  return spec;
}

Status MaybeFail(std::string_view point) {
  const char* env = std::getenv(kFailAtEnvVar);
  if (env == nullptr || *env == '\0') return Status::OK();
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_armed_text != env) {
    g_armed_text = env;
    g_failed = 0;
    g_warned = false;
  }
  std::optional<FailPointSpec> spec = ParseFailPointSpec(env);
  if (!spec) {
    if (!g_warned) {
      SLUICE_LOG(kWarning) << kFailAtEnvVar << "='" << env
                           << "' is not <point> or <point>:<n> (n >= 1); ignored";
      g_warned = true;
    }
    return Status::OK();
  }
  if (spec->point != point || g_failed >= spec->times) return Status::OK();
  ++g_failed;
  return Status::IOError("injected failure at " + spec->point + " (" + kFailAtEnvVar + ", " +
                         std::to_string(g_failed) + " of " + std::to_string(spec->times) + ")");
}

void ResetFailPointCountForTesting() {
  std::lock_guard<std::mutex> lock(g_mu);
  g_armed_text.clear();
  g_failed = 0;
  g_warned = false;
}

}  // namespace sluice::stream
