// RateSource: `read_rate(rowsPerSecond => n, numPartitions => p, rampUpTime => '5s')`, Spark's
// rate source (RateStreamMicroBatchStream): columns `timestamp` TIMESTAMPTZ (an instant, as
// Spark's TimestampType) and `value` BIGINT.
//
// The start time (ms since the epoch) is taken from the clock when the source is created and
// persisted in
// <checkpoint_dir>/0 as Spark does ("v1\n<startTimeMs>", create-if-absent), so a restart keeps
// it. Offset JSON: a bare integer, the whole seconds elapsed since the start time (Spark's
// LongOffset), e.g. 12. LatestOffset ignores read limits (as Spark).
//
// Rows of (start, end] (start = 0 when absent): values [valueAt(start), valueAt(end)), where
// valueAt(s) = s * rowsPerSecond after the ramp-up, and during rampUpTime seconds the rate grows
// linearly (Spark's valueAtSecond). Value v has timestamp
//   startTime + start*1000 + round((v - valueAt(start)) * (end - start) * 1000 / count) ms,
// and rows come partition by partition (value v in partition (v - valueAt(start)) % p), each
// partition in value order, as Spark's readers emit them. Deterministic for a given (start, end)
// and persisted start time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "sources/source.h"

namespace sluice::sources {

struct RateSourceOptions {
  int64_t rows_per_second = 1;  // >= 0
  int64_t num_partitions = 1;   // >= 1
  int64_t ramp_up_seconds = 0;  // >= 0
};

class RateSource final : public Source {
 public:
  static Result<std::unique_ptr<RateSource>> Open(const SourceContext& ctx,
                                                  RateSourceOptions options);

  std::string Description() const override;
  const engine::Schema& schema() const override { return schema_; }
  Result<std::optional<OffsetJson>> LatestOffset(const std::optional<OffsetJson>& start,
                                                 const ReadLimit& limit) override;
  Status PrepareForAvailableNow() override;
  Result<engine::Batch> GetBatch(const std::optional<OffsetJson>& start,
                                 const OffsetJson& end) override;

  // The persisted (or, without a checkpoint dir, in-memory) start time, fixed at Open.
  Result<int64_t> StartTimeMs();

  // Spark's valueAtSecond.
  static int64_t ValueAtSecond(int64_t seconds, int64_t rows_per_second, int64_t ramp_up_seconds);

 private:
  RateSource(const SourceContext& ctx, RateSourceOptions options);
  Result<int64_t> ParseOffset(const OffsetJson& json) const;

  SourceContext ctx_;
  RateSourceOptions options_;
  Clock* clock_;
  std::shared_ptr<Clock> default_clock_;
  std::unique_ptr<engine::Connection> conn_;
  engine::Schema schema_;
  std::optional<int64_t> start_time_ms_;
  std::optional<int64_t> available_now_seconds_;
};

}  // namespace sluice::sources
