#include "sources/nexmark/nexmark_source.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "common/strings.h"
#include "sources/source_factory.h"
#include "sources/source_options.h"
#include "sources/start_time_file.h"

namespace sluice::sources {
namespace {

using nexmark::EventKind;
using nexmark::NexmarkConfig;

// Events generated per NexmarkBatch before they are copied into the engine batch: big enough to
// amortize the call, small enough for the generated columns to stay in cache-friendly sizes.
constexpr int64_t kGenerateChunk = 16384;
// The largest offset an unbounded source hands out (far beyond any run; keeps arithmetic safe).
constexpr int64_t kMaxOffset = int64_t{1} << 60;

const char* KindName(EventKind kind) {
  switch (kind) {
    case EventKind::kPerson:
      return "person";
    case EventKind::kAuction:
      return "auction";
    case EventKind::kBid:
      return "bid";
  }
  return "?";
}

// An int64 generator parameter exposed as an option.
struct IntParam {
  const char* name;  // as documented (camelCase); matched case-insensitively
  int64_t NexmarkConfig::*field;
};

constexpr IntParam kIntParams[] = {
    {"eventsPerSecond", &NexmarkConfig::events_per_second},
    {"numEventGenerators", &NexmarkConfig::num_event_generators},
    {"firstEventId", &NexmarkConfig::first_event_id},
    {"firstEventNumber", &NexmarkConfig::first_event_number},
    {"numEvents", &NexmarkConfig::max_events},
    {"personProportion", &NexmarkConfig::person_proportion},
    {"auctionProportion", &NexmarkConfig::auction_proportion},
    {"bidProportion", &NexmarkConfig::bid_proportion},
    {"hotAuctionRatio", &NexmarkConfig::hot_auction_ratio},
    {"hotBiddersRatio", &NexmarkConfig::hot_bidders_ratio},
    {"hotSellersRatio", &NexmarkConfig::hot_sellers_ratio},
    {"numInFlightAuctions", &NexmarkConfig::num_in_flight_auctions},
    {"numActivePeople", &NexmarkConfig::num_active_people},
    {"avgPersonByteSize", &NexmarkConfig::avg_person_byte_size},
    {"avgAuctionByteSize", &NexmarkConfig::avg_auction_byte_size},
    {"avgBidByteSize", &NexmarkConfig::avg_bid_byte_size},
    {"outOfOrderGroupSize", &NexmarkConfig::out_of_order_group_size},
};

Result<uint64_t> ParseSeed(const std::string& text) {
  std::string t = text;
  int base = 10;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
    t = t.substr(2);
    base = 16;
  }
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v, base);
  if (t.empty() || ec != std::errc() || p != t.data() + t.size()) {
    return Status::InvalidArgument(
        "nexmark: option 'seed' must be an unsigned 64-bit integer (decimal or 0x hex), got '" +
        text + "'");
  }
  return v;
}

engine::Field Col(const char* name, engine::TypeId id) {
  engine::DataType t;
  t.id = id;
  return engine::Field{name, t, true};
}

}  // namespace

Result<NexmarkSourceOptions> ParseNexmarkSourceOptions(const SourceContext& ctx) {
  SourceOptions o("nexmark", ctx.options);
  std::vector<std::string> known = {"kind", "maxEventsPerTrigger", "rateLimited", "baseTime",
                                    "seed"};
  for (const IntParam& p : kIntParams) known.emplace_back(p.name);
  SLUICE_RETURN_NOT_OK(o.CheckNoDuplicates());
  for (const auto& [name, value] : ctx.options) {
    const std::string lower = AsciiLower(name);
    if (std::none_of(known.begin(), known.end(),
                     [&](const std::string& k) { return AsciiLower(k) == lower; })) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      return Status::InvalidArgument("nexmark: unknown option '" + name +
                                     "' (known options: " + list + ")");
    }
  }
  NexmarkSourceOptions out;
  if (auto kind = o.Get("kind")) {
    const std::string k = AsciiLower(*kind);
    if (k == "bid") {
      out.kind = EventKind::kBid;
    } else if (k == "person") {
      out.kind = EventKind::kPerson;
    } else if (k == "auction") {
      out.kind = EventKind::kAuction;
    } else {
      return Status::InvalidArgument(
          "nexmark: option 'kind' must be 'bid', 'person' or 'auction', got '" + *kind + "'");
    }
  }
  NexmarkConfig& config = out.config;
  for (const IntParam& p : kIntParams) {
    SLUICE_ASSIGN_OR_RETURN(auto v, o.GetInt64(p.name, std::numeric_limits<int64_t>::min()));
    if (!v) continue;
    // Validate the parameter alone first, so that the error names the option the user wrote.
    NexmarkConfig alone;
    alone.*p.field = *v;
    Status st = alone.Validate();
    if (!st.ok()) {
      return Status::InvalidArgument("nexmark: option '" + std::string(p.name) +
                                     "' = " + std::to_string(*v) + " is invalid: " + st.message());
    }
    config.*p.field = *v;
  }
  if (auto seed = o.Get("seed")) {
    SLUICE_ASSIGN_OR_RETURN(config.seed, ParseSeed(*seed));
  }
  if (auto base = o.Get("baseTime")) {
    // Milliseconds since the epoch, or a timestamp text ('2024-01-01 00:00:00', UTC).
    auto ms = o.GetInt64("baseTime", 0);
    if (ms.ok()) {
      config.base_time_ms = **ms;
    } else {
      if (!ctx.engine) return Status::InvalidArgument("nexmark: SourceContext needs an engine");
      SLUICE_ASSIGN_OR_RETURN(auto conn, ctx.engine->Connect());
      SLUICE_ASSIGN_OR_RETURN_CTX(config.base_time_ms,
                                  ParseTimestampOption(conn.get(), *base, "baseTime"), "nexmark");
    }
  }
  SLUICE_ASSIGN_OR_RETURN(auto rate_limited, o.GetBool("rateLimited"));
  config.max_emit_speed = !rate_limited.value_or(false);
  SLUICE_ASSIGN_OR_RETURN(auto per_trigger, o.GetInt64("maxEventsPerTrigger", 1));
  if (per_trigger) out.max_events_per_trigger = *per_trigger;
  // Event ids must stay below 2^62 (the generator's precondition) for every offset < 2^60.
  if (config.first_event_id > (int64_t{1} << 60) ||
      config.first_event_number > (int64_t{1} << 60)) {
    return Status::InvalidArgument(
        "nexmark: options 'firstEventId' and 'firstEventNumber' must be <= 2^60");
  }
  Status st = config.Validate();
  if (!st.ok()) return Status::InvalidArgument("nexmark: invalid options: " + st.message());
  return out;
}

engine::Schema NexmarkKindSchema(EventKind kind) {
  using engine::TypeId;
  switch (kind) {
    case EventKind::kPerson:
      return {Col("id", TypeId::kBigInt),
              Col("name", TypeId::kVarchar),
              Col("emailAddress", TypeId::kVarchar),
              Col("creditCard", TypeId::kVarchar),
              Col("city", TypeId::kVarchar),
              Col("state", TypeId::kVarchar),
              Col("dateTime", TypeId::kTimestampTz),
              Col("extra", TypeId::kVarchar)};
    case EventKind::kAuction:
      return {Col("id", TypeId::kBigInt),           Col("itemName", TypeId::kVarchar),
              Col("description", TypeId::kVarchar), Col("initialBid", TypeId::kBigInt),
              Col("reserve", TypeId::kBigInt),      Col("dateTime", TypeId::kTimestampTz),
              Col("expires", TypeId::kTimestampTz), Col("seller", TypeId::kBigInt),
              Col("category", TypeId::kBigInt),     Col("extra", TypeId::kVarchar)};
    case EventKind::kBid:
      return {Col("auction", TypeId::kBigInt), Col("bidder", TypeId::kBigInt),
              Col("price", TypeId::kBigInt),   Col("channel", TypeId::kVarchar),
              Col("url", TypeId::kVarchar),    Col("dateTime", TypeId::kTimestampTz),
              Col("extra", TypeId::kVarchar)};
  }
  return {};
}

NexmarkSource::NexmarkSource(const SourceContext& ctx, NexmarkSourceOptions options)
    : ctx_(ctx),
      options_(options),
      clock_(ctx.clock),
      schema_(NexmarkKindSchema(options_.kind)),
      builder_(schema_) {
  if (!clock_) {
    default_clock_ = DefaultClock();
    clock_ = default_clock_.get();
  }
}

Result<std::unique_ptr<NexmarkSource>> NexmarkSource::Open(const SourceContext& ctx,
                                                           NexmarkSourceOptions options) {
  if (options.max_events_per_trigger < 1) {
    return Status::InvalidArgument("nexmark: option 'maxEventsPerTrigger' must be >= 1");
  }
  if (!options.config.max_emit_speed && !ctx.checkpoint_dir.empty() && !ctx.fs) {
    return Status::InvalidArgument("NexmarkSource: a checkpoint dir needs fs");
  }
  std::unique_ptr<NexmarkSource> src(new NexmarkSource(ctx, options));
  SLUICE_ASSIGN_OR_RETURN(src->generator_, nexmark::NexmarkGenerator::Open(src->options_.config));
  if (!src->options_.config.max_emit_speed) {
    // Fixed when the source is created (or loaded from the checkpoint), as the rate source.
    SLUICE_RETURN_NOT_OK(src->StartTimeMs().status());
  }
  return src;
}

std::string NexmarkSource::Description() const {
  const NexmarkConfig& c = options_.config;
  return std::string("NexmarkSource[kind=") + KindName(options_.kind) +
         ", eventsPerSecond=" + std::to_string(c.events_per_second) +
         ", numEvents=" + std::to_string(c.max_events) +
         ", rateLimited=" + (c.max_emit_speed ? "false" : "true") + "]";
}

Result<int64_t> NexmarkSource::ParseOffset(const OffsetJson& json) const {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(json.data(), json.data() + json.size(), v);
  if (json.empty() || ec != std::errc() || p != json.data() + json.size() || v < 0 ||
      v > kMaxOffset) {
    return Status::Corruption(Description() + ": invalid offset '" + json +
                              "': expected the next event index as an integer");
  }
  if (options_.config.max_events > 0 && v > options_.config.max_events) {
    return Status::Corruption(Description() + ": offset " + json +
                              " is past numEvents = " + std::to_string(options_.config.max_events));
  }
  return v;
}

Result<int64_t> NexmarkSource::StartTimeMs() {
  if (start_time_ms_) return *start_time_ms_;
  const int64_t now = clock_->NowMs();
  if (ctx_.checkpoint_dir.empty()) {
    start_time_ms_ = now;
    return now;
  }
  SLUICE_ASSIGN_OR_RETURN_CTX(
      int64_t v,
      ReadOrCreateStartTime(*ctx_.fs, fs::JoinPath(ctx_.checkpoint_dir, "0"), now, "nexmark"),
      Description());
  start_time_ms_ = v;
  return v;
}

Result<int64_t> NexmarkSource::AvailableEnd() {
  const NexmarkConfig& c = options_.config;
  int64_t end = c.max_events > 0 ? c.max_events : kMaxOffset;
  if (!c.max_emit_speed) {
    SLUICE_ASSIGN_OR_RETURN(int64_t t0, StartTimeMs());
    const int64_t elapsed = std::max<int64_t>(0, clock_->NowMs() - t0);
    const int64_t due_time = elapsed > nexmark::kMaxBaseTimeMs - c.base_time_ms
                                 ? nexmark::kMaxBaseTimeMs
                                 : c.base_time_ms + elapsed;
    end = std::min(end, generator_->EventsDueBy(due_time));
  }
  return end;
}

Result<std::optional<OffsetJson>> NexmarkSource::LatestOffset(
    const std::optional<OffsetJson>& start, const ReadLimit& limit) {
  int64_t s = 0;
  if (start) {
    SLUICE_ASSIGN_OR_RETURN(s, ParseOffset(*start));
  }
  SLUICE_ASSIGN_OR_RETURN(int64_t end, AvailableEnd());
  last_available_ = end;
  if (available_now_pending_) {
    available_now_end_ = std::min(kMaxOffset, s + options_.max_events_per_trigger);
    available_now_pending_ = false;
  }
  if (available_now_end_) end = std::min(end, *available_now_end_);
  if (!limit.all_available || (unbounded_at_max_speed() && !available_now_end_)) {
    end = std::min(end, s + options_.max_events_per_trigger);
  }
  if (!limit.all_available && limit.max_rows) {
    end = std::min(end, s + std::max<int64_t>(1, *limit.max_rows));
  }
  if (end <= s) {
    if (!start) return std::optional<OffsetJson>();
    return start;
  }
  return std::optional<OffsetJson>(std::to_string(end));
}

Status NexmarkSource::PrepareForAvailableNow() {
  if (unbounded_at_max_speed()) {
    available_now_pending_ = true;  // one batch from wherever the query is
    return Status::OK();
  }
  SLUICE_ASSIGN_OR_RETURN(int64_t end, AvailableEnd());
  available_now_end_ = end;
  return Status::OK();
}

Result<engine::Batch> NexmarkSource::GetBatch(const std::optional<OffsetJson>& start,
                                              const OffsetJson& end) {
  int64_t s = 0;
  if (start) {
    SLUICE_ASSIGN_OR_RETURN(s, ParseOffset(*start));
  }
  SLUICE_ASSIGN_OR_RETURN(int64_t e, ParseOffset(end));
  if (e < s) {
    return Status::InvalidArgument(Description() + ": end offset " + end + " is before start " +
                                   *start);
  }
  using engine::BulkColumn;
  nexmark::NexmarkBatch& nb = scratch_;
  for (int64_t chunk = s; chunk < e; chunk += kGenerateChunk) {
    const int64_t count = std::min(kGenerateChunk, e - chunk);
    generator_->GenerateKindBatch(options_.kind, chunk, count, &nb);
    auto ints = [](const std::vector<int64_t>& v) { return BulkColumn::Int64s(v); };
    auto times = [](const std::vector<int64_t>& v) { return BulkColumn::Timestamps(v, 1000); };
    // The generator writes ASCII only (its tables and random strings are [a-z ], digits, '@', '.').
    auto strings = [](const nexmark::StringColumn& c) {
      return BulkColumn::Strings(c.views(), /*known_valid_utf8=*/true);
    };
    Status st;
    switch (options_.kind) {
      case EventKind::kPerson: {
        const nexmark::PersonColumns& p = nb.persons;
        const BulkColumn cols[] = {
            ints(p.id),      strings(p.name),  strings(p.email_address), strings(p.credit_card),
            strings(p.city), strings(p.state), times(p.date_time),       strings(p.extra)};
        st = builder_.AppendColumns(static_cast<int64_t>(p.size()), cols);
        break;
      }
      case EventKind::kAuction: {
        const nexmark::AuctionColumns& a = nb.auctions;
        const BulkColumn cols[] = {
            ints(a.id),       strings(a.item_name), strings(a.description), ints(a.initial_bid),
            ints(a.reserve),  times(a.date_time),   times(a.expires),       ints(a.seller),
            ints(a.category), strings(a.extra)};
        st = builder_.AppendColumns(static_cast<int64_t>(a.size()), cols);
        break;
      }
      case EventKind::kBid: {
        const nexmark::BidColumns& b = nb.bids;
        const BulkColumn cols[] = {ints(b.auction),    ints(b.bidder), ints(b.price),
                                   strings(b.channel), strings(b.url), times(b.date_time),
                                   strings(b.extra)};
        st = builder_.AppendColumns(static_cast<int64_t>(b.size()), cols);
        break;
      }
    }
    SLUICE_RETURN_NOT_OK_CTX(st, Description());
  }
  return builder_.Finish().WithContext(Description());
}

std::map<std::string, std::string> NexmarkSource::Metrics(
    const std::optional<OffsetJson>& latest) const {
  std::map<std::string, std::string> out;
  if (unbounded_at_max_speed() || !last_available_ || !latest) return out;
  int64_t l = 0;
  auto [p, ec] = std::from_chars(latest->data(), latest->data() + latest->size(), l);
  if (ec != std::errc() || p != latest->data() + latest->size()) return out;
  out["eventsBehindLatest"] = std::to_string(std::max<int64_t>(0, *last_available_ - l));
  return out;
}

}  // namespace sluice::sources
