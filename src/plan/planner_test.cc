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
  Result<PlannedStreamingQuery> Plan(const std::string& sql, sinks::OutputMode mode) {
    SLUICE_ASSIGN_OR_RETURN(auto parsed, ParseStreamingQuery(sql));
    StreamingQuerySpec spec;
    spec.query = std::move(parsed);
    spec.output_mode = mode;
    return PlanStreamingQuery(engine_, spec);
  }
  std::string Refusal(const std::string& sql, sinks::OutputMode mode) {
    auto r = Plan(sql, mode);
    EXPECT_FALSE(r.ok()) << sql;
    return r.ok() ? "" : r.status().message();
  }
  static engine::Engine* engine_;
};
engine::Engine* PlannerTest::engine_ = nullptr;

constexpr auto kAppend = sinks::OutputMode::kAppend;
constexpr auto kUpdate = sinks::OutputMode::kUpdate;
constexpr auto kComplete = sinks::OutputMode::kComplete;

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
  EXPECT_NE(Refusal("SELECT value FROM STREAM input LIMIT 3", kAppend).find("LIMIT"),
            std::string::npos);
  EXPECT_NE(Refusal("SELECT k, count(DISTINCT v) FROM STREAM t GROUP BY k", kComplete)
                .find("Distinct aggregations"),
            std::string::npos);
  EXPECT_NE(Refusal("SELECT k, median(v) FROM STREAM t GROUP BY k", kComplete).find("median"),
            std::string::npos);
  EXPECT_NE(Refusal("SELECT k, v, count(*) FROM STREAM t GROUP BY k", kComplete)
                .find("\"v\" must appear in the GROUP BY"),
            std::string::npos);
  EXPECT_NE(Refusal("SELECT count(*) AS n FROM STREAM t GROUP BY k", kUpdate)
                .find("grouping key k is not in the select list"),
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

}  // namespace
}  // namespace sluice::plan
