#include "cli/nexmark_kafka_sql.h"

#include <gtest/gtest.h>

namespace sluice::cli {
namespace {

TEST(NexmarkKafkaSql, ReplacesAWatermarkedBidStream) {
  Result<std::string> out = NexmarkKafkaQueryText(
      "SELECT auction FROM STREAM @BID@ WATERMARK dateTime DELAY OF INTERVAL 4 SECONDS AS b;",
      NexmarkKafkaStreams{"127.0.0.1:9", 1000});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->find("@BID@"), std::string::npos);
  EXPECT_NE(out->find("subscribe => 'nexmark-bid'"), std::string::npos) << *out;
  EXPECT_NE(out->find("bootstrapServers => '127.0.0.1:9'"), std::string::npos) << *out;
  EXPECT_NE(out->find("maxOffsetsPerTrigger => 920)"), std::string::npos) << *out;  // 46 / 50
  EXPECT_NE(out->find("WATERMARK timestamp AS dateTime DELAY OF INTERVAL 4 SECONDS AS __k)) AS b;"),
            std::string::npos)
      << *out;
  EXPECT_NE(out->find("__e.bid.auction AS auction"), std::string::npos) << *out;
  EXPECT_EQ(out->rfind("SELECT auction FROM (SELECT ", 0), 0u) << *out;
}

TEST(NexmarkKafkaSql, KeepsAComputedWatermarkAndJoinsTwoKinds) {
  Result<std::string> out = NexmarkKafkaQueryText(
      "FROM STREAM @AUCTION@ WATERMARK dateTime DELAY OF INTERVAL 4 SECONDS AS A\n"
      "JOIN STREAM @PERSON@ WATERMARK current_timestamp AS p_time DELAY OF INTERVAL 0 SECONDS AS P",
      NexmarkKafkaStreams{"h:1", 50});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_NE(out->find("subscribe => 'nexmark-auction'"), std::string::npos) << *out;
  EXPECT_NE(out->find("maxOffsetsPerTrigger => 3)"), std::string::npos) << *out;
  EXPECT_NE(out->find("subscribe => 'nexmark-person'"), std::string::npos) << *out;
  EXPECT_NE(out->find("maxOffsetsPerTrigger => 1)"), std::string::npos) << *out;
  EXPECT_NE(out->find("WATERMARK current_timestamp AS p_time DELAY OF INTERVAL 0 SECONDS AS __k"),
            std::string::npos)
      << *out;
  EXPECT_NE(out->find("timestamp AS dateTime, p_time FROM STREAM"), std::string::npos) << *out;
  EXPECT_NE(out->find("__e.person.extra AS extra, p_time FROM"), std::string::npos) << *out;
}

TEST(NexmarkKafkaSql, WatermarksAnotherTimeColumnOfTheKind) {
  Result<std::string> out = NexmarkKafkaQueryText(
      "FROM STREAM @AUCTION@ WATERMARK expires DELAY OF INTERVAL 4 SECONDS AS a",
      NexmarkKafkaStreams{"h:1", 50});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_NE(out->find("WATERMARK CAST(from_json(decode(value), 'auction STRUCT<expires: "
                      "TIMESTAMP>').auction.expires AS TIMESTAMPTZ) AS expires DELAY OF INTERVAL "
                      "4 SECONDS AS __k"),
            std::string::npos)
      << *out;
  EXPECT_NE(out->find("dateTime, expires, __e.auction.seller AS seller"), std::string::npos)
      << *out;
  EXPECT_EQ(out->find("__e.auction.expires"), std::string::npos) << *out;
}

TEST(NexmarkKafkaSql, AuctionExpiresHasTheGeneratorsType) {
  // The generator's expires is TIMESTAMPTZ; from_json's TIMESTAMP is cast to it (a Delta sink
  // refuses TIMESTAMP without time zone, and a join or comparison would mix the two types).
  Result<std::string> out = NexmarkKafkaQueryText(
      "FROM STREAM @AUCTION@ WATERMARK dateTime DELAY OF INTERVAL 4 SECONDS AS a",
      NexmarkKafkaStreams{"h:1", 50});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_NE(out->find("dateTime, CAST(__e.auction.expires AS TIMESTAMPTZ) AS expires, "),
            std::string::npos)
      << *out;
}

TEST(NexmarkKafkaSql, RefusesAPlaceholderInAnotherForm) {
  Result<std::string> out =
      NexmarkKafkaQueryText("SELECT * FROM STREAM @BID@ AS b", NexmarkKafkaStreams{"h:1", 10});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().ToString().find("@BID@"), std::string::npos) << out.status().ToString();
}

}  // namespace
}  // namespace sluice::cli
