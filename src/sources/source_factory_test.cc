#include "sources/source_factory.h"

#include "sources/test_util.h"

namespace sluice::sources {
namespace {

class SourceFactoryTest : public testing::SourceTest {};

TEST_F(SourceFactoryTest, UnknownFormatAndOptionsAreNamed) {
  testing::TempDir dir;
  auto f = CreateSource("kinesis", Ctx(dir.path()));
  ASSERT_FALSE(f.ok());
  EXPECT_TRUE(f.status().IsInvalidArgument());
  EXPECT_NE(f.status().message().find("unknown source format 'kinesis'"), std::string::npos);
  auto o =
      CreateSource("delta", Ctx(dir.path(), {{"path", dir.path()}, {"ignoreChanges", "true"}}));
  ASSERT_FALSE(o.ok());
  EXPECT_NE(o.status().message().find("unknown option 'ignoreChanges'"), std::string::npos);
  EXPECT_NE(o.status().message().find("skipchangecommits"), std::string::npos);
  auto b =
      CreateSource("delta", Ctx(dir.path(), {{"path", dir.path()}, {"skipChangeCommits", "yes"}}));
  EXPECT_NE(b.status().message().find("'skipChangeCommits' must be true or false"),
            std::string::npos);
  auto bytes = CreateSource(
      "delta", Ctx(dir.path(), {{"path", dir.path()}, {"maxBytesPerTrigger", "10 parsecs"}}));
  EXPECT_NE(bytes.status().message().find("'maxBytesPerTrigger'"), std::string::npos);
  auto dup =
      CreateSource("rate", Ctx(dir.path(), {{"rowsPerSecond", "1"}, {"ROWSPERSECOND", "2"}}));
  EXPECT_NE(dup.status().message().find("given twice"), std::string::npos);
  auto ts = CreateSource(
      "delta", Ctx(dir.path(), {{"path", dir.path()}, {"startingTimestamp", "yesterday-ish"}}));
  EXPECT_NE(ts.status().message().find("'startingTimestamp'"), std::string::npos);
  auto mem = CreateSource("memory", Ctx(dir.path()));
  EXPECT_NE(mem.status().message().find("'schema' is required"), std::string::npos);
}

TEST_F(SourceFactoryTest, TimestampOptionParsing) {
  EXPECT_EQ(*ParseTimestampOption(conn_.get(), "1970-01-01 00:00:01", "t"), 1000);
  EXPECT_EQ(*ParseTimestampOption(conn_.get(), "1970-01-01T01:00:00+01:00", "t"), 0);
  EXPECT_EQ(*ParseTimestampOption(conn_.get(), "1970-01-02", "t"), 86400000);
}

TEST_F(SourceFactoryTest, OptionNamesAreCaseInsensitive) {
  ManualClock clock(0);
  testing::TempDir dir;
  auto s = CreateSource("RATE", Ctx(dir.path(), {{"ROWSPERSECOND", "3"}}, &clock));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  clock.Advance(1000);
  auto o = (*s)->LatestOffset(std::nullopt, {});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(Get(s->get(), std::nullopt, **o).size(), 3u);
}

}  // namespace
}  // namespace sluice::sources
