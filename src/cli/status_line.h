// The terminal status of `sluice run` (docs/operations.md "The terminal status line").
//
// When stdout is a terminal (and TERM is not "dumb"), `sluice run` keeps one status line per
// query at the bottom of the screen and rewrites it in place after each batch (ANSI: cursor to
// the start of the block, clear, redraw); log lines (started, restarting, finished) are printed
// above the block. Otherwise it prints one plain line per batch, as it always did.
//
// A query's line: name, batch id, input rows/s, processed rows/s, event-time lag (max event time
// minus watermark, when the query has a watermark), state rows (sum over its stateful operators,
// when it has any), and the source backlog the progress reports (numFilesOutstanding of file and
// Delta sources, maxOffsetsBehindLatest of Kafka: what is left beyond the batch just planned).
// For an AVAILABLE NOW query, a bar of the backlog worked off: done = 1 - backlog now / peak,
// where the peak is the largest backlog reported in this run (normally the first batch's, i.e.
// the backlog snapshotted at start minus that batch). Without a backlog figure (rate source,
// or a backlog of 0 so far) the line counts batches instead.
//
// Thread safety: pure functions; a StatusBoard is used under its owner's lock.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "stream/progress.h"

namespace sluice::cli {

// Whether to draw live status lines: stdout is a terminal and TERM is not "dumb". `term` may be
// null (unset).
bool UseLiveStatus(bool stdout_is_terminal, const char* term);

// The source backlog a progress reports, in one unit: the sum of numFilesOutstanding ("files")
// when any source reports it, else the sum of maxOffsetsBehindLatest ("offsets"); nullopt when
// no source reports either.
struct Backlog {
  int64_t amount = 0;
  std::string unit;  // "files" | "offsets"
};
std::optional<Backlog> BacklogOf(const stream::StreamingQueryProgress& p);

// The larger of two backlogs of the same unit (`now` when the units differ or there is no peak).
std::optional<Backlog> PeakBacklog(const std::optional<Backlog>& peak,
                                   const std::optional<Backlog>& now);

// Event-time lag in ms: eventTime.max - eventTime.watermark; nullopt without both.
std::optional<int64_t> EventTimeLagMs(const stream::StreamingQueryProgress& p);

// "[#########...........]  45%" of `width` cells between the brackets (fraction clamped to 0..1).
std::string ProgressBar(double fraction, int width);

// 1234567.8 -> "1,234,568"; 12.34 -> "12.3" (one decimal under 100).
std::string FormatRate(double rows_per_second);

// What one query's line shows.
struct QueryStatusView {
  std::string name;
  stream::StreamingQueryProgress progress;
  bool available_now = false;
  std::optional<Backlog> initial_backlog;  // the peak backlog of the run (AVAILABLE NOW bar)
  int64_t batches = 0;                     // batches seen in this run
};

// One line, no newline, e.g.
// "counts   batch 12 | in 1,200 rows/s | processed 3,400 rows/s | lag 5.0 s | state 42 rows"
// plus " | backlog 3 files" and, for AVAILABLE NOW, " | [#####.....]  50% of 6 files" (or
// " | 3 batches done" without a backlog figure).
std::string FormatStatusLine(const QueryStatusView& view);

// The block of live lines. Render() redraws it in place; Erase() removes it so that a log line
// can be printed where it was (Render() again afterwards).
class StatusBoard {
 public:
  // Lines longer than width - 1 are cut (a wrapped line would break the redraw); 0: no limit.
  void set_width(size_t width) { width_ = width; }
  void Set(const std::string& name, std::string line);
  void Remove(const std::string& name);
  // Moves the cursor to the start of the previously drawn block, then draws every line.
  std::string Render();
  // Clears the drawn block and leaves the cursor where it began ("" when nothing is drawn).
  std::string Erase();

 private:
  std::vector<std::string> order_;
  std::map<std::string, std::string> lines_;
  size_t drawn_ = 0;  // lines currently on screen
  size_t width_ = 0;
};

}  // namespace sluice::cli
