#include "sql/session.h"

#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

namespace sluice::sql {
namespace {

class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sluice_session_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    SessionOptions options;
    options.warehouse = dir_ + "/wh";
    auto session = Session::Open(options);
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    session_ = std::move(session).ValueOrDie();
  }
  void TearDown() override {
    session_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::string dir_;
  std::unique_ptr<Session> session_;
};

TEST_F(SessionTest, CreatesWarehouseAndRunsQueries) {
  EXPECT_TRUE(std::filesystem::is_directory(dir_ + "/wh"));
  auto rows = session_->Execute("SELECT 42 AS answer");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->num_rows(), 1);
  EXPECT_EQ(rows->schema()[0].name, "answer");
  EXPECT_EQ(*rows->GetString(0, 0), "42");
}

TEST_F(SessionTest, SetAndResetSluiceSettings) {
  ASSERT_TRUE(session_->Execute("SET sluice.multipleWatermarkPolicy = 'max'").ok());
  EXPECT_EQ(*session_->settings().Get("multipleWatermarkPolicy"), "max");
  ASSERT_TRUE(session_->Execute("set SLUICE.noDataBatches TO false;").ok());
  EXPECT_FALSE(session_->settings().GetBoolean("noDataBatches"));
  ASSERT_TRUE(
      session_->Execute("-- a comment first\n/* and another */ RESET sluice.noDataBatches").ok());
  EXPECT_TRUE(session_->settings().GetBoolean("noDataBatches"));
  ASSERT_TRUE(session_->Execute("SET sluice.warehouse = '" + dir_ + "/other'").ok());
  EXPECT_EQ(session_->warehouse(), dir_ + "/other");
  EXPECT_TRUE(std::filesystem::is_directory(dir_ + "/other"));
}

TEST_F(SessionTest, BadSettingsAreClearErrors) {
  auto r = session_->Execute("SET sluice.bogus = 1");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("sluice.bogus"), std::string::npos);
  EXPECT_FALSE(session_->Execute("SET sluice.noDataBatches = 'maybe'").ok());
  EXPECT_FALSE(session_->Execute("SET sluice.noDataBatches").ok());
  EXPECT_FALSE(session_->Execute("SET sluice.warehouse = 'a' 'b'").ok());
}

// Databricks notebooks set Spark's names; those with a Sluice equivalent act on it.
TEST_F(SessionTest, SparkConfsWithASluiceEquivalentAreMapped) {
  ASSERT_TRUE(session_->Execute("SET spark.sql.shuffle.partitions = 6").ok());
  EXPECT_EQ(session_->settings().GetInteger("shufflePartitions"), 6);
  ASSERT_TRUE(session_->Execute("SET spark.sql.streaming.noDataMicroBatches.enabled=false").ok());
  EXPECT_FALSE(session_->settings().GetBoolean("noDataBatches"));
  ASSERT_TRUE(session_->Execute("SET spark.sql.streaming.multipleWatermarkPolicy = 'max'").ok());
  EXPECT_EQ(session_->settings().GetString("multipleWatermarkPolicy"), "max");
  ASSERT_TRUE(session_->Execute("RESET spark.sql.shuffle.partitions").ok());
  EXPECT_EQ(session_->settings().GetInteger("shufflePartitions"), 4);
  EXPECT_TRUE(session_->Execute("SET spark.sql.session.timeZone = 'UTC'").ok());
  EXPECT_TRUE(session_->Execute("SET spark.sql.session.timeZone = UTC").ok());
}

TEST_F(SessionTest, SparkConfsWithoutEquivalentAreRefusedByName) {
  auto r = session_->Execute("SET spark.sql.adaptive.enabled = true");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'spark.sql.adaptive.enabled' has no Sluice equivalent"),
            std::string::npos)
      << r.status().ToString();
  EXPECT_NE(r.status().message().find("spark.sql.shuffle.partitions (sluice.shufflePartitions)"),
            std::string::npos);
  r = session_->Execute("SET spark.sql.shuffle.partitions = 'many'");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("takes an integer"), std::string::npos);
  r = session_->Execute("SET spark.sql.session.timeZone = 'America/New_York'");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("UTC only"), std::string::npos);
}

TEST_F(SessionTest, DuckDbSettingsPassThrough) {
  EXPECT_TRUE(session_->Execute("SET threads = 1").ok());
}

TEST_F(SessionTest, ErrorsNameTheProblem) {
  auto missing = session_->Execute("SELECT * FROM no_such_table");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no_such_table"), std::string::npos);
  auto bad = session_->Execute("SELEC 1");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("syntax error"), std::string::npos);
}

TEST_F(SessionTest, TwoQueriesOnOneCheckpointAreRefused) {
  ASSERT_TRUE(session_->Execute("CREATE TABLE input (id BIGINT)").ok());
  ASSERT_TRUE(session_->Execute("INSERT INTO input VALUES (1)").ok());
  auto created = session_->Execute("CREATE STREAMING TABLE q AS SELECT id FROM STREAM input");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto defs = session_->streaming().ListDefinitions();
  ASSERT_TRUE(defs.ok());
  ASSERT_EQ(defs->size(), 1u);
  // A query running on the default trigger (as `sluice run` starts it) holds the checkpoint.
  auto running = session_->streaming().Start((*defs)[0], stream::Trigger::Default());
  ASSERT_TRUE(running.ok()) << running.status().ToString();
  auto refused = session_->Execute("REFRESH STREAMING TABLE q");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("in use by another query"), std::string::npos)
      << refused.status().ToString();
  ASSERT_TRUE((*running)->ProcessAllAvailable().ok());
  ASSERT_TRUE((*running)->Stop().ok());
  auto refreshed = session_->Execute("REFRESH STREAMING TABLE q");
  ASSERT_TRUE(refreshed.ok()) << refreshed.status().ToString();
  auto rows = session_->Execute("SELECT count(*) FROM q");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows->GetString(0, 0), "1");
}

}  // namespace
}  // namespace sluice::sql
