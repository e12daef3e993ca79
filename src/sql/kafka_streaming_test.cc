// Streaming tables over Kafka through SQL (`FROM STREAM read_kafka(...)`), against librdkafka's
// mock cluster started by the test (or the real broker of SLUICE_KAFKA_BOOTSTRAP, test_cluster.h):
// rows land exactly once across REFRESHes and a restart (a new Session on the same warehouse),
// rate limits apply, and progress shows the Kafka source.
#include <stdlib.h>

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fs/test_util.h"
#include "sources/kafka/test_cluster.h"
#include "sql/session.h"

namespace sluice::sql {
namespace {

using ::testing::HasSubstr;

class KafkaStreamingTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }
  void Reopen() {
    session_.reset();
    SessionOptions options;
    options.warehouse = dir_.Join("wh");
    auto s = Session::Open(options);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    session_ = std::move(s).ValueOrDie();
  }
  engine::Batch Run(const std::string& sql) {
    auto r = session_->Execute(sql);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    return r.ok() ? std::move(*r) : engine::Batch();
  }
  std::string One(const std::string& sql) {
    engine::Batch b = Run(sql);
    return b.num_rows() == 1 ? b.GetString(0, 0).value_or("NULL") : "<no single row>";
  }
  void Produce(int from, int to) {
    for (int i = from; i < to; ++i) {
      cluster_.Produce(
          "orders", i % 2, "k" + std::to_string(i % 7),
          "{\"id\":" + std::to_string(i) + ",\"amount\":" + std::to_string(i * 10) + "}");
    }
    cluster_.Flush();
  }

  fs::ScopedTempDir dir_{"sluice-kafka-sql"};
  sources::kafka::testing::KafkaTestCluster cluster_;
  std::unique_ptr<Session> session_;
};

TEST_F(KafkaStreamingTest, StreamingTableReadsEveryRecordExactlyOnceAcrossRestarts) {
  cluster_.CreateTopic("orders", 2);
  Produce(0, 20);
  const std::string create =
      "CREATE STREAMING TABLE orders_bronze AS SELECT decode(key) AS k, "
      "decode(value)::JSON->>'id' AS id, topic, partition, `offset` "
      "FROM STREAM read_kafka(bootstrapServers => '" +
      cluster_.bootstrap() +
      "', subscribe => 'orders', startingOffsets => 'earliest', maxOffsetsPerTrigger => 6)";
  Run(create);
  Run("REFRESH STREAMING TABLE orders_bronze");
  EXPECT_EQ(One("SELECT count(*) FROM orders_bronze"), "20");
  // maxOffsetsPerTrigger 6 over 20 records: 4 batches (6, 6, 6, 2).
  EXPECT_EQ(
      One("SELECT count(*) FROM streaming_progress('orders_bronze') WHERE num_input_rows > 0"),
      "4");
  EXPECT_THAT(One("SELECT progress->'sources'->0->>'description' FROM "
                  "streaming_progress('orders_bronze') ORDER BY batch_id DESC LIMIT 1"),
              HasSubstr("KafkaV2[Subscribe[orders]]"));
  Produce(20, 25);
  Run("REFRESH STREAMING TABLE orders_bronze");
  EXPECT_EQ(One("SELECT count(*) FROM orders_bronze"), "25");
  // A new process (session) continues from the checkpoint.
  Produce(25, 31);
  Reopen();
  Run("REFRESH STREAMING TABLE orders_bronze");
  EXPECT_EQ(One("SELECT count(*) || '/' || count(DISTINCT id) || '/' || min(id::INT) || '/' || "
                "max(id::INT) FROM orders_bronze"),
            "31/31/0/30");
  EXPECT_EQ(One("SELECT count(*) FROM orders_bronze WHERE partition = 1 AND `offset` = 14"), "1");
}

TEST_F(KafkaStreamingTest, BadOptionsFailWithTheOptionsName) {
  Run("CREATE STREAMING TABLE x AS SELECT * FROM STREAM read_kafka(bootstrapServers => '" +
      cluster_.bootstrap() + "')");
  auto r = session_->Execute("REFRESH STREAMING TABLE x");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("exactly one of the options 'subscribe'"));
}

TEST_F(KafkaStreamingTest, BatchReadWithoutStreamReadsStartingToEndingOffsets) {
  cluster_.CreateTopic("orders", 2);
  Produce(0, 10);
  const std::string servers = "bootstrapServers => '" + cluster_.bootstrap() + "'";
  EXPECT_EQ(
      One("SELECT count(*) || '/' || sum((decode(value)::JSON->>'id')::INT) FROM read_kafka(" +
          servers + ", subscribe => 'orders')"),
      "10/45");
  EXPECT_EQ(One("SELECT string_agg(partition || ':' || `offset`, ',' ORDER BY partition, "
                "`offset`) FROM read_kafka(" +
                servers +
                ", subscribe => 'orders', startingOffsets => '{\"orders\":{\"0\":3,\"1\":-2}}', "
                "endingOffsets => '{\"orders\":{\"0\":-1,\"1\":2}}')"),
            "0:3,0:4,1:0,1:1");
  // Two reads in one statement, joined.
  EXPECT_EQ(One("SELECT count(*) FROM read_kafka(" + servers +
                ", subscribe => 'orders') a JOIN "
                "read_kafka(" +
                servers + ", subscribe => 'orders') b USING (partition, `offset`)"),
            "10");
  auto bad = session_->Execute("SELECT * FROM read_kafka(" + servers +
                               ", subscribe => 'orders', startingOffsets => 'latest')");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().ToString(), HasSubstr("startingOffsets can't be latest"));
  auto positional = session_->Execute("SELECT * FROM read_kafka('x')");
  ASSERT_FALSE(positional.ok());
  EXPECT_THAT(positional.status().ToString(), HasSubstr("named arguments only"));
}

// Databricks' spellings of a batch read's options: a name with dots in backticks (or dotted), and
// secret('scope', 'key') resolved from the environment when the statement runs; a secret that
// resolves to nothing names the variable, and no error shows a secret's value.
TEST_F(KafkaStreamingTest, BatchReadTakesDottedOptionsAndSecrets) {
  cluster_.CreateTopic("orders", 2);
  Produce(0, 4);
  ASSERT_EQ(setenv("SLUICE_SECRET_KTEST_SERVERS", cluster_.bootstrap().c_str(), 1), 0);
  ASSERT_EQ(setenv("SLUICE_SECRET_KTEST_PASSWORD", "Hunter2BatchPw", 1), 0);
  EXPECT_EQ(One("SELECT count(*) FROM read_kafka(bootstrapServers => secret('ktest', 'servers'), "
                "subscribe => 'orders', `kafka.isolation.level` => 'read_committed', "
                "kafka.client.id => 'batch-reader', "
                "`kafka.sasl.password` => secret(scope => 'ktest', key => 'password'))"),
            "4");
  // The option reaches the client: a bad value is refused naming it (not the value).
  auto bad =
      session_->Execute("SELECT * FROM read_kafka(bootstrapServers => '" + cluster_.bootstrap() +
                        "', subscribe => 'orders', `kafka.isolation.level` => 'bogus', "
                        "`kafka.sasl.password` => secret('ktest', 'password'))");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().ToString(), HasSubstr("kafka.isolation.level"));
  EXPECT_THAT(bad.status().ToString(), ::testing::Not(HasSubstr("Hunter2BatchPw")));
  auto missing = session_->Execute(
      "SELECT * FROM read_kafka(bootstrapServers => "
      "secret('ktest', 'nope'), subscribe => 'orders')");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().ToString(), HasSubstr("SLUICE_SECRET_KTEST_NOPE"));
  EXPECT_THAT(missing.status().ToString(), HasSubstr("option 'bootstrapServers'"));
  unsetenv("SLUICE_SECRET_KTEST_SERVERS");
  unsetenv("SLUICE_SECRET_KTEST_PASSWORD");
}

TEST_F(KafkaStreamingTest, IncludeHeadersGivesAListOfKeyValueStructs) {
  cluster_.CreateTopic("h", 1);
  cluster_.ProduceWithHeaders(
      "h", 0, "a",
      {{"trace", "t-1"}, {"bin", std::string("\x01\x00\xff", 3)}, {"none", std::nullopt}});
  cluster_.Produce("h", 0, std::nullopt, "b");  // no headers: NULL, as Spark
  cluster_.ProduceWithHeaders("h", 0, "c", {{"trace", "t-2"}, {"trace", "t-3"}});
  cluster_.Flush();
  const std::string servers = "bootstrapServers => '" + cluster_.bootstrap() + "'";
  EXPECT_EQ(One("SELECT typeof(headers) FROM read_kafka(" + servers +
                ", subscribe => 'h', includeHeaders => true) LIMIT 1"),
            "array<struct<key:string,value:binary>>");  // Spark's typeof
  EXPECT_EQ(
      One("SELECT string_agg(decode(value) || '=' || coalesce(len(headers)::VARCHAR, 'NULL'), "
          "',' ORDER BY `offset`) FROM read_kafka(" +
          servers + ", subscribe => 'h', includeHeaders => 'true')"),
      "a=3,b=NULL,c=2");
  // Spark's subscripts count from 0.
  EXPECT_EQ(One("SELECT headers[0].key || '=' || decode(headers[0].value) || '|' || "
                "hex(headers[1].value) || '|' || headers[2].key || '=' || "
                "coalesce(headers[2].value::VARCHAR, 'NULL') FROM read_kafka(" +
                servers + ", subscribe => 'h', includeHeaders => true) WHERE `offset` = 0"),
            "trace=t-1|0100FF|none=NULL");
  // In a streaming table too.
  Run("CREATE STREAMING TABLE hs AS SELECT decode(value) AS v, headers FROM STREAM read_kafka(" +
      servers + ", subscribe => 'h', startingOffsets => 'earliest', includeHeaders => true)");
  Run("REFRESH STREAMING TABLE hs");
  EXPECT_EQ(One("SELECT string_agg(h.key || '=' || decode(h.value), ',') FROM "
                "(SELECT unnest(headers) AS h FROM hs WHERE v = 'c')"),
            "trace=t-2,trace=t-3");
  // Without the option there is no headers column.
  auto no = session_->Execute("SELECT headers FROM read_kafka(" + servers + ", subscribe => 'h')");
  EXPECT_FALSE(no.ok());
}

// The notebook pattern as Spark users write it: `offset` unquoted (reserved in DuckDB's parser,
// not in Spark SQL) and from_json(CAST(value AS STRING), ...) over the BLOB value (Spark's cast
// decodes UTF-8; DuckDB's would escape the JSON's quotes and every row would be NULL).
TEST_F(KafkaStreamingTest, SparkSpellingsOfTheKafkaColumnsAndTheValueCast) {
  cluster_.CreateTopic("orders", 2);
  Produce(0, 10);
  Run("CREATE STREAMING TABLE parsed AS SELECT partition, offset, timestamp, "
      "CAST(key AS STRING) AS k, from_json(CAST(value AS STRING), 'id BIGINT, amount BIGINT') AS j "
      "FROM STREAM read_kafka(bootstrapServers => '" +
      cluster_.bootstrap() + "', subscribe => 'orders', startingOffsets => 'earliest')");
  Run("REFRESH STREAMING TABLE parsed");
  EXPECT_EQ(One("SELECT count(*) || '/' || count(j.id) || '/' || sum(j.amount) || '/' || "
                "count(DISTINCT (partition, offset)) || '/' || min(k) FROM parsed"),
            "10/10/450/10/k0");
  EXPECT_EQ(One("SELECT max(offset) FROM parsed WHERE partition = 0"), "4");
}

}  // namespace
}  // namespace sluice::sql
