#include "cli/status_line.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "stream/time_format.h"

namespace sluice::cli {
namespace {

std::optional<int64_t> MetricSum(const stream::StreamingQueryProgress& p, const char* key) {
  std::optional<int64_t> sum;
  for (const auto& s : p.sources) {
    auto it = s.metrics.find(key);
    if (it == s.metrics.end()) continue;
    char* end = nullptr;
    long long v = std::strtoll(it->second.c_str(), &end, 10);
    if (end == it->second.c_str()) continue;
    sum = sum.value_or(0) + v;
  }
  return sum;
}

std::string Thousands(int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

std::string Seconds(int64_t ms) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f s", static_cast<double>(ms) / 1000.0);
  return buf;
}

}  // namespace

bool UseLiveStatus(bool stdout_is_terminal, const char* term) {
  return stdout_is_terminal && !(term != nullptr && std::strcmp(term, "dumb") == 0);
}

std::optional<Backlog> BacklogOf(const stream::StreamingQueryProgress& p) {
  if (auto files = MetricSum(p, "numFilesOutstanding")) return Backlog{*files, "files"};
  if (auto offsets = MetricSum(p, "maxOffsetsBehindLatest")) return Backlog{*offsets, "offsets"};
  return std::nullopt;
}

std::optional<Backlog> PeakBacklog(const std::optional<Backlog>& peak,
                                   const std::optional<Backlog>& now) {
  if (!now) return peak;
  if (!peak || peak->unit != now->unit || now->amount > peak->amount) return now;
  return peak;
}

std::optional<int64_t> EventTimeLagMs(const stream::StreamingQueryProgress& p) {
  auto max = p.event_time.find("max");
  auto wm = p.event_time.find("watermark");
  if (max == p.event_time.end() || wm == p.event_time.end()) return std::nullopt;
  Result<int64_t> max_ms = stream::ParseUtcTimestampMs(max->second);
  Result<int64_t> wm_ms = stream::ParseUtcTimestampMs(wm->second);
  if (!max_ms.ok() || !wm_ms.ok()) return std::nullopt;
  return *max_ms - *wm_ms;
}

std::string ProgressBar(double fraction, int width) {
  if (!std::isfinite(fraction)) fraction = 0;
  fraction = std::clamp(fraction, 0.0, 1.0);
  width = std::max(width, 1);
  const int filled = static_cast<int>(std::floor(fraction * width + 1e-9));
  char pct[8];
  std::snprintf(pct, sizeof(pct), "%3d%%", static_cast<int>(std::floor(fraction * 100 + 1e-9)));
  return "[" + std::string(filled, '#') + std::string(width - filled, '.') + "] " + pct;
}

std::string FormatRate(double r) {
  if (!std::isfinite(r)) return "-";
  if (r < 100) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.1f", r);
    return buf;
  }
  return Thousands(static_cast<int64_t>(std::llround(r)));
}

std::string FormatStatusLine(const QueryStatusView& v) {
  const auto& p = v.progress;
  std::string line = v.name + "  batch " + std::to_string(p.batch_id) + " | in " +
                     FormatRate(p.InputRowsPerSecond()) + " rows/s | processed " +
                     FormatRate(p.ProcessedRowsPerSecond()) + " rows/s";
  if (auto lag = EventTimeLagMs(p)) line += " | lag " + Seconds(*lag);
  if (!p.state_operators.empty()) {
    int64_t rows = 0;
    for (const auto& op : p.state_operators) rows += op.num_rows_total;
    line += " | state " + Thousands(rows) + " rows";
  }
  std::optional<Backlog> backlog = BacklogOf(p);
  if (backlog) line += " | backlog " + Thousands(backlog->amount) + " " + backlog->unit;
  if (v.available_now) {
    if (v.initial_backlog && backlog && v.initial_backlog->unit == backlog->unit &&
        v.initial_backlog->amount > 0) {
      const int64_t total = v.initial_backlog->amount;
      const double done = 1.0 - static_cast<double>(backlog->amount) / static_cast<double>(total);
      line += " | " + ProgressBar(done, 20) + " of " + Thousands(total) + " " + backlog->unit;
    } else {
      line +=
          " | " + std::to_string(v.batches) + (v.batches == 1 ? " batch" : " batches") + " done";
    }
  }
  return line;
}

void StatusBoard::Set(const std::string& name, std::string line) {
  if (lines_.find(name) == lines_.end()) order_.push_back(name);
  lines_[name] = std::move(line);
}

void StatusBoard::Remove(const std::string& name) {
  if (lines_.erase(name) == 0) return;
  order_.erase(std::remove(order_.begin(), order_.end(), name), order_.end());
}

std::string StatusBoard::Erase() {
  if (drawn_ == 0) return "";
  // Cursor up to the first drawn line's start, then clear to the end of the screen.
  std::string out = "\x1b[" + std::to_string(drawn_) + "F\x1b[J";
  drawn_ = 0;
  return out;
}

std::string StatusBoard::Render() {
  std::string out = Erase();
  for (const std::string& name : order_) {
    std::string line = lines_[name];
    if (width_ > 1 && line.size() > width_ - 1) line.resize(width_ - 1);
    out += line + "\n";
  }
  drawn_ = order_.size();
  return out;
}

}  // namespace sluice::cli
