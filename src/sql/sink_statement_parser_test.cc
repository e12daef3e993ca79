#include "sql/sink_statement_parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sluice::sql {
namespace {

using ::testing::HasSubstr;

template <typename T>
T Parse(std::string_view sql) {
  auto r = ParseSinkStatement(sql);
  EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
  if (!r.ok() || !r->has_value()) {
    ADD_FAILURE() << "not a sink statement: " << sql;
    return T{};
  }
  const T* s = std::get_if<T>(&**r);
  if (s == nullptr) {
    ADD_FAILURE() << "parsed as another statement: " << sql;
    return T{};
  }
  return *s;
}

std::string ErrorOf(std::string_view sql) {
  auto r = ParseSinkStatement(sql);
  return r.ok() ? "<no error>" : r.status().ToString();
}

TEST(SinkStatementParserTest, OtherStatementsAreNotOurs) {
  for (const char* sql : {"SELECT 1", "CREATE TABLE sink (a INT)",
                          "CREATE FLOW f AS INSERT INTO "
                          "s SELECT 1",
                          "DROP TABLE sink", "REFRESH STREAMING TABLE s", "SHOW TABLES"}) {
    auto r = ParseSinkStatement(sql);
    ASSERT_TRUE(r.ok()) << sql;
    EXPECT_FALSE(r->has_value()) << sql;
  }
}

TEST(SinkStatementParserTest, CreateSinkWithOptionsInSparksSpellings) {
  auto s = Parse<CreateSinkStatement>(
      "CREATE SINK Out USING Kafka OPTIONS ('kafka.bootstrap.servers' 'b:9092', topic = 't', "
      "kafka.linger.ms 5, kafka.enable.idempotence = TRUE);");
  EXPECT_FALSE(s.or_replace);
  EXPECT_EQ(s.name, "Out");
  EXPECT_EQ(s.format, "kafka");
  EXPECT_EQ(s.options, (Properties{{"kafka.bootstrap.servers", "b:9092"},
                                   {"topic", "t"},
                                   {"kafka.linger.ms", "5"},
                                   {"kafka.enable.idempotence", "true"}}));
  EXPECT_FALSE(s.trigger.has_value());
}

TEST(SinkStatementParserTest, ASecretReferenceIsKeptAsWritten) {
  auto s = Parse<CreateSinkStatement>(
      "CREATE SINK s USING kafka OPTIONS ('kafka.sasl.jaas.config' = secret('kafka', 'jaas'), "
      "topic 't')");
  EXPECT_EQ(s.options,
            (Properties{{"kafka.sasl.jaas.config", "secret('kafka', 'jaas')"}, {"topic", "t"}}));
}

TEST(SinkStatementParserTest, CreateOrReplaceWithATrigger) {
  auto s = Parse<CreateSinkStatement>(
      "create or replace sink s using kafka options (a 'x') trigger processing time '5 seconds'");
  EXPECT_TRUE(s.or_replace);
  ASSERT_TRUE(s.trigger.has_value());
  EXPECT_EQ(s.trigger->kind, stream::TriggerKind::kProcessingTime);
  EXPECT_EQ(s.trigger->interval_ms, 5000);
  EXPECT_EQ(Parse<CreateSinkStatement>("CREATE SINK s USING kafka TRIGGER AVAILABLE NOW").trigger,
            stream::Trigger::AvailableNow());
}

TEST(SinkStatementParserTest, DropRefreshShow) {
  EXPECT_EQ(Parse<DropSinkStatement>("DROP SINK s").name, "s");
  EXPECT_FALSE(Parse<DropSinkStatement>("DROP SINK s").if_exists);
  EXPECT_TRUE(Parse<DropSinkStatement>("DROP SINK IF EXISTS s;").if_exists);
  EXPECT_EQ(Parse<RefreshSinkStatement>("REFRESH SINK s").name, "s");
  Parse<ShowSinksStatement>("SHOW SINKS");
}

TEST(SinkStatementParserTest, SyntaxErrorsSayWhatWasExpected) {
  EXPECT_THAT(ErrorOf("CREATE SINK s OPTIONS (a 'b')"), HasSubstr("expected USING"));
  EXPECT_THAT(ErrorOf("CREATE SINK s USING kafka OPTIONS (a)"),
              HasSubstr("expected a value (a string, a number, true or false) for option 'a'"));
  EXPECT_THAT(ErrorOf("CREATE SINK s USING kafka OPTIONS (topic 'a', TOPIC 'b')"),
              HasSubstr("option 'TOPIC' is given twice in OPTIONS (...)"));
  EXPECT_THAT(ErrorOf("CREATE SINK s USING kafka OPTIONS (a 'b' c 'd')"),
              HasSubstr("expected ')'"));
  EXPECT_THAT(ErrorOf("CREATE SINK s USING kafka TRIGGER SOMETIMES"),
              HasSubstr("expected AVAILABLE NOW, PROCESSING TIME"));
  EXPECT_THAT(ErrorOf("CREATE SINK s USING kafka extra"), HasSubstr("expected the end"));
  EXPECT_THAT(ErrorOf("DROP SINK"), HasSubstr("syntax error"));
  EXPECT_THAT(ErrorOf("SHOW SINKS now"), HasSubstr("expected the end"));
}

}  // namespace
}  // namespace sluice::sql
