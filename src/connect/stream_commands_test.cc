#include "connect/stream_commands.h"

#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "common/uuid.h"
#include "spark/connect/commands.pb.h"
#include "spark/connect/relations.pb.h"
#include "sql/session.h"

namespace sluice::connect {
namespace {

namespace sc = spark::connect;

class SessionStreamsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sluice_stream_commands_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    sql::SessionOptions options;
    options.warehouse = dir_ + "/wh";
    auto session = sql::Session::Open(options);
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    sql_ = std::move(session).ValueOrDie();
    Run("CREATE TABLE ev (id BIGINT, user STRING) USING DELTA");
    Run("INSERT INTO ev VALUES (1, 'a'), (2, 'b'), (3, 'c')");
  }
  void TearDown() override {
    sql_.reset();
    std::filesystem::remove_all(dir_);
  }
  engine::Batch Run(const std::string& statement) {
    Result<engine::Batch> b = sql_->Execute(statement);
    EXPECT_TRUE(b.ok()) << statement << ": " << b.status().ToString();
    return b.ok() ? std::move(*b) : engine::Batch();
  }
  static sc::Relation StreamOf(const std::string& table) {
    sc::Relation r;
    r.mutable_read()->set_is_streaming(true);
    r.mutable_read()->mutable_named_table()->set_unparsed_identifier(table);
    return r;
  }
  // Starts `input` into the Delta path `out` with availableNow and waits for its end.
  void RunToEnd(SessionStreams& streams, const sc::Relation& input, const std::string& out) {
    sc::WriteStreamOperationStart start;
    *start.mutable_input() = input;
    start.set_format("delta");
    (*start.mutable_options())["checkpointLocation"] = out + "_cp";
    start.set_available_now(true);
    start.set_path(out);
    start.set_query_name("q");
    PlanTranslator translator;
    sc::WriteStreamOperationStartResult started;
    ASSERT_TRUE(streams.Start(start, translator, &started).ok());
    sc::StreamingQueryCommand await;
    *await.mutable_query_id() = started.query_id();
    await.mutable_await_termination();
    sc::StreamingQueryCommandResult result;
    Status st = streams.Command(await, &result);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_TRUE(result.await_termination().terminated());
    id_ = started.query_id().id();
  }

  std::string dir_;
  std::string id_;
  std::unique_ptr<sql::Session> sql_;
};

// A stream joined with a batch relation on a column name: Spark's columns (the key, the left
// side's others, the right side's), the batch side read in the micro-batch.
TEST_F(SessionStreamsTest, StreamStaticJoinOnNamesHasSparksColumns) {
  SessionStreams streams(dir_ + "/wh", NewUuidV4(), {}, std::make_shared<CachedRelations>());
  sc::Relation join;
  *join.mutable_join()->mutable_left() = StreamOf("ev");
  join.mutable_join()->mutable_right()->mutable_sql()->set_query(
      "SELECT 'Ann' AS name, 'a' AS user UNION ALL SELECT 'Bob', 'b'");
  join.mutable_join()->add_using_columns("user");
  join.mutable_join()->set_join_type(sc::Join::JOIN_TYPE_LEFT_OUTER);
  const std::string out = dir_ + "/joined";
  ASSERT_NO_FATAL_FAILURE(RunToEnd(streams, join, out));
  engine::Batch rows = Run("SELECT * FROM delta.`" + out + "` ORDER BY id");
  ASSERT_EQ(rows.num_columns(), 3u);
  EXPECT_EQ(rows.schema()[0].name, "user");
  EXPECT_EQ(rows.schema()[1].name, "id");
  EXPECT_EQ(rows.schema()[2].name, "name");
  ASSERT_EQ(rows.num_rows(), 3);
  EXPECT_EQ(rows.GetString(0, 2), std::optional<std::string>("Ann"));
  EXPECT_EQ(rows.GetString(2, 0), std::optional<std::string>("c"));
  EXPECT_FALSE(rows.GetString(2, 2).has_value());  // no match: NULL

  // spark.streams after the end: nothing active, get is empty, awaitAnyTermination returns.
  sc::StreamingQueryManagerCommand active;
  active.set_active(true);
  sc::StreamingQueryManagerCommandResult r1;
  ASSERT_TRUE(streams.Manager(active, &r1).ok());
  EXPECT_EQ(r1.active().active_queries_size(), 0);
  sc::StreamingQueryManagerCommand get;
  get.set_get_query(id_);
  sc::StreamingQueryManagerCommandResult r2;
  ASSERT_TRUE(streams.Manager(get, &r2).ok());
  EXPECT_FALSE(r2.has_query());
  sc::StreamingQueryManagerCommand any;
  any.mutable_await_any_termination()->set_timeout_ms(1);
  sc::StreamingQueryManagerCommandResult r3;
  ASSERT_TRUE(streams.Manager(any, &r3).ok());
  EXPECT_TRUE(r3.await_any_termination().terminated());
  // resetTerminated forgets it: nothing ended since, nothing active.
  sc::StreamingQueryManagerCommand reset;
  reset.set_reset_terminated(true);
  sc::StreamingQueryManagerCommandResult r4;
  ASSERT_TRUE(streams.Manager(reset, &r4).ok());
  sc::StreamingQueryManagerCommandResult r5;
  ASSERT_TRUE(streams.Manager(any, &r5).ok());
  EXPECT_FALSE(r5.await_any_termination().terminated());
  // Listeners are refused by name.
  sc::StreamingQueryManagerCommand listen;
  listen.mutable_add_listener();
  Status st = streams.Manager(listen, &r5);
  EXPECT_TRUE(st.IsNotSupported());
  EXPECT_NE(st.message().find("listeners"), std::string::npos) << st.ToString();
}

// dropDuplicates(subset) on a stream keeps one row per key.
TEST_F(SessionStreamsTest, DropDuplicatesOfASubset) {
  Run("INSERT INTO ev VALUES (4, 'a'), (5, 'b')");
  SessionStreams streams(dir_ + "/wh", NewUuidV4(), {}, std::make_shared<CachedRelations>());
  sc::Relation dedup;
  *dedup.mutable_deduplicate()->mutable_input() = StreamOf("ev");
  dedup.mutable_deduplicate()->add_column_names("user");
  const std::string out = dir_ + "/dedup";
  ASSERT_NO_FATAL_FAILURE(RunToEnd(streams, dedup, out));
  engine::Batch rows = Run("SELECT user FROM delta.`" + out + "` ORDER BY user");
  ASSERT_EQ(rows.num_rows(), 3);
  EXPECT_EQ(rows.GetString(0, 0), std::optional<std::string>("a"));
  EXPECT_EQ(rows.GetString(2, 0), std::optional<std::string>("c"));
}

// A relation the stream path does not translate is refused naming it and its PySpark API.
TEST_F(SessionStreamsTest, UnsupportedRelationOnAStreamIsNamed) {
  SessionStreams streams(dir_ + "/wh", NewUuidV4(), {}, std::make_shared<CachedRelations>());
  sc::WriteStreamOperationStart start;
  *start.mutable_input()->mutable_sample()->mutable_input() = StreamOf("ev");
  start.set_format("delta");
  start.set_path(dir_ + "/never");
  PlanTranslator translator;
  sc::WriteStreamOperationStartResult started;
  Status st = streams.Start(start, translator, &started);
  EXPECT_TRUE(st.IsNotSupported());
  EXPECT_NE(st.message().find("the relation sample (DataFrame.sample) on a stream"),
            std::string::npos)
      << st.ToString();
}

}  // namespace
}  // namespace sluice::connect
