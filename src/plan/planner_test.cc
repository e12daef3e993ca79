#include "plan/planner.h"

#include <gtest/gtest.h>

#include "plan/stateful_plan.h"

namespace sluice::plan {
namespace {

class PlannerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto e = engine::Engine::Open();
    ASSERT_TRUE(e.ok());
    engine_ = e.MoveValueUnsafe().release();
  }
  static void TearDownTestSuite() {
    delete engine_;
    engine_ = nullptr;
  }
  Result<PlannedStreamingQuery> Plan(const std::string& sql, sluice::OutputMode mode) {
    SLUICE_ASSIGN_OR_RETURN(auto parsed, ParseStreamingQuery(sql));
    StreamingQuerySpec spec;
    spec.query = std::move(parsed);
    spec.output_mode = mode;
    return PlanStreamingQuery(engine_, spec);
  }
  std::string Refusal(const std::string& sql, sluice::OutputMode mode) {
    auto r = Plan(sql, mode);
    EXPECT_FALSE(r.ok()) << sql;
    return r.ok() ? "" : r.status().message();
  }
  static engine::Engine* engine_;
};
engine::Engine* PlannerTest::engine_ = nullptr;

constexpr auto kAppend = sluice::OutputMode::kAppend;
constexpr auto kUpdate = sluice::OutputMode::kUpdate;
constexpr auto kComplete = sluice::OutputMode::kComplete;

TEST_F(PlannerTest, StatelessQueryHasWatermarkNodesAndNoOperators) {
  auto p =
      Plan("SELECT value FROM STREAM t WATERMARK ts DELAY OF INTERVAL 5 SECONDS AS e", kAppend);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->operators.empty());
  EXPECT_EQ(p->plan->num_sources(), 1u);
  auto nodes = p->plan->watermark_nodes();
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].column, "ts");
  EXPECT_EQ(nodes[0].delay_ms, 5000);
}

TEST(IsSelectStarFromTest, OnlyTheWholeTableUnchanged) {
  EXPECT_TRUE(IsSelectStarFrom("SELECT * FROM __stream_0", "__stream_0"));
  EXPECT_TRUE(IsSelectStarFrom("  select *\n  from  __stream_0 ; ", "__stream_0"));
  EXPECT_TRUE(IsSelectStarFrom("SELECT /* all */ * FROM \"__source_0\" -- x", "__source_0"));
  EXPECT_FALSE(IsSelectStarFrom("SELECT * FROM __stream_0", "__stream_1"));
  EXPECT_FALSE(IsSelectStarFrom("SELECT * FROM __stream_0 WHERE id > 1", "__stream_0"));
  EXPECT_FALSE(IsSelectStarFrom("SELECT *, 1 AS x FROM __stream_0", "__stream_0"));
  EXPECT_TRUE(IsSelectStarFrom("SELECT * FROM __stream_0 AS s", "__stream_0"));
  EXPECT_TRUE(IsSelectStarFrom("SELECT * FROM __stream_0 AS \"t\";", "__stream_0"));
  EXPECT_TRUE(IsSelectStarFrom("SELECT * FROM __stream_0 s", "__stream_0"));
  EXPECT_FALSE(IsSelectStarFrom("SELECT * FROM __stream_0 AS s WHERE true", "__stream_0"));
  EXPECT_FALSE(IsSelectStarFrom("SELECT * FROM __stream_0 s, __stream_1", "__stream_0"));
  EXPECT_FALSE(IsSelectStarFrom("SELECT * FROM __stream_0 WHERE", "__stream_0"));
  EXPECT_FALSE(IsSelectStarFrom("SELECT * FROM __stream_0 AS", "__stream_0"));
  EXPECT_FALSE(IsSelectStarFrom("SELECT * FROM __stream_0 LIMIT 1", "__stream_0"));
  EXPECT_FALSE(IsSelectStarFrom("SELECT DISTINCT * FROM __stream_0", "__stream_0"));
  EXPECT_FALSE(IsSelectStarFrom("SELECT * FROM __stream_0; SELECT 1", "__stream_0"));
  EXPECT_FALSE(IsSelectStarFrom("SELECT * FROM '__stream_0'", "__stream_0"));
  EXPECT_FALSE(IsSelectStarFrom("SELECT * FROM \"unterminated", "__stream_0"));
}

// A stateless SELECT * over a stream hands the source batch on (the same data, no copy), with the
// watermark's event-time statistics still computed; any other query runs and gives a new batch.
TEST_F(PlannerTest, SelectStarPassesTheSourceBatchOn) {
  auto conn = engine_->Connect();
  ASSERT_TRUE(conn.ok());
  auto source = (*conn)->Query(
      "SELECT i AS value, TIMESTAMP '2024-01-01 00:00:00' + i * INTERVAL 1 SECOND AS ts "
      "FROM range(1, 4) t(i)");
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  struct Case {
    std::string sql;
    bool same_batch;
    size_t columns;
    size_t event_time_nodes;
  };
  const std::vector<Case> cases = {
      {"SELECT * FROM STREAM t", true, 2, 0},
      {"SELECT * FROM STREAM read_files('/landing', format => 'json')", true, 2, 0},
      {"SELECT * FROM STREAM t WATERMARK ts DELAY OF INTERVAL 5 SECONDS AS e", true, 2, 1},
      {"SELECT value, ts FROM STREAM t", false, 2, 0},
      {"SELECT * FROM STREAM t WHERE value > 1", false, 2, 0},
      {"SELECT * FROM STREAM t WATERMARK to_timestamp(value) AS et DELAY OF INTERVAL 5 SECONDS "
       "AS e",
       false, 3, 1},
  };
  for (const Case& c : cases) {
    auto planned = Plan(c.sql, kAppend);
    ASSERT_TRUE(planned.ok()) << c.sql << ": " << planned.status().ToString();
    PlanContext context;
    context.engine = engine_;
    ASSERT_TRUE(planned->plan->Open(context).ok()) << c.sql;
    PlanInput input;
    input.sources = {*source};
    auto out = planned->plan->Execute(input);
    ASSERT_TRUE(out.ok()) << c.sql << ": " << out.status().ToString();
    EXPECT_EQ(out->rows.data() == source->data(), c.same_batch)
        << c.sql << " planned as " << planned->plan->Description();
    EXPECT_EQ(out->rows.num_rows(), c.sql.find("WHERE") == std::string::npos ? 3 : 2) << c.sql;
    EXPECT_EQ(out->rows.num_columns(), c.columns) << c.sql;
    ASSERT_EQ(out->event_time.size(), c.event_time_nodes) << c.sql;
    if (c.event_time_nodes == 1) {
      EXPECT_EQ(out->event_time[0].count, 3) << c.sql;
    }
  }
}

TEST_F(PlannerTest, AggregationShapes) {
  auto p = Plan("SELECT value, count(*) AS count FROM STREAM input GROUP BY value", kComplete);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->operators, std::vector<std::string>{"stateStoreSave"});
  p = Plan(
      "SELECT epoch(window.start)::BIGINT AS start, count(*) AS count FROM STREAM input "
      "WATERMARK timestamp_seconds(value) AS eventTime DELAY OF INTERVAL 10 SECONDS AS i GROUP "
      "BY window(eventTime, '5 seconds')",
      kUpdate);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->update_keys, std::vector<std::string>{"start"});
  p = Plan(
      "SELECT v AS k, session_window, count(*) FROM STREAM input WATERMARK ts DELAY OF INTERVAL "
      "10 SECONDS AS i GROUP BY session_window(ts, INTERVAL 5 SECONDS), k",
      kAppend);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->operators, std::vector<std::string>{"sessionWindowStateStoreSaveExec"});
  // UPDATE with a grouping key (or the window) that no output column carries: Spark emits the
  // changed groups' rows as they are, so there is no MERGE key and the rows are appended (not
  // the one-row table of a global aggregate).
  for (const char* sql :
       {"SELECT count(*) AS n FROM STREAM t GROUP BY k",
        "SELECT g, max(v) AS m FROM STREAM t GROUP BY k, g",
        "SELECT k, count(*) AS n FROM STREAM t WATERMARK ts DELAY OF INTERVAL 10 SECONDS AS e "
        "GROUP BY window(ts, '10 seconds'), k"}) {
    p = Plan(sql, kUpdate);
    ASSERT_TRUE(p.ok()) << sql << ": " << p.status().ToString();
    EXPECT_TRUE(p->update_keys.empty()) << sql;
    EXPECT_FALSE(p->update_single_row) << sql;
  }
  p = Plan("SELECT k, g, max(v) AS m FROM STREAM t GROUP BY k, g", kUpdate);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->update_keys, (std::vector<std::string>{"k", "g"}));
  p = Plan("SELECT count(*) AS n FROM STREAM t", kUpdate);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->update_keys.empty());
  EXPECT_TRUE(p->update_single_row);
  // SQL SELECT DISTINCT is Spark's Distinct in every mode, an aggregation whose keys are the
  // selected expressions (DISTINCT *: every input column, taken by the operator at its first
  // batch; UPDATE mode appends its rows, no MERGE key being known when planning).
  p = Plan("SELECT DISTINCT k, v + 1 AS w FROM STREAM t", kUpdate);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->operators, std::vector<std::string>{"stateStoreSave"});
  EXPECT_EQ(p->update_keys, (std::vector<std::string>{"k", "w"}));
  EXPECT_FALSE(p->update_single_row);
  p = Plan("SELECT DISTINCT k, v FROM STREAM t", kComplete);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->operators, std::vector<std::string>{"stateStoreSave"});
  // APPEND mode: a watermarked event-time column among the selected ones, else Spark's refusal.
  EXPECT_NE(Refusal("SELECT DISTINCT k, v FROM STREAM t", kAppend)
                .find("Append output mode not supported when there are streaming aggregations on "
                      "streaming DataFrames/DataSets without watermark"),
            std::string::npos);
  EXPECT_NE(
      Refusal("SELECT DISTINCT k, v FROM STREAM t WATERMARK ts DELAY OF INTERVAL 1 SECOND", kAppend)
          .find("without watermark"),
      std::string::npos);
  p = Plan("SELECT DISTINCT k, ts FROM STREAM t WATERMARK ts DELAY OF INTERVAL 1 SECOND", kAppend);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->operators, std::vector<std::string>{"stateStoreSave"});
  EXPECT_NE(Refusal("SELECT DISTINCT * FROM STREAM t", kAppend).find("without watermark"),
            std::string::npos);
  p = Plan("SELECT DISTINCT * FROM STREAM t WATERMARK ts DELAY OF INTERVAL 1 SECOND", kAppend);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->operators, std::vector<std::string>{"stateStoreSave"});
  EXPECT_NE(Refusal("SELECT DISTINCT * EXCLUDE (v) FROM STREAM t WATERMARK ts DELAY OF INTERVAL 1 "
                    "SECOND",
                    kAppend)
                .find("DISTINCT ON (c1, c2, ...) *"),
            std::string::npos);
  // DISTINCT ON is the deduplication (dropDuplicates) in APPEND mode.
  p = Plan("SELECT DISTINCT ON (k, v) k, v FROM STREAM t", kAppend);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->operators, std::vector<std::string>{"dedupe"});
  p = Plan("SELECT DISTINCT * FROM STREAM t", kUpdate);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->operators, std::vector<std::string>{"stateStoreSave"});
  EXPECT_TRUE(p->update_keys.empty());
  EXPECT_FALSE(p->update_single_row);
  EXPECT_NE(Refusal("SELECT DISTINCT *, 1 AS one FROM STREAM t", kUpdate).find("no *"),
            std::string::npos);
  // GROUP BY the watermarked column itself is a watermarked key (append allowed).
  p = Plan("SELECT ts, sum(x) FROM STREAM t WATERMARK ts DELAY OF INTERVAL 1 SECOND GROUP BY 1",
           kAppend);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
}

TEST_F(PlannerTest, RefusalsPerOutputMode) {
  EXPECT_NE(Refusal("SELECT value, count(*) AS count FROM STREAM input GROUP BY value", kAppend)
                .find("Append output mode not supported when there are streaming aggregations on "
                      "streaming DataFrames/DataSets without watermark"),
            std::string::npos);
  EXPECT_NE(Refusal("SELECT value FROM STREAM input", kComplete)
                .find("Complete output mode not supported when there are no streaming "
                      "aggregations"),
            std::string::npos);
  EXPECT_NE(Refusal("SELECT k, count(*) FROM STREAM t WATERMARK ts DELAY OF INTERVAL 1 SECOND "
                    "GROUP BY session_window(ts, '5 seconds'), k",
                    kUpdate)
                .find("session window"),
            std::string::npos);
  EXPECT_NE(Refusal("SELECT value FROM STREAM input ORDER BY value", kAppend).find("Sorting"),
            std::string::npos);
  EXPECT_NE(Refusal("SELECT value FROM STREAM input LIMIT 3", kUpdate).find("LIMIT"),
            std::string::npos);
  EXPECT_NE(Refusal("SELECT value FROM STREAM input LIMIT 3 OFFSET 1", kAppend).find("LIMIT"),
            std::string::npos);
  EXPECT_NE(
      Refusal("SELECT DISTINCT ON (value) value FROM STREAM input LIMIT 3", kAppend).find("LIMIT"),
      std::string::npos);
  EXPECT_NE(Refusal("SELECT k, count(DISTINCT v) FROM STREAM t GROUP BY k", kComplete)
                .find("Distinct aggregations"),
            std::string::npos);
  EXPECT_NE(Refusal("SELECT k, median(v) FROM STREAM t GROUP BY k", kComplete).find("median"),
            std::string::npos);
  EXPECT_NE(Refusal("SELECT k, v, count(*) FROM STREAM t GROUP BY k", kComplete)
                .find("\"v\" must appear in the GROUP BY"),
            std::string::npos);
  EXPECT_NE(Refusal("SELECT * FROM (SELECT k, count(*) FROM STREAM t GROUP BY k)", kComplete)
                .find("below the top level"),
            std::string::npos);
  EXPECT_NE(
      Refusal("SELECT k FROM STREAM t UNION SELECT k FROM STREAM u", kAppend).find("UNION ALL"),
      std::string::npos);
  EXPECT_NE(Refusal("SELECT k, row_number() OVER (ORDER BY k) FROM STREAM t", kAppend)
                .find("Non-time-based windows"),
            std::string::npos);
  EXPECT_NE(
      Refusal("SELECT k, count(*) FROM STREAM t GROUP BY ALL", kComplete).find("GROUP BY ALL"),
      std::string::npos);
}

TEST_F(PlannerTest, LimitInAppendModeIsAGlobalLimit) {
  // Spark's StreamingGlobalLimitExec: LIMIT n over a stateless append query.
  auto p = Plan("SELECT value FROM STREAM input WHERE value > 1 LIMIT 3", kAppend);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->operators, std::vector<std::string>{"globalLimit"});
  EXPECT_TRUE(p->update_keys.empty());
  EXPECT_NE(Refusal("SELECT value FROM STREAM input LIMIT value", kAppend).find("constant row"),
            std::string::npos);
}

TEST_F(PlannerTest, ChainsListOperatorsTopDown) {
  auto p = Plan(
      "SELECT window.start, count(*) AS n FROM (SELECT * FROM STREAM e WATERMARK ts DELAY OF "
      "INTERVAL 5 SECONDS AS e QUALIFY row_number() OVER (PARTITION BY id ORDER BY ts) = 1) AS d "
      "GROUP BY window(ts, '10 seconds')",
      kAppend);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->operators, (std::vector<std::string>{"stateStoreSave", "dedupeWithinWatermark"}));
  p = Plan(
      "SELECT u, count(*) AS n FROM (SELECT DISTINCT ON (sid) sid, u FROM STREAM v) AS s "
      "GROUP BY u",
      kUpdate);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->operators, (std::vector<std::string>{"stateStoreSave", "dedupe"}));
  EXPECT_EQ(p->update_keys, std::vector<std::string>{"u"});
  p = Plan(
      "SELECT window.start, count(*) AS n FROM STREAM a WATERMARK ts DELAY OF INTERVAL 5 SECONDS "
      "AS l JOIN STREAM b WATERMARK ts2 DELAY OF INTERVAL 5 SECONDS AS r ON l.k = r.k AND "
      "r.ts2 BETWEEN l.ts AND l.ts + INTERVAL 20 SECONDS GROUP BY window(l.ts, '10 seconds')",
      kAppend);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->operators, (std::vector<std::string>{"stateStoreSave", "symmetricHashJoin"}));
}

TEST_F(PlannerTest, ChainRefusals) {
  EXPECT_NE(Refusal("SELECT n, count(*) AS c FROM (SELECT k, count(*) AS n FROM STREAM t GROUP "
                    "BY k) AS a GROUP BY n",
                    kComplete)
                .find("Detected pattern of possible 'correctness' issue due to global watermark"),
            std::string::npos);
  EXPECT_NE(Refusal("SELECT k, count(*) AS c FROM (SELECT DISTINCT k, v FROM STREAM t) AS a "
                    "GROUP BY k",
                    kUpdate)
                .find("Detected pattern of possible 'correctness' issue"),
            std::string::npos);
  // In APPEND mode SELECT DISTINCT is an aggregation too: Spark's refusal without a watermark,
  // and an aggregation of an aggregation (not done yet) with one.
  EXPECT_NE(Refusal("SELECT k, count(*) AS c FROM (SELECT DISTINCT k, v FROM STREAM t) AS a "
                    "GROUP BY k",
                    kAppend)
                .find("without watermark"),
            std::string::npos);
  EXPECT_NE(Refusal("SELECT window.start AS s, count(*) AS c FROM (SELECT DISTINCT k, ts FROM "
                    "STREAM t WATERMARK ts DELAY OF INTERVAL 1 SECOND) AS a GROUP BY "
                    "window(ts, '10 seconds')",
                    kAppend)
                .find("over the result of a SELECT DISTINCT, which is an aggregation"),
            std::string::npos);
  EXPECT_NE(Refusal("SELECT l.k, count(*) AS c FROM STREAM a AS l JOIN STREAM b AS r ON l.k = "
                    "r.k GROUP BY l.k",
                    kComplete)
                .find("not supported in Complete output mode, only in Append output mode"),
            std::string::npos);
  EXPECT_NE(
      Refusal("SELECT DISTINCT l.k FROM STREAM a AS l JOIN STREAM b AS r ON l.k = r.k", kAppend)
          .find("not supported yet"),
      std::string::npos);
}

// Above a join, an event-time key is a side's own watermarked column, by its qualifier: the
// auctions' `A.dateTime` is not watermarked because the bids' `B.dateTime` is (Nexmark q4).
TEST_F(PlannerTest, EventTimeKeyOverAJoinIsTheSidesOwnWatermarkColumn) {
  const std::string join =
      " FROM STREAM auction WATERMARK expires DELAY OF INTERVAL 4 SECONDS AS A JOIN STREAM bid "
      "WATERMARK dateTime DELAY OF INTERVAL 4 SECONDS AS B ON A.id = B.auction AND B.dateTime "
      "BETWEEN A.dateTime AND A.expires ";
  auto p = Plan("SELECT A.id, max(B.price) AS final" + join + "GROUP BY A.id, A.expires", kAppend);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->operators, (std::vector<std::string>{"stateStoreSave", "symmetricHashJoin"}));
  EXPECT_NE(
      Refusal("SELECT A.id, max(B.price) AS final" + join + "GROUP BY A.id, A.dateTime", kAppend)
          .find("Append output mode not supported when there are streaming aggregations on "
                "streaming DataFrames/DataSets without watermark"),
      std::string::npos);
  EXPECT_NE(
      Refusal("SELECT count(*) AS n" + join + "GROUP BY window(A.dateTime, '10 seconds')", kAppend)
          .find("without watermark"),
      std::string::npos);
  // The bids' own column is an event-time key.
  p = Plan("SELECT count(*) AS n" + join + "GROUP BY window(B.dateTime, '10 seconds')", kAppend);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  // The average over the closed auctions in the same query: three stateful operators.
  EXPECT_NE(Refusal("SELECT category, avg(final) AS a FROM (SELECT A.category, max(B.price) AS "
                    "final" +
                        join + "GROUP BY A.id, A.category, A.expires) AS q GROUP BY category",
                    kComplete)
                .find("Detected pattern of possible 'correctness' issue"),
            std::string::npos);
}

TEST_F(PlannerTest, StatelessQueryOverAnAppendAggregation) {
  const std::string agg =
      "(SELECT k, count(*) AS n, window.start AS ws FROM STREAM t WATERMARK ts DELAY OF "
      "INTERVAL 5 SECONDS AS e GROUP BY window(ts, '10 seconds'), k) AS a";
  auto p =
      Plan("SELECT k, n FROM " + agg + " QUALIFY rank() OVER (PARTITION BY ws ORDER BY n DESC) = 1",
           kAppend);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->operators, std::vector<std::string>{"stateStoreSave"});
  p = Plan("SELECT k, n * 2 AS n2 FROM " + agg + " WHERE n > 1", kAppend);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->operators, std::vector<std::string>{"stateStoreSave"});
  EXPECT_NE(Refusal("SELECT k, n FROM " + agg +
                        " QUALIFY rank() OVER (PARTITION BY k ORDER BY n DESC) = 1",
                    kAppend)
                .find("must be partitioned by a column of the aggregation's window"),
            std::string::npos);
  EXPECT_NE(Refusal("SELECT k, n FROM " + agg, kUpdate).find("below the top level"),
            std::string::npos);
  EXPECT_NE(Refusal("SELECT k, n FROM " + agg + " ORDER BY n", kAppend).find("Sorting"),
            std::string::npos);
}

TEST(StreamingPlanTest, WatermarkPropagation) {
  EXPECT_EQ(StreamingPlan::PropagateWatermark(0, -20001), 0);  // no watermark yet
  EXPECT_EQ(StreamingPlan::PropagateWatermark(110000, -20001), 89999);
  EXPECT_EQ(StreamingPlan::PropagateWatermark(110000, 0), 110000);
}

}  // namespace
}  // namespace sluice::plan
