#include "server/query_store.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

#include "stream/trigger.h"

namespace sluice::server {

std::string_view QueryStatusName(QueryStatus status) {
  switch (status) {
    case QueryStatus::kActive:
      return "active";
    case QueryStatus::kIdle:
      return "idle";
    case QueryStatus::kTerminated:
      return "terminated";
    case QueryStatus::kFailed:
      return "failed";
    case QueryStatus::kRestarting:
      return "restarting";
  }
  return "unknown";
}

QueryError MakeQueryError(const std::string& message) {
  QueryError e;
  e.message = message;
  size_t begin = 0;
  for (;;) {
    size_t sep = message.find(": ", begin);
    if (sep == std::string::npos) break;
    e.contexts.push_back(message.substr(begin, sep - begin));
    begin = sep + 2;
  }
  e.contexts.push_back(message.substr(begin));
  return e;
}

std::optional<std::string> FallingBehind(const std::deque<stream::StreamingQueryProgress>& recent,
                                         int64_t trigger_interval_ms) {
  if (recent.empty()) return std::nullopt;
  const stream::StreamingQueryProgress& last = recent.back();
  if (stream::IsFallingBehind(last.batch_duration, trigger_interval_ms)) {
    std::ostringstream reason;
    reason << "batch " << last.batch_id << " took " << last.batch_duration
           << " ms, longer than the trigger interval of " << trigger_interval_ms << " ms";
    return reason.str();
  }
  // The last kFallingBehindBatches batches with input and a known input rate.
  size_t slower = 0;
  for (auto it = recent.rbegin(); it != recent.rend() && slower < kFallingBehindBatches; ++it) {
    if (it->NumInputRows() == 0) continue;
    double in = it->InputRowsPerSecond(), done = it->ProcessedRowsPerSecond();
    if (!std::isfinite(in) || !std::isfinite(done)) break;
    if (!(done < in)) break;
    ++slower;
  }
  if (slower < kFallingBehindBatches) return std::nullopt;
  std::ostringstream reason;
  reason << "processed rows/s below input rows/s in the last " << kFallingBehindBatches
         << " batches with input (last: " << last.ProcessedRowsPerSecond() << " < "
         << last.InputRowsPerSecond() << ")";
  return reason.str();
}

QueryStore::QueryStore(QueryStoreOptions options) : options_(options) {}

QueryStore::Record& QueryStore::Get(const std::string& id) {
  auto it = records_.find(id);
  if (it != records_.end()) return it->second;
  order_.push_back(id);
  Record& r = records_[id];
  r.info.id = id;
  return r;
}

void QueryStore::SetTrigger(const std::string& id, std::string trigger_text, int64_t interval_ms) {
  MutexLock lock(&mu_);
  Record& r = Get(id);
  r.info.trigger = std::move(trigger_text);
  r.info.trigger_interval_ms = interval_ms;
}

void QueryStore::OnStarted(const std::string& id, const std::string& run_id,
                           const std::optional<std::string>& name, int64_t now_ms) {
  MutexLock lock(&mu_);
  Record& r = Get(id);
  r.info.run_id = run_id;
  if (name) r.info.name = name;
  r.info.status = QueryStatus::kActive;
  r.last_activity_ms = now_ms;
  r.idle_event = false;
}

void QueryStore::OnProgress(const stream::StreamingQueryProgress& p, int64_t now_ms) {
  MutexLock lock(&mu_);
  Record& r = Get(p.id);
  if (r.info.run_id.empty()) r.info.run_id = p.run_id;
  if (p.name && !r.info.name) r.info.name = p.name;
  r.recent.push_back(p);
  while (r.recent.size() > std::max<size_t>(options_.max_progress_per_query, 1)) {
    r.recent.pop_front();
  }
  r.info.num_batches_total += 1;
  if (auto max = p.event_time.find("max"); max != p.event_time.end()) {
    r.info.max_event_time = max->second;
  }
  r.info.num_input_rows_total += p.NumInputRows();
  if (p.sink.num_output_rows >= 0) {
    r.info.num_output_rows_total =
        r.info.num_output_rows_total.value_or(0) + p.sink.num_output_rows;
  }
  for (size_t i = 0; i < p.state_operators.size(); ++i) {
    r.info.rows_dropped_by_watermark_total[i] += p.state_operators[i].num_rows_dropped_by_watermark;
  }
  for (size_t i = 0; i < p.sources.size(); ++i) {
    auto m = p.sources[i].metrics.find("numRescuedRows");
    if (m == p.sources[i].metrics.end()) continue;
    int64_t n = 0;
    const std::string& v = m->second;
    if (std::from_chars(v.data(), v.data() + v.size(), n).ec == std::errc()) {
      r.info.rescued_rows_total[i] += n;
    }
  }
  if (p.run_id == r.info.run_id) {
    r.last_activity_ms = now_ms;
    r.idle_event = false;
  }
}

void QueryStore::OnIdle(const std::string& id, const std::string& run_id) {
  MutexLock lock(&mu_);
  Record& r = Get(id);
  if (r.info.run_id == run_id) r.idle_event = true;
}

void QueryStore::OnTerminated(const std::string& id, const std::string& run_id,
                              const std::optional<std::string>& error) {
  MutexLock lock(&mu_);
  Record& r = Get(id);
  if (!r.info.run_id.empty() && r.info.run_id != run_id) return;  // an older run's end
  if (error) {
    r.info.status = r.restarting_run == run_id ? QueryStatus::kRestarting : QueryStatus::kFailed;
    r.info.error = MakeQueryError(*error);
    r.info.failures_total += 1;
  } else {
    r.info.status = QueryStatus::kTerminated;
  }
}

void QueryStore::OnRestarting(const std::string& id, const std::string& run_id) {
  MutexLock lock(&mu_);
  Record& r = Get(id);
  r.restarting_run = run_id;
  if (r.info.run_id == run_id && r.info.status == QueryStatus::kFailed) {
    r.info.status = QueryStatus::kRestarting;
  }
}

QuerySnapshot QueryStore::MakeSnapshot(const Record& r, int64_t now_ms) const {
  QuerySnapshot s = r.info;
  if (!r.recent.empty()) s.last_progress = r.recent.back();
  if (s.status == QueryStatus::kActive) {
    int64_t idle_after = std::max(options_.idle_after_ms, 2 * s.trigger_interval_ms);
    if (r.idle_event || now_ms - r.last_activity_ms > idle_after) s.status = QueryStatus::kIdle;
  }
  // An idle query has caught up; an ended one cannot fall behind.
  if (s.status == QueryStatus::kActive) {
    std::optional<std::string> reason = FallingBehind(r.recent, s.trigger_interval_ms);
    s.falling_behind = reason.has_value();
    s.falling_behind_reason = reason.value_or("");
  }
  return s;
}

std::vector<QuerySnapshot> QueryStore::Snapshot(int64_t now_ms) const {
  MutexLock lock(&mu_);
  std::vector<QuerySnapshot> out;
  out.reserve(order_.size());
  for (const std::string& id : order_) out.push_back(MakeSnapshot(records_.at(id), now_ms));
  return out;
}

std::optional<std::vector<stream::StreamingQueryProgress>> QueryStore::Progress(
    const std::string& id, size_t limit) const {
  MutexLock lock(&mu_);
  auto it = records_.find(id);
  if (it == records_.end()) return std::nullopt;
  const auto& recent = it->second.recent;
  size_t n = std::min(limit, recent.size());
  return std::vector<stream::StreamingQueryProgress>(recent.end() - static_cast<ptrdiff_t>(n),
                                                     recent.end());
}

}  // namespace sluice::server
