// NexmarkConfig: every parameter of the Nexmark event generator, with its default.
//
// The data is defined by docs/nexmark.md (the reference generator of the Nexmark notes); the
// defaults here are the reference's (Gen() and its module constants). docs/nexmark.md describes
// how Sluice implements them. A config is a plain value; copies are independent.
#pragma once

#include <cstdint>
#include <vector>

#include "common/result.h"
#include "common/status.h"

namespace sluice::nexmark {

// Constants of the spec (not configurable: the reference hard-codes them too).
inline constexpr int64_t kFirstPersonId = 1000;
inline constexpr int64_t kFirstAuctionId = 1000;
inline constexpr int64_t kFirstCategoryId = 10;
inline constexpr int64_t kNumCategories = 5;
// "Hot" entity = first (seller, auction) or second (bidder) id of each block of this many ids.
inline constexpr int64_t kHotEntityBlock = 100;
// Random person/auction picks may point up to this many ids past the newest one.
inline constexpr int64_t kIdLead = 10;
inline constexpr int kNumHotChannels = 4;
inline constexpr int kNumChannels = 10000;
inline constexpr int kHotChannelsRatio = 2;                      // P(hot channel) = 1/2
inline constexpr int64_t kPoolSize = int64_t{1} << 20;           // bytes of the `extra` pool
inline constexpr uint64_t kDefaultSeed = 0x4E45584D41524B00ULL;  // "NEXMARK\0"
inline constexpr int64_t kDefaultBaseTimeMs = 1704067200000;     // 2024-01-01T00:00:00Z
// Largest event time Validate accepts for base_time_ms: 9999-12-31T23:59:59.999Z.
inline constexpr int64_t kMaxBaseTimeMs = 253402300799999;

struct NexmarkConfig {
  // Event-time rate of this generator timeline in events per second (Flink firstEventRate). It
  // sets the spacing of timestamps, not how fast events are produced. >= 1.
  int64_t events_per_second = 100000;
  // G: Flink's number of parallel timelines. Timestamps are spaced G * 1000 / rate ms apart
  // (the reference's `gens`); SplitConfig sets it. >= 1.
  int64_t num_event_generators = 1;
  // Event time (ms since the Unix epoch, UTC) of event number 0. In [0, kMaxBaseTimeMs].
  int64_t base_time_ms = kDefaultBaseTimeMs;
  // Id of event number 0 (the reference's first_id; Flink uses 1). >= 0.
  int64_t first_event_id = 0;
  // Number of this generator's first event (the reference's first_num; Flink uses 1). >= 0.
  int64_t first_event_number = 0;
  // Events this generator produces; 0 = unbounded. Bounds offsets; SplitConfig divides it.
  int64_t max_events = 0;

  // Kind mix: in every block of P = sum ids, the first person_proportion are people, the next
  // auction_proportion auctions, the rest bids. Each >= 1.
  int64_t person_proportion = 1;
  int64_t auction_proportion = 3;
  int64_t bid_proportion = 46;

  // P(bid goes to the hot auction) = 1 - 1/hot_auction_ratio. >= 1 (1 = never hot).
  int64_t hot_auction_ratio = 2;
  // P(bid by the hot bidder) = 1 - 1/hot_bidders_ratio. >= 1.
  int64_t hot_bidders_ratio = 4;
  // P(auction by the hot seller) = 1 - 1/hot_sellers_ratio. >= 1.
  int64_t hot_sellers_ratio = 4;
  // Window of "live" auction ids for cold bids. >= 0.
  int64_t num_in_flight_auctions = 100;
  // Window of "active" person ids for cold bidders and sellers. >= 1.
  int64_t num_active_people = 1000;

  // Target "idealised" sizes in bytes, reached by padding `extra`. In [0, kPoolSize / 2].
  int64_t avg_person_byte_size = 200;
  int64_t avg_auction_byte_size = 500;
  int64_t avg_bid_byte_size = 100;

  // 1 = events in order; g > 1 permutes event numbers inside groups of g (spec §2.2). The
  // reference has no such parameter (it is always 1). >= 1, not a multiple of 953.
  int64_t out_of_order_group_size = 1;

  // The SEED of the spec: changes every event and the global tables (pool, URLs).
  uint64_t seed = kDefaultSeed;

  // For the streaming source (not used by the generator): true = produce events as fast as
  // possible; false = release event k only when its event time is due in wall time.
  bool max_emit_speed = true;

  // P, the sum of the proportions.
  int64_t total_proportion() const {
    return person_proportion + auction_proportion + bid_proportion;
  }

  // OK, or InvalidArgument naming the first field out of range.
  Status Validate() const;
};

// Flink's split (spec §2.4): sub-generator i of G gets max_events / G events (the last one also
// the remainder), first_event_id + i * (max_events / G), num_event_generators = G, and keeps
// first_event_number and base_time_ms. With max_events == 0 (unbounded) the split uses Flink's
// (2^63 - 1) / (P * max(avg sizes)). Requires a valid config with num_event_generators == 1
// (a config that was already split cannot be split again) and G >= 1.
Result<std::vector<NexmarkConfig>> SplitConfig(const NexmarkConfig& config, int64_t num_generators);

// Flink's max_events for an unbounded run: (2^63 - 1) / (P * max(avg sizes)).
int64_t UnboundedMaxEvents(const NexmarkConfig& config);

}  // namespace sluice::nexmark
