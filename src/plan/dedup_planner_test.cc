#include "plan/dedup_planner.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "fs/file_system.h"
#include "fs/test_util.h"
#include "ops/deduplicate.h"

namespace sluice::plan {
namespace {

using V = std::vector<std::string>;

std::vector<std::string> Rows(const engine::Batch& b) {
  std::vector<std::string> out;
  for (int64_t r = 0; r < b.num_rows(); ++r) {
    std::string row;
    for (size_t c = 0; c < b.num_columns(); ++c) {
      if (c > 0) row += "|";
      row += b.GetString(r, c).value_or("NULL");
    }
    out.push_back(row);
  }
  return out;
}

class DedupPlannerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto engine = engine::Engine::Open();
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).ValueOrDie();
    auto ast = SqlAst::Open(engine_.get());
    ASSERT_TRUE(ast.ok()) << ast.status().ToString();
    ast_ = std::move(ast).ValueOrDie();
    auto conn = engine_->Connect();
    ASSERT_TRUE(conn.ok()) << conn.status().ToString();
    conn_ = std::move(conn).ValueOrDie();
  }

  // Parses and analyzes `sql` as the planner does, then asks the dedup hook.
  Result<std::optional<StatefulPlanSpec>> Plan(
      const std::string& sql, sluice::OutputMode mode = sluice::OutputMode::kAppend) {
    SLUICE_ASSIGN_OR_RETURN(parsed_, ParseStreamingQuery(sql));
    analysis_ = QueryAnalysis();
    analysis_.query = &parsed_;
    analysis_.output_mode = mode;
    analysis_.ast = ast_.get();
    SLUICE_ASSIGN_OR_RETURN(analysis_.sql, RewriteWindowCalls(parsed_.sql));
    SLUICE_ASSIGN_OR_RETURN(analysis_.top, ast_->ParseSelect(analysis_.sql));
    const Json& top = analysis_.top;
    analysis_.has_aggregation = !GroupExpressions(top).empty() || !Having(top).is_null() ||
                                ContainsAggregate(SelectList(top));
    analysis_.has_distinct = HasModifier(top, "DISTINCT_MODIFIER");
    analysis_.has_qualify = !Qualify(top).is_null();
    return PlanDeduplication(analysis_);
  }

  // Plans `sql`, requiring a dedup spec.
  StatefulPlanSpec MustPlan(const std::string& sql) {
    auto r = Plan(sql);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    if (!r.ok() || !r->has_value()) {
      ADD_FAILURE() << sql << ": no dedup spec";
      return StatefulPlanSpec();
    }
    return std::move(**r);
  }

  // The refusal message of `sql` ("" when it was not refused).
  std::string Refusal(const std::string& sql,
                      sluice::OutputMode mode = sluice::OutputMode::kAppend) {
    auto r = Plan(sql, mode);
    return r.ok() ? "" : r.status().ToString();
  }

  // Opens the spec's operator.
  void Open(StatefulPlanSpec& spec) {
    ASSERT_NE(spec.op, nullptr);
    ops::OperatorContext c;
    c.engine = engine_.get();
    c.fs = fs::LocalFileSystem();
    c.checkpoint_root = dir_.Join("checkpoint");
    c.num_partitions = 3;
    c.conf["sluice.streaming.stateStore.providerClass"] = "memory";
    Status st = spec.op->Open(c);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  // One batch through the spec: `stream_sql` gives the rows of __stream_0; the input SQL, the
  // operator and the output SQL run as the stateful plan runs them.
  V Run(StatefulPlanSpec& spec, int64_t batch_id, const std::string& stream_sql,
        int64_t late_ms = 0, int64_t eviction_ms = 0) {
    auto stream = conn_->Query(stream_sql);
    EXPECT_TRUE(stream.ok()) << stream.status().ToString();
    if (!stream.ok()) return {"<error>"};
    EXPECT_TRUE(conn_->RegisterBatch("__stream_0", *stream).ok());
    auto input = conn_->Query(spec.input_sqls.at(0));
    EXPECT_TRUE(input.ok()) << spec.input_sqls[0] << ": " << input.status().ToString();
    if (!input.ok()) return {"<error>"};
    ops::OperatorBatch b;
    b.batch_id = BatchId(batch_id);
    b.late_watermark_ms = late_ms;
    b.eviction_watermark_ms = eviction_ms;
    auto out = spec.op->Process(b, {*input});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    if (!out.ok()) return {"<error>"};
    if (spec.output_sql.empty()) return Rows(*out);
    EXPECT_TRUE(conn_->RegisterBatch("__op_output", *out).ok());
    auto rows = conn_->Query(spec.output_sql);
    EXPECT_TRUE(rows.ok()) << spec.output_sql << ": " << rows.status().ToString();
    return rows.ok() ? Rows(*rows) : V{"<error>"};
  }

  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<SqlAst> ast_;
  std::unique_ptr<engine::Connection> conn_;
  ParsedStreamingQuery parsed_;
  QueryAnalysis analysis_;
  fs::ScopedTempDir dir_{"sluice-dedup-planner-test"};
};

TEST_F(DedupPlannerTest, OtherShapesAreNotDedup) {
  auto r = Plan("SELECT a, b FROM STREAM t WHERE a > 1");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->has_value());
}

TEST_F(DedupPlannerTest, SelectDistinctIsDedupeOnAllColumns) {
  StatefulPlanSpec spec = MustPlan("SELECT DISTINCT value FROM STREAM input");
  EXPECT_EQ(spec.operator_name, "dedupe");
  EXPECT_EQ(spec.input_sqls.size(), 1u);
  EXPECT_EQ(spec.output_sql, "");
  EXPECT_TRUE(spec.update_keys.empty());
  Open(spec);
  EXPECT_EQ(Run(spec, 0, "SELECT * FROM (VALUES ('a'), ('b'), ('a')) t(value)"), (V{"a", "b"}));
  EXPECT_EQ(Run(spec, 1, "SELECT * FROM (VALUES ('b'), ('c')) t(value)"), (V{"c"}));
  EXPECT_EQ(spec.op->Progress().num_rows_total, 3);
}

TEST_F(DedupPlannerTest, DistinctOnKeepsQueryColumnsAndUsesOrderByWithinABatch) {
  StatefulPlanSpec spec =
      MustPlan("SELECT DISTINCT ON (id) id, v FROM STREAM t WHERE v <> 'skip' ORDER BY id, n DESC");
  EXPECT_EQ(spec.operator_name, "dedupe");
  EXPECT_NE(spec.output_sql, "");
  Open(spec);
  const char* kRows =
      "SELECT * FROM (VALUES (1, 'x', 1), (2, 'y', 1), (1, 'z', 5), (1, 'skip', 9)) t(id, v, n)";
  EXPECT_EQ(Run(spec, 0, kRows), (V{"2|y", "1|z"}));
  EXPECT_EQ(Run(spec, 1, "SELECT * FROM (VALUES (1, 'w', 0), (3, 'u', 0)) t(id, v, n)"),
            (V{"3|u"}));
}

// An explicit NULLS FIRST / NULLS LAST of the ORDER BY decides which row of a key is kept
// (DuckDB's tree spells it "NULLS FIRST"; it was read as the default, NULLS LAST for ASC).
TEST_F(DedupPlannerTest, DistinctOnOrderByKeepsTheNullsOrderWritten) {
  const char* kRows = "SELECT * FROM (VALUES (1, 'x', 1), (1, 'n', NULL)) t(id, v, n)";
  StatefulPlanSpec first =
      MustPlan("SELECT DISTINCT ON (id) id, v FROM STREAM t ORDER BY id, n ASC NULLS FIRST");
  Open(first);
  EXPECT_EQ(Run(first, 0, kRows), (V{"1|n"}));
  StatefulPlanSpec last =
      MustPlan("SELECT DISTINCT ON (id) id, v FROM STREAM t ORDER BY id, n DESC NULLS LAST");
  Open(last);
  EXPECT_EQ(Run(last, 0, kRows), (V{"1|x"}));
}

TEST_F(DedupPlannerTest, DistinctOnAnExpressionNotInTheOutput) {
  StatefulPlanSpec spec = MustPlan("SELECT DISTINCT ON (lower(name)) name FROM STREAM t");
  Open(spec);
  EXPECT_EQ(Run(spec, 0, "SELECT * FROM (VALUES ('Ann'), ('ANN'), ('Bob')) t(name)"),
            (V{"Ann", "Bob"}));
}

TEST_F(DedupPlannerTest, QualifyOrderedByTheWatermarkIsDedupWithinWatermark) {
  StatefulPlanSpec spec = MustPlan(
      "SELECT value, eventTime FROM STREAM input WATERMARK timestamp_seconds(value) AS eventTime "
      "DELAY OF INTERVAL 10 SECONDS AS i "
      "QUALIFY row_number() OVER (PARTITION BY value, eventTime ORDER BY eventTime) = 1");
  EXPECT_EQ(spec.operator_name, "dedupeWithinWatermark");
  Open(spec);
  const std::string rows =
      "SELECT v AS value, to_timestamp(v) AS eventTime FROM (VALUES (10), (11), (10)) t(v)";
  EXPECT_EQ(Run(spec, 0, rows), (V{"10|1970-01-01 00:00:10+00", "11|1970-01-01 00:00:11+00"}));
  // Late threshold 10 s drops 10; the eviction watermark 21 s expires 10 (20 s) and 11 (21 s).
  EXPECT_EQ(Run(spec, 1, rows, 10000, 21000), (V{}));
  EXPECT_EQ(spec.op->Progress().num_rows_dropped_by_watermark, 2);
  EXPECT_EQ(spec.op->Progress().num_rows_removed, 2);
  EXPECT_EQ(spec.op->Progress().num_rows_total, 0);  // 11 was a duplicate, then expired
  EXPECT_TRUE(spec.op->WantsNoDataBatch(21000, 22000));
}

TEST_F(DedupPlannerTest, QualifyWithTheEventTimeOutsideTheSelectList) {
  StatefulPlanSpec spec = MustPlan(
      "SELECT id FROM STREAM t WATERMARK ts DELAY OF INTERVAL 5 SECONDS AS e "
      "QUALIFY 1 = row_number() OVER (PARTITION BY id ORDER BY e.ts)");
  EXPECT_EQ(spec.operator_name, "dedupeWithinWatermark");
  Open(spec);
  EXPECT_EQ(Run(spec, 0,
                "SELECT * FROM (VALUES (1, to_timestamp(20)), (1, to_timestamp(10)), "
                "(2, to_timestamp(30))) t(id, ts)"),
            (V{"1", "2"}));
}

TEST_F(DedupPlannerTest, QualifyNotOrderedByTheWatermarkIsDedupe) {
  StatefulPlanSpec spec = MustPlan(
      "SELECT id, v FROM STREAM t QUALIFY row_number() OVER (PARTITION BY id ORDER BY v DESC) = 1");
  EXPECT_EQ(spec.operator_name, "dedupe");
  Open(spec);
  EXPECT_EQ(Run(spec, 0, "SELECT * FROM (VALUES (1, 5), (1, 7), (2, 1)) t(id, v)"),
            (V{"1|7", "2|1"}));
  EXPECT_EQ(Run(spec, 1, "SELECT * FROM (VALUES (1, 9), (3, 1)) t(id, v)"), (V{"3|1"}));
  // A watermark on another column than the ORDER BY: still dedupe.
  StatefulPlanSpec other = MustPlan(
      "SELECT id, ts FROM STREAM t WATERMARK ts DELAY OF INTERVAL 5 SECONDS AS e "
      "QUALIFY row_number() OVER (PARTITION BY id ORDER BY id) = 1");
  EXPECT_EQ(other.operator_name, "dedupe");
}

TEST_F(DedupPlannerTest, DistinctWithTheEventTimeColumnEvictsState) {
  StatefulPlanSpec spec =
      MustPlan("SELECT DISTINCT * FROM STREAM t WATERMARK ts DELAY OF INTERVAL 5 SECONDS AS e");
  Open(spec);
  const std::string rows =
      "SELECT * FROM (VALUES ('a', to_timestamp(10)), ('a', to_timestamp(10)), "
      "('b', to_timestamp(20))) t(k, ts)";
  EXPECT_EQ(Run(spec, 0, rows).size(), 2u);
  EXPECT_EQ(Run(spec, 1, "SELECT 'c' AS k, to_timestamp(30) AS ts", 0, 15000).size(), 1u);
  EXPECT_EQ(spec.op->Progress().num_rows_removed, 1);  // (a, 10 s)
  EXPECT_EQ(spec.op->Progress().num_rows_total, 2);
}

TEST_F(DedupPlannerTest, DistinctWithoutTheEventTimeColumnKeepsLateRowsAndState) {
  StatefulPlanSpec spec =
      MustPlan("SELECT DISTINCT k FROM STREAM t WATERMARK ts DELAY OF INTERVAL 5 SECONDS AS e");
  Open(spec);
  EXPECT_EQ(Run(spec, 0, "SELECT 'a' AS k, to_timestamp(1) AS ts", 10000, 10000), (V{"a"}));
  EXPECT_EQ(spec.op->Progress().num_rows_dropped_by_watermark, 0);
  EXPECT_EQ(spec.op->Progress().num_rows_removed, 0);
}

TEST_F(DedupPlannerTest, DistinctWithTheEventTimeNotAmongKeysDropsLateRowsKeepsState) {
  StatefulPlanSpec spec = MustPlan(
      "SELECT DISTINCT ON (k) k, e.ts AS t FROM STREAM t WATERMARK ts DELAY OF INTERVAL 5 SECONDS "
      "AS e");
  Open(spec);
  EXPECT_EQ(Run(spec, 0,
                "SELECT * FROM (VALUES ('a', to_timestamp(1)), ('b', to_timestamp(20))) "
                "t(k, ts)",
                10000, 30000),
            (V{"b|1970-01-01 00:00:20+00"}));
  EXPECT_EQ(spec.op->Progress().num_rows_dropped_by_watermark, 1);
  EXPECT_EQ(spec.op->Progress().num_rows_removed, 0);
  EXPECT_EQ(spec.op->Progress().num_rows_total, 1);
}

TEST_F(DedupPlannerTest, UpdateModeUpsertsByTheKey) {
  auto r = Plan("SELECT DISTINCT ON (id) id AS key, v FROM STREAM t", sluice::OutputMode::kUpdate);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((*r)->update_keys, (V{"key"}));
  r = Plan("SELECT DISTINCT a, b AS c FROM STREAM t", sluice::OutputMode::kUpdate);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->update_keys, (V{"a", "c"}));
  EXPECT_NE(
      Refusal("SELECT DISTINCT ON (id) v FROM STREAM t", sluice::OutputMode::kUpdate).find("key"),
      std::string::npos);
}

TEST_F(DedupPlannerTest, Refusals) {
  EXPECT_NE(Refusal("SELECT DISTINCT a, count(*) FROM STREAM t GROUP BY a").find("not supported"),
            std::string::npos);
  EXPECT_NE(Refusal("SELECT DISTINCT a FROM STREAM t JOIN STREAM u ON t.a = u.a")
                .find("not supported yet"),
            std::string::npos);
  EXPECT_NE(Refusal("SELECT DISTINCT a FROM STREAM t ORDER BY a").find("Sorting"),
            std::string::npos);
  EXPECT_NE(Refusal("SELECT DISTINCT a FROM STREAM t", sluice::OutputMode::kComplete)
                .find("Complete output mode"),
            std::string::npos);
  EXPECT_NE(Refusal("SELECT a FROM STREAM t QUALIFY row_number() OVER (PARTITION BY a) = 2")
                .find("row_number"),
            std::string::npos);
  EXPECT_NE(
      Refusal("SELECT a FROM STREAM t QUALIFY rank() OVER (PARTITION BY a) = 1").find("row_number"),
      std::string::npos);
  EXPECT_NE(Refusal("SELECT a FROM STREAM t QUALIFY row_number() OVER (ORDER BY a) = 1")
                .find("PARTITION BY"),
            std::string::npos);
  EXPECT_NE(
      Refusal("SELECT DISTINCT a FROM STREAM t QUALIFY row_number() OVER (PARTITION BY a) = 1")
          .find("not supported yet"),
      std::string::npos);
  // A stream-static join is fine.
  auto r = Plan("SELECT DISTINCT t.a FROM STREAM t JOIN dim d ON t.a = d.a");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->has_value());
}

}  // namespace
}  // namespace sluice::plan
