// Delta stats JSON and Spark-style string truncation.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/uuid.h"
#include "delta/stats.h"
#include "delta/write_util.h"

namespace sluice::delta {
namespace {

using engine::ColumnStats;
using engine::DataType;
using engine::Field;

DataType T(const std::string& sql) { return *DataType::FromSql(sql); }

TEST(StatsTest, ShortStringsAreKept) {
  EXPECT_EQ(TruncateMinString("abc"), "abc");
  EXPECT_EQ(TruncateMaxString("abc"), std::optional<std::string>("abc"));
  std::string s32(32, 'z');
  EXPECT_EQ(TruncateMinString(s32), s32);
  EXPECT_EQ(TruncateMaxString(s32), std::optional<std::string>(s32));
}

TEST(StatsTest, LongStringsAreTruncatedToBounds) {
  std::string s = std::string(32, 'a') + "bcdef";
  EXPECT_EQ(TruncateMinString(s), std::string(32, 'a'));
  auto max = TruncateMaxString(s);
  ASSERT_TRUE(max.has_value());
  EXPECT_EQ(*max, std::string(32, 'a') + "\xEF\xBF\xBD");
  EXPECT_GT(*max, s);  // still an upper bound in byte (= code point) order
  EXPECT_LE(TruncateMinString(s), s);
}

TEST(StatsTest, TruncationCountsCodePointsNotBytes) {
  std::string s;
  for (int i = 0; i < 40; ++i) s += "\xC3\xBC";  // ü
  std::string min = TruncateMinString(s);
  EXPECT_EQ(min.size(), 64u);  // 32 code points of 2 bytes
  auto max = TruncateMaxString(s);
  ASSERT_TRUE(max);
  EXPECT_GT(*max, s);
}

TEST(StatsTest, MaxTieBreakerWhenNextCharIsHigh) {
  std::string s = std::string(32, 'a') + "\xEF\xBF\xBF" + "x";  // U+FFFF after the prefix
  auto max = TruncateMaxString(s);
  ASSERT_TRUE(max);
  EXPECT_EQ(*max, std::string(32, 'a') + "\xF4\x8F\xBF\xBF");
  EXPECT_GT(*max, s);
  // Only U+10FFFF characters after the prefix for a long stretch: no bound is kept.
  std::string all_max = std::string(32, 'a');
  for (int i = 0; i < 40; ++i) all_max += "\xF4\x8F\xBF\xBF";
  EXPECT_FALSE(TruncateMaxString(all_max).has_value());
}

TEST(StatsTest, BuildsNestedStats) {
  engine::Schema schema = {
      {"id", T("BIGINT"), true},
      {"name", T("VARCHAR"), true},
      {"f", T("DOUBLE"), true},
      {"ok", T("BOOLEAN"), true},
      {"s", T("STRUCT(a INTEGER, b STRUCT(c DATE))"), true},
      {"arr", T("INTEGER[]"), true},
      {"ts", T("TIMESTAMPTZ"), true},
  };
  engine::ParquetFileInfo info;
  info.num_rows = 5;
  info.stats = {
      ColumnStats{"id", "-3", "42", 0},
      ColumnStats{"name", "alpha", std::string(40, 'z'), 1},
      ColumnStats{"f", "-inf", "nan", 0},
      ColumnStats{"ok", "false", "true", 2},
      ColumnStats{"s.a", "1", "9", 3},
      ColumnStats{"s.b.c", "2020-01-01", "2021-12-31", 4},
      ColumnStats{"arr", std::nullopt, std::nullopt, 5},
      ColumnStats{"ts", "2020-01-01 00:00:00.123999+00", "2020-01-02 00:00:00+00", 0},
  };
  auto text = BuildStatsJson(schema, info);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  auto j = nlohmann::json::parse(*text);
  EXPECT_EQ(j["numRecords"], 5);
  EXPECT_EQ(j["minValues"]["id"], -3);
  EXPECT_EQ(j["maxValues"]["id"], 42);
  EXPECT_EQ(j["minValues"]["name"], "alpha");
  EXPECT_EQ(j["maxValues"]["name"], std::string(32, 'z') + "\xEF\xBF\xBD");
  EXPECT_FALSE(j["minValues"].contains("f"));  // -inf / NaN are left out
  EXPECT_FALSE(j["maxValues"].contains("f"));
  EXPECT_FALSE(j["minValues"].contains("ok"));
  EXPECT_EQ(j["nullCount"]["ok"], 2);
  EXPECT_EQ(j["minValues"]["s"]["a"], 1);
  EXPECT_EQ(j["maxValues"]["s"]["b"]["c"], "2021-12-31");
  EXPECT_EQ(j["nullCount"]["s"]["b"]["c"], 4);
  EXPECT_EQ(j["nullCount"]["arr"], 5);
  EXPECT_FALSE(j["minValues"].contains("arr"));
  EXPECT_EQ(j["minValues"]["ts"], "2020-01-01T00:00:00.123Z");
  EXPECT_EQ(j["maxValues"]["ts"], "2020-01-02T00:00:00.000Z");
}

TEST(StatsTest, OnlyTheFirstIndexedColumnsGetStats) {
  engine::Schema schema = {{"a", T("INTEGER"), true},
                           {"s", T("STRUCT(x INTEGER, y INTEGER)"), true},
                           {"b", T("INTEGER"), true}};
  engine::ParquetFileInfo info;
  info.num_rows = 1;
  info.stats = {ColumnStats{"a", "1", "1", 0}, ColumnStats{"s.x", "2", "2", 0},
                ColumnStats{"s.y", "3", "3", 0}, ColumnStats{"b", "4", "4", 0}};
  auto j = nlohmann::json::parse(*BuildStatsJson(schema, info, 2));
  EXPECT_EQ(j["minValues"]["a"], 1);
  EXPECT_EQ(j["minValues"]["s"]["x"], 2);
  EXPECT_FALSE(j["minValues"]["s"].contains("y"));
  EXPECT_FALSE(j["minValues"].contains("b"));
  EXPECT_FALSE(j["nullCount"].contains("b"));
}

TEST(StatsTest, BadStatisticIsAnError) {
  engine::Schema schema = {{"a", T("INTEGER"), true}};
  engine::ParquetFileInfo info;
  info.num_rows = 1;
  info.stats = {ColumnStats{"a", "one", "1", 0}};
  auto r = BuildStatsJson(schema, info);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), ::testing::HasSubstr("'a'"));
}

TEST(WriteUtilTest, HiveEscapingAndLogPaths) {
  EXPECT_EQ(EscapePartitionValue("a b"), "a b");
  EXPECT_EQ(EscapePartitionValue("a/b=c%d:e"), "a%2Fb%3Dc%25d%3Ae");
  EXPECT_EQ(EscapePartitionValue("ünï"), "ünï");
  EXPECT_EQ(EscapePartitionValue(std::string("\x01", 1)), "%01");
  EXPECT_EQ(EncodeLogPath("p=a%2Fb/x y/ü.parquet"), "p=a%252Fb/x%20y/ü.parquet");
  EXPECT_EQ(PartitionDirectory({"a", "b"}, {{"a", "1"}, {"b", std::nullopt}}),
            "a=1/b=__HIVE_DEFAULT_PARTITION__");
  std::string u = NewUuidV4();
  EXPECT_EQ(u.size(), 36u);
  EXPECT_EQ(u[14], '4');
  EXPECT_NE(u, NewUuidV4());
  EXPECT_THAT(DataFileName(3, u),
              ::testing::MatchesRegex("part-00003-.*\\.c000\\.snappy\\.parquet"));
}

}  // namespace
}  // namespace sluice::delta
