#include "sources/nexmark/nexmark_source.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "sources/source_factory.h"
#include "sources/test_util.h"

namespace sluice::sources {
namespace {

using nexmark::EventKind;
using nexmark::NexmarkEvent;
using Options = std::map<std::string, std::string>;

class NexmarkSourceTest : public testing::SourceTest {
 protected:
  std::unique_ptr<Source> Open(Options options, Clock* clock = nullptr,
                               const std::string& dir = "") {
    auto s = CreateSource("nexmark", Ctx(dir, std::move(options), clock));
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? s.MoveValueUnsafe() : nullptr;
  }
  Status OpenError(Options options) {
    auto s = CreateSource("nexmark", Ctx("", std::move(options)));
    return s.ok() ? Status::OK() : s.status();
  }
  // DuckDB's rendering of a TIMESTAMPTZ of `ms` milliseconds since the epoch.
  std::string Time(int64_t ms) {
    engine::Batch b = Sql("SELECT CAST(to_timestamp(0) + to_microseconds(" +
                          std::to_string(ms * 1000) + ") AS VARCHAR)");
    return b.GetString(0, 0).value_or("NULL");
  }
  // The row the source must give for `e`, rendered as testing::Rows does.
  std::string Expected(const NexmarkEvent& e) {
    auto s = [](auto v) { return std::string(v); };
    auto i = [](int64_t v) { return std::to_string(v); };
    switch (e.kind) {
      case EventKind::kPerson: {
        const auto& p = e.person;
        return i(p.id) + "|" + s(p.name) + "|" + p.email_address + "|" + p.credit_card + "|" +
               s(p.city) + "|" + s(p.state) + "|" + Time(p.date_time) + "|" + s(p.extra);
      }
      case EventKind::kAuction: {
        const auto& a = e.auction;
        return i(a.id) + "|" + a.item_name + "|" + a.description + "|" + i(a.initial_bid) + "|" +
               i(a.reserve) + "|" + Time(a.date_time) + "|" + Time(a.expires) + "|" + i(a.seller) +
               "|" + i(a.category) + "|" + s(a.extra);
      }
      case EventKind::kBid: {
        const auto& b = e.bid;
        return i(b.auction) + "|" + i(b.bidder) + "|" + i(b.price) + "|" + s(b.channel) + "|" +
               s(b.url) + "|" + Time(b.date_time) + "|" + s(b.extra);
      }
    }
    return "";
  }
  testing::TempDir dir_;
};

TEST_F(NexmarkSourceTest, RowsAreTheGeneratorsEventsOfTheKind) {
  const Options gen = {{"eventsPerSecond", "1000"}, {"firstEventId", "7"}};
  auto reference = nexmark::NexmarkGenerator::Open([] {
    nexmark::NexmarkConfig c;
    c.events_per_second = 1000;
    c.first_event_id = 7;
    return c;
  }());
  ASSERT_TRUE(reference.ok());
  const int64_t n = 300;
  for (const char* kind : {"person", "auction", "bid"}) {
    Options o = gen;
    o["KIND"] = kind;  // option names are case-insensitive
    auto src = Open(o);
    ASSERT_NE(src, nullptr);
    std::vector<std::string> expected;
    NexmarkEvent e;
    for (int64_t k = 40; k < n; ++k) {
      (*reference)->GenerateEvent(k, &e);
      if (std::string(nexmark::EventKind::kPerson == e.kind    ? "person"
                      : nexmark::EventKind::kAuction == e.kind ? "auction"
                                                               : "bid") == kind) {
        expected.push_back(Expected(e));
      }
    }
    EXPECT_EQ(Get(src.get(), "40", std::to_string(n)), expected) << kind;
  }
}

TEST_F(NexmarkSourceTest, SchemasUseTheSpecsColumnNames) {
  auto names = [](const engine::Schema& s) {
    std::string out;
    for (const auto& f : s)
      out += f.name + (f.type.id == engine::TypeId::kTimestampTz ? "@ " : " ");
    return out;
  };
  EXPECT_EQ(names(NexmarkKindSchema(EventKind::kBid)),
            "auction bidder price channel url dateTime@ extra ");
  EXPECT_EQ(names(NexmarkKindSchema(EventKind::kPerson)),
            "id name emailAddress creditCard city state dateTime@ extra ");
  EXPECT_EQ(names(NexmarkKindSchema(EventKind::kAuction)),
            "id itemName description initialBid reserve dateTime@ expires@ seller category extra ");
  auto src = Open({});  // kind defaults to bid
  ASSERT_NE(src, nullptr);
  EXPECT_EQ(src->schema(), NexmarkKindSchema(EventKind::kBid));
}

TEST_F(NexmarkSourceTest, KindsPartitionTheStreamAndBatchesAreDeterministic) {
  const int64_t n = 20000;
  int64_t total = 0;
  for (const char* kind : {"person", "auction", "bid"}) {
    auto src = Open({{"kind", kind}, {"numEvents", std::to_string(n)}});
    ASSERT_NE(src, nullptr);
    auto whole = src->GetBatch(std::nullopt, std::to_string(n));
    ASSERT_TRUE(whole.ok()) << whole.status().ToString();
    total += whole->num_rows();
    // The same range again, and the range in two batches, give the same rows.
    const std::string m = "3000";
    auto once = Get(src.get(), "100", m);
    EXPECT_EQ(Get(src.get(), "100", m), once);
    auto first = Get(src.get(), "100", "1234");
    auto second = Get(src.get(), "1234", m);
    first.insert(first.end(), second.begin(), second.end());
    EXPECT_EQ(first, once) << kind;
    // An empty range is an empty batch with the schema.
    auto empty = src->GetBatch("77", "77");
    ASSERT_TRUE(empty.ok());
    EXPECT_EQ(empty->num_rows(), 0);
    EXPECT_EQ(empty->num_columns(), src->schema().size());
  }
  EXPECT_EQ(total, n);  // 1:3:46 of 20,000 = 400 + 1,200 + 18,400
}

TEST_F(NexmarkSourceTest, OffsetsAreEventIndexesBoundedByNumEvents) {
  auto src = Open({{"numEvents", "2500"}, {"maxEventsPerTrigger", "1000"}});
  ASSERT_NE(src, nullptr);
  EXPECT_EQ(Latest(src.get(), std::nullopt), "1000");
  EXPECT_EQ(Latest(src.get(), "1000"), "2000");
  EXPECT_EQ(Latest(src.get(), "2000"), "2500");
  EXPECT_EQ(Latest(src.get(), "2500"), "2500");  // the end: nothing new
  ReadLimit rows;
  rows.max_rows = 10;  // maxOffsetsPerTrigger also caps
  EXPECT_EQ(Latest(src.get(), "1000", rows), "1010");
  ReadLimit all;
  all.all_available = true;
  EXPECT_EQ(Latest(src.get(), std::nullopt, all), "2500");
  // Bad offsets are corruption, naming the offset.
  for (const char* bad : {"x", "-1", "2501", "{\"a\":1}"}) {
    auto r = src->GetBatch(std::nullopt, bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_TRUE(r.status().IsCorruption()) << r.status().ToString();
    EXPECT_NE(r.status().message().find(bad), std::string::npos) << r.status().ToString();
  }
  EXPECT_TRUE(src->GetBatch("20", "10").status().IsInvalidArgument());
  EXPECT_EQ(src->Metrics(std::string("2000")).at("eventsBehindLatest"), "500");

  // Unbounded at max speed: batches of maxEventsPerTrigger forever, also under Trigger.Once.
  auto unbounded = Open({{"maxEventsPerTrigger", "300"}});
  ASSERT_NE(unbounded, nullptr);
  EXPECT_EQ(Latest(unbounded.get(), "1000000000"), "1000000300");
  EXPECT_EQ(Latest(unbounded.get(), std::nullopt, all), "300");
  EXPECT_TRUE(unbounded->Metrics(std::string("300")).empty());
}

TEST_F(NexmarkSourceTest, AvailableNow) {
  auto bounded = Open({{"numEvents", "2500"}, {"maxEventsPerTrigger", "1000"}});
  ASSERT_NE(bounded, nullptr);
  ASSERT_TRUE(bounded->PrepareForAvailableNow().ok());
  EXPECT_EQ(Latest(bounded.get(), std::nullopt), "1000");  // read limits still apply
  EXPECT_EQ(Latest(bounded.get(), "2000"), "2500");
  EXPECT_EQ(Latest(bounded.get(), "2500"), "2500");

  // Unbounded at max speed: one batch from where the query is.
  auto unbounded = Open({{"maxEventsPerTrigger", "400"}});
  ASSERT_NE(unbounded, nullptr);
  ASSERT_TRUE(unbounded->PrepareForAvailableNow().ok());
  EXPECT_EQ(Latest(unbounded.get(), "800"), "1200");
  EXPECT_EQ(Latest(unbounded.get(), "1200"), "1200");
}

TEST_F(NexmarkSourceTest, RateLimitedReleasesEventsAtTheirEventTime) {
  ManualClock clock(5'000'000);
  const Options o = {{"eventsPerSecond", "1000"}, {"rateLimited", "true"}};
  const std::string dir = dir_.path() + "/sources/0";
  auto src = Open(o, &clock, dir);
  ASSERT_NE(src, nullptr);
  // At the start only event 0 (time = baseTime) is due; events are 1 ms apart.
  EXPECT_EQ(Latest(src.get(), std::nullopt), "1");
  clock.Advance(10);
  EXPECT_EQ(Latest(src.get(), "1"), "11");
  clock.Advance(2000);
  ASSERT_TRUE(src->PrepareForAvailableNow().ok());
  clock.Advance(5000);
  ReadLimit all;
  all.all_available = true;
  EXPECT_EQ(Latest(src.get(), "11", all), "2011");  // AvailableNow = the events due then
  EXPECT_EQ(src->Metrics(std::string("2011")).at("eventsBehindLatest"), "5000");
  // A restart keeps the persisted start time.
  ManualClock later(5'000'000 + 100);
  auto restarted = Open(o, &later, dir);
  ASSERT_NE(restarted, nullptr);
  EXPECT_EQ(Latest(restarted.get(), std::nullopt), "101");
  auto start = fs::LocalFileSystem()->ReadFile(dir + "/0");
  ASSERT_TRUE(start.ok());
  EXPECT_EQ(*start, "v1\n0000000000005000000");
}

TEST_F(NexmarkSourceTest, GeneratorOptions) {
  auto src = Open({{"kind", "person"},
                   {"baseTime", "2024-03-01 00:00:00"},
                   {"personProportion", "50"},
                   {"eventsPerSecond", "2"}});
  ASSERT_NE(src, nullptr);
  auto rows = Get(src.get(), std::nullopt, "3");  // every event is a person now
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_NE(rows[1].find("|2024-03-01 00:00:00.5+00|"), std::string::npos) << rows[1];
  auto ms = Open({{"baseTime", "0"}, {"seed", "0x1"}});
  ASSERT_NE(ms, nullptr);
  EXPECT_NE(Get(ms.get(), std::nullopt, "5")[0].find("|1970-01-01 00:00:00+00|"),
            std::string::npos);
}

TEST_F(NexmarkSourceTest, OptionErrorsNameTheOption) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"kind", "trade"},
      {"eventsPerSecond", "0"},
      {"maxEventsPerTrigger", "0"},
      {"numEvents", "-5"},
      {"rateLimited", "maybe"},
      {"seed", "-3"},
      {"baseTime", "not a time"},
      {"eventsPerSec", "10"},
      {"outOfOrderGroupSize", "953"},
      {"firstEventId", "4611686018427387904"}};
  for (const auto& [k, v] : bad) {
    Status st = OpenError({{k, v}});
    ASSERT_FALSE(st.ok()) << k;
    EXPECT_TRUE(st.IsInvalidArgument()) << st.ToString();
    EXPECT_NE(st.message().find("'" + k + "'"), std::string::npos) << st.ToString();
  }
  Status unknown = OpenError({{"eventsPerSec", "10"}});
  EXPECT_NE(unknown.message().find("eventsPerSecond"), std::string::npos) << unknown.ToString();
}

}  // namespace
}  // namespace sluice::sources
