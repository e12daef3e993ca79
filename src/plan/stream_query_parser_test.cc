#include "plan/stream_query_parser.h"

#include <gtest/gtest.h>

#include <map>

namespace sluice::plan {
namespace {

ParsedStreamingQuery Parse(std::string_view sql) {
  auto r = ParseStreamingQuery(sql);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : ParsedStreamingQuery{};
}

std::string Error(std::string_view sql) {
  auto r = ParseStreamingQuery(sql);
  EXPECT_FALSE(r.ok()) << sql;
  return r.ok() ? "" : r.status().message();
}

TEST(StreamQueryParserTest, TableWithWatermarkColumnAndAlias) {
  auto q = Parse("SELECT e.id FROM STREAM events WATERMARK ts DELAY OF INTERVAL 10 SECONDS AS e");
  ASSERT_EQ(q.streams.size(), 1u);
  const auto& s = q.streams[0];
  EXPECT_EQ(s.kind, StreamRelation::Kind::kTable);
  EXPECT_EQ(s.table, "events");
  EXPECT_EQ(s.alias, "e");
  ASSERT_TRUE(s.watermark.has_value());
  EXPECT_EQ(s.watermark->expression, "ts");
  EXPECT_EQ(s.watermark->column, "ts");
  EXPECT_TRUE(s.watermark->IsPlainColumn());
  EXPECT_EQ(s.watermark->delay_ms, 10000);
  EXPECT_EQ(q.sql, "SELECT e.id FROM __stream_0 AS e");
}

TEST(StreamQueryParserTest, TableOptionsWithAndStreamParentheses) {
  auto q = Parse(
      "SELECT e.id FROM STREAM events WITH (skipChangeCommits = true, 'maxFilesPerTrigger' 2) "
      "WATERMARK ts DELAY OF INTERVAL 10 SECONDS AS e");
  ASSERT_EQ(q.streams.size(), 1u);
  EXPECT_EQ(q.streams[0].table, "events");
  EXPECT_EQ(q.streams[0].alias, "e");
  EXPECT_EQ(q.streams[0].named, (std::map<std::string, std::string>{{"skipchangecommits", "true"},
                                                                    {"maxfilespertrigger", "2"}}));
  EXPECT_EQ(q.sql, "SELECT e.id FROM __stream_0 AS e");

  q = Parse("SELECT * FROM STREAM(db.events WITH (startingVersion = 3)) AS x");
  ASSERT_EQ(q.streams.size(), 1u);
  EXPECT_EQ(q.streams[0].table, "db.events");
  EXPECT_EQ(q.streams[0].alias, "x");
  EXPECT_EQ(q.streams[0].named.at("startingversion"), "3");
  EXPECT_EQ(q.sql, "SELECT * FROM __stream_0 AS x");

  q = Parse("SELECT * FROM STREAM (events) WITH (maxBytesPerTrigger = '1m') WHERE id > 0");
  EXPECT_EQ(q.streams[0].alias, "events");
  EXPECT_EQ(q.streams[0].named.at("maxbytespertrigger"), "1m");
  EXPECT_EQ(q.sql, "SELECT * FROM __stream_0 AS \"events\" WHERE id > 0");

  EXPECT_NE(Error("SELECT * FROM STREAM t WITH (a = 1, A = 2)").find("given twice"),
            std::string::npos);
  EXPECT_NE(Error("SELECT * FROM STREAM t WITH a = 1").find("WITH must be followed by"),
            std::string::npos);
  EXPECT_NE(Error("SELECT * FROM STREAM(t").find("expected )"), std::string::npos);
  EXPECT_NE(Error("SELECT * FROM STREAM t WITH (a = )").find("literal value"), std::string::npos);
}

// secret(scope, key) as an option value is kept as its text (resolved when the query starts).
TEST(StreamQueryParserTest, SecretReferenceAsAnOptionValue) {
  auto q = Parse(
      "SELECT * FROM STREAM read_kafka(bootstrapServers => 'b:1', subscribe => 't') WITH "
      "('kafka.sasl.jaas.config' = secret('kafka', 'jaas'), kafka.ssl.key.password "
      "SECRET(scope => 'kafka', key => 'kp'))");
  ASSERT_EQ(q.streams.size(), 1u);
  EXPECT_EQ(q.streams[0].named.at("kafka.sasl.jaas.config"), "secret('kafka', 'jaas')");
  EXPECT_EQ(q.streams[0].named.at("kafka.ssl.key.password"),
            "SECRET(scope => 'kafka', key => 'kp')");
  EXPECT_NE(Error("SELECT * FROM STREAM t WITH (a = secret('x', 'y'").find("not closed"),
            std::string::npos);
}

TEST(StreamQueryParserTest, WatermarkExpressionDefinesColumn) {
  auto q = Parse(
      "SELECT * FROM STREAM raw WATERMARK to_timestamp(ts_str) AS ts DELAY OF INTERVAL 1 MINUTE "
      "AS r WHERE r.x > 1");
  ASSERT_EQ(q.streams.size(), 1u);
  EXPECT_EQ(q.streams[0].watermark->expression, "to_timestamp(ts_str)");
  EXPECT_EQ(q.streams[0].watermark->column, "ts");
  EXPECT_FALSE(q.streams[0].watermark->IsPlainColumn());
  EXPECT_EQ(q.streams[0].watermark->delay_ms, 60000);
  EXPECT_EQ(q.streams[0].alias, "r");
  EXPECT_EQ(q.sql, "SELECT * FROM __stream_0 AS r WHERE r.x > 1");
}

TEST(StreamQueryParserTest, IntervalForms) {
  EXPECT_EQ(Parse("SELECT * FROM STREAM t WATERMARK ts DELAY OF INTERVAL '10 seconds'")
                .streams[0]
                .watermark->delay_ms,
            10000);
  EXPECT_EQ(Parse("SELECT * FROM STREAM t WATERMARK ts DELAY OF INTERVAL 2 HOURS x")
                .streams[0]
                .watermark->delay_ms,
            2 * 3600 * 1000);
  EXPECT_EQ(Parse("SELECT * FROM STREAM t WATERMARK ts DELAY OF INTERVAL '5' MINUTE")
                .streams[0]
                .watermark->delay_ms,
            300000);
  EXPECT_EQ(Parse("SELECT * FROM STREAM t WATERMARK ts DELAY OF INTERVAL 1 SECOND")
                .streams[0]
                .watermark->delay_ms,
            1000);
}

TEST(StreamQueryParserTest, NoAliasUsesTableName) {
  auto q = Parse("SELECT value FROM STREAM input GROUP BY value");
  ASSERT_EQ(q.streams.size(), 1u);
  EXPECT_EQ(q.streams[0].alias, "input");
  EXPECT_FALSE(q.streams[0].watermark.has_value());
  EXPECT_EQ(q.sql, "SELECT value FROM __stream_0 AS \"input\" GROUP BY value");
}

TEST(StreamQueryParserTest, TableFunctions) {
  auto q = Parse(
      "SELECT * FROM STREAM read_files('landing/', format => 'json', schema => 'value VARCHAR', "
      "maxFilesPerTrigger => 2) f JOIN STREAM table_changes('events', 0) c ON f.id = c.id, "
      "STREAM read_rate(rowsPerSecond => 10, rampUpTime => -1)");
  ASSERT_EQ(q.streams.size(), 3u);
  EXPECT_EQ(q.streams[0].kind, StreamRelation::Kind::kReadFiles);
  EXPECT_EQ(q.streams[0].positional, std::vector<std::string>{"landing/"});
  EXPECT_EQ(q.streams[0].named.at("format"), "json");
  EXPECT_EQ(q.streams[0].named.at("schema"), "value VARCHAR");
  EXPECT_EQ(q.streams[0].named.at("maxfilespertrigger"), "2");
  EXPECT_EQ(q.streams[0].alias, "f");
  EXPECT_EQ(q.streams[1].kind, StreamRelation::Kind::kTableChanges);
  EXPECT_EQ(q.streams[1].table, "events");
  EXPECT_EQ(q.streams[1].positional, (std::vector<std::string>{"events", "0"}));
  EXPECT_EQ(q.streams[1].alias, "c");
  EXPECT_EQ(q.streams[2].kind, StreamRelation::Kind::kReadRate);
  EXPECT_EQ(q.streams[2].named.at("rampuptime"), "-1");
  EXPECT_EQ(q.streams[2].alias, "__stream_2");
  EXPECT_EQ(q.sql,
            "SELECT * FROM __stream_0 AS f JOIN __stream_1 AS c ON f.id = c.id, __stream_2 AS "
            "__stream_2");
}

TEST(StreamQueryParserTest, KafkaAndNexmark) {
  auto q = Parse(
      "SELECT * FROM STREAM read_kafka(bootstrapServers => 'h:9092', subscribe => 'orders') AS k "
      "UNION ALL SELECT * FROM STREAM nexmark(eventsPerSecond => 1000)");
  ASSERT_EQ(q.streams.size(), 2u);
  EXPECT_EQ(q.streams[0].kind, StreamRelation::Kind::kReadKafka);
  EXPECT_EQ(q.streams[0].named.at("bootstrapservers"), "h:9092");
  EXPECT_EQ(q.streams[1].kind, StreamRelation::Kind::kNexmark);
  EXPECT_EQ(q.streams[1].named.at("eventspersecond"), "1000");
}

TEST(StreamQueryParserTest, SubqueryUnionAndSelfJoin) {
  auto q = Parse(
      "SELECT epoch(eventTime)::INTEGER AS event_time FROM (\n"
      "  SELECT eventTime FROM STREAM input1 WATERMARK timestamp_seconds(value) AS eventTime "
      "DELAY OF INTERVAL 10 SECONDS AS a\n"
      "  UNION ALL\n"
      "  SELECT eventTime FROM STREAM input1 WATERMARK timestamp_seconds(value) AS eventTime "
      "DELAY OF INTERVAL 15 SECONDS AS b\n)");
  ASSERT_EQ(q.streams.size(), 2u);
  EXPECT_EQ(q.streams[0].table, "input1");
  EXPECT_EQ(q.streams[1].table, "input1");
  EXPECT_EQ(q.streams[0].watermark->delay_ms, 10000);
  EXPECT_EQ(q.streams[1].watermark->delay_ms, 15000);
  EXPECT_NE(q.sql.find("FROM __stream_0 AS a"), std::string::npos);
  EXPECT_NE(q.sql.find("FROM __stream_1 AS b"), std::string::npos);
}

TEST(StreamQueryParserTest, AliasBeforeWatermarkAndQualifiedTable) {
  auto q = Parse("SELECT * FROM STREAM main.events AS e WATERMARK ts DELAY OF INTERVAL 1 SECOND");
  ASSERT_EQ(q.streams.size(), 1u);
  EXPECT_EQ(q.streams[0].table, "main.events");
  EXPECT_EQ(q.streams[0].alias, "e");
  EXPECT_TRUE(q.streams[0].watermark.has_value());
  EXPECT_EQ(q.sql, "SELECT * FROM __stream_0 AS e");
}

TEST(StreamQueryParserTest, StaticRelationsAndStreamColumnsUntouched) {
  auto q = Parse("SELECT s.stream, d.name FROM STREAM s JOIN dims d ON s.id = d.id");
  ASSERT_EQ(q.streams.size(), 1u);
  EXPECT_EQ(q.sql, "SELECT s.stream, d.name FROM __stream_0 AS \"s\" JOIN dims d ON s.id = d.id");
}

TEST(StreamQueryParserTest, ErrorsNameLineAndColumn) {
  EXPECT_NE(Error("SELECT * FROM t").find("STREAM"), std::string::npos);
  std::string e = Error("SELECT *\nFROM STREAM WHERE x");
  EXPECT_NE(e.find("line 2"), std::string::npos) << e;
  e = Error("SELECT * FROM STREAM read_foo(1)");
  EXPECT_NE(e.find("unknown streaming table function"), std::string::npos) << e;
  EXPECT_NE(e.find("line 1, column 22"), std::string::npos) << e;
  e = Error("SELECT * FROM STREAM t WATERMARK ts AS e");
  EXPECT_NE(e.find("DELAY OF"), std::string::npos) << e;
  e = Error("SELECT * FROM STREAM t WATERMARK ts DELAY OF 10 SECONDS");
  EXPECT_NE(e.find("INTERVAL"), std::string::npos) << e;
  e = Error("SELECT * FROM STREAM t WATERMARK ts DELAY OF INTERVAL 'soon'");
  EXPECT_NE(e.find("delay"), std::string::npos) << e;
  e = Error("SELECT * FROM STREAM t WATERMARK f(x) DELAY OF INTERVAL 1 SECOND");
  EXPECT_NE(e.find("AS <column>"), std::string::npos) << e;
}

}  // namespace
}  // namespace sluice::plan
