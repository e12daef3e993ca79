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

TEST_F(KafkaSinkTest, TransactionMarkerTopicErrors) {
  auto empty = ParseKafkaSinkOptions({{"kafka.bootstrap.servers", cluster_.bootstrap()},
                                      {"kafka.transactional.id", "q"},
                                      {"transactionMarkerTopic", ""}});
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.status().message(), HasSubstr("'transactionMarkerTopic' is empty"));
}

}  // namespace
}  // namespace sluice::sinks
