#include "sources/nexmark/nexmark_config.h"

#include <algorithm>
#include <limits>
#include <string>

namespace sluice::nexmark {
namespace {

Status OutOfRange(const char* field, int64_t value, const char* rule) {
  return Status::InvalidArgument(std::string("nexmark: ") + field + " = " + std::to_string(value) +
                                 " is out of range (" + rule + ")");
}

}  // namespace

Status NexmarkConfig::Validate() const {
  if (events_per_second < 1) return OutOfRange("events_per_second", events_per_second, ">= 1");
  if (num_event_generators < 1 || num_event_generators > (int64_t{1} << 20)) {
    return OutOfRange("num_event_generators", num_event_generators, "1 .. 2^20");
  }
  if (base_time_ms < 0 || base_time_ms > kMaxBaseTimeMs) {
    return OutOfRange("base_time_ms", base_time_ms, "years 1970 .. 9999");
  }
  if (first_event_id < 0) return OutOfRange("first_event_id", first_event_id, ">= 0");
  if (first_event_number < 0) {
    return OutOfRange("first_event_number", first_event_number, ">= 0");
  }
  if (max_events < 0) return OutOfRange("max_events", max_events, ">= 0, 0 = unbounded");
  constexpr int64_t kMaxProportion = 1 << 20;
  if (person_proportion < 1 || person_proportion > kMaxProportion) {
    return OutOfRange("person_proportion", person_proportion, "1 .. 2^20");
  }
  if (auction_proportion < 1 || auction_proportion > kMaxProportion) {
    return OutOfRange("auction_proportion", auction_proportion, "1 .. 2^20");
  }
  if (bid_proportion < 1 || bid_proportion > kMaxProportion) {
    return OutOfRange("bid_proportion", bid_proportion, "1 .. 2^20");
  }
  if (hot_auction_ratio < 1) return OutOfRange("hot_auction_ratio", hot_auction_ratio, ">= 1");
  if (hot_bidders_ratio < 1) return OutOfRange("hot_bidders_ratio", hot_bidders_ratio, ">= 1");
  if (hot_sellers_ratio < 1) return OutOfRange("hot_sellers_ratio", hot_sellers_ratio, ">= 1");
  constexpr int64_t kMaxWindow = int64_t{1} << 40;
  if (num_in_flight_auctions < 0 || num_in_flight_auctions > kMaxWindow) {
    return OutOfRange("num_in_flight_auctions", num_in_flight_auctions, "0 .. 2^40");
  }
  if (num_active_people < 1 || num_active_people > kMaxWindow) {
    return OutOfRange("num_active_people", num_active_people, "1 .. 2^40");
  }
  const int64_t max_size = kPoolSize / 2;
  if (avg_person_byte_size < 0 || avg_person_byte_size > max_size) {
    return OutOfRange("avg_person_byte_size", avg_person_byte_size, "0 .. 2^19");
  }
  if (avg_auction_byte_size < 0 || avg_auction_byte_size > max_size) {
    return OutOfRange("avg_auction_byte_size", avg_auction_byte_size, "0 .. 2^19");
  }
  if (avg_bid_byte_size < 0 || avg_bid_byte_size > max_size) {
    return OutOfRange("avg_bid_byte_size", avg_bid_byte_size, "0 .. 2^19");
  }
  if (out_of_order_group_size < 1 || out_of_order_group_size % 953 == 0 ||
      out_of_order_group_size > (int64_t{1} << 30)) {
    return OutOfRange("out_of_order_group_size", out_of_order_group_size,
                      "1 .. 2^30, not a multiple of 953");
  }
  return Status::OK();
}

int64_t UnboundedMaxEvents(const NexmarkConfig& config) {
  const int64_t max_size = std::max({config.avg_person_byte_size, config.avg_auction_byte_size,
                                     config.avg_bid_byte_size, int64_t{1}});
  return std::numeric_limits<int64_t>::max() / (config.total_proportion() * max_size);
}

Result<std::vector<NexmarkConfig>> SplitConfig(const NexmarkConfig& config,
                                               int64_t num_generators) {
  SLUICE_RETURN_NOT_OK(config.Validate());
  if (num_generators < 1 || num_generators > (int64_t{1} << 20)) {
    return Status::InvalidArgument("nexmark: cannot split into " + std::to_string(num_generators) +
                                   " generators (1 .. 2^20)");
  }
  if (config.num_event_generators != 1) {
    return Status::InvalidArgument("nexmark: config is already one of " +
                                   std::to_string(config.num_event_generators) +
                                   " sub-generators; split the original config");
  }
  const int64_t total = config.max_events == 0 ? UnboundedMaxEvents(config) : config.max_events;
  const int64_t share = total / num_generators;
  std::vector<NexmarkConfig> out;
  out.reserve(static_cast<size_t>(num_generators));
  for (int64_t i = 0; i < num_generators; ++i) {
    NexmarkConfig sub = config;
    sub.num_event_generators = num_generators;
    sub.first_event_id = config.first_event_id + i * share;
    sub.max_events = (i == num_generators - 1) ? total - i * share : share;
    out.push_back(sub);
  }
  return out;
}

}  // namespace sluice::nexmark
