// NexmarkSource: the Nexmark generator (docs/nexmark.md) as a streaming source, one event kind per
// source: `FROM STREAM nexmark(kind => 'bid', numEvents => 1000000)` in SQL, or
// `ReadStream().Format("nexmark").Option("kind", "bid")` in the C++ API.
//
// Rows: the flat columns of the source's kind, with the spec's names (docs/nexmark.md, "The
// streaming source"):
//   bid:     auction, bidder, price BIGINT; channel, url VARCHAR; dateTime TIMESTAMPTZ;
//            extra VARCHAR
//   person:  id BIGINT; name, emailAddress, creditCard, city, state VARCHAR;
//            dateTime TIMESTAMPTZ; extra VARCHAR
//   auction: id BIGINT; itemName, description VARCHAR; initialBid, reserve BIGINT;
//            dateTime, expires TIMESTAMPTZ; seller, category BIGINT; extra VARCHAR
// Times are instants (TIMESTAMPTZ, µs), as Sluice's SQL TIMESTAMP and the rate source's column.
//
// Offsets: a bare integer, the next event index of the UNIFIED stream (all kinds), e.g. 1000000.
// The batch (start, end] holds this kind's events among indexes [start, end) (start = 0 when
// absent). Every nexmark source with the same generator options sees the same stream: index k is
// the same event in each, so a person source and an auction source of one query partition the
// same events (q3, q8). Rows are a pure function of (options, start, end): a replay after a crash
// gives the same rows, and nothing is persisted except, in rate-limited mode, the wall-clock
// start time (<checkpoint_dir>/0, "v1\n<ms>", as the rate source).
//
// How far LatestOffset goes:
//   * numEvents bounds every offset (0 = unbounded).
//   * maxEventsPerTrigger (default 100,000 events of the unified stream, not rows of this kind)
//     and ReadLimit::max_rows (maxOffsetsPerTrigger) cap one batch; all_available (Trigger.Once)
//     lifts them except for an unbounded source at max speed, which has no end.
//   * rateLimited = false (default, Flink's maxEmitSpeed): everything up to the bound is
//     available at once. true: event k is released once its event time minus baseTime has
//     elapsed in wall time since the start time (the injected Clock), i.e.
//     EventsDueBy(baseTime + now - start).
//   * AvailableNow: up to numEvents; rate-limited: the events due now; unbounded at max speed: one
//     batch of maxEventsPerTrigger from where the query is.
//
// Thread safety: one query thread (Source contract).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "engine/batch_builder.h"
#include "sources/nexmark/nexmark_config.h"
#include "sources/nexmark/nexmark_events.h"
#include "sources/nexmark/nexmark_generator.h"
#include "sources/source.h"

namespace sluice::sources {

struct NexmarkSourceOptions {
  nexmark::EventKind kind = nexmark::EventKind::kBid;
  // Generator parameters; config.max_events = numEvents (0 = unbounded), config.max_emit_speed =
  // !rateLimited.
  nexmark::NexmarkConfig config;
  int64_t max_events_per_trigger = 100'000;  // >= 1 (see docs/nexmark.md for why 100,000)
};

// The options of a `nexmark` source from the user's (case-insensitive) options; InvalidArgument
// naming the option for an unknown name or a bad value. `ctx.engine` is used to parse a baseTime
// given as a timestamp text.
Result<NexmarkSourceOptions> ParseNexmarkSourceOptions(const SourceContext& ctx);

// The schema of a kind's rows (see the table above).
engine::Schema NexmarkKindSchema(nexmark::EventKind kind);

class NexmarkSource final : public Source {
 public:
  static Result<std::unique_ptr<NexmarkSource>> Open(const SourceContext& ctx,
                                                     NexmarkSourceOptions options);

  std::string Description() const override;
  const engine::Schema& schema() const override { return schema_; }
  Result<std::optional<OffsetJson>> LatestOffset(const std::optional<OffsetJson>& start,
                                                 const ReadLimit& limit) override;
  Status PrepareForAvailableNow() override;
  Result<engine::Batch> GetBatch(const std::optional<OffsetJson>& start,
                                 const OffsetJson& end) override;
  // eventsBehindLatest (rate-limited or bounded sources): events available now beyond `latest`.
  std::map<std::string, std::string> Metrics(
      const std::optional<OffsetJson>& latest) const override;

  const nexmark::NexmarkGenerator& generator() const { return *generator_; }

 private:
  NexmarkSource(const SourceContext& ctx, NexmarkSourceOptions options);
  Result<int64_t> ParseOffset(const OffsetJson& json) const;
  // The wall-clock start of a rate-limited source (persisted in the checkpoint dir).
  Result<int64_t> StartTimeMs();
  // The end of everything available now (numEvents, events due), ignoring AvailableNow.
  Result<int64_t> AvailableEnd();
  bool unbounded_at_max_speed() const {
    return options_.config.max_events == 0 && options_.config.max_emit_speed;
  }

  SourceContext ctx_;
  NexmarkSourceOptions options_;
  Clock* clock_;
  std::shared_ptr<Clock> default_clock_;
  std::unique_ptr<nexmark::NexmarkGenerator> generator_;
  engine::Schema schema_;
  engine::BatchBuilder builder_;
  nexmark::NexmarkBatch scratch_;  // reused across GetBatch calls
  std::optional<int64_t> start_time_ms_;
  std::optional<int64_t> available_now_end_;
  bool available_now_pending_ = false;     // unbounded at max speed: end set by the next batch
  std::optional<int64_t> last_available_;  // the last AvailableEnd, for Metrics
};

}  // namespace sluice::sources
