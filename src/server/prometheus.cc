#include "server/prometheus.h"

#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

#include "stream/time_format.h"

namespace sluice::server {
namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

// One metric family: its samples in the order they were added.
struct Family {
  std::string name, type, help;
  std::vector<std::string> samples;
};

std::string FormatNumber(double v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, res.ptr);
}

// Prometheus text escaping: backslash and newline always, the double quote in label values only.
std::string Escape(std::string_view text, bool quote) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quote && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

class Exposition {
 public:
  // Declares a family (printed even when it gets no sample, so that scrapers learn its type).
  void Declare(const std::string& name, const std::string& type, const std::string& help) {
    index_[name] = families_.size();
    families_.push_back({name, type, help, {}});
  }
  void Add(const std::string& name, const Labels& labels, double value) {
    if (!std::isfinite(value)) return;
    std::string line = name;
    if (!labels.empty()) {
      line += '{';
      for (size_t i = 0; i < labels.size(); ++i) {
        if (i > 0) line += ',';
        line += labels[i].first + "=\"" + EscapeLabelValue(labels[i].second) + "\"";
      }
      line += '}';
    }
    line += ' ';
    line += FormatNumber(value);
    families_[index_.at(name)].samples.push_back(std::move(line));
  }
  std::string Text() const {
    std::string out;
    for (const Family& f : families_) {
      out += "# HELP " + f.name + " " + Escape(f.help, /*quote=*/false) + "\n";
      out += "# TYPE " + f.name + " " + f.type + "\n";
      for (const std::string& s : f.samples) out += s + "\n";
    }
    return out;
  }

 private:
  std::vector<Family> families_;
  std::map<std::string, size_t> index_;
};

std::optional<double> ParseDouble(const std::string& text) {
  double v = 0;
  auto res = std::from_chars(text.data(), text.data() + text.size(), v);
  if (res.ec != std::errc() || res.ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

// Seconds since the epoch of a progress timestamp; NaN (no sample) when absent or unparsable.
double TimestampSeconds(const std::string& text) {
  Result<int64_t> ms = stream::ParseUtcTimestampMs(text);
  if (!ms.ok()) return std::nan("");
  return static_cast<double>(*ms) / 1000.0;
}

Labels With(Labels base, std::initializer_list<std::pair<std::string, std::string>> more) {
  for (const auto& l : more) base.push_back(l);
  return base;
}

// Every family, printed in this order even when it gets no sample (so that scrapers learn its
// type).
struct FamilySpec {
  const char* name;
  const char* type;
  const char* help;
};
constexpr FamilySpec kFamilies[] = {
    {"sluice_query_status", "gauge",
     "1 for the query's current status (active, idle, terminated, failed), 0 for the others"},
    {"sluice_query_input_rows_per_second", "gauge",
     "Last batch: input rows per second since the previous trigger (inputRowsPerSecond)"},
    {"sluice_query_processed_rows_per_second", "gauge",
     "Last batch: rows processed per second of batch time (processedRowsPerSecond)"},
    {"sluice_query_batch_duration_ms", "gauge",
     "Last batch: duration of the whole trigger in milliseconds (batchDuration)"},
    {"sluice_query_batch_phase_duration_ms", "gauge",
     "Last batch: milliseconds per phase (durationMs)"},
    {"sluice_query_last_batch_id", "gauge", "Id of the last completed batch"},
    {"sluice_query_num_input_rows_total", "counter",
     "Input rows of the batches completed since this process started the query"},
    {"sluice_query_num_output_rows_total", "counter",
     "Rows written by the sink (numOutputRows) over the batches of this process; absent while "
     "the sink reports none (foreachBatch)"},
    {"sluice_query_batches_total", "counter",
     "Batches completed since this process started the query"},
    {"sluice_query_falling_behind", "gauge",
     "1 when the query is falling behind (processed < input rate for 3 batches, or a batch "
     "longer than the trigger interval)"},
    {"sluice_query_failures_total", "counter",
     "Runs of the query that ended with an error in this process"},
    {"sluice_query_watermark_lag_seconds", "gauge",
     "The newest event time seen minus the last batch's watermark, in seconds"},
    {"sluice_query_watermark_timestamp_seconds", "gauge",
     "Last batch: the watermark as a Unix time in seconds"},
    {"sluice_query_max_event_time_seconds", "gauge",
     "The max event time of the latest batch that had event times, as a Unix time in seconds"},
    {"sluice_state_rows", "gauge", "Rows in the stateful operator's state (numRowsTotal)"},
    {"sluice_state_memory_bytes", "gauge",
     "Memory used by the stateful operator's state store (memoryUsedBytes)"},
    {"sluice_state_rows_dropped_by_watermark_total", "counter",
     "Late rows dropped by the operator, summed over the batches seen"},
    {"sluice_source_kafka_offsets_behind_latest", "gauge",
     "Kafka source: offsets between the batch's end and the latest offset, over partitions"},
    {"sluice_source_files_outstanding", "gauge",
     "File or Delta source: files known but not yet read"},
    {"sluice_source_bytes_outstanding", "gauge",
     "File or Delta source: bytes of the files known but not yet read"},
    {"sluice_source_rescued_rows_total", "counter",
     "File source: rows with a non-NULL _rescued_data, summed over the batches seen"},
};

}  // namespace

std::string EscapeLabelValue(std::string_view value) { return Escape(value, /*quote=*/true); }

std::string FormatPrometheus(const std::vector<QuerySnapshot>& queries) {
  Exposition e;
  for (const FamilySpec& f : kFamilies) e.Declare(f.name, f.type, f.help);
  for (const QuerySnapshot& q : queries) {
    const Labels base = {{"query_name", q.name.value_or("")}, {"query_id", q.id}};
    for (QueryStatus s : kAllQueryStatuses) {
      e.Add("sluice_query_status", With(base, {{"status", std::string(QueryStatusName(s))}}),
            s == q.status ? 1 : 0);
    }
    e.Add("sluice_query_num_input_rows_total", base, static_cast<double>(q.num_input_rows_total));
    if (q.num_output_rows_total) {
      e.Add("sluice_query_num_output_rows_total", base,
            static_cast<double>(*q.num_output_rows_total));
    }
    e.Add("sluice_query_batches_total", base, static_cast<double>(q.num_batches_total));
    e.Add("sluice_query_falling_behind", base, q.falling_behind ? 1 : 0);
    e.Add("sluice_query_failures_total", base, static_cast<double>(q.failures_total));
    for (const auto& [op, dropped] : q.rows_dropped_by_watermark_total) {
      std::string op_name;
      if (q.last_progress && op < q.last_progress->state_operators.size()) {
        op_name = q.last_progress->state_operators[op].operator_name;
      }
      e.Add("sluice_state_rows_dropped_by_watermark_total",
            With(base, {{"operator", op_name}, {"operator_index", std::to_string(op)}}),
            static_cast<double>(dropped));
    }
    if (!q.last_progress) continue;
    const stream::StreamingQueryProgress& p = *q.last_progress;
    e.Add("sluice_query_input_rows_per_second", base,
          stream::RoundHalfUpOneDecimal(p.InputRowsPerSecond()));
    e.Add("sluice_query_processed_rows_per_second", base,
          stream::RoundHalfUpOneDecimal(p.ProcessedRowsPerSecond()));
    e.Add("sluice_query_batch_duration_ms", base, static_cast<double>(p.batch_duration));
    for (const auto& [phase, ms] : p.duration_ms) {
      e.Add("sluice_query_batch_phase_duration_ms", With(base, {{"phase", phase}}),
            static_cast<double>(ms));
    }
    e.Add("sluice_query_last_batch_id", base, static_cast<double>(p.batch_id));
    // The watermark of the last batch; the newest event time of the latest batch that had event
    // times (a no-data batch has a watermark but no max).
    auto wm = p.event_time.find("watermark");
    double watermark = wm == p.event_time.end() ? std::nan("") : TimestampSeconds(wm->second);
    double max_time = TimestampSeconds(q.max_event_time);
    e.Add("sluice_query_watermark_timestamp_seconds", base, watermark);
    e.Add("sluice_query_max_event_time_seconds", base, max_time);
    e.Add("sluice_query_watermark_lag_seconds", base, max_time - watermark);  // NaN: no sample
    for (size_t i = 0; i < p.state_operators.size(); ++i) {
      const auto& op = p.state_operators[i];
      Labels l =
          With(base, {{"operator", op.operator_name}, {"operator_index", std::to_string(i)}});
      e.Add("sluice_state_rows", l, static_cast<double>(op.num_rows_total));
      e.Add("sluice_state_memory_bytes", l, static_cast<double>(op.memory_used_bytes));
    }
    for (size_t i = 0; i < p.sources.size(); ++i) {
      const auto& src = p.sources[i];
      Labels l = With(base, {{"source_index", std::to_string(i)}, {"source", src.description}});
      for (const auto& [key, stat] :
           {std::pair<std::string, std::string>{"maxOffsetsBehindLatest", "max"},
            {"avgOffsetsBehindLatest", "avg"},
            {"minOffsetsBehindLatest", "min"}}) {
        auto m = src.metrics.find(key);
        if (m == src.metrics.end()) continue;
        if (std::optional<double> v = ParseDouble(m->second)) {
          e.Add("sluice_source_kafka_offsets_behind_latest", With(l, {{"stat", stat}}), *v);
        }
      }
      for (const auto& [key, family] :
           {std::pair<std::string, std::string>{"numFilesOutstanding",
                                                "sluice_source_files_outstanding"},
            {"numBytesOutstanding", "sluice_source_bytes_outstanding"}}) {
        auto m = src.metrics.find(key);
        if (m == src.metrics.end()) continue;
        if (std::optional<double> v = ParseDouble(m->second)) e.Add(family, l, *v);
      }
      auto rescued = q.rescued_rows_total.find(i);
      if (rescued != q.rescued_rows_total.end()) {
        e.Add("sluice_source_rescued_rows_total", l, static_cast<double>(rescued->second));
      }
    }
  }
  return e.Text();
}

}  // namespace sluice::server
