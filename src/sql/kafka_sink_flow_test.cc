// Flows into a Kafka sink through SQL (CREATE SINK ... USING kafka, CREATE FLOW ... INSERT INTO
// <sink>, REFRESH SINK), against librdkafka's mock cluster started by the test (or the real broker
// of SLUICE_KAFKA_BOOTSTRAP, test_cluster.h): every row lands once across REFRESHes and restarts;
// with kafka.transactional.id a batch re-run after a crash is not written again (without it, it
// is: at-least-once); a used transactional.id is refused for a new checkpoint; a column Kafka
// cannot take fails the REFRESH naming it. What a sink refuses at CREATE is
// test/sql/streaming/kafka_sink_statements.test.
#include <algorithm>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fs/test_util.h"
#include "sources/kafka/test_cluster.h"
#include "sql/session.h"

namespace sluice::sql {
namespace {

using ::testing::HasSubstr;

class KafkaSinkFlowTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }
  // A new Session on the same warehouse: what a new process finds.
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
  std::string ErrorOf(const std::string& sql) {
    auto r = session_->Execute(sql);
    return r.ok() ? "<no error>" : r.status().ToString();
  }
  std::string One(const std::string& sql) {
    engine::Batch b = Run(sql);
    return b.num_rows() == 1 ? b.GetString(0, 0).value_or("NULL") : "<no single row>";
  }
  std::string Servers() const { return "'kafka.bootstrap.servers' '" + cluster_.bootstrap() + "'"; }
  // Records i in [from, to) into "in": partition i % 2, key "k<i>", value "<i>".
  void Produce(int from, int to) {
    for (int i = from; i < to; ++i) {
      cluster_.Produce("in", i % 2, "k" + std::to_string(i), std::to_string(i));
    }
    cluster_.Flush();
  }
  // What the copy flow writes for records [0, n): "k<i> <10 i> <i % 2>" in partition, then
  // offset order.
  static std::vector<std::string> Expected(int n) {
    std::vector<std::string> out;
    for (int p = 0; p < 2; ++p) {
      for (int i = p; i < n; i += 2) {
        out.push_back("k" + std::to_string(i) + " " + std::to_string(10 * i) + " " +
                      std::to_string(p));
      }
    }
    return out;
  }
  // The flow "copy" from "in" into `sink`: the value times ten, to the same partition, 7 offsets
  // per batch.
  void CreateCopyFlow(const std::string& sink) {
    Run("CREATE FLOW copy AS INSERT INTO " + sink +
        " SELECT key, CAST(CAST(CAST(value AS STRING) AS INT) * 10 AS STRING) AS value, "
        "partition FROM STREAM read_kafka(bootstrapServers => '" +
        cluster_.bootstrap() +
        "', subscribe => 'in', startingOffsets => 'earliest', maxOffsetsPerTrigger => 7)");
  }
  // "key value partition" of every record of `topic` that a consumer with `isolation` sees, in
  // partition then offset order, read by a Sluice streaming table.
  std::vector<std::string> ReadBack(const std::string& topic, const std::string& isolation) {
    const std::string name = "readback_" + std::to_string(readbacks_++);
    Run("CREATE STREAMING TABLE " + name +
        " AS SELECT decode(key) || ' ' || decode(value) || ' ' || partition AS line, partition, "
        "offset FROM STREAM read_kafka(bootstrapServers => '" +
        cluster_.bootstrap() + "', subscribe => '" + topic +
        "', startingOffsets => 'earliest') WITH ('kafka.isolation.level' = '" + isolation + "')");
    Run("REFRESH STREAMING TABLE " + name);
    engine::Batch b = Run("SELECT line FROM " + name + " ORDER BY partition, offset");
    std::vector<std::string> out;
    for (int64_t r = 0; r < b.num_rows(); ++r) out.push_back(b.GetString(r, 0).value_or("NULL"));
    return out;
  }

  fs::ScopedTempDir dir_{"sluice-kafka-sink-sql"};
  sources::kafka::testing::KafkaTestCluster cluster_;
  std::unique_ptr<Session> session_;
  int readbacks_ = 0;
};

TEST_F(KafkaSinkFlowTest, AFlowIntoASinkWritesEveryRowOnceAcrossRefreshesAndRestarts) {
  cluster_.CreateTopic("in", 2);
  cluster_.CreateTopic("out", 2);
  Produce(0, 20);
  Run("CREATE SINK out_sink USING kafka OPTIONS (" + Servers() + ", 'topic' 'out')");
  CreateCopyFlow("out_sink");
  Run("REFRESH SINK out_sink");
  EXPECT_EQ(ReadBack("out", "read_uncommitted"), Expected(20));
  // 20 offsets, at most 7 per batch split over the 2 partitions (3 each): 4 batches (6, 6, 6, 2),
  // through the Kafka sink.
  EXPECT_EQ(One("SELECT count(*) FROM streaming_progress('copy') WHERE num_input_rows > 0"), "4");
  EXPECT_EQ(One("SELECT progress->'sink'->>'description' FROM streaming_progress('copy') ORDER BY "
                "batch_id DESC LIMIT 1"),
            "KafkaSink[out]");
  Produce(20, 25);
  Run("REFRESH SINK out_sink");
  EXPECT_EQ(ReadBack("out", "read_uncommitted"), Expected(25));
  // A new process finds the sink and the flow and continues from the flow's checkpoint.
  Reopen();
  Run("REFRESH SINK out_sink");
  EXPECT_EQ(ReadBack("out", "read_uncommitted"), Expected(25));
  Produce(25, 30);
  Reopen();
  Run("REFRESH SINK out_sink");
  EXPECT_EQ(ReadBack("out", "read_uncommitted"), Expected(30));
}

TEST_F(KafkaSinkFlowTest, ATransactionalSinkDoesNotWriteABatchReRunAfterACrashAgain) {
  cluster_.CreateTopic("in", 2);
  cluster_.CreateTopic("out", 2);
  cluster_.CreateTopic("markers", 1);
  Produce(0, 20);
  Run("CREATE SINK eo USING kafka OPTIONS (" + Servers() +
      ", 'topic' 'out', 'kafka.transactional.id' 'sql-eo-1', 'transactionMarkerTopic' "
      "'markers')");
  CreateCopyFlow("eo");
  // The process dies after the sink wrote batch 0, before the commit log records it.
  Run("SET sluice.test.crashAt = 'after_sink_write'");
  EXPECT_THAT(ErrorOf("REFRESH SINK eo"), HasSubstr("injected crash at after_sink_write"));
  Reopen();
  Run("REFRESH SINK eo");
  EXPECT_EQ(ReadBack("out", "read_committed"), Expected(20));
  EXPECT_EQ(ReadBack("out", "read_uncommitted"), Expected(20));
  Produce(20, 30);
  Run("SET sluice.test.crashAt = 'after_sink_write'");
  EXPECT_THAT(ErrorOf("REFRESH SINK eo"), HasSubstr("injected crash"));
  Reopen();
  Run("REFRESH SINK eo");
  EXPECT_EQ(ReadBack("out", "read_committed"), Expected(30));
}

TEST_F(KafkaSinkFlowTest, WithoutATransactionalIdTheReRunBatchIsWrittenAgain) {
  cluster_.CreateTopic("in", 2);
  cluster_.CreateTopic("out", 2);
  Produce(0, 20);
  Run("CREATE SINK alo USING kafka OPTIONS (" + Servers() + ", 'topic' 'out')");
  CreateCopyFlow("alo");
  Run("SET sluice.test.crashAt = 'after_sink_write'");
  EXPECT_THAT(ErrorOf("REFRESH SINK alo"), HasSubstr("injected crash"));
  Reopen();
  Run("REFRESH SINK alo");
  // At-least-once, as Spark's Kafka sink: batch 0 (6 records) twice.
  std::vector<std::string> got = ReadBack("out", "read_committed");
  EXPECT_EQ(got.size(), 26u);
  std::set<std::string> distinct(got.begin(), got.end());
  EXPECT_EQ(std::vector<std::string>(distinct.begin(), distinct.end()), [] {
    std::vector<std::string> e = Expected(20);
    std::sort(e.begin(), e.end());
    return e;
  }());
}

TEST_F(KafkaSinkFlowTest, ATransactionalIdUsedByAnotherCheckpointIsRefused) {
  cluster_.CreateTopic("in", 2);
  cluster_.CreateTopic("out", 2);
  cluster_.CreateTopic("markers", 1);
  Produce(0, 20);
  const std::string create = "CREATE SINK eo USING kafka OPTIONS (" + Servers() +
                             ", 'topic' 'out', 'kafka.transactional.id' 'sql-eo-2', "
                             "'transactionMarkerTopic' 'markers')";
  Run(create);
  CreateCopyFlow("eo");
  Run("REFRESH SINK eo");  // batches 0-3 committed to Kafka under sql-eo-2
  // Dropped and created again: a new checkpoint, whose batches 0-3 the old markers would skip.
  Run("DROP SINK eo");
  Run(create);
  CreateCopyFlow("eo");
  EXPECT_THAT(ErrorOf("REFRESH SINK eo"),
              HasSubstr("kafka.transactional.id 'sql-eo-2' has committed batches up to 3 to "
                        "Kafka, but the query's checkpoint has planned none"));
  EXPECT_EQ(ReadBack("out", "read_committed"), Expected(20));
  // A new id starts the new checkpoint: everything once more.
  Run("CREATE OR REPLACE SINK eo USING kafka OPTIONS (" + Servers() +
      ", 'topic' 'out', 'kafka.transactional.id' 'sql-eo-3', 'transactionMarkerTopic' "
      "'markers')");
  Run("REFRESH SINK eo");
  EXPECT_EQ(ReadBack("out", "read_committed").size(), 40u);
}

TEST_F(KafkaSinkFlowTest, AColumnKafkaCannotTakeFailsTheRefreshNamingIt) {
  cluster_.CreateTopic("in", 1);
  cluster_.CreateTopic("out", 1);
  cluster_.Produce("in", 0, "k", "v");
  cluster_.Flush();
  Run("CREATE SINK s USING kafka OPTIONS (" + Servers() + ", 'topic' 'out')");
  Run("CREATE FLOW f AS INSERT INTO s SELECT value, offset FROM STREAM read_kafka("
      "bootstrapServers => '" +
      cluster_.bootstrap() + "', subscribe => 'in', startingOffsets => 'earliest')");
  EXPECT_THAT(ErrorOf("REFRESH SINK s"),
              HasSubstr("column 'offset' cannot be written to Kafka (the columns are value, and "
                        "optionally key, topic, partition, headers)"));
  Run("DROP SINK s");  // and its flow f
  Run("CREATE SINK s USING kafka OPTIONS (" + Servers() + ", 'topic' 'out')");
  Run("CREATE FLOW g AS INSERT INTO s SELECT key FROM STREAM read_kafka(bootstrapServers => '" +
      cluster_.bootstrap() + "', subscribe => 'in', startingOffsets => 'earliest')");
  EXPECT_THAT(ErrorOf("REFRESH SINK s"), HasSubstr("the query must have a 'value' column"));
}

}  // namespace
}  // namespace sluice::sql
