// NexmarkGenerator: event index -> Nexmark event, deterministically (docs/nexmark.md).
//
// Event index k (0-based, this generator's k-th event) is a pure function of (config, k): any
// event can be generated alone, in any batch, thread or process, with the same result. The
// generator is immutable after Open: all methods are const and safe to call concurrently (each
// thread with its own output objects).
//
// Preconditions (programmer mistakes, SLUICE_DCHECK): index >= 0; index < max_events when
// max_events > 0; first_event_id + first_event_number + index < 2^62.
#pragma once

#include <cstdint>
#include <memory>

#include "common/result.h"
#include "sources/nexmark/nexmark_config.h"
#include "sources/nexmark/nexmark_events.h"
#include "sources/nexmark/nexmark_tables.h"

namespace sluice::nexmark {

class NexmarkGenerator {
 public:
  // InvalidArgument when config.Validate() fails. Builds or reuses the seed's tables.
  static Result<std::unique_ptr<NexmarkGenerator>> Open(const NexmarkConfig& config);

  const NexmarkConfig& config() const { return config_; }
  const NexmarkTables& tables() const { return *tables_; }

  // Adjusted event number of index k: n = first_event_number + k, permuted within groups of
  // out_of_order_group_size (identity when it is 1).
  int64_t EventNumber(int64_t index) const;
  // first_event_id + EventNumber(index).
  int64_t EventId(int64_t index) const { return config_.first_event_id + EventNumber(index); }
  // Kind of the event with this id (id mod P).
  EventKind KindOfId(int64_t event_id) const;
  EventKind KindOf(int64_t index) const { return KindOfId(EventId(index)); }

  // base_time_ms + floor(number * G * 1000 / rate), exact. number >= 0.
  int64_t TimestampForNumber(int64_t number) const;
  // The event time (ms) of index k.
  int64_t EventTime(int64_t index) const { return TimestampForNumber(EventNumber(index)); }
  // The watermark the generator may assert after producing indexes [0, num_generated): no event
  // with index >= num_generated has an earlier time (spec §2.3).
  int64_t WatermarkAfter(int64_t num_generated) const;
  // The largest c such that every event with index < c has time <= event_time_ms (0 if none).
  // A wall-time rate-limited source releases EventsDueBy(base_time_ms + elapsed_ms) events.
  // Not capped by max_events.
  int64_t EventsDueBy(int64_t event_time_ms) const;

  // Ids "base 0" (before adding kFirstPersonId / kFirstAuctionId) of the newest person and
  // auction at event id `event_id` (spec §2.5).
  int64_t LastPersonId(int64_t event_id) const;
  int64_t LastAuctionId(int64_t event_id) const;

  // Generates index k into *event (reusing its strings' capacity; no allocation after warm-up).
  // String views in *event point into tables() and stay valid while this generator lives.
  void GenerateEvent(int64_t index, NexmarkEvent* event) const;

  // Clears *batch and fills it with indexes [first_index, first_index + count).
  void GenerateBatch(int64_t first_index, int64_t count, NexmarkBatch* batch) const;

  // The events of one kind among indexes [first_index, first_index + count), for a source that
  // serves one kind: clears *batch and fills only `kind`'s columns (the other kinds' stay empty),
  // with exactly the rows GenerateBatch gives that kind for the same range. `kinds` lists the
  // generated events only; first_index/num_events describe the scanned range. Events of other
  // kinds cost one division each (their kind), nothing more.
  void GenerateKindBatch(EventKind kind, int64_t first_index, int64_t count,
                         NexmarkBatch* batch) const;

  // Reader partition `partition` of `num_partitions` over this generator's stream: its offset j
  // is index PartitionIndex(partition, num_partitions, j). Clears *batch and fills it with the
  // partition's offsets [first_offset, first_offset + count); batch->first_index = first_offset.
  void GeneratePartitionBatch(int64_t partition, int64_t num_partitions, int64_t first_offset,
                              int64_t count, NexmarkBatch* batch) const;

 private:
  NexmarkGenerator(const NexmarkConfig& config, std::shared_ptr<const NexmarkTables> tables);

  // LastPersonId / LastAuctionId of the event being generated.
  struct EventIds {
    int64_t last_person;
    int64_t last_auction;
  };
  // The spec's nextPersonId / nextAuctionId given the newest ids.
  int64_t NextPersonId(int64_t last_person, Rng& rng) const;
  int64_t NextAuctionId(int64_t last_auction, Rng& rng) const;
  std::string_view NextExtra(Rng& rng, int64_t current_size, int64_t avg_size) const;
  void GeneratePerson(const EventIds& ids, int64_t time, Rng& rng, Person* p) const;
  void GenerateAuction(const EventIds& ids, int64_t number, int64_t time, Rng& rng,
                       Auction* a) const;
  void GenerateBid(const EventIds& ids, int64_t time, Rng& rng, Bid* b) const;
  void AppendToBatch(const NexmarkEvent& event, NexmarkBatch* batch) const;

  const NexmarkConfig config_;
  const std::shared_ptr<const NexmarkTables> tables_;
  const int64_t total_proportion_;
  const int64_t ms_numerator_;            // G * 1000
  const int64_t max_fast_number_;         // largest number whose number * ms_numerator_ fits int64
  const int64_t auction_horizon_events_;  // num_in_flight_auctions * P / auction_proportion
};

// The generator index of reader partition `partition`'s offset j: partition + j * num_partitions.
inline int64_t PartitionIndex(int64_t partition, int64_t num_partitions, int64_t offset) {
  return partition + offset * num_partitions;
}

// Java Math.round(10^(u * 6) * 100) as the reference computes it:
// (int64)(pow(10.0, u * 6.0) * 100.0 + 0.5), for u in [0, 1).
int64_t PriceFromUniformExact(double u);
// The same result, faster: a verified approximation that falls back to the exact formula near
// integer boundaries (nexmark_generator.cc). Used by the generator.
int64_t PriceFromUniform(double u);

}  // namespace sluice::nexmark
