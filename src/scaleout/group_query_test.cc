#include "scaleout/group_query.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fs/test_util.h"

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

TEST_F(GroupQueryTest, StatefulQueriesAreRefusedWithTheLimit) {
  sql::StreamingDefinition def = Def("key, count(*) AS n", " GROUP BY key");
  def.output_mode = sluice::OutputMode::kUpdate;
  ExpectRefused(def, "runs stateless queries only");
  def = Def("DISTINCT key");
  def.output_mode = sluice::OutputMode::kUpdate;
  ExpectRefused(def, "runs stateless queries only");
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
