#include "cli/restart_policy.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "sources/delta_source.h"

namespace sluice::cli {
namespace {

bool Contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

Result<int64_t> ParseDurationMs(std::string_view text) {
  const std::string t(text);
  auto bad = [&] {
    return Status::InvalidArgument("'" + t +
                                   "' is not a duration: use e.g. 500ms, 10s, 2m or 1h "
                                   "(a bare number is seconds)");
  };
  size_t end = 0;
  while (end < t.size() && (std::isdigit(static_cast<unsigned char>(t[end])) || t[end] == '.')) {
    ++end;
  }
  if (end == 0) return bad();
  char* parsed_end = nullptr;
  const std::string number = t.substr(0, end);
  double value = std::strtod(number.c_str(), &parsed_end);
  if (parsed_end != number.c_str() + number.size() || !std::isfinite(value)) return bad();
  const std::string unit = t.substr(end);
  double scale = 0;
  if (unit.empty() || unit == "s") {
    scale = 1000;
  } else if (unit == "ms") {
    scale = 1;
  } else if (unit == "m" || unit == "min") {
    scale = 60000;
  } else if (unit == "h") {
    scale = 3600000;
  } else {
    return bad();
  }
  double ms = value * scale;
  if (ms > 1e15) return bad();
  return static_cast<int64_t>(std::llround(ms));
}

std::string FormatDurationMs(int64_t ms) {
  if (ms < 1000) return std::to_string(ms) + " ms";
  if (ms < 60000) {
    if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.1f s", static_cast<double>(ms) / 1000.0);
    return buf;
  }
  if (ms < 3600000) {
    int64_t s = (ms / 1000) % 60;
    return std::to_string(ms / 60000) + " min" + (s ? " " + std::to_string(s) + " s" : "");
  }
  int64_t m = (ms / 60000) % 60;
  return std::to_string(ms / 3600000) + " h" + (m ? " " + std::to_string(m) + " min" : "");
}

FailureClass ClassifyFailure(const Status& error) {
  const std::string& m = error.message();
  switch (error.code()) {
    case StatusCode::kInvalidArgument:
      if (Contains(m, "detected a schema change")) {
        if (Contains(m, sources::kAdditiveSchemaChangeTag)) {
          return {FailureKind::kAdditiveSchemaChange,
                  "additive source schema change: the restart reads the new schema"};
        }
        return {FailureKind::kPermanent,
                "incompatible source schema change: a new checkpoint is needed"};
      }
      if (Contains(m, "Detected a data update")) {
        return {FailureKind::kPermanent,
                "the source table was updated or deleted from (see skipChangeCommits)"};
      }
      if (Contains(m, "new checkpoint")) {
        return {FailureKind::kPermanent,
                "the checkpoint cannot continue with this query (restart-change rules)"};
      }
      return {FailureKind::kPermanent, "invalid query, data or options"};
    case StatusCode::kConflict:
      if (Contains(m, "is in use by another query")) {
        return {FailureKind::kPermanent, "another query holds the checkpoint"};
      }
      return {FailureKind::kTransient, "a concurrent writer won"};
    case StatusCode::kCorruption:
      return {FailureKind::kPermanent, "a damaged file: a restart would read it again"};
    case StatusCode::kNotFound:
      return {FailureKind::kPermanent, "something the query needs does not exist"};
    case StatusCode::kAlreadyExists:
      return {FailureKind::kPermanent, "something the query creates already exists"};
    case StatusCode::kNotSupported:
      return {FailureKind::kPermanent, "not supported"};
    case StatusCode::kIOError:
      return {FailureKind::kTransient, "I/O error"};
    case StatusCode::kCancelled:
      return {FailureKind::kTransient, "cancelled"};
    case StatusCode::kInternal:
      return {FailureKind::kTransient, "internal error"};
    case StatusCode::kOk:
      break;
  }
  return {FailureKind::kTransient, "unknown error"};
}

RestartDecision RestartTracker::OnFailure(FailureKind kind, int64_t started_ms, int64_t now_ms) {
  if (kind == FailureKind::kPermanent) return {};
  if (kind == FailureKind::kAdditiveSchemaChange) {
    ++total_;
    return {true, 0, 0};
  }
  if (now_ms - started_ms >= policy_.healthy_after_ms) consecutive_ = 0;
  if (policy_.max_restarts >= 0 && consecutive_ >= policy_.max_restarts) return {};
  ++consecutive_;
  ++total_;
  const int64_t cap = std::max(policy_.max_backoff_ms, policy_.initial_backoff_ms);
  int64_t delay = policy_.initial_backoff_ms;
  for (int64_t i = 1; i < consecutive_ && delay < cap; ++i) delay *= 2;
  return {true, std::min(delay, cap), consecutive_};
}

}  // namespace sluice::cli
