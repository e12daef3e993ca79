#include "sources/nexmark/nexmark_generator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "sources/nexmark/nexmark_json.h"
#include "sources/nexmark/nexmark_rng.h"

namespace sluice::nexmark {
namespace {

std::unique_ptr<NexmarkGenerator> MustOpen(const NexmarkConfig& config) {
  auto gen = NexmarkGenerator::Open(config);
  EXPECT_TRUE(gen.ok()) << gen.status().ToString();
  return std::move(gen).ValueOrDie();
}

// The event as one JSON line: a complete, comparable rendering of every field.
std::string Render(const NexmarkEvent& e) {
  JsonFormatter f;
  std::string out = std::to_string(e.event_id) + " ";
  f.AppendEvent(e, &out);
  return out;
}

// Row j of a batch rendered like Render, from the columns only.
std::vector<std::string> RenderBatch(const NexmarkBatch& b) {
  std::vector<std::string> out;
  size_t pi = 0, ai = 0, bi = 0;
  for (EventKind kind : b.kinds) {
    NexmarkEvent e;
    e.kind = kind;
    switch (kind) {
      case EventKind::kPerson: {
        const PersonColumns& c = b.persons;
        e.event_id = c.event_id[pi];
        e.person.id = c.id[pi];
        e.person.name = c.name[pi];
        e.person.email_address = std::string(c.email_address[pi]);
        e.person.credit_card = std::string(c.credit_card[pi]);
        e.person.city = c.city[pi];
        e.person.state = c.state[pi];
        e.person.date_time = c.date_time[pi];
        e.person.extra = c.extra[pi];
        ++pi;
        break;
      }
      case EventKind::kAuction: {
        const AuctionColumns& c = b.auctions;
        e.event_id = c.event_id[ai];
        e.auction.id = c.id[ai];
        e.auction.item_name = std::string(c.item_name[ai]);
        e.auction.description = std::string(c.description[ai]);
        e.auction.initial_bid = c.initial_bid[ai];
        e.auction.reserve = c.reserve[ai];
        e.auction.date_time = c.date_time[ai];
        e.auction.expires = c.expires[ai];
        e.auction.seller = c.seller[ai];
        e.auction.category = c.category[ai];
        e.auction.extra = c.extra[ai];
        ++ai;
        break;
      }
      case EventKind::kBid: {
        const BidColumns& c = b.bids;
        e.event_id = c.event_id[bi];
        e.bid.auction = c.auction[bi];
        e.bid.bidder = c.bidder[bi];
        e.bid.price = c.price[bi];
        e.bid.channel = c.channel[bi];
        e.bid.url = c.url[bi];
        e.bid.date_time = c.date_time[bi];
        e.bid.extra = c.extra[bi];
        ++bi;
        break;
      }
    }
    out.push_back(Render(e));
  }
  EXPECT_EQ(pi, b.persons.size());
  EXPECT_EQ(ai, b.auctions.size());
  EXPECT_EQ(bi, b.bids.size());
  return out;
}

std::vector<std::string> Sequential(const NexmarkGenerator& gen, int64_t first, int64_t n) {
  std::vector<std::string> out;
  NexmarkEvent e;
  for (int64_t k = first; k < first + n; ++k) {
    gen.GenerateEvent(k, &e);
    out.push_back(Render(e));
  }
  return out;
}

TEST(NexmarkRngTest, SplitMix64KnownValues) {
  // SplitMix64 from state 0 (Vigna's reference implementation).
  Rng rng(0);
  EXPECT_EQ(rng.Next64(), 0xE220A8397B1DCDAFULL);
  EXPECT_EQ(rng.Next64(), 0x6E789E6AA1B965F4ULL);
  EXPECT_EQ(rng.Next64(), 0x06C45D188009454FULL);
}

TEST(NexmarkRngTest, NextIntIsInRangeAndExactForLargeBounds) {
  Rng rng(42);
  for (int i = 0; i < 10000; ++i) {
    const int64_t v = rng.NextInt(13);
    ASSERT_GE(v, 0);
    ASSERT_LT(v, 13);
  }
  // m >= 2^32: ((x >> 32) * m) >> 32 with a big-integer product.
  Rng a(7), b(7);
  const int64_t m = int64_t{6} << 40;
  const uint64_t hi = b.Next64() >> 32;
  __extension__ using U128 = unsigned __int128;
  EXPECT_EQ(a.NextInt(m), static_cast<int64_t>((static_cast<U128>(hi) * m) >> 32));
  EXPECT_EQ(Rng(1).NextInt(0), 0);
}

TEST(NexmarkGeneratorTest, SameEventWhateverBatchBoundaries) {
  auto gen = MustOpen(NexmarkConfig{});
  const int64_t n = 20000;
  const std::vector<std::string> expected = Sequential(*gen, 0, n);
  std::mt19937_64 rnd(1);
  NexmarkBatch batch;  // reused across batches, as the engine will
  std::vector<std::string> got;
  int64_t k = 0;
  while (k < n) {
    const int64_t count = std::min<int64_t>(n - k, static_cast<int64_t>(rnd() % 3000));
    gen->GenerateBatch(k, count, &batch);
    ASSERT_EQ(batch.first_index, k);
    ASSERT_EQ(batch.num_events, count);
    ASSERT_EQ(batch.kinds.size(), static_cast<size_t>(count));
    for (std::string& s : RenderBatch(batch)) got.push_back(std::move(s));
    k += count;
  }
  EXPECT_EQ(got, expected);

  // Random access in any order and from a fresh generator gives the same events.
  auto other = MustOpen(NexmarkConfig{});
  NexmarkEvent e;
  for (int i = 0; i < 2000; ++i) {
    const auto idx = static_cast<int64_t>(rnd() % n);
    other->GenerateEvent(idx, &e);
    ASSERT_EQ(Render(e), expected[static_cast<size_t>(idx)]) << "index " << idx;
  }
}

TEST(NexmarkGeneratorTest, ReaderPartitionsUnionIsTheStream) {
  NexmarkConfig config;
  config.first_event_id = 17;
  auto gen = MustOpen(config);
  const int64_t n = 12000;
  const std::vector<std::string> expected = Sequential(*gen, 0, n);
  for (int64_t parts : {1, 2, 3, 7}) {
    std::vector<std::string> merged(static_cast<size_t>(n));
    NexmarkBatch batch;
    for (int64_t p = 0; p < parts; ++p) {
      const int64_t share = (n - p + parts - 1) / parts;  // offsets j with p + j*parts < n
      int64_t j = 0;
      while (j < share) {
        const int64_t count = std::min<int64_t>(share - j, 777);
        gen->GeneratePartitionBatch(p, parts, j, count, &batch);
        const std::vector<std::string> rows = RenderBatch(batch);
        for (int64_t r = 0; r < count; ++r) {
          merged[static_cast<size_t>(PartitionIndex(p, parts, j + r))] =
              rows[static_cast<size_t>(r)];
        }
        j += count;
      }
    }
    EXPECT_EQ(merged, expected) << parts << " partitions";
  }
}

TEST(NexmarkGeneratorTest, KindBatchesPartitionTheStream) {
  NexmarkConfig config;
  config.first_event_id = 3;
  config.out_of_order_group_size = 7;  // kinds follow the permuted ids
  auto gen = MustOpen(config);
  const int64_t first = 1234, n = 5000;
  const std::vector<std::string> expected = Sequential(*gen, first, n);
  std::vector<std::string> merged;
  size_t total = 0;
  NexmarkBatch batch;
  std::vector<std::vector<std::string>> per_kind;
  for (EventKind kind : {EventKind::kPerson, EventKind::kAuction, EventKind::kBid}) {
    gen->GenerateKindBatch(kind, first, n, &batch);
    EXPECT_EQ(batch.first_index, first);
    EXPECT_EQ(batch.num_events, n);
    for (EventKind k : batch.kinds) ASSERT_EQ(k, kind);
    per_kind.push_back(RenderBatch(batch));
    total += per_kind.back().size();
    EXPECT_GT(per_kind.back().size(), 0u);
  }
  EXPECT_EQ(total, static_cast<size_t>(n));
  // Each kind's rows are the stream's events of that kind, in stream order.
  NexmarkEvent e;
  std::vector<size_t> next(3, 0);
  for (int64_t k = first; k < first + n; ++k) {
    gen->GenerateEvent(k, &e);
    const auto kind = static_cast<size_t>(e.kind);
    ASSERT_LT(next[kind], per_kind[kind].size());
    ASSERT_EQ(per_kind[kind][next[kind]++], expected[static_cast<size_t>(k - first)]) << k;
  }
}

TEST(NexmarkGeneratorTest, KindMixPerBlock) {
  for (auto [pp, ap, bp] : {std::tuple{1, 3, 46}, std::tuple{2, 5, 33}}) {
    NexmarkConfig config;
    config.person_proportion = pp;
    config.auction_proportion = ap;
    config.bid_proportion = bp;
    auto gen = MustOpen(config);
    const int64_t p = pp + ap + bp;
    NexmarkBatch batch;
    gen->GenerateBatch(0, p * 400, &batch);
    EXPECT_EQ(batch.persons.size(), static_cast<size_t>(pp * 400));
    EXPECT_EQ(batch.auctions.size(), static_cast<size_t>(ap * 400));
    EXPECT_EQ(batch.bids.size(), static_cast<size_t>(bp * 400));
    for (int64_t k = 0; k < p * 400; ++k) {
      const int64_t r = k % p;
      const EventKind want = r < pp        ? EventKind::kPerson
                             : r < pp + ap ? EventKind::kAuction
                                           : EventKind::kBid;
      ASSERT_EQ(batch.kinds[static_cast<size_t>(k)], want) << k;
      ASSERT_EQ(gen->KindOf(k), want);
    }
  }
}

TEST(NexmarkGeneratorTest, IdsAndFieldRanges) {
  auto gen = MustOpen(NexmarkConfig{});
  const int64_t n = 200000;
  NexmarkBatch batch;
  gen->GenerateBatch(0, n, &batch);

  // People and auctions are dense, in order, from 1000.
  for (size_t i = 0; i < batch.persons.size(); ++i) {
    ASSERT_EQ(batch.persons.id[i], 1000 + static_cast<int64_t>(i));
    ASSERT_EQ(batch.persons.credit_card[i].size(), 19u);
    ASSERT_EQ(batch.persons.credit_card[i][4], ' ');
    ASSERT_NE(batch.persons.email_address[i].find('@'), std::string_view::npos);
  }
  for (size_t i = 0; i < batch.auctions.size(); ++i) {
    const AuctionColumns& a = batch.auctions;
    ASSERT_EQ(a.id[i], 1000 + static_cast<int64_t>(i));
    ASSERT_GE(a.category[i], 10);
    ASSERT_LE(a.category[i], 14);
    ASSERT_GE(a.initial_bid[i], 100);
    ASSERT_LE(a.initial_bid[i], 100000000);
    ASSERT_GE(a.reserve[i], a.initial_bid[i] + 100);
    ASSERT_GT(a.expires[i], a.date_time[i]);
    ASSERT_LT(a.item_name[i].size(), 20u);
    ASSERT_LT(a.description[i].size(), 100u);
    const int64_t last_person = gen->LastPersonId(a.event_id[i]);
    ASSERT_GE(a.seller[i], 1000);
    ASSERT_LE(a.seller[i], 1000 + last_person + kIdLead);
  }
  // Bids: hot shares near 1/2 and 3/4, references within the live windows.
  int64_t hot_auction = 0, hot_bidder = 0, hot_channel = 0;
  const BidColumns& b = batch.bids;
  for (size_t i = 0; i < b.size(); ++i) {
    const int64_t last_auction = gen->LastAuctionId(b.event_id[i]);
    const int64_t last_person = gen->LastPersonId(b.event_id[i]);
    ASSERT_GE(b.auction[i], 1000 + std::max<int64_t>(last_auction - 100, 0));
    ASSERT_LE(b.auction[i], 1000 + last_auction + kIdLead);
    ASSERT_GE(b.bidder[i], 1000 + std::max<int64_t>(last_person + 1 - 1000, 0));
    ASSERT_LE(b.bidder[i], 1000 + last_person + kIdLead);
    ASSERT_GE(b.price[i], 100);
    ASSERT_LE(b.price[i], 100000000);
    ASSERT_GE(b.extra[i].size(), 54u);
    ASSERT_LE(b.extra[i].size(), 81u);
    hot_auction += b.auction[i] == 1000 + (last_auction / 100) * 100;
    hot_bidder += b.bidder[i] == 1000 + (last_person / 100) * 100 + 1;
    if (b.channel[i].substr(0, 8) != "channel-") {
      ++hot_channel;
    } else {
      ASSERT_NE(b.url[i].find("https://www.nexmark.com/"), std::string_view::npos);
    }
  }
  const double bids = static_cast<double>(b.size());
  EXPECT_NEAR(hot_auction / bids, 0.505, 0.02);  // spec §2.8: 50.5 % on 200 000 events
  EXPECT_NEAR(hot_bidder / bids, 0.753, 0.02);   // 75.3 %
  EXPECT_NEAR(hot_channel / bids, 0.5, 0.02);
}

TEST(NexmarkGeneratorTest, TimestampsFollowTheEventTimeRate) {
  NexmarkConfig config;
  config.events_per_second = 3;
  config.num_event_generators = 2;
  config.first_event_number = 5;
  auto gen = MustOpen(config);
  // (n * 2 * 1000) / 3 ms after base.
  EXPECT_EQ(gen->EventTime(0), config.base_time_ms + 5 * 2000 / 3);
  EXPECT_EQ(gen->EventTime(10), config.base_time_ms + 15 * 2000 / 3);
  // Past the 64-bit product: exact 128-bit arithmetic.
  const int64_t big = int64_t{1} << 61;
  __extension__ using U128 = unsigned __int128;
  EXPECT_EQ(gen->TimestampForNumber(big),
            config.base_time_ms + static_cast<int64_t>(static_cast<U128>(big) * 2000 / 3));

  auto def = MustOpen(NexmarkConfig{});
  for (int64_t k = 1; k < 100000; ++k) ASSERT_GE(def->EventTime(k), def->EventTime(k - 1));
  EXPECT_EQ(def->EventTime(100000), def->config().base_time_ms + 1000);  // 100 K ev/s
}

TEST(NexmarkGeneratorTest, EventsDueByInvertsTheTimestamp) {
  for (int64_t rate : {1, 3, 1000, 100000, 10000000}) {
    NexmarkConfig config;
    config.events_per_second = rate;
    config.num_event_generators = rate == 3 ? 4 : 1;
    config.first_event_number = rate == 1000 ? 7 : 0;
    auto gen = MustOpen(config);
    std::mt19937_64 rnd(static_cast<uint64_t>(rate));
    EXPECT_EQ(gen->EventsDueBy(config.base_time_ms - 1), 0);
    EXPECT_GT(gen->EventsDueBy(std::numeric_limits<int64_t>::max()), int64_t{1} << 40);
    for (int i = 0; i < 2000; ++i) {
      const int64_t t = config.base_time_ms + static_cast<int64_t>(rnd() % 100000);
      const int64_t c = gen->EventsDueBy(t);
      if (c > 0) {
        ASSERT_LE(gen->EventTime(c - 1), t) << rate << " " << t;
      }
      ASSERT_GT(gen->EventTime(c), t) << rate << " " << t;
    }
  }
}

TEST(NexmarkGeneratorTest, OutOfOrderGroupsPermuteWithinGroups) {
  NexmarkConfig config;
  config.out_of_order_group_size = 16;
  auto gen = MustOpen(config);
  for (int64_t group = 0; group < 50; ++group) {
    std::set<int64_t> numbers;
    for (int64_t k = group * 16; k < group * 16 + 16; ++k) numbers.insert(gen->EventNumber(k));
    ASSERT_EQ(numbers.size(), 16u);
    EXPECT_EQ(*numbers.begin(), group * 16);
    EXPECT_EQ(*numbers.rbegin(), group * 16 + 15);
  }
  EXPECT_NE(gen->EventNumber(1), 1);  // actually permuted: 953 mod 16 = 9
  // The watermark never passes a later event's time.
  for (int64_t k = 0; k < 3000; ++k) {
    for (int64_t later = k; later < k + 40; ++later) {
      ASSERT_LE(gen->WatermarkAfter(k), gen->EventTime(later));
    }
  }
  // EventsDueBy counts whole groups only.
  const int64_t c = gen->EventsDueBy(config.base_time_ms + 5);
  EXPECT_EQ(c % 16, 0);
  for (int64_t k = 0; k < c; ++k) ASSERT_LE(gen->EventTime(k), config.base_time_ms + 5);
}

TEST(NexmarkGeneratorTest, FlinkSplitGivesDisjointIdRangesWithSameContent) {
  NexmarkConfig config;
  config.max_events = 100003;
  auto split = SplitConfig(config, 4);
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  ASSERT_EQ(split->size(), 4u);
  int64_t next_id = 0;
  auto base = MustOpen(config);
  NexmarkEvent sub_event, base_event;
  for (const NexmarkConfig& sub : *split) {
    EXPECT_EQ(sub.num_event_generators, 4);
    EXPECT_EQ(sub.first_event_id, next_id);
    next_id += sub.max_events;
    auto gen = MustOpen(sub);
    // Same id => same non-time content; times run on the sub-generator's own timeline.
    for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{4}, int64_t{4999}, sub.max_events - 1}) {
      gen->GenerateEvent(k, &sub_event);
      base->GenerateEvent(sub_event.event_id, &base_event);
      ASSERT_EQ(sub_event.kind, base_event.kind);
      EXPECT_EQ(gen->EventTime(k), sub.base_time_ms + k * 4 * 1000 / sub.events_per_second);
      if (sub_event.kind == EventKind::kBid) {
        EXPECT_EQ(sub_event.bid.auction, base_event.bid.auction);
        EXPECT_EQ(sub_event.bid.price, base_event.bid.price);
        EXPECT_EQ(sub_event.bid.extra, base_event.bid.extra);
      } else if (sub_event.kind == EventKind::kAuction) {
        EXPECT_EQ(sub_event.auction.description, base_event.auction.description);
      } else {
        EXPECT_EQ(sub_event.person.email_address, base_event.person.email_address);
      }
    }
  }
  EXPECT_EQ(next_id, 100003);
  EXPECT_EQ((*split)[3].max_events, 100003 - 3 * 25000);

  auto unbounded = SplitConfig(NexmarkConfig{}, 2);
  ASSERT_TRUE(unbounded.ok());
  EXPECT_EQ((*unbounded)[1].first_event_id, UnboundedMaxEvents(NexmarkConfig{}) / 2);
  EXPECT_TRUE(SplitConfig((*unbounded)[0], 2).status().IsInvalidArgument());
  EXPECT_TRUE(SplitConfig(NexmarkConfig{}, 0).status().IsInvalidArgument());
}

TEST(NexmarkGeneratorTest, SeedChangesTheData) {
  NexmarkConfig other;
  other.seed = 1;
  auto a = MustOpen(NexmarkConfig{});
  auto b = MustOpen(other);
  EXPECT_NE(Sequential(*a, 0, 100), Sequential(*b, 0, 100));
  EXPECT_NE(a->tables().pool(), b->tables().pool());
}

TEST(NexmarkGeneratorTest, PricesAreLogUniformCents) {
  EXPECT_EQ(PriceFromUniform(0.0), 100);
  EXPECT_EQ(PriceFromUniform(0.5), 100000);
  EXPECT_EQ(PriceFromUniform(1.0 - 0x1.0p-53), 100000000);
}

TEST(NexmarkGeneratorTest, FastPriceEqualsTheExactFormula) {
  // Random draws as the generator makes them, plus u values whose exact price sits right at an
  // integer boundary (the cases the fast path must hand to the exact one).
  Rng rng(2024);
  for (int i = 0; i < 4000000; ++i) {
    const double u = rng.NextDouble();
    ASSERT_EQ(PriceFromUniform(u), PriceFromUniformExact(u)) << "u = " << u;
  }
  for (int64_t price = 100; price <= 100000000; price = price * 1009 / 1000 + 1) {
    // u with 10^(6u) * 100 close to price - 0.5 (where the rounding flips).
    const double u0 = std::log10((static_cast<double>(price) - 0.5) / 100.0) / 6.0;
    if (u0 < 0.0) continue;  // below price 100.5: no boundary inside [0, 1)
    double u = u0;
    for (int step = 0; step < 64 && u < 1.0; ++step) {
      ASSERT_EQ(PriceFromUniform(u), PriceFromUniformExact(u)) << "u = " << u;
      u = std::nextafter(u, 2.0);
    }
    u = u0;
    for (int step = 0; step < 64 && u >= 0.0; ++step) {
      ASSERT_EQ(PriceFromUniform(u), PriceFromUniformExact(u)) << "u = " << u;
      u = std::nextafter(u, -1.0);
    }
  }
}

TEST(NexmarkConfigTest, ValidateRejectsOutOfRange) {
  EXPECT_TRUE(NexmarkConfig{}.Validate().ok());
  auto bad = [](auto mutate) {
    NexmarkConfig c;
    mutate(c);
    return c.Validate();
  };
  EXPECT_TRUE(bad([](NexmarkConfig& c) { c.events_per_second = 0; }).IsInvalidArgument());
  EXPECT_TRUE(bad([](NexmarkConfig& c) { c.num_event_generators = 0; }).IsInvalidArgument());
  EXPECT_TRUE(bad([](NexmarkConfig& c) { c.base_time_ms = -1; }).IsInvalidArgument());
  EXPECT_TRUE(bad([](NexmarkConfig& c) { c.first_event_id = -1; }).IsInvalidArgument());
  EXPECT_TRUE(bad([](NexmarkConfig& c) { c.person_proportion = 0; }).IsInvalidArgument());
  EXPECT_TRUE(bad([](NexmarkConfig& c) { c.hot_bidders_ratio = 0; }).IsInvalidArgument());
  EXPECT_TRUE(bad([](NexmarkConfig& c) { c.num_active_people = 0; }).IsInvalidArgument());
  EXPECT_TRUE(bad([](NexmarkConfig& c) { c.avg_bid_byte_size = kPoolSize; }).IsInvalidArgument());
  EXPECT_TRUE(bad([](NexmarkConfig& c) { c.out_of_order_group_size = 953; }).IsInvalidArgument());
  const Status s = bad([](NexmarkConfig& c) { c.hot_auction_ratio = -3; });
  EXPECT_NE(s.message().find("hot_auction_ratio"), std::string::npos) << s.ToString();
  EXPECT_TRUE(NexmarkGenerator::Open([] {
                NexmarkConfig c;
                c.events_per_second = -5;
                return c;
              }())
                  .status()
                  .IsInvalidArgument());
}

}  // namespace
}  // namespace sluice::nexmark
