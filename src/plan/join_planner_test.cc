#include "plan/join_planner.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "fs/local_file_system.h"
#include "fs/test_util.h"
#include "ops/stream_stream_join.h"
#include "plan/sql_ast.h"
#include "plan/stream_query_parser.h"
#include "plan/window_sql.h"

namespace sluice::plan {
namespace {

class JoinPlannerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto engine = engine::Engine::Open();
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).ValueOrDie();
    auto ast = SqlAst::Open(engine_.get());
    ASSERT_TRUE(ast.ok()) << ast.status().ToString();
    ast_ = std::move(ast).ValueOrDie();
    auto conn = engine_->Connect();
    ASSERT_TRUE(conn.ok());
    conn_ = std::move(conn).ValueOrDie();
    ASSERT_TRUE(DefineWindowMacros(*conn_).ok());
  }

  // Plans `sql` as the planner would hand it over.
  Result<std::optional<StatefulPlanSpec>> Plan(
      const std::string& sql, sluice::OutputMode mode = sluice::OutputMode::kAppend) {
    SLUICE_ASSIGN_OR_RETURN(parsed_, ParseStreamingQuery(sql));
    analysis_ = QueryAnalysis();
    analysis_.query = &parsed_;
    analysis_.output_mode = mode;
    SLUICE_ASSIGN_OR_RETURN(analysis_.sql, RewriteWindowCalls(parsed_.sql));
    SLUICE_ASSIGN_OR_RETURN(analysis_.top, ast_->ParseSelect(analysis_.sql));
    analysis_.ast = ast_.get();
    return PlanStreamJoin(analysis_);
  }

  static const ops::StreamStreamJoinOptions& Options(const StatefulPlanSpec& spec) {
    return dynamic_cast<const ops::StreamStreamJoin&>(*spec.op).options();
  }

  // Runs the spec's input SQLs over the __stream_<i> tables (created by the test), the operator
  // for one batch, and the output SQL; returns the rows sorted, "a|b|c".
  std::vector<std::string> RunBatch(StatefulPlanSpec& spec, int64_t batch_id,
                                    int64_t watermark_ms = 0,
                                    std::optional<int64_t> late_watermark_ms = std::nullopt) {
    std::vector<engine::Batch> inputs;
    for (const std::string& sql : spec.input_sqls) {
      auto b = conn_->Query(sql);
      EXPECT_TRUE(b.ok()) << sql << " -> " << b.status().ToString();
      if (!b.ok()) return {"<error>"};
      inputs.push_back(*b);
    }
    if (!opened_) {
      ops::OperatorContext ctx;
      ctx.engine = engine_.get();
      ctx.fs = fs::LocalFileSystem();
      ctx.checkpoint_root = dir_.path();
      ctx.num_partitions = 2;
      ctx.conf["sluice.streaming.stateStore.providerClass"] = "memory";
      Status st = spec.op->Open(ctx);
      EXPECT_TRUE(st.ok()) << st.ToString();
      opened_ = true;
    }
    ops::OperatorBatch b;
    b.batch_id = BatchId(batch_id);
    b.late_watermark_ms = late_watermark_ms.value_or(watermark_ms);
    b.eviction_watermark_ms = watermark_ms;
    auto out = spec.op->Process(b, inputs);
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    if (!out.ok()) return {"<error>"};
    EXPECT_TRUE(conn_->RegisterBatch("__op_output", *out).ok());
    auto rows = conn_->Query("SELECT * FROM (" + spec.output_sql + ") ORDER BY ALL");
    EXPECT_TRUE(rows.ok()) << spec.output_sql << " -> " << rows.status().ToString();
    if (!rows.ok()) return {"<error>"};
    std::vector<std::string> result;
    for (int64_t r = 0; r < rows->num_rows(); ++r) {
      std::string line;
      for (size_t c = 0; c < rows->num_columns(); ++c) {
        if (c > 0) line += "|";
        line += rows->GetString(r, c).value_or("NULL");
      }
      result.push_back(line);
    }
    return result;
  }

  void Exec(const std::string& sql) {
    Status st = conn_->Execute(sql);
    ASSERT_TRUE(st.ok()) << sql << " -> " << st.ToString();
  }

  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<SqlAst> ast_;
  std::unique_ptr<engine::Connection> conn_;
  ParsedStreamingQuery parsed_;
  QueryAnalysis analysis_;
  fs::ScopedTempDir dir_{"sluice-join-plan"};
  bool opened_ = false;
};

TEST_F(JoinPlannerTest, NotAStreamStreamJoin) {
  auto plan = Plan("SELECT * FROM STREAM events AS e");
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_FALSE(plan->has_value());
  // Stream-static joins are stateless: not this planner's.
  plan = Plan("SELECT e.id, d.name FROM STREAM events AS e JOIN dims AS d ON e.id = d.id");
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_FALSE(plan->has_value());
}

TEST_F(JoinPlannerTest, InnerJoinOnNonTimeKey) {
  auto plan = Plan(
      "SELECT l.value AS key, l.value * 2 AS leftValue, r.value * 3 AS rightValue "
      "FROM STREAM input1 AS l JOIN STREAM input2 AS r ON l.value = r.value");
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_TRUE(plan->has_value());
  StatefulPlanSpec& spec = **plan;
  EXPECT_EQ(spec.operator_name, "symmetricHashJoin");
  ASSERT_EQ(spec.input_sqls.size(), 2u);
  const ops::StreamStreamJoinOptions& o = Options(spec);
  EXPECT_EQ(o.type, ops::JoinType::kInner);
  EXPECT_EQ(o.left.alias, "l");
  EXPECT_EQ(o.right.alias, "r");
  EXPECT_EQ(o.left.key_columns, std::vector<std::string>{"__join_key_0"});
  EXPECT_TRUE(o.left.late_time_column.empty());
  EXPECT_TRUE(o.left.state_time_column.empty());  // no watermark: state is kept forever
  EXPECT_TRUE(o.right.state_time_column.empty());
  EXPECT_TRUE(o.condition_sql.empty());
  EXPECT_NE(spec.input_sqls[0].find("__stream_0"), std::string::npos) << spec.input_sqls[0];
  EXPECT_NE(spec.input_sqls[1].find("__stream_1"), std::string::npos) << spec.input_sqls[1];
  EXPECT_NE(spec.output_sql.find("__op_output"), std::string::npos) << spec.output_sql;
  EXPECT_FALSE(spec.op->WantsNoDataBatch(0, 1000));

  Exec("CREATE TEMP TABLE __stream_0 AS SELECT 1 AS value");
  Exec("CREATE TEMP TABLE __stream_1 AS SELECT * FROM (VALUES (1), (10)) t(value)");
  EXPECT_EQ(RunBatch(spec, 0), std::vector<std::string>{"1|2|3"});
}

TEST_F(JoinPlannerTest, WindowedLeftOuterJoinEvictsByTheWindowKey) {
  auto plan = Plan(
      "SELECT l.key, epoch(l.w.end)::BIGINT AS window_end, l.leftValue, r.rightValue "
      "FROM (SELECT value AS key, window(leftTime, '10 seconds') AS w, value * 2 AS leftValue "
      "      FROM STREAM left_input WATERMARK timestamp_seconds(value) AS leftTime "
      "      DELAY OF INTERVAL 10 SECONDS AS li) AS l "
      "LEFT JOIN (SELECT value AS key, window(rightTime, '10 seconds') AS w, "
      "      value * 3 AS rightValue "
      "      FROM STREAM right_input WATERMARK timestamp_seconds(value) AS rightTime "
      "      DELAY OF INTERVAL 10 SECONDS AS ri) AS r "
      "  ON l.key = r.key AND l.w = r.w");
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_TRUE(plan->has_value());
  StatefulPlanSpec& spec = **plan;
  const ops::StreamStreamJoinOptions& o = Options(spec);
  EXPECT_EQ(o.type, ops::JoinType::kLeftOuter);
  EXPECT_EQ(o.left.key_columns.size(), 2u);
  EXPECT_FALSE(o.left.late_time_column.empty());
  EXPECT_FALSE(o.left.state_time_column.empty());
  EXPECT_FALSE(o.right.state_time_column.empty());
  EXPECT_EQ(o.left.state_watermark_offset_ms, 0);
  EXPECT_EQ(o.right.state_watermark_offset_ms, 0);
  EXPECT_TRUE(spec.op->WantsNoDataBatch(0, 11000));

  // join-left-outer-windowed.test batch by batch (watermarks as the loop computes them), with
  // its state metrics: total 2 / updated 12 after batches 0-2, total 3 / updated 1 after 3-4.
  auto feed = [&](const std::string& left, const std::string& right) {
    Exec(
        "CREATE OR REPLACE TEMP TABLE __stream_0 AS SELECT value, to_timestamp(value) AS leftTime "
        "FROM (SELECT unnest(" +
        left + ") AS value)");
    Exec(
        "CREATE OR REPLACE TEMP TABLE __stream_1 AS SELECT value, to_timestamp(value) AS "
        "rightTime FROM (SELECT unnest(" +
        right + ") AS value)");
  };
  int64_t updated = 0;
  feed("[1, 2, 3, 4, 5]", "[3, 4, 5, 6, 7]");
  EXPECT_EQ(RunBatch(spec, 0), (std::vector<std::string>{"3|10|6|9", "4|10|8|12", "5|10|10|15"}));
  updated += spec.op->Progress().num_rows_updated;
  feed("[21]", "[22]");
  EXPECT_EQ(RunBatch(spec, 1), std::vector<std::string>{});
  updated += spec.op->Progress().num_rows_updated;
  feed("[]::INTEGER[]", "[]::INTEGER[]");
  EXPECT_EQ(RunBatch(spec, 2, 11000, 0), (std::vector<std::string>{"1|10|2|NULL", "2|10|4|NULL"}));
  updated += spec.op->Progress().num_rows_updated;
  EXPECT_EQ(spec.op->Progress().num_rows_total, 2);
  EXPECT_EQ(updated, 12);
  feed("[22]", "[]::INTEGER[]");
  EXPECT_EQ(RunBatch(spec, 3, 11000), std::vector<std::string>{"22|30|44|66"});
  updated = spec.op->Progress().num_rows_updated;
  EXPECT_TRUE(spec.op->WantsNoDataBatch(11000, 12000));
  feed("[]::INTEGER[]", "[]::INTEGER[]");
  EXPECT_EQ(RunBatch(spec, 4, 12000, 11000), std::vector<std::string>{});
  updated += spec.op->Progress().num_rows_updated;
  EXPECT_EQ(spec.op->Progress().num_rows_total, 3);
  EXPECT_EQ(updated, 1);
}

// docs/sql-reference.md's example: Spark's state watermarks for
//   c.cts BETWEEN i.its AND i.its + INTERVAL 1 HOUR
// are its > wm - 1 h (-1 ms, non-strict) for impressions and cts > wm (-1 ms) for clicks.
TEST_F(JoinPlannerTest, TimeRangeConditionGivesStateValueWatermarks) {
  auto plan = Plan(
      "SELECT i.ad_id, i.its, c.cts FROM STREAM impressions WATERMARK its DELAY OF INTERVAL 2 "
      "HOURS AS i LEFT JOIN STREAM clicks WATERMARK cts DELAY OF INTERVAL 3 HOURS AS c "
      "ON c.ad_id = i.ad_id AND c.cts BETWEEN i.its AND i.its + INTERVAL 1 HOUR");
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_TRUE(plan->has_value());
  const ops::StreamStreamJoinOptions& o = Options(**plan);
  EXPECT_EQ(o.left.alias, "i");
  EXPECT_EQ(o.left.state_watermark_offset_ms, -3600000 - 1);
  EXPECT_EQ(o.right.state_watermark_offset_ms, -1);
  EXPECT_FALSE(o.condition_sql.empty());
  EXPECT_TRUE(o.left.pre_filter_column.empty());

  // Strict bounds and INTERVAL '...' literals: its > cts - 10 minutes bounds only impressions.
  plan = Plan(
      "SELECT * FROM STREAM impressions WATERMARK its DELAY OF INTERVAL 2 HOURS AS i "
      "JOIN STREAM clicks WATERMARK cts DELAY OF INTERVAL 3 HOURS AS c "
      "ON c.ad_id = i.ad_id AND i.its > c.cts - INTERVAL '10 minutes' AND i.kind = 'x'");
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const ops::StreamStreamJoinOptions& o2 = Options(**plan);
  EXPECT_FALSE(o2.left.state_time_column.empty());
  EXPECT_EQ(o2.left.state_watermark_offset_ms, -600000);
  EXPECT_TRUE(o2.right.state_time_column.empty());  // no bound on clicks: kept
  EXPECT_FALSE(o2.left.pre_filter_column.empty());  // i.kind = 'x'
  EXPECT_NE((**plan).output_sql.find("unnest"), std::string::npos) << (**plan).output_sql;
}

TEST_F(JoinPlannerTest, OuterJoinWithoutWatermarkIsRefused) {
  auto plan = Plan("SELECT * FROM STREAM a AS l LEFT JOIN STREAM b AS r ON l.id = r.id");
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().message(),
            "Stream-stream LeftOuter join between two streaming DataFrame/Datasets is not "
            "supported without a watermark in the join keys, or a watermark on the nullable side "
            "and an appropriate range condition");
  // A watermark on the wrong side does not help a full outer join.
  plan = Plan(
      "SELECT * FROM STREAM a WATERMARK t DELAY OF INTERVAL 1 MINUTE AS l FULL OUTER JOIN "
      "STREAM b WATERMARK t DELAY OF INTERVAL 1 MINUTE AS r ON l.id = r.id AND l.t > r.t");
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("FullOuter"), std::string::npos)
      << plan.status().ToString();
}

TEST_F(JoinPlannerTest, RefusesOtherModesAndShapes) {
  // Spark 4.2: an inner join runs in Update mode (as in Append); an outer one does not, and
  // Complete mode needs an aggregation.
  const std::string join = "SELECT l.id FROM STREAM a AS l JOIN STREAM b AS r ON l.id = r.id";
  auto plan = Plan(join, sluice::OutputMode::kUpdate);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  plan = Plan(
      "SELECT l.id FROM STREAM a WATERMARK t DELAY OF INTERVAL 1 MINUTE AS l LEFT JOIN "
      "STREAM b WATERMARK t DELAY OF INTERVAL 1 MINUTE AS r ON l.id = r.id AND l.t = r.t",
      sluice::OutputMode::kUpdate);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().message(),
            "LeftOuter join between two streaming DataFrames/Datasets is not supported in Update "
            "output mode, only in Append output mode");
  plan = Plan(join, sluice::OutputMode::kComplete);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("Complete output mode not supported when there are no "
                                         "streaming aggregations"),
            std::string::npos)
      << plan.status().ToString();
  plan = Plan("SELECT l.id FROM STREAM a AS l JOIN STREAM b AS r ON l.id < r.id");
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().message(),
            "Stream-stream join without equality predicate is not supported");
  plan = Plan("SELECT l.id FROM STREAM a AS l ANTI JOIN STREAM b AS r ON l.id = r.id");
  ASSERT_FALSE(plan.ok());
  plan = Plan(
      "SELECT l.id, r.x FROM STREAM a WATERMARK t DELAY OF INTERVAL 1 MINUTE AS l "
      "SEMI JOIN STREAM b WATERMARK t DELAY OF INTERVAL 1 MINUTE AS r "
      "ON l.id = r.id AND l.t = r.t");
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("LEFT SEMI"), std::string::npos)
      << plan.status().ToString();
  plan = Plan("SELECT id FROM STREAM a AS l JOIN STREAM b AS r ON l.id = r.id");
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("qualify column id"), std::string::npos)
      << plan.status().ToString();
  plan = Plan(
      "SELECT x.id FROM (SELECT l.id FROM STREAM a AS l JOIN STREAM b AS r "
      "ON l.id = r.id) AS x");
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kNotSupported);
}

TEST_F(JoinPlannerTest, LeftSemiJoinOnWatermarkKey) {
  auto plan = Plan(
      "SELECT l.* FROM STREAM a WATERMARK t DELAY OF INTERVAL 1 MINUTE AS l "
      "LEFT SEMI JOIN STREAM b WATERMARK t DELAY OF INTERVAL 1 MINUTE AS r "
      "ON l.id = r.id AND l.t = r.t");
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_TRUE(plan->has_value());
  StatefulPlanSpec& spec = **plan;
  EXPECT_EQ(Options(spec).type, ops::JoinType::kLeftSemi);
  Exec(
      "CREATE TEMP TABLE __stream_0 AS SELECT * FROM (VALUES (1, TIMESTAMP '2024-01-01 00:00:01'),"
      " (2, TIMESTAMP '2024-01-01 00:00:02')) t(id, t)");
  Exec(
      "CREATE TEMP TABLE __stream_1 AS SELECT * FROM (VALUES (1, TIMESTAMP '2024-01-01 00:00:01'),"
      " (1, TIMESTAMP '2024-01-01 00:00:01')) t(id, t)");
  EXPECT_EQ(RunBatch(spec, 0), std::vector<std::string>{"1|2024-01-01 00:00:01"});
}

// test/sql/streaming/join_time_range.test batch by batch: the 1 ms margin of BETWEEN keeps an
// impression exactly at watermark - 5 s one batch longer; late impressions are dropped.
TEST_F(JoinPlannerTest, TimeRangeLeftOuterJoinEndToEnd) {
  auto plan = Plan(
      "SELECT i.ad_id, i.s AS impression_s, c.s AS click_s "
      "FROM STREAM impressions WATERMARK timestamp_seconds(s) AS its DELAY OF INTERVAL 10 SECONDS "
      "AS i LEFT JOIN STREAM clicks WATERMARK timestamp_seconds(s) AS cts DELAY OF INTERVAL 10 "
      "SECONDS AS c ON c.ad_id = i.ad_id AND c.cts BETWEEN i.its AND i.its + INTERVAL 5 SECONDS");
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_TRUE(plan->has_value());
  StatefulPlanSpec& spec = **plan;
  auto feed = [&](const std::string& impressions, const std::string& clicks) {
    for (const auto& [table, rows, column] : {std::make_tuple("__stream_0", impressions, "its"),
                                              std::make_tuple("__stream_1", clicks, "cts")}) {
      Exec(std::string("CREATE OR REPLACE TEMP TABLE ") + table +
           " AS SELECT ad_id::INTEGER AS ad_id, s::BIGINT AS s, to_timestamp(s) AS " + column +
           " FROM (SELECT unnest(r, recursive := true) FROM (SELECT unnest(" + rows + ") AS r))");
    }
  };
  const std::string none = "[]::STRUCT(ad_id INTEGER, s BIGINT)[]";
  feed("[{'ad_id': 1, 's': 1}, {'ad_id': 2, 's': 2}, {'ad_id': 3, 's': 3}]",
       "[{'ad_id': 1, 's': 4}, {'ad_id': 2, 's': 10}]");
  EXPECT_EQ(RunBatch(spec, 0), std::vector<std::string>{"1|1|4"});
  feed("[{'ad_id': 4, 's': 30}, {'ad_id': 6, 's': 15}]", "[{'ad_id': 4, 's': 31}]");
  EXPECT_EQ(RunBatch(spec, 1), std::vector<std::string>{"4|30|31"});
  feed(none, none);  // the no-data batch at watermark 20 s
  EXPECT_EQ(RunBatch(spec, 2, 20000, 0), (std::vector<std::string>{"2|2|NULL", "3|3|NULL"}));
  EXPECT_EQ(spec.op->Progress().num_rows_total, 3);
  feed("[{'ad_id': 5, 's': 5}]", "[{'ad_id': 4, 's': 33}]");
  EXPECT_EQ(RunBatch(spec, 3, 20000), std::vector<std::string>{"4|30|33"});
  EXPECT_EQ(spec.op->Progress().num_rows_dropped_by_watermark, 1);
  feed("[{'ad_id': 7, 's': 41}]", none);
  EXPECT_EQ(RunBatch(spec, 4, 20000), std::vector<std::string>{});
  feed(none, none);  // watermark 23 s
  EXPECT_EQ(RunBatch(spec, 5, 23000, 20000), std::vector<std::string>{"6|15|NULL"});
}

}  // namespace
}  // namespace sluice::plan
