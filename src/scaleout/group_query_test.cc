#include "scaleout/group_query.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fs/test_util.h"
#include "plan/stream_query_parser.h"
#include "scaleout/partition_key_check.h"

namespace sluice::scaleout {
namespace {

using ::testing::HasSubstr;

constexpr char kKafka[] = "STREAM read_kafka(bootstrapServers => 'localhost:1', subscribe => 't')";

class GroupQueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto engine = engine::Engine::Open();
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).ValueOrDie();
  }

  sql::StreamingDefinition Def(const std::string& select_list, const std::string& tail = "") {
    sql::StreamingDefinition def;
    def.name = "copy";
    def.target = "copy";
    def.query = "SELECT " + select_list + " FROM " + kKafka + tail;
    def.sources = {{"kafka", {{"bootstrapServers", "localhost:1"}, {"subscribe", "t"}}}};
    return def;
  }

  Result<std::unique_ptr<GroupQuery>> Prepare(const sql::StreamingDefinition& def) {
    GroupQueryOptions o;
    o.engine = engine_.get();
    o.fs = fs::LocalFileSystem();
    o.checkpoint_root = dir_.Join("cp");
    o.table_path = dir_.Join("copy");
    o.is_table = [](const std::string& name) { return name == "dim"; };
    return GroupQuery::Prepare(def, std::move(o));
  }

  void ExpectRefused(const sql::StreamingDefinition& def, const std::string& limit) {
    Result<std::unique_ptr<GroupQuery>> q = Prepare(def);
    ASSERT_FALSE(q.ok()) << "accepted: " << def.query.value_or("");
    EXPECT_TRUE(q.status().IsNotSupported()) << q.status().ToString();
    EXPECT_THAT(q.status().message(), HasSubstr("group mode (--group)"));
    EXPECT_THAT(q.status().message(), HasSubstr(limit));
  }

  fs::ScopedTempDir dir_;
  std::unique_ptr<engine::Engine> engine_;
};

TEST_F(GroupQueryTest, AStatelessKafkaQueryIsAccepted) {
  Result<std::unique_ptr<GroupQuery>> q = Prepare(Def("value AS v, topic"));
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ((*q)->topic(), "t");
  EXPECT_EQ((*q)->kafka_config().at("bootstrap.servers"), "localhost:1");
  EXPECT_EQ((*q)->trigger().kind, stream::TriggerKind::kDefault);
}

TEST_F(GroupQueryTest, TaskSourceOptionsAssignThePartition) {
  const std::map<std::string, std::string> opts = {
      {"bootstrapServers", "b:9092"}, {"Subscribe", "t"}, {"startingOffsets", "earliest"}};
  const auto task = GroupQuery::TaskSourceOptions(opts, "t", 4);
  EXPECT_EQ(task, (std::map<std::string, std::string>{{"bootstrapServers", "b:9092"},
                                                      {"startingOffsets", "earliest"},
                                                      {"assign", R"({"t":[4]})"}}));
}

TEST_F(GroupQueryTest, StatefulQueriesWithoutTheDeclaredKeyAreRefusedWithIt) {
  sql::StreamingDefinition def = Def("key, count(*) AS n", " GROUP BY key");
  def.output_mode = sluice::OutputMode::kUpdate;
  ExpectRefused(def, "APPEND mode only");
  def.output_mode = sluice::OutputMode::kComplete;
  ExpectRefused(def, "APPEND mode only");
  // APPEND needs a watermarked window; without partitionedBy the key is named.
  const std::string windowed =
      " WATERMARK timestamp DELAY OF INTERVAL 1 MINUTE AS e GROUP BY window(timestamp, '1 "
      "minute'), decode(key)";
  def = Def("decode(key) AS user_id, count(*) AS n", windowed);
  ExpectRefused(def,
                "the aggregation keeps state by (window, user_id); the topic t must be "
                "partitioned by user_id (declare partitionedBy => 'user_id'), or repartition it "
                "first");
  // Declared by a column that is not the state's key.
  def.sources[0].options["partitionedBy"] = "topic";
  ExpectRefused(def, "not by topic (partitionedBy)");
  // A window alone: one state for the whole topic.
  def = Def("count(*) AS n",
            " WATERMARK timestamp DELAY OF INTERVAL 1 MINUTE AS e GROUP BY window(timestamp, '1 "
            "minute')");
  def.sources[0].options["partitionedBy"] = "user_id";
  ExpectRefused(def, "keeps one state for the whole topic (by window only)");
}

constexpr char kWindowedByUser[] =
    "SELECT window.start AS ws, user_id, count(*) AS n FROM (SELECT decode(value)::JSON->>'u' "
    "AS user_id, timestamp FROM STREAM read_kafka(bootstrapServers => 'localhost:1', "
    "subscribe => 't', partitionedBy => 'user_id') WATERMARK timestamp DELAY OF INTERVAL 1 "
    "MINUTE AS e) s GROUP BY window(timestamp, '1 minute'), user_id";

TEST_F(GroupQueryTest, AnAggregationKeyedByTheDeclaredColumnIsAccepted) {
  sql::StreamingDefinition def = Def("x");
  def.query = kWindowedByUser;
  def.sources[0].options["partitionedBy"] = "user_id";
  Result<std::unique_ptr<GroupQuery>> q = Prepare(def);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  ASSERT_TRUE((*q)->partitioning().has_value());
  EXPECT_EQ((*q)->partitioning()->column, "user_id");
  EXPECT_TRUE((*q)->shares_watermark());
  // The check is over the stream itself: the subquery's expression of user_id.
  EXPECT_THAT((*q)->partitioning()->check_sql, HasSubstr("__stream_0"));
  EXPECT_THAT((*q)->partitioning()->check_sql, HasSubstr("IS DISTINCT FROM"));
}

TEST_F(GroupQueryTest, AFilterOverTheKeyedAggregationIsAccepted) {
  sql::StreamingDefinition def = Def("x");
  def.query = std::string("SELECT * FROM (") + kWindowedByUser + ") a WHERE n > 1";
  def.sources[0].options["partitionedBy"] = "user_id";
  Result<std::unique_ptr<GroupQuery>> q = Prepare(def);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ((*q)->partitioning()->column, "user_id");
  def.sources[0].options.erase("partitionedBy");
  ExpectRefused(def, "keeps state by (window, user_id)");
}

TEST_F(GroupQueryTest, ADeduplicationByTheDeclaredColumnIsAccepted) {
  sql::StreamingDefinition def = Def("DISTINCT ON (k) decode(key) AS k, value");
  def.sources[0].options["partitionedBy"] = "k";
  Result<std::unique_ptr<GroupQuery>> q = Prepare(def);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ((*q)->partitioning()->column, "k");
  EXPECT_FALSE((*q)->shares_watermark());
}

// The check a task runs before each batch: a record whose key is not its column fails the batch
// naming the partition, the offset and both values; the wrapped plan never sees that batch.
class CountingPlan final : public plan::IncrementalPlan {
 public:
  Status Open(const plan::PlanContext&) override { return Status::OK(); }
  size_t num_sources() const override { return 1; }
  Result<plan::PlanOutput> Execute(const plan::PlanInput& input) override {
    ++executed;
    plan::PlanOutput out;
    out.rows = input.sources[0];
    return out;
  }
  std::string Description() const override { return "counting"; }
  int executed = 0;
};

TEST_F(GroupQueryTest, TheKeyCheckFailsABatchWithARecordOfAnotherKey) {
  sql::StreamingDefinition def = Def("x");
  def.query = kWindowedByUser;
  def.sources[0].options["partitionedBy"] = "user_id";
  Result<std::unique_ptr<GroupQuery>> q = Prepare(def);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  Result<plan::ParsedStreamingQuery> parsed = plan::ParseStreamingQuery(kWindowedByUser);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  auto inner = std::make_unique<CountingPlan>();
  CountingPlan* counting = inner.get();
  PartitionKeyCheckPlan check(std::move(inner), parsed->streams[0], *(*q)->partitioning(), "t");
  plan::PlanContext ctx;
  ctx.engine = engine_.get();
  ASSERT_TRUE(check.Open(ctx).ok());
  auto conn = engine_->Connect().ValueOrDie();
  auto batch = [&](const std::string& rows) {
    return conn
        ->Query(
            "SELECT k::BLOB AS key, v::BLOB AS value, 't' AS topic, p AS partition, o::BIGINT "
            "AS offset, TIMESTAMPTZ '2026-01-01 00:00:00+00' + INTERVAL (o) SECOND AS "
            "timestamp FROM (VALUES " +
            rows + ") r(k, v, p, o)")
        .ValueOrDie();
  };
  plan::PlanInput good;
  good.sources.push_back(batch(R"(('a', '{"u":"a"}', 2, 10), ('b', '{"u":"b"}', 2, 11))"));
  Result<plan::PlanOutput> ok = check.Execute(good);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(counting->executed, 1);
  plan::PlanInput bad;
  bad.batch_id = BatchId(4);
  bad.sources.push_back(batch(R"(('a', '{"u":"a"}', 2, 12), ('c', '{"u":"d"}', 2, 13))"));
  Result<plan::PlanOutput> refused = check.Execute(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              HasSubstr("the record of topic t at partition 2, offset 13 has the key 'c' but its "
                        "partitionedBy column user_id is 'd'"));
  EXPECT_THAT(refused.status().message(), HasSubstr("batch 4"));
  EXPECT_EQ(counting->executed, 1);
}

TEST_F(GroupQueryTest, OtherSourcesAndSubscriptionsAreRefused) {
  sql::StreamingDefinition rate = Def("*");
  rate.sources = {{"rate", {{"rowsPerSecond", "1"}}}};
  ExpectRefused(rate, "needs exactly one Kafka source");
  sql::StreamingDefinition two = Def("*");
  two.sources.push_back(two.sources[0]);
  ExpectRefused(two, "needs exactly one Kafka source");
  sql::StreamingDefinition topics = Def("*");
  topics.sources[0].options["subscribe"] = "t,u";
  ExpectRefused(topics, "subscribes to one topic");
  sql::StreamingDefinition pattern = Def("*");
  pattern.sources[0].options.erase("subscribe");
  pattern.sources[0].options["subscribePattern"] = "t.*";
  ExpectRefused(pattern, "subscribes to one topic");
  sql::StreamingDefinition json = Def("*");
  json.sources[0].options["startingOffsets"] = R"({"t":{"0":5}})";
  ExpectRefused(json, "per-partition JSON offsets");
}

TEST_F(GroupQueryTest, TriggersThatEndAndOtherDefinitionsAreRefused) {
  sql::StreamingDefinition def = Def("*");
  def.trigger = stream::Trigger::AvailableNow();
  ExpectRefused(def, "runs continuous triggers");
  def.trigger = stream::Trigger::Once();
  ExpectRefused(def, "runs continuous triggers");
  def = Def("*");
  def.trigger = *stream::Trigger::ProcessingTime(1000);
  EXPECT_TRUE(Prepare(def).ok());
  sql::StreamingDefinition flow = Def("*");
  flow.kind = sql::StreamingDefinition::Kind::kFlow;
  ExpectRefused(flow, "flows are not supported yet");
  sql::StreamingDefinition joined = Def("s.value", "");
  joined.query = std::string("SELECT s.value FROM ") + kKafka + " s JOIN dim d ON s.key = d.k";
  ExpectRefused(joined, "the static table dim");
}

}  // namespace
}  // namespace sluice::scaleout
