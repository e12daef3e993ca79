#include "sources/rate_source.h"

#include "sources/source_factory.h"
#include "sources/start_time_file.h"
#include "sources/test_util.h"

namespace sluice::sources {
namespace {

class RateSourceTest : public testing::SourceTest {
 protected:
  std::unique_ptr<Source> Open(Clock* clock, std::map<std::string, std::string> options) {
    auto s = CreateSource("rate", Ctx(dir_.path() + "/sources/0", options, clock));
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? s.MoveValueUnsafe() : nullptr;
  }
  testing::TempDir dir_;
};

TEST_F(RateSourceTest, ValueAtSecondRampsUpLinearly) {
  std::vector<int64_t> got;
  for (int64_t s = 0; s <= 6; ++s) got.push_back(RateSource::ValueAtSecond(s, 10, 4));
  EXPECT_EQ(got, (std::vector<int64_t>{0, 2, 6, 12, 20, 30, 40}));
  EXPECT_EQ(RateSource::ValueAtSecond(7, 5, 0), 35);
}

TEST_F(RateSourceTest, OffsetsAreElapsedSecondsAndRowsAreDeterministic) {
  ManualClock clock(1'000'000);
  auto src = Open(&clock, {{"rowsPerSecond", "4"}, {"numPartitions", "2"}});
  ASSERT_NE(src, nullptr);
  ASSERT_EQ(src->schema()[0].type.id, engine::TypeId::kTimestampTz);
  EXPECT_EQ(Latest(src.get(), std::nullopt), "0");
  clock.Advance(2500);
  auto o1 = Latest(src.get(), "0");
  EXPECT_EQ(o1, "2");
  auto rows = Get(src.get(), std::nullopt, *o1);
  // 8 values over 2 s: 250 ms apart, partition 0 (even) first.
  EXPECT_EQ(rows, (std::vector<std::string>{
                      "1970-01-01 00:16:40+00|0", "1970-01-01 00:16:40.5+00|2",
                      "1970-01-01 00:16:41+00|4", "1970-01-01 00:16:41.5+00|6",
                      "1970-01-01 00:16:40.25+00|1", "1970-01-01 00:16:40.75+00|3",
                      "1970-01-01 00:16:41.25+00|5", "1970-01-01 00:16:41.75+00|7"}));
  EXPECT_EQ(Latest(src.get(), o1), o1);
  clock.Advance(1000);
  auto o2 = Latest(src.get(), o1);
  EXPECT_EQ(o2, "3");
  EXPECT_EQ(Get(src.get(), o1, *o2).size(), 4u);
  // A restart at another time keeps the persisted start time, so the rows are the same.
  ManualClock later(5'000'000);
  auto restarted = Open(&later, {{"rowsPerSecond", "4"}, {"numPartitions", "2"}});
  EXPECT_EQ(Get(restarted.get(), std::nullopt, *o1), rows);
  auto start = fs::LocalFileSystem()->ReadFile(dir_.path() + "/sources/0/0");
  ASSERT_TRUE(start.ok());
  EXPECT_EQ(*start, "v1\n0000000000001000000");  // zero-padded: a cut number is detected
}

// Issue 24: a start file cut short read as a wrong start time (a shorter number is still a
// number), so a restart replayed other rows. Every cut is now Corruption naming the file.
TEST_F(RateSourceTest, StartFileCutAtAnyByteIsCorruptionNamingTheFile) {
  const std::string path = dir_.path() + "/sources/0/0";
  for (const std::string& full : {std::string("v1\n0000000000001000000"),
                                  std::string("v1\n1700000000000")}) {  // Spark's, unpadded
    for (size_t cut = 0; cut <= full.size(); ++cut) {
      SCOPED_TRACE(full.substr(0, cut));
      ASSERT_TRUE(fs::LocalFileSystem()->AtomicReplace(path, full.substr(0, cut)).ok());
      ManualClock clock(2'000'000);
      SourceContext ctx = Ctx(dir_.path() + "/sources/0", {{"rowsPerSecond", "1"}}, &clock);
      auto src = CreateSource("rate", ctx);
      if (cut == full.size()) {
        ASSERT_TRUE(src.ok()) << src.status().ToString();
        continue;
      }
      ASSERT_FALSE(src.ok());
      EXPECT_TRUE(src.status().IsCorruption()) << src.status().ToString();
      EXPECT_NE(src.status().message().find(path), std::string::npos) << src.status().ToString();
    }
  }
  EXPECT_EQ(*ParseStartTime("v1\n1700000000000\n", "f"), 1700000000000);
  EXPECT_EQ(*ParseStartTime(SerializeStartTime(0), "f"), 0);
  EXPECT_TRUE(ParseStartTime("v1\n0170000000000", "f").status().IsCorruption());
  EXPECT_TRUE(ParseStartTime("v1\n+000000000001000000", "f").status().IsCorruption());
}

TEST_F(RateSourceTest, AvailableNowAndOptionErrors) {
  ManualClock clock(0);
  auto src = Open(&clock, {{"rowsPerSecond", "1"}, {"rampUpTime", "2s"}});
  ASSERT_NE(src, nullptr);
  clock.Advance(3000);
  ASSERT_TRUE(src->PrepareForAvailableNow().ok());
  clock.Advance(10000);
  EXPECT_EQ(Latest(src.get(), std::nullopt), "3");

  for (const auto& [k, v] :
       std::vector<std::pair<std::string, std::string>>{{"rowsPerSecond", "-1"},
                                                        {"numPartitions", "0"},
                                                        {"rampUpTime", "1.5s"},
                                                        {"rowPerSecond", "1"}}) {
    auto s = CreateSource("rate", Ctx(dir_.path() + "/x", {{k, v}}, &clock));
    ASSERT_FALSE(s.ok()) << k;
    EXPECT_TRUE(s.status().IsInvalidArgument());
    EXPECT_NE(s.status().message().find("'" + k + "'"), std::string::npos) << s.status().ToString();
  }
}

}  // namespace
}  // namespace sluice::sources
