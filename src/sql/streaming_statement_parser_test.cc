#include "sql/streaming_statement_parser.h"

#include <gtest/gtest.h>

namespace sluice::sql {
namespace {

template <typename T>
T Parse(std::string_view sql) {
  auto r = ParseStreamingStatement(sql);
  EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
  if (!r.ok() || !r->has_value()) {
    ADD_FAILURE() << "not a streaming statement: " << sql;
    return T{};
  }
  const T* s = std::get_if<T>(&**r);
  if (s == nullptr) {
    ADD_FAILURE() << "parsed as another statement: " << sql;
    return T{};
  }
  return *s;
}

TEST(StreamingStatementParserTest, OtherStatementsAreNotOurs) {
  for (const char* sql : {"SELECT 1", "CREATE TABLE t (a INT)",
                          "CREATE OR REPLACE TABLE t AS "
                          "SELECT 1",
                          "REFRESH MATERIALIZED VIEW v", "SHOW TABLES"}) {
    auto r = ParseStreamingStatement(sql);
    ASSERT_TRUE(r.ok()) << sql;
    EXPECT_FALSE(r->has_value()) << sql;
  }
}

TEST(StreamingStatementParserTest, CreateStreamingTableWithEveryClause) {
  auto s = Parse<CreateStreamingTableStatement>(
      "CREATE OR REFRESH STREAMING TABLE Counts (start BIGINT, n BIGINT NOT NULL) "
      "PARTITIONED BY (start) TBLPROPERTIES ('delta.checkpointInterval' = '5') "
      "OUTPUT MODE UPDATE TRIGGER PROCESSING TIME '10 seconds' SCHEDULE EVERY 5 MINUTES "
      "AS SELECT value, count(*) AS n FROM STREAM input GROUP BY value;");
  EXPECT_TRUE(s.or_refresh);
  EXPECT_EQ(s.name, "Counts");
  ASSERT_EQ(s.columns.size(), 2u);
  EXPECT_EQ(s.columns[1].name, "n");
  EXPECT_TRUE(s.columns[1].not_null);
  EXPECT_EQ(s.partitioned_by, std::vector<std::string>{"start"});
  EXPECT_EQ(s.properties.at("delta.checkpointInterval"), "5");
  EXPECT_EQ(s.output_mode, sinks::OutputMode::kUpdate);
  ASSERT_TRUE(s.trigger.has_value());
  EXPECT_EQ(s.trigger->kind, stream::TriggerKind::kProcessingTime);
  EXPECT_EQ(s.trigger->interval_ms, 10000);
  EXPECT_EQ(s.schedule_every_ms, std::optional<int64_t>(300000));
  EXPECT_EQ(s.query, std::optional<std::string>(
                         "SELECT value, count(*) AS n FROM STREAM input GROUP BY value"));
}

TEST(StreamingStatementParserTest, Triggers) {
  auto a = Parse<CreateStreamingTableStatement>(
      "CREATE STREAMING TABLE q TRIGGER AVAILABLE NOW AS SELECT * FROM STREAM t");
  EXPECT_EQ(a.trigger, stream::Trigger::AvailableNow());
  EXPECT_FALSE(a.or_refresh);
  EXPECT_EQ(a.output_mode, sinks::OutputMode::kAppend);
  auto o = Parse<CreateStreamingTableStatement>(
      "CREATE STREAMING TABLE q TRIGGER ONCE OUTPUT MODE COMPLETE AS SELECT * FROM STREAM t");
  EXPECT_EQ(o.trigger, stream::Trigger::Once());
  EXPECT_EQ(o.output_mode, sinks::OutputMode::kComplete);
  auto c = Parse<CreateStreamingTableStatement>(
      "CREATE STREAMING TABLE q TRIGGER CONTINUOUS '1 second' AS SELECT * FROM STREAM t");
  ASSERT_TRUE(c.trigger.has_value());
  EXPECT_EQ(c.trigger->kind, stream::TriggerKind::kContinuous);
  auto none = Parse<CreateStreamingTableStatement>("CREATE STREAMING TABLE q AS SELECT 1");
  EXPECT_FALSE(none.trigger.has_value());
}

TEST(StreamingStatementParserTest, TableWithoutQueryNeedsColumns) {
  auto s = Parse<CreateStreamingTableStatement>("CREATE STREAMING TABLE sink (id BIGINT)");
  EXPECT_FALSE(s.query.has_value());
  auto r = ParseStreamingStatement("CREATE STREAMING TABLE q");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("expected AS <query> or a column list"), std::string::npos)
      << r.status().ToString();
}

TEST(StreamingStatementParserTest, Errors) {
  auto mode = ParseStreamingStatement("CREATE STREAMING TABLE q OUTPUT MODE SOMETIMES AS SELECT 1");
  ASSERT_FALSE(mode.ok());
  EXPECT_NE(mode.status().message().find("APPEND, UPDATE or COMPLETE"), std::string::npos);
  auto trig = ParseStreamingStatement("CREATE STREAMING TABLE q TRIGGER SOON AS SELECT 1");
  ASSERT_FALSE(trig.ok());
  EXPECT_NE(trig.status().message().find("AVAILABLE NOW"), std::string::npos);
  auto refresh = ParseStreamingStatement("REFRESH STREAMING TABLE q extra");
  ASSERT_FALSE(refresh.ok());
  EXPECT_NE(refresh.status().message().find("end of the statement"), std::string::npos);
}

TEST(StreamingStatementParserTest, RefreshFlowShow) {
  EXPECT_EQ(Parse<RefreshStreamingTableStatement>("refresh streaming table Q;").name, "Q");
  auto f = Parse<CreateFlowStatement>(
      "CREATE FLOW f AS INSERT INTO target BY NAME SELECT a FROM STREAM src");
  EXPECT_EQ(f.name, "f");
  EXPECT_EQ(f.target, "target");
  EXPECT_EQ(f.query, "SELECT a FROM STREAM src");
  Parse<ShowStreamingTablesStatement>("SHOW STREAMING TABLES");
  auto cdc = ParseStreamingStatement("CREATE FLOW f AS AUTO CDC INTO t FROM STREAM s KEYS (id)");
  ASSERT_FALSE(cdc.ok());
  EXPECT_NE(cdc.status().message().find("expected SEQUENCE"), std::string::npos)
      << cdc.status().ToString();
}

TEST(StreamingStatementParserTest, AutoCdcFlow) {
  auto f = Parse<CreateFlowStatement>(
      "CREATE FLOW f AS AUTO CDC INTO tgt FROM STREAM table_changes('src', 0) KEYS (id, \"Region\")"
      " SEQUENCE BY ts APPLY AS DELETE WHEN op = 'DELETE' AND (x > 1) COLUMNS * EXCEPT (op, x)"
      " STORED AS SCD TYPE 2;");
  EXPECT_EQ(f.target, "tgt");
  EXPECT_EQ(f.query, "SELECT * FROM STREAM table_changes('src', 0)");
  ASSERT_TRUE(f.auto_cdc.has_value());
  EXPECT_EQ(f.auto_cdc->keys, (std::vector<std::string>{"id", "Region"}));
  EXPECT_EQ(f.auto_cdc->sequence_by, "ts");
  EXPECT_EQ(f.auto_cdc->delete_when, "op = 'DELETE' AND (x > 1)");
  EXPECT_EQ(f.auto_cdc->columns_mode, AutoCdcSpec::Columns::kExcept);
  EXPECT_EQ(f.auto_cdc->columns, (std::vector<std::string>{"op", "x"}));
  EXPECT_EQ(f.auto_cdc->scd_type, 2);

  auto plain = Parse<CreateFlowStatement>(
      "create flow g as auto cdc into t from stream s keys (k) sequence by n columns (k, v)");
  ASSERT_TRUE(plain.auto_cdc.has_value());
  EXPECT_FALSE(plain.auto_cdc->delete_when.has_value());
  EXPECT_EQ(plain.auto_cdc->columns_mode, AutoCdcSpec::Columns::kList);
  EXPECT_EQ(plain.auto_cdc->columns, (std::vector<std::string>{"k", "v"}));
  EXPECT_EQ(plain.auto_cdc->scd_type, 1);

  auto scd3 = ParseStreamingStatement(
      "CREATE FLOW f AS AUTO CDC INTO t FROM STREAM s KEYS (id) SEQUENCE BY ts STORED AS SCD TYPE "
      "3");
  ASSERT_FALSE(scd3.ok());
  EXPECT_NE(scd3.status().message().find("1 or 2"), std::string::npos);
  auto nokeys = ParseStreamingStatement(
      "CREATE FLOW f AS AUTO CDC INTO t FROM STREAM s KEYS () SEQUENCE BY ts");
  ASSERT_FALSE(nokeys.ok());
}

TEST(StreamingStatementParserTest, ExpectationsInTheColumnList) {
  auto s = Parse<CreateStreamingTableStatement>(
      "CREATE OR REFRESH STREAMING TABLE t (\n"
      "  id BIGINT,\n"
      "  CONSTRAINT positive EXPECT (v > 0 AND f(v, 2) < 10) ON VIOLATION DROP ROW,\n"
      "  CONSTRAINT has_id EXPECT (id IS NOT NULL) ON VIOLATION FAIL UPDATE,\n"
      "  CONSTRAINT known EXPECT (c IN ('a', 'b')),\n"
      "  v BIGINT\n"
      ") AS SELECT id, v, c FROM STREAM src");
  ASSERT_EQ(s.expectations.size(), 3u);
  EXPECT_EQ(s.expectations[0].name, "positive");
  EXPECT_EQ(s.expectations[0].condition, "v > 0 AND f(v, 2) < 10");
  EXPECT_EQ(s.expectations[0].action, Expectation::Action::kDropRow);
  EXPECT_EQ(s.expectations[1].action, Expectation::Action::kFailUpdate);
  EXPECT_EQ(s.expectations[2].condition, "c IN ('a', 'b')");
  EXPECT_EQ(s.expectations[2].action, Expectation::Action::kWarn);
  ASSERT_EQ(s.columns.size(), 2u);  // the column definitions around them are kept
  EXPECT_EQ(s.columns[0].name, "id");
  EXPECT_EQ(s.columns[1].name, "v");

  // Only expectations: no declared columns (the table follows its query).
  auto only = Parse<CreateStreamingTableStatement>(
      "CREATE STREAMING TABLE t (CONSTRAINT ok EXPECT (v > 0)) AS SELECT v FROM STREAM src");
  EXPECT_TRUE(only.columns.empty());
  ASSERT_EQ(only.expectations.size(), 1u);
}

TEST(StreamingStatementParserTest, BadExpectationsAreRefusedWithTheirPlace) {
  auto twice = ParseStreamingStatement(
      "CREATE STREAMING TABLE t (CONSTRAINT a EXPECT (v > 0), CONSTRAINT A EXPECT (v < 9)) AS "
      "SELECT v FROM STREAM src");
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().message(),
            "expectation 'A' is defined twice (at line 1, column 56): an expectation's name is "
            "unique per dataset");
  auto action = ParseStreamingStatement(
      "CREATE STREAMING TABLE t (CONSTRAINT a EXPECT (v > 0) ON VIOLATION SKIP) AS SELECT v "
      "FROM STREAM src");
  ASSERT_FALSE(action.ok());
  EXPECT_NE(action.status().message().find("expected DROP ROW or FAIL UPDATE after ON VIOLATION"),
            std::string::npos)
      << action.status().message();
  auto empty = ParseStreamingStatement(
      "CREATE STREAMING TABLE t (CONSTRAINT a EXPECT ()) AS SELECT v FROM STREAM src");
  ASSERT_FALSE(empty.ok());
  // A table that only flows fill takes expectations: they check the rows its flows write.
  auto no_query =
      ParseStreamingStatement("CREATE STREAMING TABLE t (v BIGINT, CONSTRAINT a EXPECT (v > 0))");
  ASSERT_TRUE(no_query.ok()) << no_query.status().ToString();
  const auto& create = std::get<CreateStreamingTableStatement>(**no_query);
  EXPECT_FALSE(create.query.has_value());
  ASSERT_EQ(create.expectations.size(), 1u);
  EXPECT_EQ(create.expectations[0].condition, "v > 0");
  ASSERT_EQ(create.columns.size(), 1u);
}

TEST(StreamingStatementParserTest, ExpectationsRoundTripThroughTheirJson) {
  std::vector<Expectation> e = {{"a", "v > 0", Expectation::Action::kWarn},
                                {"b", "id IS NOT NULL", Expectation::Action::kDropRow},
                                {"c", "x = 'it''s'", Expectation::Action::kFailUpdate}};
  Result<std::vector<Expectation>> back = ExpectationsFromJson(ExpectationsToJson(e), "t");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, e);
  nlohmann::json bad =
      nlohmann::json::array({{{"name", "a"}, {"condition", "x"}, {"action", "?"}}});
  EXPECT_TRUE(ExpectationsFromJson(bad, "t").status().code() == StatusCode::kCorruption);
}

}  // namespace
}  // namespace sluice::sql
