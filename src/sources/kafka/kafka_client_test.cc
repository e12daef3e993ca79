// KafkaClient's batched offset queries (ListOffsets) against the mock cluster or the real broker
// of SLUICE_KAFKA_BOOTSTRAP (test_cluster.h): the same answers as the per-partition Watermarks,
// in one request. (An earliest offset above 0, which the mock cannot make, is the data-loss
// case of test/interop/kafka/kafka_broker_test.cc, on the real broker.)
#include "sources/kafka/kafka_client.h"

#include <gtest/gtest.h>

#include "sources/kafka/test_cluster.h"

namespace sluice::sources::kafka {
namespace {

constexpr int16_t kListOffsetsApiKey = 2;

std::unique_ptr<KafkaClient> OpenClient(const testing::KafkaTestCluster& cluster) {
  KafkaClientOptions options;
  options.config["bootstrap.servers"] = cluster.bootstrap();
  options.group_id = "kafka-client-test";
  options.timeout_ms = 20000;
  auto client = KafkaClient::Open(options);
  EXPECT_TRUE(client.ok()) << client.status().ToString();
  return client.ok() ? std::move(*client) : nullptr;
}

// Partition p of `topic` holds p + 1 records.
void Fill(testing::KafkaTestCluster& cluster, const std::string& topic, int partitions) {
  cluster.CreateTopic(topic, partitions);
  for (int p = 0; p < partitions; ++p) {
    for (int i = 0; i <= p; ++i) cluster.Produce(topic, p, std::nullopt, "v" + std::to_string(i));
  }
  cluster.Flush();
}

TEST(KafkaClientTest, ListOffsetsGivesWhatWatermarksGivesAndLeavesOutMissingPartitions) {
  testing::KafkaTestCluster cluster;
  Fill(cluster, "lo", 8);
  auto client = OpenClient(cluster);
  ASSERT_NE(client, nullptr);
  std::set<TopicPartition> asked;
  for (int p = 0; p < 8; ++p) asked.insert({"lo", p});
  asked.insert({"lo", 99});         // the topic has no such partition
  asked.insert({"lo-missing", 0});  // no such topic
  auto latest = client->ListOffsets(asked, KafkaClient::OffsetQuery::kLatest);
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  auto earliest = client->ListOffsets(asked, KafkaClient::OffsetQuery::kEarliest);
  ASSERT_TRUE(earliest.ok()) << earliest.status().ToString();
  ASSERT_EQ(latest->size(), 8u);
  ASSERT_EQ(earliest->size(), 8u);
  for (int p = 0; p < 8; ++p) {
    const TopicPartition tp{"lo", p};
    auto w = client->Watermarks(tp);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    EXPECT_EQ(latest->at(tp), p + 1) << tp.ToString();
    EXPECT_EQ(earliest->at(tp), 0) << tp.ToString();
    EXPECT_EQ(latest->at(tp), w->second) << tp.ToString();
    EXPECT_EQ(earliest->at(tp), w->first) << tp.ToString();
  }
  auto none = client->ListOffsets({}, KafkaClient::OffsetQuery::kLatest);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(KafkaClientTest, ListOffsetsAsksForAllPartitionsInOneRequest) {
  testing::KafkaTestCluster cluster;
  if (cluster.real()) GTEST_SKIP() << "counting requests needs the mock cluster";
  Fill(cluster, "one", 8);
  auto client = OpenClient(cluster);
  ASSERT_NE(client, nullptr);
  std::set<TopicPartition> asked;
  for (int p = 0; p < 8; ++p) asked.insert({"one", p});
  // The first query also learns the partitions' leaders (a metadata request).
  ASSERT_TRUE(client->ListOffsets(asked, KafkaClient::OffsetQuery::kLatest).ok());
  cluster.TrackRequests();
  auto latest = client->ListOffsets(asked, KafkaClient::OffsetQuery::kLatest);
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_EQ(latest->size(), 8u);
  EXPECT_EQ(cluster.CountRequests(kListOffsetsApiKey), 1u);
  // Watermarks, for comparison, asks twice per partition.
  cluster.TrackRequests();
  ASSERT_TRUE(client->Watermarks({"one", 0}).ok());
  EXPECT_EQ(cluster.CountRequests(kListOffsetsApiKey), 2u);
}

TEST(KafkaClientTest, ListOffsetsWaitsOutTheErrorsOfARestartedLeader) {
  testing::KafkaTestCluster cluster;
  if (cluster.real()) GTEST_SKIP() << "injecting request errors needs the mock cluster";
  Fill(cluster, "epoch", 2);
  auto client = OpenClient(cluster);
  ASSERT_NE(client, nullptr);
  const std::set<TopicPartition> asked = {{"epoch", 0}, {"epoch", 1}};
  ASSERT_TRUE(client->ListOffsets(asked, KafkaClient::OffsetQuery::kLatest).ok());
  // What a broker answers for a while after its restart (interop/kafka/broker_restart).
  cluster.PushRequestErrors(kListOffsetsApiKey, {RD_KAFKA_RESP_ERR_FENCED_LEADER_EPOCH,
                                                 RD_KAFKA_RESP_ERR_UNKNOWN_LEADER_EPOCH,
                                                 RD_KAFKA_RESP_ERR_OFFSET_NOT_AVAILABLE});
  cluster.TrackRequests();
  auto latest = client->ListOffsets(asked, KafkaClient::OffsetQuery::kLatest);
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_EQ(*latest, (PartitionOffsets{{{"epoch", 0}, 1}, {{"epoch", 1}, 2}}));
  EXPECT_EQ(cluster.CountRequests(kListOffsetsApiKey), 4u);  // three refused, then the answer
}

TEST(KafkaClientTest, ListOffsetsAfterInterruptIsCancelled) {
  testing::KafkaTestCluster cluster;
  Fill(cluster, "int", 2);
  auto client = OpenClient(cluster);
  ASSERT_NE(client, nullptr);
  client->Interrupt();
  auto latest = client->ListOffsets({{"int", 0}, {"int", 1}}, KafkaClient::OffsetQuery::kLatest);
  ASSERT_FALSE(latest.ok());
  EXPECT_TRUE(latest.status().IsCancelled()) << latest.status().ToString();
}

// The values ReadRanges delivers, in order.
std::vector<std::string> Read(KafkaClient& client,
                              const std::map<TopicPartition, std::pair<int64_t, int64_t>>& ranges) {
  std::vector<std::string> out;
  Status st = client.ReadRanges(ranges, [&](const KafkaRecord& r) {
    out.emplace_back(static_cast<const char*>(r.value), r.value_len);
    return Status::OK();
  });
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

TEST(KafkaClientTest, AnIdlePartitionStaysAssignedAndItsNewRecordsContinueWithoutASeek) {
  testing::KafkaTestCluster cluster;
  Fill(cluster, "idle", 2);  // p0: v0; p1: v0 v1
  auto client = OpenClient(cluster);
  ASSERT_NE(client, nullptr);
  const TopicPartition p0{"idle", 0}, p1{"idle", 1};
  EXPECT_EQ(Read(*client, {{p0, {0, 0}}, {p1, {0, 2}}}), (std::vector<std::string>{"v0", "v1"}));
  EXPECT_EQ(client->assignments(), 1);
  // p0 was empty in the first read; its new records continue the assignment.
  cluster.Produce("idle", 0, std::nullopt, "p0-new");
  cluster.Flush();
  EXPECT_EQ(Read(*client, {{p0, {0, 2}}, {p1, {2, 2}}}),
            (std::vector<std::string>{"v0", "p0-new"}));
  EXPECT_EQ(client->assignments(), 1);
  // An empty range that does not match the assignment changes nothing.
  EXPECT_TRUE(Read(*client, {{p0, {1, 1}}, {p1, {0, 0}}}).empty());
  EXPECT_EQ(client->assignments(), 1);
  // A re-run of a range already read is a new assignment, and exactly that range again.
  EXPECT_EQ(Read(*client, {{p0, {1, 2}}, {p1, {1, 2}}}),
            (std::vector<std::string>{"p0-new", "v1"}));
  EXPECT_EQ(client->assignments(), 2);
}

}  // namespace
}  // namespace sluice::sources::kafka
