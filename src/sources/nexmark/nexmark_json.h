// Nexmark events as JSON lines, byte for byte what the reference generator writes
// (docs/nexmark.md):
// {"event_type":K,"person":...,"auction":...,"bid":...} with the inactive kinds null, keys in the
// reference's order, no spaces, integers in decimal, times "yyyy-MM-dd HH:mm:ss.SSS" (UTC), one
// event per line ending in "\n". See docs/nexmark.md.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "common/status.h"
#include "sources/nexmark/nexmark_config.h"
#include "sources/nexmark/nexmark_events.h"
#include "sources/nexmark/nexmark_generator.h"

namespace sluice::nexmark {

// Formats events; caches the formatted second of the last timestamp (events come in time
// order, so most share it). Not thread-safe: one per thread.
class JsonFormatter {
 public:
  // An upper bound of the size of `event`'s line.
  static size_t MaxLineSize(const NexmarkEvent& event);
  // Writes the event's line, including the final '\n', at `out`, which must have room for
  // MaxLineSize(event) bytes; returns the end of what was written. Strings are escaped as
  // Python's json.dumps does; they must be ASCII (the generator only produces printable ASCII;
  // other bytes are written as \u00XX).
  char* WriteEvent(const NexmarkEvent& event, char* out);
  // Appends the event's line to *out (convenience; EmitJson uses WriteEvent).
  void AppendEvent(const NexmarkEvent& event, std::string* out);
  // Appends "yyyy-MM-dd HH:mm:ss.SSS" (UTC, without quotes) for ms since the epoch.
  void AppendTimestamp(int64_t ms, std::string* out);

 private:
  // Writes the 23 characters of AppendTimestamp at `out`; returns the end.
  char* WriteTimestamp(int64_t ms, char* out);

  int64_t cached_second_ = -1;
  char cached_prefix_[24] = {};  // "yyyy-MM-dd HH:mm:ss." for cached_second_
  size_t cached_prefix_len_ = 0;
};

// Writes the JSON lines of indexes [first_event, first_event + count) of `generator` to *os.
// IOError when the stream fails; InvalidArgument when first_event < 0, count < 0, or the range
// passes max_events (when bounded).
Status EmitJson(const NexmarkGenerator& generator, int64_t first_event, int64_t count,
                std::ostream& os);

// Same, opening a generator for `config` (InvalidArgument when the config is invalid).
Status EmitJson(const NexmarkConfig& config, int64_t first_event, int64_t count, std::ostream& os);

}  // namespace sluice::nexmark
