// Source: a streaming input (Spark's Source / MicroBatchStream), the contract between a source
// and the micro-batch loop (src/stream, docs/streaming.md).
//
// Offsets are the JSON text Spark writes for the source in offsets/<N> (a bare number for the
// memory source, {"logOffset":5} for files, {"sourceVersion":1,"reservoirVersion":3,...} for
// Delta, {"topic":{"0":23}} for Kafka). The loop stores them verbatim and hands them back; only
// the source interprets them.
//
// Determinism contract: GetBatch(start, end) returns the same rows every time it is called with
// the same (start, end), in this process or a later one with the same checkpoint, as long as the
// data has not been purged from the underlying system. This is what makes a re-run of batch N
// after a crash exactly-once.
//
// Thread safety: a Source is driven by one query thread; no method is called concurrently.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "common/clock.h"
#include "common/result.h"
#include "engine/engine.h"
#include "fs/file_system.h"

namespace sluice::sources {

using OffsetJson = std::string;

// How much one batch may read (Spark's ReadLimit). Unset fields impose no limit; a source
// applies the limits it knows (files: max_files, max_bytes; Kafka: max_rows) and ignores the
// rest. all_available overrides every limit (Trigger.Once).
struct ReadLimit {
  std::optional<int64_t> max_files;  // maxFilesPerTrigger
  std::optional<int64_t> max_bytes;  // maxBytesPerTrigger (soft: at least one file is taken)
  std::optional<int64_t> max_rows;   // maxOffsetsPerTrigger
  bool all_available = false;
};

// What a source gets when it is created.
struct SourceContext {
  std::shared_ptr<fs::FileSystem> fs;
  engine::Engine* engine = nullptr;  // outlives the source
  std::string checkpoint_dir;        // <checkpoint>/sources/<i>: the source's private logs
  std::map<std::string, std::string> options;  // as the user wrote them (case preserved)
  Clock* clock = nullptr;                      // outlives the source; DefaultClock() if null
};

class Source {
 public:
  virtual ~Source() = default;

  // "DeltaSource[/wh/events]", "FileStreamSource[landing/]", ...: progress sources[].description.
  virtual std::string Description() const = 0;
  // The schema of the rows GetBatch returns.
  virtual const engine::Schema& schema() const = 0;

  // The end offset of the next batch that starts at `start` (nullopt: the query has read
  // nothing yet), respecting `limit`; nullopt when no data is available at all. Returning
  // `start` itself means there is nothing new.
  virtual Result<std::optional<OffsetJson>> LatestOffset(const std::optional<OffsetJson>& start,
                                                         const ReadLimit& limit) = 0;

  // Trigger.AvailableNow: remembers what is available now; later LatestOffset calls never go
  // past it. Default: NotSupported (the loop then falls back to one batch, as Spark does).
  virtual Status PrepareForAvailableNow() {
    return Status::NotSupported(Description() + " does not support Trigger.AvailableNow");
  }

  // The rows in (start, end]. See the determinism contract above.
  virtual Result<engine::Batch> GetBatch(const std::optional<OffsetJson>& start,
                                         const OffsetJson& end) = 0;

  // Called after commits/<N>: nothing up to `end` will be requested again; the source may
  // release or purge what it keeps for it.
  virtual Status Commit(const OffsetJson& end) {
    (void)end;
    return Status::OK();
  }

  // Source metrics for the progress JSON (sources[].metrics), e.g. Kafka's
  // avgOffsetsBehindLatest; `latest` is the last offset LatestOffset returned.
  virtual std::map<std::string, std::string> Metrics(
      const std::optional<OffsetJson>& latest) const {
    (void)latest;
    return {};
  }

  // The query is stopping: a blocking call in progress on the query thread (LatestOffset or
  // GetBatch waiting for an external system, such as a Kafka broker that is down) returns soon
  // with Cancelled, and so do later ones. The one method called from another thread (the one
  // stopping the query), at most once, before Stop. Default: nothing (the source never waits
  // long).
  virtual void Interrupt() {}

  // Releases resources (connections, threads). Called once, when the query stops.
  virtual Status Stop() { return Status::OK(); }
};

}  // namespace sluice::sources
