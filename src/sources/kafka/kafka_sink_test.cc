#include "sinks/kafka_sink.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fs/local_file_system.h"
#include "fs/test_util.h"
#include "sources/kafka/kafka_source.h"
#include "sources/kafka/test_cluster.h"
#include "sources/source_factory.h"

namespace sluice::sinks {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class KafkaSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine_ = std::move(engine::Engine::Open()).ValueOrDie();
    conn_ = std::move(engine_->Connect()).ValueOrDie();
  }
  std::unique_ptr<KafkaSink> Open(std::map<std::string, std::string> options) {
    options["kafka.bootstrap.servers"] = cluster_.bootstrap();
    auto parsed = ParseKafkaSinkOptions(options);
    EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
    auto sink = KafkaSink::Open(engine_.get(), *parsed);
    EXPECT_TRUE(sink.ok()) << sink.status().ToString();
    return std::move(sink).ValueOrDie();
  }
  engine::Batch Rows(const std::string& sql) { return std::move(conn_->Query(sql)).ValueOrDie(); }
  // Reads the topic back with the Kafka source: "partition:key:value" per record.
  std::vector<std::string> ReadBack(const std::string& topic) {
    sources::SourceContext ctx;
    ctx.fs = fs::LocalFileSystem();
    ctx.engine = engine_.get();
    ctx.options = {{"kafka.bootstrap.servers", cluster_.bootstrap()},
                   {"subscribe", topic},
                   {"startingOffsets", "earliest"}};
    auto src = std::move(sources::CreateSource("kafka", ctx)).ValueOrDie();
    auto end = src->LatestOffset(std::nullopt, sources::ReadLimit{});
    EXPECT_TRUE(end.ok()) << end.status().ToString();
    auto b = src->GetBatch(std::nullopt, **end);
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    auto text = conn_->Query("SELECT 1");  // keep the connection warm
    std::vector<std::string> out;
    for (int64_t r = 0; r < b->num_rows(); ++r) {
      out.push_back(b->GetString(r, 3).value_or("?") + ":" + b->GetString(r, 0).value_or("NULL") +
                    ":" + b->GetString(r, 1).value_or("NULL"));
    }
    return out;
  }

  // Reads the topic back with the Kafka source's headers: "value|key=HEX,key=NULL,..." per
  // record in partition and offset order ("value|NULL": the record has no headers).
  std::vector<std::string> ReadHeaders(const std::string& topic) {
    sources::SourceContext ctx;
    ctx.fs = fs::LocalFileSystem();
    ctx.engine = engine_.get();
    ctx.options = {{"kafka.bootstrap.servers", cluster_.bootstrap()},
                   {"subscribe", topic},
                   {"startingOffsets", "earliest"},
                   {"includeHeaders", "true"}};
    auto src = std::move(sources::CreateSource("kafka", ctx)).ValueOrDie();
    auto end = src->LatestOffset(std::nullopt, sources::ReadLimit{});
    EXPECT_TRUE(end.ok()) << end.status().ToString();
    auto b = src->GetBatch(std::nullopt, **end);
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    EXPECT_TRUE(conn_->RegisterBatch("headers_back", *b).ok());
    engine::Batch lines = Rows(
        "SELECT decode(value) || '|' || coalesce(array_to_string(list_transform(headers, lambda h: "
        "h.key || '=' || coalesce(hex(h.value), 'NULL')), ','), 'NULL') FROM headers_back");
    EXPECT_TRUE(conn_->UnregisterBatch("headers_back").ok());
    std::vector<std::string> out;
    for (int64_t r = 0; r < lines.num_rows(); ++r) out.push_back(*lines.GetString(r, 0));
    return out;
  }

  sources::kafka::testing::KafkaTestCluster cluster_;
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<engine::Connection> conn_;
};

TEST_F(KafkaSinkTest, WritesKeyValuePartitionAndReadsBackTheSameBytes) {
  cluster_.CreateTopic("out", 2);
  auto sink = Open({{"topic", "out"}});
  EXPECT_EQ(sink->Description(), "KafkaSink[out]");
  engine::Batch rows = Rows(
      "SELECT * FROM (VALUES ('a', 'x,1;~', 0), (NULL, 'y', 1), ('c', NULL, 1), "
      "('d', 'ünï', 0)) AS t(key, value, partition)");
  ASSERT_TRUE(sink->AddBatch(BatchId(0), rows, OutputMode::kAppend).ok());
  EXPECT_EQ(*sink->LastNumOutputRows(), 4);
  // (BLOB values print non-ASCII bytes as \xNN: 'ünï' is C3 BC 6E C3 AF in UTF-8.)
  EXPECT_EQ(ReadBack("out"), (std::vector<std::string>{"0:a:x,1;~", "0:d:\\xC3\\xBCn\\xC3\\xAF",
                                                       "1:NULL:y", "1:c:NULL"}));
  // BLOB columns are written byte for byte.
  ASSERT_TRUE(sink->AddBatch(BatchId(1), Rows("SELECT '\\x00\\xFF'::BLOB AS value, 0 AS partition"),
                             OutputMode::kAppend)
                  .ok());
  auto back = ReadBack("out");
  ASSERT_EQ(back.size(), 5u);
  EXPECT_EQ(back[2], "0:NULL:\\x00\\xFF");
}

TEST_F(KafkaSinkTest, TopicColumnAndErrors) {
  cluster_.CreateTopic("t1", 1);
  cluster_.CreateTopic("t2", 1);
  auto sink = Open({});
  ASSERT_TRUE(sink->AddBatch(BatchId(0),
                             Rows("SELECT * FROM (VALUES ('t1', 'one'), ('t2', 'two'), "
                                  "('t2', 'three')) AS t(topic, value)"),
                             OutputMode::kAppend)
                  .ok());
  EXPECT_EQ(ReadBack("t1").size(), 1u);
  EXPECT_EQ(ReadBack("t2").size(), 2u);
  auto no_topic = sink->AddBatch(BatchId(1), Rows("SELECT 'v' AS value"), OutputMode::kAppend);
  EXPECT_THAT(no_topic.message(), HasSubstr("there is no topic"));
  auto extra = sink->AddBatch(BatchId(1), Rows("SELECT 't1' AS topic, 'v' AS value, 1 AS id"),
                              OutputMode::kAppend);
  EXPECT_THAT(extra.message(), HasSubstr("column 'id' cannot be written to Kafka"));
  auto no_value = sink->AddBatch(BatchId(1), Rows("SELECT 't1' AS topic"), OutputMode::kAppend);
  EXPECT_THAT(no_value.message(), HasSubstr("must have a 'value' column"));
  auto bad_type =
      sink->AddBatch(BatchId(1), Rows("SELECT 't1' AS topic, 42 AS value"), OutputMode::kAppend);
  EXPECT_THAT(bad_type.message(), HasSubstr("must be VARCHAR or BLOB"));
  auto null_topic = sink->AddBatch(BatchId(1), Rows("SELECT NULL::VARCHAR AS topic, 'v' AS value"),
                                   OutputMode::kAppend);
  EXPECT_THAT(null_topic.message(), HasSubstr("NULL or empty topic"));
  // Options: bootstrap servers required, unknown options named, secrets never echoed.
  EXPECT_THAT(ParseKafkaSinkOptions({{"topic", "x"}}).status().message(),
              HasSubstr("kafka.bootstrap.servers"));
  EXPECT_THAT(ParseKafkaSinkOptions({{"kafka.bootstrap.servers", "h"}, {"colour", "red"}})
                  .status()
                  .message(),
              HasSubstr("unknown option 'colour'"));
  auto bad = KafkaSink::Open(engine_.get(),
                             *ParseKafkaSinkOptions({{"kafka.bootstrap.servers", "h"},
                                                     {"kafka.no.such.property", "hunter2"}}));
  EXPECT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), Not(HasSubstr("hunter2")));
}

// Spark's headers column: ARRAY<STRUCT<key STRING, value BINARY>>, each element a header in order
// (repeated keys kept, a NULL value kept NULL, any bytes); NULL or [] writes none. A VARCHAR value
// is its UTF-8 bytes. A wrong type, a NULL element or a NULL key fails the batch naming it.
TEST_F(KafkaSinkTest, HeadersColumnBecomesRecordHeaders) {
  cluster_.CreateTopic("h", 1);
  auto sink = Open({{"topic", "h"}});
  Status added = sink->AddBatch(
      BatchId(0),
      Rows("SELECT value, headers FROM (VALUES (1, 'v1', [{'key': 'trace', 'value': "
           "'abc'::BLOB}, {'key': 'trace', 'value': NULL::BLOB}, {'key': 'ü', 'value': "
           "'\\x00\\xFF;,|:~'::BLOB}, {'key': '', 'value': ''::BLOB}]), (2, 'v2', NULL), "
           "(3, 'v3', [])) AS t(n, value, headers) ORDER BY n"),
      OutputMode::kAppend);
  ASSERT_TRUE(added.ok()) << added.ToString();
  added = sink->AddBatch(BatchId(1),
                         Rows("SELECT 'v4' AS value, [{'key': 'a', 'value': 'text'}] AS headers"),
                         OutputMode::kAppend);
  ASSERT_TRUE(added.ok()) << added.ToString();
  added = sink->AddBatch(BatchId(2),
                         Rows("SELECT 'v5' AS value, headers FROM (SELECT 1 AS x) "
                              "LEFT JOIN (SELECT [{'key': 'k', 'value': 'x'::BLOB}] AS headers, "
                              "2 AS x) USING (x)"),
                         OutputMode::kAppend);
  ASSERT_TRUE(added.ok()) << added.ToString();
  EXPECT_EQ(ReadHeaders("h"),
            (std::vector<std::string>{"v1|trace=616263,trace=NULL,ü=00FF3B2C7C3A7E,=", "v2|NULL",
                                      "v3|NULL", "v4|a=74657874", "v5|NULL"}));
  auto bad_type =
      sink->AddBatch(BatchId(3), Rows("SELECT 'v' AS value, 'x' AS headers"), OutputMode::kAppend);
  EXPECT_THAT(bad_type.message(),
              HasSubstr("column 'headers' must be a list of STRUCT(key VARCHAR, value BLOB)"));
  auto bad_struct = sink->AddBatch(
      BatchId(3), Rows("SELECT 'v' AS value, [{'name': 'a', 'value': 'x'::BLOB}] AS headers"),
      OutputMode::kAppend);
  EXPECT_THAT(bad_struct.message(), HasSubstr("column 'headers' must be a list of STRUCT"));
  auto null_key = sink->AddBatch(
      BatchId(3),
      Rows("SELECT value, headers FROM (VALUES (1, 'v', [{'key': 'a', 'value': NULL::BLOB}]), "
           "(2, 'w', [{'key': NULL::VARCHAR, 'value': 'x'::BLOB}])) AS t(n, value, headers) "
           "ORDER BY n"),
      OutputMode::kAppend);
  EXPECT_THAT(null_key.message(),
              HasSubstr("row 1 has a NULL header or a header with a NULL key in column 'headers'"));
  auto null_element = sink->AddBatch(
      BatchId(3), Rows("SELECT 'v' AS value, [NULL, {'key': 'a', 'value': 'x'::BLOB}] AS headers"),
      OutputMode::kAppend);
  EXPECT_THAT(null_element.message(), HasSubstr("has a NULL header"));
  EXPECT_EQ(ReadHeaders("h").size(), 5u);  // the failed batches wrote nothing
}

TEST_F(KafkaSinkTest, ManyRowsAcrossRecordCells) {
  cluster_.CreateTopic("big", 3);
  auto sink = Open({{"topic", "big"}});
  ASSERT_TRUE(sink->AddBatch(BatchId(0),
                             Rows("SELECT range::VARCHAR AS key, repeat('x', 50) AS value FROM "
                                  "range(10000)"),
                             OutputMode::kAppend)
                  .ok());
  EXPECT_EQ(*sink->LastNumOutputRows(), 10000);
  EXPECT_EQ(ReadBack("big").size(), 10000u);
}

TEST_F(KafkaSinkTest, TransactionalIdMakesEachBatchOneTransactionWrittenOnce) {
  cluster_.CreateTopic("eo", 2);
  cluster_.CreateTopic("sluice-transaction-markers", 1);
  auto first = Open({{"topic", "eo"}, {"kafka.transactional.id", "q1"}});
  EXPECT_EQ(first->NextUncommittedBatch(), 0);
  Status added = first->AddBatch(BatchId(0),
                                 Rows("SELECT 'a' AS value, 0 AS partition UNION ALL "
                                      "SELECT 'b', 1"),
                                 OutputMode::kAppend);
  ASSERT_TRUE(added.ok()) << added.ToString();
  EXPECT_EQ(*first->LastNumOutputRows(), 2);
  EXPECT_EQ(first->NextUncommittedBatch(), 1);
  EXPECT_EQ(ReadBack("eo"), (std::vector<std::string>{"0:NULL:a", "1:NULL:b"}));
  // A re-run of batch 0 (the crash came after the Kafka commit) writes nothing.
  ASSERT_TRUE(
      first->AddBatch(BatchId(0), Rows("SELECT 'a' AS value, 0 AS partition"), OutputMode::kAppend)
          .ok());
  EXPECT_EQ(*first->LastNumOutputRows(), 0);
  // A batch that fails half-way is aborted: none of its records become visible.
  auto bad = first->AddBatch(BatchId(1),
                             Rows("SELECT 'c' AS value, 0 AS partition UNION ALL "
                                  "SELECT 'd', 7"),
                             OutputMode::kAppend);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(first->NextUncommittedBatch(), 1);
  first.reset();
  // Another query's transactional.id keeps its own markers.
  auto other = Open({{"topic", "eo"}, {"kafka.transactional.id", "q2"}});
  EXPECT_EQ(other->NextUncommittedBatch(), 0);
  ASSERT_TRUE(
      other->AddBatch(BatchId(0), Rows("SELECT 'x' AS value, 1 AS partition"), OutputMode::kAppend)
          .ok());
  // A new process (new producer, same transactional.id) fences the old one, reads its markers
  // and goes on from batch 1.
  auto second = Open({{"topic", "eo"}, {"kafka.transactional.id", "q1"}});
  EXPECT_EQ(second->NextUncommittedBatch(), 1);
  ASSERT_TRUE(second
                  ->AddBatch(BatchId(0), Rows("SELECT 'again' AS value, 0 AS partition"),
                             OutputMode::kAppend)
                  .ok());
  EXPECT_EQ(*second->LastNumOutputRows(), 0);
  ASSERT_TRUE(
      second->AddBatch(BatchId(1), Rows("SELECT 'c' AS value, 0 AS partition"), OutputMode::kAppend)
          .ok());
  EXPECT_EQ(ReadBack("eo"),
            (std::vector<std::string>{"0:NULL:a", "0:NULL:c", "1:NULL:b", "1:NULL:x"}));
  EXPECT_EQ(second->NextUncommittedBatch(), 2);
  EXPECT_EQ(Open({{"topic", "eo"}, {"kafka.transactional.id", "q1"}})->NextUncommittedBatch(), 2);
}

// The guard of a checkpoint's first batches (kafka_sink.h, checkpoint_last_planned_batch): a
// transactional.id whose markers say that batches the checkpoint never planned were committed
// belongs to another checkpoint, and is refused; the checkpoint that wrote them opens.
TEST_F(KafkaSinkTest, ATransactionalIdAheadOfTheCheckpointIsRefused) {
  cluster_.CreateTopic("eo", 1);
  cluster_.CreateTopic("sluice-transaction-markers", 1);
  {
    auto sink = Open({{"topic", "eo"}, {"kafka.transactional.id", "g1"}});
    ASSERT_TRUE(sink->AddBatch(BatchId(0), Rows("SELECT 'a' AS value"), OutputMode::kAppend).ok());
    ASSERT_TRUE(sink->AddBatch(BatchId(1), Rows("SELECT 'b' AS value"), OutputMode::kAppend).ok());
  }
  auto open_planned = [&](int64_t planned) {
    auto parsed = ParseKafkaSinkOptions({{"kafka.bootstrap.servers", cluster_.bootstrap()},
                                         {"topic", "eo"},
                                         {"kafka.transactional.id", "g1"}});
    EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
    parsed->checkpoint_last_planned_batch = planned;
    return KafkaSink::Open(engine_.get(), *parsed);
  };
  auto fresh = open_planned(-1);  // a new checkpoint
  ASSERT_FALSE(fresh.ok());
  EXPECT_THAT(fresh.status().message(),
              HasSubstr("kafka.transactional.id 'g1' has committed batches up to 1 to Kafka, but "
                        "the query's checkpoint has planned none"));
  EXPECT_THAT(fresh.status().message(), HasSubstr("give the query a new kafka.transactional.id"));
  auto behind = open_planned(0);
  ASSERT_FALSE(behind.ok());
  EXPECT_THAT(behind.status().message(), HasSubstr("has planned only up to batch 0"));
  // The checkpoint that committed batch 1 (planned 1, or 2 when batch 2 was planned and not
  // committed before a crash) goes on.
  auto same = open_planned(1);
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_EQ((*same)->NextUncommittedBatch(), 2);
  same->reset();
  auto ahead = open_planned(2);
  ASSERT_TRUE(ahead.ok()) << ahead.status().ToString();
  EXPECT_EQ(ReadBack("eo"), (std::vector<std::string>{"0:NULL:a", "0:NULL:b"}));
}

// Nothing listens at the bootstrap server: init_transactions fails at once naming the servers
// and why, instead of waiting out the delivery timeout (here an hour: the test would hang).
TEST_F(KafkaSinkTest, AnUnreachableClusterFailsTheTransactionalSinkAtOnce) {
  auto parsed = ParseKafkaSinkOptions({{"kafka.bootstrap.servers", "127.0.0.1:1"},
                                       {"topic", "t"},
                                       {"kafka.transactional.id", "unreachable"}});
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  parsed->delivery_timeout_ms = 3600 * 1000;
  auto sink = KafkaSink::Open(engine_.get(), *parsed);
  ASSERT_FALSE(sink.ok());
  const std::string msg = sink.status().message();
  EXPECT_THAT(msg, HasSubstr("starting transactions for transactional.id 'unreachable'"));
  EXPECT_THAT(msg, HasSubstr("no broker of kafka.bootstrap.servers '127.0.0.1:1' could be "
                             "reached: "));
  EXPECT_THAT(msg, HasSubstr("Connection refused"));
}

TEST_F(KafkaSinkTest, TransactionMarkerTopicErrors) {
  auto empty = ParseKafkaSinkOptions({{"kafka.bootstrap.servers", cluster_.bootstrap()},
                                      {"kafka.transactional.id", "q"},
                                      {"transactionMarkerTopic", ""}});
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.status().message(), HasSubstr("'transactionMarkerTopic' is empty"));
}

}  // namespace
}  // namespace sluice::sinks
