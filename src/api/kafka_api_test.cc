// Kafka through the public C++ API: ReadStream().Format("kafka") -> transform ->
// WriteStream().Format("kafka"), against librdkafka's mock cluster started by the test (or the
// real broker of SLUICE_KAFKA_BOOTSTRAP, sources/kafka/test_cluster.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fs/test_util.h"
#include "sluice/sluice.h"
#include "sources/kafka/test_cluster.h"

namespace sluice {
namespace {

TEST(KafkaApiTest, KafkaToKafkaThroughTheApi) {
  fs::ScopedTempDir dir("sluice-kafka-api");
  sources::kafka::testing::KafkaTestCluster cluster;
  cluster.CreateTopic("in", 2);
  cluster.CreateTopic("out", 1);
  for (int i = 0; i < 10; ++i)
    cluster.Produce("in", i % 2, "k" + std::to_string(i), std::to_string(i));
  cluster.Flush();
  auto session = Session::Open({.warehouse = dir.Join("wh")});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  DataFrame in = (*session)
                     ->ReadStream()
                     .Format("kafka")
                     .Option("kafka.bootstrap.servers", cluster.bootstrap())
                     .Option("subscribe", "in")
                     .Option("startingOffsets", "earliest")
                     .Load();
  ASSERT_TRUE(in.status().ok()) << in.status().ToString();
  DataFrame doubled =
      in.SelectExpr({"key", "CAST(CAST(decode(value) AS INT) * 2 AS VARCHAR) AS value"});
  auto q = doubled.WriteStream()
               .Format("kafka")
               .Option("kafka.bootstrap.servers", cluster.bootstrap())
               .Option("topic", "out")
               .Option("checkpointLocation", dir.Join("ck"))
               .Start();
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  ASSERT_TRUE((*q)->Stop().ok());
  // Read "out" back as a batch of the stream.
  auto back = (*session)
                  ->ReadStream()
                  .Format("kafka")
                  .Option("kafka.bootstrap.servers", cluster.bootstrap())
                  .Option("subscribe", "out")
                  .Option("startingOffsets", "earliest")
                  .Load()
                  .SelectExpr({"decode(key) AS k", "decode(value) AS v"})
                  .WriteStream()
                  .Format("memory")
                  .QueryName("back")
                  .Start();
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_TRUE((*back)->ProcessAllAvailable().ok());
  auto rows = (*session)->Table("back").Collect();
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  std::vector<std::string> got = rows->RowStrings();
  std::sort(got.begin(), got.end());
  std::vector<std::string> want;
  for (int i = 0; i < 10; ++i)
    want.push_back("k" + std::to_string(i) + "," + std::to_string(2 * i));
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
  ASSERT_TRUE((*back)->Stop().ok());
  // A Kafka sink needs a checkpoint and names its options.
  auto no_ck = doubled.WriteStream()
                   .Format("kafka")
                   .Option("kafka.bootstrap.servers", cluster.bootstrap())
                   .Option("topic", "out")
                   .Start();
  EXPECT_FALSE(no_ck.ok());
  EXPECT_NE(no_ck.status().message().find("checkpointLocation"), std::string::npos);
  auto bad = doubled.WriteStream()
                 .Format("kafka")
                 .Option("kafka.bootstrap.servers", cluster.bootstrap())
                 .Option("colour", "red")
                 .Option("checkpointLocation", dir.Join("ck2"))
                 .Start();
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("topic, kafka.*"), std::string::npos);
}

// Exactly-once into Kafka: kafka.transactional.id makes each batch one transaction; a restart on
// the same checkpoint and id goes on without duplicates; a new checkpoint with the used id is
// refused (its batches 0.. would be taken for the committed ones and skipped).
TEST(KafkaApiTest, TransactionalKafkaSinkAcrossRestarts) {
  fs::ScopedTempDir dir("sluice-kafka-api-eo");
  sources::kafka::testing::KafkaTestCluster cluster;
  cluster.CreateTopic("in", 2);
  cluster.CreateTopic("out", 1);
  cluster.CreateTopic("markers", 1);
  auto session = Session::Open({.warehouse = dir.Join("wh")});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto run = [&](const std::string& checkpoint) -> Status {
    DataFrame in = (*session)
                       ->ReadStream()
                       .Format("kafka")
                       .Option("kafka.bootstrap.servers", cluster.bootstrap())
                       .Option("subscribe", "in")
                       .Option("startingOffsets", "earliest")
                       .Option("maxOffsetsPerTrigger", 3)
                       .Load();
    auto q = in.SelectExpr({"key", "value"})
                 .WriteStream()
                 .Format("kafka")
                 .Option("kafka.bootstrap.servers", cluster.bootstrap())
                 .Option("topic", "out")
                 .Option("kafka.transactional.id", "copy-in-out-v1")
                 .Option("transactionMarkerTopic", "markers")
                 .Option("checkpointLocation", checkpoint)
                 .Trigger(Trigger::AvailableNow())
                 .Start();
    if (!q.ok()) return q.status();
    return (*q)->AwaitTermination();
  };
  for (int i = 0; i < 7; ++i) cluster.Produce("in", i % 2, "k", std::to_string(i));
  cluster.Flush();
  Status first = run(dir.Join("ck"));
  ASSERT_TRUE(first.ok()) << first.ToString();
  for (int i = 7; i < 10; ++i) cluster.Produce("in", i % 2, "k", std::to_string(i));
  cluster.Flush();
  Status second = run(dir.Join("ck"));
  ASSERT_TRUE(second.ok()) << second.ToString();
  // A new checkpoint with the same id: refused before it writes anything.
  Status reused = run(dir.Join("ck-new"));
  EXPECT_FALSE(reused.ok());
  EXPECT_NE(reused.message().find("kafka.transactional.id 'copy-in-out-v1' has committed batches "
                                  "up to "),
            std::string::npos)
      << reused.ToString();
  EXPECT_NE(reused.message().find("to Kafka, but the query's checkpoint has planned none"),
            std::string::npos)
      << reused.ToString();
  auto back = (*session)
                  ->ReadStream()
                  .Format("kafka")
                  .Option("kafka.bootstrap.servers", cluster.bootstrap())
                  .Option("subscribe", "out")
                  .Option("startingOffsets", "earliest")
                  .Load()
                  .SelectExpr({"decode(value) AS v"})
                  .WriteStream()
                  .Format("memory")
                  .QueryName("eo_back")
                  .Start();
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_TRUE((*back)->ProcessAllAvailable().ok());
  auto rows = (*session)->Table("eo_back").Collect();
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  std::vector<std::string> got = rows->RowStrings();
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}));
  ASSERT_TRUE((*back)->Stop().ok());
}

}  // namespace
}  // namespace sluice
