// The Kafka source on what only a real broker does (test/interop/kafka, `make interop`): retention
// deleting old segments under a stream, and a topic deleted and created again (the mock of this
// librdkafka can do neither, nor DeleteRecords). Runs against the broker named by
// SLUICE_KAFKA_BOOTSTRAP (with_broker.sh starts one, with a retention check every 500 ms);
// without it every test fails saying so.
#include <chrono>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fs/local_file_system.h"
#include "fs/test_util.h"
#include "sources/kafka/kafka_source.h"
#include "sources/kafka/test_cluster.h"
#include "sources/source_factory.h"

namespace sluice::sources::kafka {
namespace {

using ::testing::HasSubstr;

class KafkaBrokerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(testing::RealKafkaBootstrap().empty())
        << "these tests need a real Kafka broker: run them through "
           "test/interop/kafka/with_broker.sh (make interop; make peers installs the broker)";
    cluster_ = std::make_unique<testing::KafkaTestCluster>();
    auto e = engine::Engine::Open();
    ASSERT_TRUE(e.ok());
    engine_ = std::move(*e);
  }

  std::unique_ptr<Source> Make(std::map<std::string, std::string> options,
                               const std::string& checkpoint_subdir) {
    SourceContext ctx;
    ctx.fs = fs::LocalFileSystem();
    ctx.engine = engine_.get();
    ctx.checkpoint_dir = dir_.Join(checkpoint_subdir);
    options["kafka.bootstrap.servers"] = cluster_->bootstrap();
    options["kafkaConsumer.pollTimeoutMs"] = "20000";
    ctx.options = std::move(options);
    auto s = CreateSource("kafka", ctx);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }

  // "offset:value" per row.
  static std::vector<std::string> Rows(const engine::Batch& b) {
    std::vector<std::string> out;
    for (int64_t r = 0; r < b.num_rows(); ++r) {
      out.push_back(std::to_string(b.GetInt64(r, 4)->value_or(-1)) + ":" +
                    b.GetString(r, 1).value_or("NULL"));
    }
    return out;
  }

  fs::ScopedTempDir dir_{"sluice-kafka-broker"};
  std::unique_ptr<testing::KafkaTestCluster> cluster_;
  std::unique_ptr<engine::Engine> engine_;
};

TEST_F(KafkaBrokerTest, RetentionDeletingSegmentsIsDataLoss) {
  // Segments roll after 100 ms, and retention keeps no more than 1 byte besides the active
  // segment: the first ten records go once an eleventh, later one has rolled a new segment.
  cluster_->CreateTopic("short", 1,
                        {{"segment.ms", "100"}, {"retention.bytes", "1"}, {"retention.ms", "-1"}});
  for (int i = 0; i < 10; ++i) cluster_->Produce("short", 0, "k", "old" + std::to_string(i));
  cluster_->Flush();
  auto src = Make({{"subscribe", "short"}, {"startingOffsets", "earliest"}}, "strict");
  ASSERT_TRUE(src);
  auto first = src->LatestOffset(std::nullopt, ReadLimit{});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(**first, R"({"short":{"0":10}})");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  cluster_->Produce("short", 0, "k", "new10");
  cluster_->Flush();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (cluster_->Watermarks("short", 0).first < 10 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_EQ(cluster_->Watermarks("short", 0), std::make_pair(int64_t{10}, int64_t{11}))
      << "retention did not delete the first segment within 60 s";
  // The stream's batch 0 (earliest = 0 .. 10) is gone: a re-run of it is data loss.
  auto lost = src->GetBatch(std::nullopt, **first);
  ASSERT_FALSE(lost.ok());
  EXPECT_THAT(lost.status().message(), HasSubstr("offsets [0, 10) of short-0 were deleted"));
  EXPECT_THAT(lost.status().message(), HasSubstr("failOnDataLoss"));
  auto end = src->LatestOffset(**first, ReadLimit{});
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  EXPECT_EQ(**end, R"({"short":{"0":11}})");
  // Lenient: the readable part of the same ranges.
  auto lenient =
      Make({{"subscribe", "short"}, {"startingOffsets", "earliest"}, {"failOnDataLoss", "false"}},
           "lenient");
  auto b = lenient->GetBatch(R"({"short":{"0":0}})", **end);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(Rows(*b), (std::vector<std::string>{"10:new10"}));
}

TEST_F(KafkaBrokerTest, TopicDeletedAndCreatedAgain) {
  cluster_->CreateTopic("again", 2);
  for (int i = 0; i < 20; ++i) cluster_->Produce("again", i % 2, "k", "first" + std::to_string(i));
  cluster_->Flush();
  auto strict = Make({{"subscribe", "again"}, {"startingOffsets", "earliest"}}, "strict");
  auto lenient =
      Make({{"subscribe", "again"}, {"startingOffsets", "earliest"}, {"failOnDataLoss", "false"}},
           "lenient");
  ASSERT_TRUE(strict && lenient);
  const std::string read = R"({"again":{"0":10,"1":10}})";
  auto end = strict->LatestOffset(std::nullopt, ReadLimit{});
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  ASSERT_EQ(**end, read);
  ASSERT_TRUE(strict->GetBatch(std::nullopt, **end).ok());
  // The topic goes and comes back with 3 records per partition: offsets below the stream's.
  cluster_->DeleteTopic("again");
  cluster_->CreateTopic("again", 2);
  for (int i = 0; i < 6; ++i) cluster_->Produce("again", i % 2, "k", "second" + std::to_string(i));
  cluster_->Flush();
  // failOnDataLoss=true: an error naming the partition, before any batch is planned.
  auto failed = strict->LatestOffset(read, ReadLimit{});
  ASSERT_FALSE(failed.ok()) << "got " << failed->value_or("nothing");
  EXPECT_THAT(failed.status().message(),
              HasSubstr("partition again-0's offset was changed from 10 to 3"));
  EXPECT_THAT(failed.status().message(), HasSubstr("failOnDataLoss"));
  // false: the end moves back to the new topic's offsets and the batch reads all of its records.
  auto end2 = lenient->LatestOffset(read, ReadLimit{});
  ASSERT_TRUE(end2.ok()) << end2.status().ToString();
  EXPECT_EQ(**end2, R"({"again":{"0":3,"1":3}})");
  auto b = lenient->GetBatch(read, **end2);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(Rows(*b), (std::vector<std::string>{"0:second0", "1:second2", "2:second4", "0:second1",
                                                "1:second3", "2:second5"}));
  // And the stream goes on from there.
  cluster_->Produce("again", 1, "k", "second6");
  cluster_->Flush();
  auto end3 = lenient->LatestOffset(**end2, ReadLimit{});
  ASSERT_TRUE(end3.ok());
  EXPECT_EQ(**end3, R"({"again":{"0":3,"1":4}})");
  auto b3 = lenient->GetBatch(**end2, **end3);
  ASSERT_TRUE(b3.ok()) << b3.status().ToString();
  EXPECT_EQ(Rows(*b3), (std::vector<std::string>{"3:second6"}));
}

TEST_F(KafkaBrokerTest, PartitionsAddedToATopicAreReadFromTheirStart) {
  cluster_->CreateTopic("grow", 1);
  for (int i = 0; i < 3; ++i) cluster_->Produce("grow", 0, "k", "p0-" + std::to_string(i));
  cluster_->Flush();
  auto src = Make({{"subscribe", "grow"}, {"startingOffsets", "latest"}}, "grow");
  ASSERT_TRUE(src);
  auto end = src->LatestOffset(std::nullopt, ReadLimit{});
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  EXPECT_EQ(**end, R"({"grow":{"0":3}})");
  // Two partitions more; records in the new ones and the old one.
  cluster_->AddPartitions("grow", 3);
  cluster_->Produce("grow", 0, "k", "p0-3");
  for (int i = 0; i < 2; ++i) cluster_->Produce("grow", 1, "k", "p1-" + std::to_string(i));
  cluster_->Produce("grow", 2, "k", "p2-0");
  cluster_->Flush();
  auto end2 = src->LatestOffset(**end, ReadLimit{});
  ASSERT_TRUE(end2.ok()) << end2.status().ToString();
  EXPECT_EQ(**end2, R"({"grow":{"0":4,"1":2,"2":1}})");
  // New partitions start at their earliest offset (not at latest, as startingOffsets says for
  // the first batch only), as in Spark.
  auto b = src->GetBatch(**end, **end2);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(Rows(*b), (std::vector<std::string>{"3:p0-3", "0:p1-0", "1:p1-1", "0:p2-0"}));
  // maxOffsetsPerTrigger splits across the old and the new partitions by backlog.
  for (int i = 0; i < 6; ++i) cluster_->Produce("grow", i % 3, "k", "more" + std::to_string(i));
  cluster_->Flush();
  auto limited =
      Make({{"subscribe", "grow"}, {"startingOffsets", "earliest"}, {"maxOffsetsPerTrigger", "6"}},
           "limited");
  auto first = limited->LatestOffset(std::nullopt, ReadLimit{});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  // Backlogs 6, 4 and 3 of 13: shares floor(6 * 6/13) = 2, floor(6 * 4/13) = 1, floor(6 * 3/13)
  // = 1.
  EXPECT_EQ(**first, R"({"grow":{"0":2,"1":1,"2":1}})");
}

}  // namespace
}  // namespace sluice::sources::kafka
