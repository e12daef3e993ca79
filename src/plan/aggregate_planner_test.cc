// Which queries get the per-window top-1 hint (HintTopOneOverAggregation): only those where
// pruning the aggregation's groups cannot change the rows of the SELECT above it.
#include "plan/aggregate_planner.h"

#include <gtest/gtest.h>

#include "ops/streaming_aggregate.h"
#include "plan/stateful_plan.h"

namespace sluice::plan {
namespace {

class TopOneHintTest : public ::testing::Test {
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
  // The hint the aggregation got: "" none, else "<input column> DESC|ASC"; "error: ..." when
  // the query does not plan.
  std::string Hint(const std::string& upper, const std::string& lower_select = "",
                   const std::string& group_by = "window(ts, '10 seconds'), a, p",
                   const std::string& lower_rest = "") {
    const std::string sql =
        "SELECT a, p FROM (SELECT a, p, window.start AS ws, window.end AS we, window AS w, "
        "count(*) AS n" +
        lower_select + " FROM STREAM t WATERMARK ts DELAY OF INTERVAL 4 SECONDS AS b GROUP BY " +
        group_by + lower_rest + ") AS x " + upper;
    auto parsed = ParseStreamingQuery(sql);
    if (!parsed.ok()) return "error: " + parsed.status().ToString();
    StreamingQuerySpec spec;
    spec.query = std::move(*parsed);
    spec.output_mode = sluice::OutputMode::kAppend;
    auto planned = PlanStreamingQuery(engine_, spec);
    if (!planned.ok()) return "error: " + planned.status().ToString();
    const auto* plan = dynamic_cast<const StreamingPlan*>(planned->plan.get());
    if (plan == nullptr) return "error: not a StreamingPlan";
    const auto* agg = dynamic_cast<const ops::StreamingAggregate*>(plan->stage_operator(0));
    if (agg == nullptr) return "error: no aggregation";
    if (!agg->keep_top()) return "";
    return agg->keep_top()->column + (agg->keep_top()->descending ? " DESC" : " ASC");
  }
  static engine::Engine* engine_;
};
engine::Engine* TopOneHintTest::engine_ = nullptr;

TEST_F(TopOneHintTest, RankOrDenseRankOfOneByTheWindowOrderedByAGroupingKey) {
  EXPECT_EQ(Hint("QUALIFY rank() OVER (PARTITION BY we ORDER BY p DESC) = 1"), "__k1 DESC");
  EXPECT_EQ(Hint("QUALIFY rank() OVER (PARTITION BY ws ORDER BY p) <= 1"), "__k1 ASC");
  EXPECT_EQ(Hint("QUALIFY 1 = dense_rank() OVER (PARTITION BY w ORDER BY p ASC)"), "__k1 ASC");
  EXPECT_EQ(Hint("QUALIFY 1 >= rank() OVER (PARTITION BY x.we ORDER BY a DESC NULLS FIRST)"),
            "__k0 DESC");
  // Another conjunct only filters the rank-1 rows.
  EXPECT_EQ(Hint("QUALIFY rank() OVER (PARTITION BY we ORDER BY p DESC) = 1 AND a > 3"),
            "__k1 DESC");
  // Sliding windows too (pruned per window).
  EXPECT_EQ(Hint("QUALIFY rank() OVER (PARTITION BY ws ORDER BY p DESC) = 1", "",
                 "window(ts, '10 seconds', '5 seconds'), a, p"),
            "__k1 DESC");
}

TEST_F(TopOneHintTest, NoHintWherePruningCouldChangeTheRows) {
  const std::string rank = "rank() OVER (PARTITION BY we ORDER BY p DESC)";
  EXPECT_EQ(Hint("QUALIFY " + rank + " + 0 = 1"), "");
  EXPECT_EQ(Hint("QUALIFY " + rank + " < 2"), "");
  EXPECT_EQ(Hint("QUALIFY " + rank + " <= 3"), "");
  EXPECT_EQ(Hint("QUALIFY " + rank + " = 1 OR a = 1"), "");
  EXPECT_EQ(Hint("QUALIFY row_number() OVER (PARTITION BY we ORDER BY p DESC) = 1"), "");
  // WHERE runs before the rank; another OVER window sees the pruned rows.
  EXPECT_EQ(Hint("WHERE p < 10 QUALIFY " + rank + " = 1"), "");
  EXPECT_EQ(Hint("QUALIFY " + rank + " = 1 AND count(*) OVER (PARTITION BY we) > 1"), "");
  // Ordered by an aggregate or an expression, partitioned by something else as well.
  EXPECT_EQ(Hint("QUALIFY rank() OVER (PARTITION BY we ORDER BY n DESC) = 1"), "");
  EXPECT_EQ(Hint("QUALIFY rank() OVER (PARTITION BY we ORDER BY p2 DESC) = 1", ", p * 2 AS p2"),
            "");
  EXPECT_EQ(Hint("QUALIFY rank() OVER (PARTITION BY we ORDER BY p DESC, a) = 1"), "");
  EXPECT_EQ(Hint("QUALIFY rank() OVER (PARTITION BY we, a ORDER BY p DESC) = 1"), "");
  EXPECT_EQ(Hint("QUALIFY rank() OVER (PARTITION BY wd ORDER BY p DESC) = 1",
                 ", date_trunc('minute', window.start) AS wd"),
            "");
  // HAVING drops groups after the aggregation: the best group might not pass it.
  EXPECT_EQ(Hint("QUALIFY " + rank + " = 1", "", "window(ts, '10 seconds'), a, p",
                 " HAVING count(*) > 1"),
            "");
}

}  // namespace
}  // namespace sluice::plan
