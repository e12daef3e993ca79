#include "sources/nexmark/nexmark_generator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "common/check.h"

namespace sluice::nexmark {
namespace {

__extension__ using U128 = unsigned __int128;

// Writes `value` (0..9999) as 4 digits, like "%04d".
void Write4Digits(int64_t value, char* out) {
  out[3] = static_cast<char>('0' + value % 10);
  value /= 10;
  out[2] = static_cast<char>('0' + value % 10);
  value /= 10;
  out[1] = static_cast<char>('0' + value % 10);
  out[0] = static_cast<char>('0' + value / 10);
}

}  // namespace

int64_t PriceFromUniformExact(double u) {
  // The reference generator's (long) (x + 0.5), kept bit for bit (not lround).
  // NOLINTNEXTLINE(bugprone-incorrect-roundings): see above
  return static_cast<int64_t>(std::pow(10.0, u * 6.0) * 100.0 + 0.5);
}

namespace {

// 100 * 2^(j/256) for j = 0..255 and 2^k for k = 0..20.
struct PriceTables {
  double frac[256];
  double whole[21];
  PriceTables() {
    for (int j = 0; j < 256; ++j) frac[j] = 100.0 * std::exp2(j / 256.0);
    for (int k = 0; k <= 20; ++k) whole[k] = std::ldexp(1.0, k);
  }
};
}  // namespace

// The reference computes (int64)(pow(10, a) * 100 + 0.5) with a = u * 6, three roundings
// whose total relative error is below 1e-15. y approximates the same real value with relative
// error below 1e-14: 10^a = 2^(w / 256) with w = a * 256 * log2(10), split into 2^k (exact),
// a 256-entry table and a degree-4 polynomial on |x| < ln(2) / 256 (truncation error < 2e-15).
// When no integer lies within 1e-13 * y of y, the exact computation truncates to the same
// integer; otherwise (about 2 in 10^5 prices) the exact path runs. nexmark_test checks this
// against the exact path on millions of draws and at every kind of rounding boundary.
int64_t PriceFromUniform(double u) {
  static const PriceTables kPriceTables;  // function-local: safe from static-init order
  const double a = u * 6.0;
  const double w = a * 850.413592291164761054801773949283884961096036;  // 256 * log2(10)
  const auto n = static_cast<int>(w);                                   // 0 <= w < 5102
  const double x = (w - n) * 0.00270760617406228636491106297444600222;  // * ln(2) / 256
  const double x2 = x * x;
  const double poly = (1.0 + x) + x2 * ((0.5 + x * (1.0 / 6)) + x2 * (1.0 / 24));
  const double y = kPriceTables.whole[n >> 8] * kPriceTables.frac[n & 255] * poly + 0.5;  // y > 100
  const double margin = y * 1e-13;
  const auto lo = static_cast<int64_t>(y - margin);
  if (lo == static_cast<int64_t>(y + margin)) return lo;
  return PriceFromUniformExact(u);
}

Result<std::unique_ptr<NexmarkGenerator>> NexmarkGenerator::Open(const NexmarkConfig& config) {
  SLUICE_RETURN_NOT_OK(config.Validate());
  return std::unique_ptr<NexmarkGenerator>(
      new NexmarkGenerator(config, NexmarkTables::ForSeed(config.seed)));
}

NexmarkGenerator::NexmarkGenerator(const NexmarkConfig& config,
                                   std::shared_ptr<const NexmarkTables> tables)
    : config_(config),
      tables_(std::move(tables)),
      total_proportion_(config.total_proportion()),
      ms_numerator_(config.num_event_generators * 1000),
      max_fast_number_(std::numeric_limits<int64_t>::max() / ms_numerator_),
      auction_horizon_events_(config.num_in_flight_auctions * config.total_proportion() /
                              config.auction_proportion) {}

int64_t NexmarkGenerator::EventNumber(int64_t index) const {
  SLUICE_DCHECK(index >= 0);
  SLUICE_DCHECK(config_.max_events == 0 || index < config_.max_events);
  const int64_t n = config_.first_event_number + index;
  const int64_t g = config_.out_of_order_group_size;
  if (g == 1) return n;
  return (n / g) * g + ((n % g) * 953) % g;
}

EventKind NexmarkGenerator::KindOfId(int64_t event_id) const {
  const int64_t r = event_id % total_proportion_;
  if (r < config_.person_proportion) return EventKind::kPerson;
  if (r < config_.person_proportion + config_.auction_proportion) return EventKind::kAuction;
  return EventKind::kBid;
}

int64_t NexmarkGenerator::TimestampForNumber(int64_t number) const {
  SLUICE_DCHECK(number >= 0);
  if (number <= max_fast_number_) {
    return config_.base_time_ms + number * ms_numerator_ / config_.events_per_second;
  }
  const U128 product = static_cast<U128>(number) * static_cast<U128>(ms_numerator_);
  return config_.base_time_ms +
         static_cast<int64_t>(product / static_cast<U128>(config_.events_per_second));
}

int64_t NexmarkGenerator::WatermarkAfter(int64_t num_generated) const {
  const int64_t n = config_.first_event_number + num_generated;
  const int64_t g = config_.out_of_order_group_size;
  return TimestampForNumber((n / g) * g);
}

int64_t NexmarkGenerator::EventsDueBy(int64_t event_time_ms) const {
  if (event_time_ms < config_.base_time_ms) return 0;
  // time(n) <= t  <=>  n * G * 1000 <= (t - base + 1) * rate - 1.
  const U128 limit_product = (static_cast<U128>(event_time_ms - config_.base_time_ms) + 1) *
                                 static_cast<U128>(config_.events_per_second) -
                             1;
  const U128 last_number_128 = limit_product / static_cast<U128>(ms_numerator_);
  const int64_t last_number = last_number_128 > (U128{1} << 62)
                                  ? (int64_t{1} << 62)
                                  : static_cast<int64_t>(last_number_128);
  // Whole out-of-order groups only: numbers below ((L + 1) / g) * g all have time <= t.
  const int64_t g = config_.out_of_order_group_size;
  const int64_t end_number = ((last_number + 1) / g) * g;
  return std::max<int64_t>(0, end_number - config_.first_event_number);
}

int64_t NexmarkGenerator::LastPersonId(int64_t event_id) const {
  const int64_t epoch = event_id / total_proportion_;
  const int64_t offset = event_id % total_proportion_;
  return epoch * config_.person_proportion + std::min(offset, config_.person_proportion - 1);
}

int64_t NexmarkGenerator::LastAuctionId(int64_t event_id) const {
  int64_t epoch = event_id / total_proportion_;
  int64_t offset = event_id % total_proportion_;
  if (offset < config_.person_proportion) {
    --epoch;
    offset = config_.auction_proportion - 1;
  } else if (offset >= config_.person_proportion + config_.auction_proportion) {
    offset = config_.auction_proportion - 1;
  } else {
    offset -= config_.person_proportion;
  }
  return epoch * config_.auction_proportion + offset;
}

int64_t NexmarkGenerator::NextPersonId(int64_t last_person, Rng& rng) const {
  const int64_t num_people = last_person + 1;
  const int64_t active = std::min(num_people, config_.num_active_people);
  return num_people - active + rng.NextInt(active + kIdLead);
}

int64_t NexmarkGenerator::NextAuctionId(int64_t last_auction, Rng& rng) const {
  const int64_t max_auction = last_auction;
  const int64_t min_auction = std::max<int64_t>(max_auction - config_.num_in_flight_auctions, 0);
  return min_auction + rng.NextInt(max_auction - min_auction + 1 + kIdLead);
}

std::string_view NexmarkGenerator::NextExtra(Rng& rng, int64_t current_size,
                                             int64_t avg_size) const {
  if (current_size > avg_size) return {};
  const int64_t d = avg_size - current_size;
  // As the reference generator rounds (see PriceFromUniformExact).
  // NOLINTNEXTLINE(bugprone-incorrect-roundings)
  const auto delta = static_cast<int64_t>(0.2 * static_cast<double>(d) + 0.5);
  const int64_t len = d - delta + (delta == 0 ? 0 : rng.NextInt(2 * delta));
  const int64_t offset = rng.NextInt(kPoolSize - len);
  return tables_->pool().substr(static_cast<size_t>(offset), static_cast<size_t>(len));
}

void NexmarkGenerator::GeneratePerson(const EventIds& ids, int64_t time, Rng& rng,
                                      Person* p) const {
  p->id = ids.last_person + kFirstPersonId;
  const auto first = static_cast<int>(rng.NextInt(static_cast<int64_t>(kFirstNames.size())));
  const auto last = static_cast<int>(rng.NextInt(static_cast<int64_t>(kLastNames.size())));
  p->name = tables_->person_name(first, last);

  std::string& email = p->email_address;
  NextString(rng, 7, ' ', &email);
  email += '@';
  AppendNextString(rng, 5, ' ', &email);
  email += ".com";

  std::string& card = p->credit_card;
  card.resize(19);
  for (int group = 0; group < 4; ++group) {
    Write4Digits(rng.NextInt(10000), card.data() + group * 5);
    if (group < 3) card[static_cast<size_t>(group) * 5 + 4] = ' ';
  }
  p->city = kCities[static_cast<size_t>(rng.NextInt(static_cast<int64_t>(kCities.size())))];
  p->state = kStates[static_cast<size_t>(rng.NextInt(static_cast<int64_t>(kStates.size())))];
  const auto current = static_cast<int64_t>(8 + p->name.size() + email.size() + card.size() +
                                            p->city.size() + p->state.size());
  p->extra = NextExtra(rng, current, config_.avg_person_byte_size);
  p->date_time = time;
}

void NexmarkGenerator::GenerateAuction(const EventIds& ids, int64_t number, int64_t time, Rng& rng,
                                       Auction* a) const {
  a->id = ids.last_auction + kFirstAuctionId;
  int64_t seller;
  if (rng.NextInt(config_.hot_sellers_ratio) > 0) {
    seller = (ids.last_person / kHotEntityBlock) * kHotEntityBlock;
  } else {
    seller = NextPersonId(ids.last_person, rng);
  }
  a->seller = seller + kFirstPersonId;
  a->category = kFirstCategoryId + rng.NextInt(kNumCategories);
  a->initial_bid = PriceFromUniform(rng.NextDouble());
  const int64_t horizon = TimestampForNumber(number + auction_horizon_events_) - time;
  a->expires = time + 1 + rng.NextInt(std::max<int64_t>(2 * horizon, 1));
  NextString(rng, 20, ' ', &a->item_name);
  NextString(rng, 100, ' ', &a->description);
  a->reserve = a->initial_bid + PriceFromUniform(rng.NextDouble());
  const auto current = static_cast<int64_t>(8 + a->item_name.size() + a->description.size() + 40);
  a->extra = NextExtra(rng, current, config_.avg_auction_byte_size);
  a->date_time = time;
}

void NexmarkGenerator::GenerateBid(const EventIds& ids, int64_t time, Rng& rng, Bid* b) const {
  int64_t auction;
  if (rng.NextInt(config_.hot_auction_ratio) > 0) {
    auction = (ids.last_auction / kHotEntityBlock) * kHotEntityBlock;
  } else {
    auction = NextAuctionId(ids.last_auction, rng);
  }
  b->auction = auction + kFirstAuctionId;
  int64_t bidder;
  if (rng.NextInt(config_.hot_bidders_ratio) > 0) {
    bidder = (ids.last_person / kHotEntityBlock) * kHotEntityBlock + 1;
  } else {
    bidder = NextPersonId(ids.last_person, rng);
  }
  b->bidder = bidder + kFirstPersonId;
  b->price = PriceFromUniform(rng.NextDouble());
  if (rng.NextInt(kHotChannelsRatio) > 0) {
    const auto i = static_cast<int>(rng.NextInt(kNumHotChannels));
    b->channel = kHotChannels[static_cast<size_t>(i)];
    b->url = tables_->hot_url(i);
  } else {
    const auto c = static_cast<int>(rng.NextInt(kNumChannels));
    b->channel = tables_->channel_name(c);
    b->url = tables_->channel_url(c);
  }
  b->extra = NextExtra(rng, 32, config_.avg_bid_byte_size);
  b->date_time = time;
}

void NexmarkGenerator::GenerateEvent(int64_t index, NexmarkEvent* event) const {
  const int64_t number = EventNumber(index);
  const int64_t event_id = config_.first_event_id + number;
  SLUICE_DCHECK(event_id < (int64_t{1} << 62));
  const int64_t time = TimestampForNumber(number);
  Rng rng = Rng::ForEvent(config_.seed, event_id);
  // One division for the kind and both "newest entity" ids (the spec's helpers, inlined).
  const int64_t epoch = event_id / total_proportion_;
  const int64_t offset = event_id - epoch * total_proportion_;
  const int64_t pp = config_.person_proportion;
  const int64_t ap = config_.auction_proportion;
  EventIds ids;
  ids.last_person = epoch * pp + std::min(offset, pp - 1);
  if (offset < pp) {
    ids.last_auction = (epoch - 1) * ap + ap - 1;
  } else if (offset >= pp + ap) {
    ids.last_auction = epoch * ap + ap - 1;
  } else {
    ids.last_auction = epoch * ap + (offset - pp);
  }
  SLUICE_DCHECK(ids.last_person == LastPersonId(event_id));
  SLUICE_DCHECK(ids.last_auction == LastAuctionId(event_id));
  event->event_id = event_id;
  event->event_number = number;
  if (offset < pp) {
    event->kind = EventKind::kPerson;
    GeneratePerson(ids, time, rng, &event->person);
  } else if (offset < pp + ap) {
    event->kind = EventKind::kAuction;
    GenerateAuction(ids, number, time, rng, &event->auction);
  } else {
    event->kind = EventKind::kBid;
    GenerateBid(ids, time, rng, &event->bid);
  }
}

void NexmarkGenerator::AppendToBatch(const NexmarkEvent& e, NexmarkBatch* batch) const {
  batch->kinds.push_back(e.kind);
  switch (e.kind) {
    case EventKind::kPerson: {
      PersonColumns& c = batch->persons;
      const Person& p = e.person;
      c.event_id.push_back(e.event_id);
      c.id.push_back(p.id);
      c.name.AppendStable(p.name);
      c.email_address.AppendCopy(p.email_address, &batch->arena);
      c.credit_card.AppendCopy(p.credit_card, &batch->arena);
      c.city.AppendStable(p.city);
      c.state.AppendStable(p.state);
      c.date_time.push_back(p.date_time);
      c.extra.AppendStable(p.extra);
      break;
    }
    case EventKind::kAuction: {
      AuctionColumns& c = batch->auctions;
      const Auction& a = e.auction;
      c.event_id.push_back(e.event_id);
      c.id.push_back(a.id);
      c.item_name.AppendCopy(a.item_name, &batch->arena);
      c.description.AppendCopy(a.description, &batch->arena);
      c.initial_bid.push_back(a.initial_bid);
      c.reserve.push_back(a.reserve);
      c.date_time.push_back(a.date_time);
      c.expires.push_back(a.expires);
      c.seller.push_back(a.seller);
      c.category.push_back(a.category);
      c.extra.AppendStable(a.extra);
      break;
    }
    case EventKind::kBid: {
      BidColumns& c = batch->bids;
      const Bid& b = e.bid;
      c.event_id.push_back(e.event_id);
      c.auction.push_back(b.auction);
      c.bidder.push_back(b.bidder);
      c.price.push_back(b.price);
      c.channel.AppendStable(b.channel);
      c.url.AppendStable(b.url);
      c.date_time.push_back(b.date_time);
      c.extra.AppendStable(b.extra);
      break;
    }
  }
}

void NexmarkGenerator::GenerateBatch(int64_t first_index, int64_t count,
                                     NexmarkBatch* batch) const {
  GeneratePartitionBatch(0, 1, first_index, count, batch);
}

void NexmarkGenerator::GenerateKindBatch(EventKind kind, int64_t first_index, int64_t count,
                                         NexmarkBatch* batch) const {
  SLUICE_DCHECK(first_index >= 0 && count >= 0);
  batch->Clear();
  batch->keep_alive = tables_;
  batch->first_index = first_index;
  batch->num_events = count;
  for (int64_t index = first_index; index < first_index + count; ++index) {
    if (KindOf(index) != kind) continue;
    GenerateEvent(index, &batch->scratch);
    AppendToBatch(batch->scratch, batch);
  }
}

void NexmarkGenerator::GeneratePartitionBatch(int64_t partition, int64_t num_partitions,
                                              int64_t first_offset, int64_t count,
                                              NexmarkBatch* batch) const {
  SLUICE_DCHECK(num_partitions >= 1 && partition >= 0 && partition < num_partitions);
  SLUICE_DCHECK(first_offset >= 0 && count >= 0);
  batch->Clear();
  batch->keep_alive = tables_;
  batch->first_index = first_offset;
  batch->num_events = count;
  batch->kinds.reserve(static_cast<size_t>(count));
  for (int64_t j = 0; j < count; ++j) {
    GenerateEvent(PartitionIndex(partition, num_partitions, first_offset + j), &batch->scratch);
    AppendToBatch(batch->scratch, batch);
  }
}

}  // namespace sluice::nexmark
