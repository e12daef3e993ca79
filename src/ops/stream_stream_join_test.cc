#include "ops/stream_stream_join.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "fs/local_file_system.h"
#include "fs/test_util.h"

namespace sluice::ops {
namespace {

using engine::Batch;

class StreamStreamJoinTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto engine = engine::Engine::Open();
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).ValueOrDie();
    auto conn = engine_->Connect();
    ASSERT_TRUE(conn.ok()) << conn.status().ToString();
    conn_ = std::move(conn).ValueOrDie();
  }

  Batch Q(const std::string& sql) {
    auto r = conn_->Query(sql);
    EXPECT_TRUE(r.ok()) << sql << " -> " << r.status().ToString();
    return r.ok() ? *r : Batch();
  }

  // "SELECT <select> FROM <values v>": one row per value (none for an empty list).
  Batch Rows(const std::string& select, const std::vector<int>& values) {
    std::string from = "(SELECT * FROM (VALUES (0)) t(v) WHERE false)";
    if (!values.empty()) {
      from = "(VALUES ";
      for (size_t i = 0; i < values.size(); ++i) {
        from += (i > 0 ? ", (" : "(") + std::to_string(values[i]) + ")";
      }
      from += ") t(v)";
    }
    return Q("SELECT " + select + " FROM " + from);
  }

  std::unique_ptr<StreamStreamJoin> Open(StreamStreamJoinOptions options, int32_t partitions = 3) {
    options.force_in_memory_state = !use_rocksdb_;
    auto op = std::make_unique<StreamStreamJoin>(std::move(options));
    OperatorContext ctx;
    ctx.engine = engine_.get();
    ctx.fs = fs::LocalFileSystem();
    ctx.checkpoint_root = dir_.path();
    ctx.operator_id = 0;
    ctx.num_partitions = partitions;
    Status st = op->Open(ctx);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return op;
  }

  // Runs one batch and returns the rows of `output_sql` over the output (sorted, "a|b|c").
  std::vector<std::string> Run(StreamStreamJoin& op, int64_t batch_id, const Batch& left,
                               const Batch& right, const std::string& output_sql,
                               int64_t late_wm = 0, int64_t evict_wm = 0) {
    OperatorBatch b;
    b.batch_id = BatchId(batch_id);
    b.late_watermark_ms = late_wm;
    b.eviction_watermark_ms = evict_wm;
    auto out = op.Process(b, {left, right});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    if (!out.ok()) return {"<error>"};
    EXPECT_TRUE(conn_->RegisterBatch("__op_output", *out).ok());
    Batch rows = Q(output_sql + " ORDER BY ALL");
    std::vector<std::string> result;
    for (int64_t r = 0; r < rows.num_rows(); ++r) {
      std::string line;
      for (size_t c = 0; c < rows.num_columns(); ++c) {
        if (c > 0) line += "|";
        line += rows.GetString(r, c).value_or("NULL");
      }
      result.push_back(line);
    }
    return result;
  }

  // Join on value; no watermark.
  static StreamStreamJoinOptions ValueJoin(JoinType type) {
    StreamStreamJoinOptions o;
    o.type = type;
    o.left.alias = "l";
    o.left.key_columns = {"__k0"};
    o.right.alias = "r";
    o.right.key_columns = {"__k0"};
    return o;
  }

  // The windowed join of join-left-outer-windowed.test: key = (value, 10 s window of
  // timestamp_seconds(value)), both sides watermarked on the window.
  static StreamStreamJoinOptions WindowJoin(JoinType type) {
    StreamStreamJoinOptions o;
    o.type = type;
    for (JoinSideSpec* s : {&o.left, &o.right}) {
      s->key_columns = {"__k0", "__k1"};
      s->late_time_column = "__late";
      s->state_time_column = "__state";
    }
    o.left.alias = "l";
    o.right.alias = "r";
    return o;
  }
  static std::string WindowSide(const std::string& value_name, int factor) {
    const std::string w =
        "{'start': to_timestamp(v // 10 * 10), 'end': to_timestamp(v // 10 * 10 + 10)}";
    return "v AS key, " + w + " AS w, v * " + std::to_string(factor) + " AS " + value_name +
           ", v AS __k0, " + w + " AS __k1, epoch_us(to_timestamp(v // 10 * 10 + 10)) AS __late, " +
           "epoch_us(to_timestamp(v // 10 * 10 + 10)) AS __state";
  }

  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<engine::Connection> conn_;
  fs::ScopedTempDir dir_{"sluice-join-test"};
  bool use_rocksdb_ = false;
};

const char kValueOut[] = "SELECT l.value, r.value FROM __op_output";

// StreamingInnerJoinSuite "stream stream inner join on non-time column": whichever side arrives
// first is buffered; state survives a new operator on the same checkpoint (a restart).
TEST_F(StreamStreamJoinTest, InnerJoinAcrossBatchesAndRestart) {
  const std::string side = "v AS value, v AS __k0";
  auto op = Open(ValueJoin(JoinType::kInner));
  EXPECT_EQ(Run(*op, 0, Rows(side, {1}), Rows(side, {}), kValueOut), std::vector<std::string>{});
  EXPECT_EQ(Run(*op, 1, Rows(side, {}), Rows(side, {1, 10}), kValueOut),
            std::vector<std::string>{"1|1"});
  EXPECT_EQ(Run(*op, 2, Rows(side, {10}), Rows(side, {}), kValueOut),
            std::vector<std::string>{"10|10"});
  EXPECT_EQ(Run(*op, 3, Rows(side, {}), Rows(side, {1}), kValueOut),
            std::vector<std::string>{"1|1"});
  EXPECT_EQ(op->Progress().operator_name, "symmetricHashJoin");
  EXPECT_EQ(op->Progress().num_rows_total, 5);  // left 1, 10; right 1, 10, 1
  op.reset();

  auto restarted = Open(ValueJoin(JoinType::kInner));
  EXPECT_EQ(Run(*restarted, 4, Rows(side, {1}), Rows(side, {}), kValueOut),
            (std::vector<std::string>{"1|1", "1|1"}));
  EXPECT_EQ(restarted->Progress().num_rows_total, 6);
  EXPECT_EQ(restarted->Progress().num_rows_updated, 1);
  EXPECT_FALSE(restarted->WantsNoDataBatch(0, 1000));  // no watermark: nothing to evict
}

TEST_F(StreamStreamJoinTest, NewRowsOfBothSidesMatchOnceInABatch) {
  const std::string side = "v AS value, v AS __k0";
  auto op = Open(ValueJoin(JoinType::kInner));
  EXPECT_EQ(Run(*op, 0, Rows(side, {1, 2, 2}), Rows(side, {2, 3, 1}), kValueOut),
            (std::vector<std::string>{"1|1", "2|2", "2|2"}));
  EXPECT_EQ(op->Progress().num_rows_updated, 6);
  EXPECT_EQ(op->Progress().num_rows_total, 6);
}

// join-left-outer-windowed.test, batch by batch, with Spark's state metrics.
TEST_F(StreamStreamJoinTest, LeftOuterWindowedEmitsUnmatchedOnEviction) {
  const std::string out =
      "SELECT l.key, epoch(l.w.end)::BIGINT, l.leftValue, r.rightValue FROM __op_output";
  auto op = Open(WindowJoin(JoinType::kLeftOuter));
  const std::string left = WindowSide("leftValue", 2);
  const std::string right = WindowSide("rightValue", 3);
  EXPECT_EQ(Run(*op, 0, Rows(left, {1, 2, 3, 4, 5}), Rows(right, {3, 4, 5, 6, 7}), out),
            (std::vector<std::string>{"3|10|6|9", "4|10|8|12", "5|10|10|15"}));
  EXPECT_EQ(op->Progress().num_rows_updated, 10);
  EXPECT_EQ(Run(*op, 1, Rows(left, {21}), Rows(right, {22}), out), std::vector<std::string>{});
  EXPECT_EQ(op->Progress().num_rows_updated, 2);
  EXPECT_EQ(op->Progress().num_rows_total, 12);
  EXPECT_TRUE(op->WantsNoDataBatch(0, 11000));
  // The no-data batch with watermark 11 s evicts window [0, 10): left 1 and 2 never matched.
  EXPECT_EQ(Run(*op, 2, Rows(left, {}), Rows(right, {}), out, 0, 11000),
            (std::vector<std::string>{"1|10|2|NULL", "2|10|4|NULL"}));
  EXPECT_EQ(op->Progress().num_rows_total, 2);
  EXPECT_EQ(op->Progress().num_rows_removed, 10);
  EXPECT_EQ(op->Progress().num_rows_updated, 0);
  EXPECT_EQ(Run(*op, 3, Rows(left, {22}), Rows(right, {}), out, 11000, 11000),
            (std::vector<std::string>{"22|30|44|66"}));
  EXPECT_EQ(op->Progress().num_rows_total, 3);
  EXPECT_EQ(op->Progress().num_rows_updated, 1);
  EXPECT_FALSE(op->WantsNoDataBatch(12000, 12000));
}

TEST_F(StreamStreamJoinTest, RightOuterWindowedEmitsUnmatchedRightRows) {
  const std::string out =
      "SELECT r.key, epoch(r.w.end)::BIGINT, l.leftValue, r.rightValue FROM __op_output";
  auto op = Open(WindowJoin(JoinType::kRightOuter));
  const std::string left = WindowSide("leftValue", 2);
  const std::string right = WindowSide("rightValue", 3);
  EXPECT_EQ(Run(*op, 0, Rows(left, {1, 2, 3, 4, 5}), Rows(right, {3, 4, 5, 6, 7}), out).size(), 3u);
  EXPECT_EQ(Run(*op, 1, Rows(left, {21}), Rows(right, {22}), out), std::vector<std::string>{});
  EXPECT_EQ(Run(*op, 2, Rows(left, {}), Rows(right, {}), out, 0, 11000),
            (std::vector<std::string>{"6|10|NULL|18", "7|10|NULL|21"}));
  EXPECT_EQ(op->Progress().num_rows_total, 2);
}

TEST_F(StreamStreamJoinTest, LateRowsAreDroppedAndCounted) {
  const std::string out = "SELECT l.key, r.key FROM __op_output";
  auto op = Open(WindowJoin(JoinType::kInner));
  const std::string left = WindowSide("leftValue", 2);
  const std::string right = WindowSide("rightValue", 3);
  // Late threshold 10 s: window [0, 10) ends at 10 s <= 10 s, so rows 1 and 5 are late.
  EXPECT_EQ(Run(*op, 0, Rows(left, {1, 15}), Rows(right, {5, 15}), out, 10000, 10000),
            std::vector<std::string>{"15|15"});
  EXPECT_EQ(op->Progress().num_rows_dropped_by_watermark, 2);
  EXPECT_EQ(op->Progress().num_rows_updated, 2);
}

// A re-run of a batch (after a crash before the query committed it) reloads the state version
// the batch started from and gives the same output and state.
TEST_F(StreamStreamJoinTest, RerunOfABatchGivesTheSameOutput) {
  const std::string side = "v AS value, v AS __k0";
  std::vector<std::string> first;
  {
    auto op = Open(ValueJoin(JoinType::kInner));
    Run(*op, 0, Rows(side, {1, 2}), Rows(side, {}), kValueOut);
    first = Run(*op, 1, Rows(side, {3}), Rows(side, {1, 2, 3}), kValueOut);
    EXPECT_EQ(first, (std::vector<std::string>{"1|1", "2|2", "3|3"}));
  }
  // The process died after batch 1 wrote its state but before commits/1: batch 1 runs again.
  auto op = Open(ValueJoin(JoinType::kInner));
  EXPECT_EQ(Run(*op, 1, Rows(side, {3}), Rows(side, {1, 2, 3}), kValueOut), first);
  EXPECT_EQ(op->Progress().num_rows_total, 6);
  EXPECT_EQ(Run(*op, 2, Rows(side, {1}), Rows(side, {}), kValueOut),
            std::vector<std::string>{"1|1"});
}

TEST_F(StreamStreamJoinTest, LeftSemiEmitsEachLeftRowOnce) {
  const std::string side = "v AS value, v AS __k0";
  auto op = Open(ValueJoin(JoinType::kLeftSemi));
  const std::string out = "SELECT l.value, r IS NULL FROM __op_output";
  // Left 1 matches right 1 and 1 in the same batch: emitted once, not stored.
  EXPECT_EQ(Run(*op, 0, Rows(side, {1, 2}), Rows(side, {1, 1}), out),
            std::vector<std::string>{"1|true"});
  EXPECT_EQ(op->Progress().num_rows_updated, 4);  // left 1, 2; right 1, 1
  // Left 1 arrives again: the stored right rows match it at once.
  EXPECT_EQ(Run(*op, 1, Rows(side, {1}), Rows(side, {2, 2}), out),
            (std::vector<std::string>{"1|true", "2|true"}));
}

// Full outer join with a time-range condition (value watermarks, no time in the key):
//   ON l.k = r.k AND r.t BETWEEN l.t AND l.t + INTERVAL 10 SECONDS
// Spark: left state watermark = wm - 10 s - 1 ms, right state watermark = wm - 1 ms.
TEST_F(StreamStreamJoinTest, FullOuterWithTimeRangeCondition) {
  StreamStreamJoinOptions o = ValueJoin(JoinType::kFullOuter);
  o.condition_sql = "r.t BETWEEN l.t AND l.t + INTERVAL 10 SECONDS";
  for (JoinSideSpec* s : {&o.left, &o.right}) {
    s->late_time_column = "__late";
    s->state_time_column = "__late";
  }
  o.left.state_watermark_offset_ms = -10000 - 1;
  o.right.state_watermark_offset_ms = -1;
  auto op = Open(o);
  // Rows: k = v % 10, t = v seconds.
  const std::string side =
      "v % 10 AS k, to_timestamp(v) AS t, v % 10 AS __k0, epoch_us(to_timestamp(v)) AS __late";
  const std::string out =
      "SELECT l.k, epoch(l.t)::BIGINT, r.k, epoch(r.t)::BIGINT FROM __op_output";
  // Left 1 (t 1 s) matches right 5 (t 5 s); right 21 (k 1, t 21 s) is out of range.
  EXPECT_EQ(Run(*op, 0, Rows(side, {1, 2}), Rows(side, {5, 21, 34}), out),
            std::vector<std::string>{});
  EXPECT_EQ(Run(*op, 1, Rows(side, {}), Rows(side, {11}), out),
            (std::vector<std::string>{"1|1|1|11"}));
  // Watermark 12.001 s: left rows with t <= 2.000 s go (1 matched, 2 did not); right rows with
  // t <= 12.000 s go (11 matched, 5 did not... 5 has k 5 and never matched).
  EXPECT_EQ(Run(*op, 2, Rows(side, {}), Rows(side, {}), out, 0, 12001),
            (std::vector<std::string>{"2|2|NULL|NULL", "NULL|NULL|5|5"}));
  EXPECT_EQ(op->Progress().num_rows_removed, 4);
  EXPECT_EQ(op->Progress().num_rows_total, 2);  // right 21, 34
}

TEST_F(StreamStreamJoinTest, PreFilterAndNullKeysNeverMatch) {
  StreamStreamJoinOptions o = ValueJoin(JoinType::kLeftOuter);
  o.left.pre_filter_column = "__pre";
  auto op = Open(o);
  const std::string side =
      "v AS value, CASE WHEN v = 0 THEN NULL ELSE v END AS __k0, v > 1 AS __pre";
  // Left 1 fails the pre-filter, left 0 has a NULL key: both come out with NULLs at once.
  EXPECT_EQ(Run(*op, 0, Rows(side, {0, 1, 2}), Rows(side, {0, 1, 2}), kValueOut),
            (std::vector<std::string>{"0|NULL", "1|NULL", "2|2"}));
  // Stored: left 2; right 1 and 2 (the right side has no pre-filter; its NULL key is not stored).
  EXPECT_EQ(op->Progress().num_rows_updated, 3);
}

TEST_F(StreamStreamJoinTest, KeysOfDifferentTypesAreCompared) {
  const std::string left = "v::INTEGER AS value, v::INTEGER AS __k0";
  const std::string right = "v::DOUBLE AS value, v::DOUBLE AS __k0";
  auto op = Open(ValueJoin(JoinType::kInner));
  EXPECT_EQ(Run(*op, 0, Rows(left, {1, 2}), Rows(right, {2, 3}), kValueOut),
            std::vector<std::string>{"2|2.0"});
}

TEST_F(StreamStreamJoinTest, RocksDbStateSurvivesRestart) {
  use_rocksdb_ = true;
  const std::string side = "v AS value, v AS __k0";
  {
    auto op = Open(ValueJoin(JoinType::kInner), 2);
    Run(*op, 0, Rows(side, {7}), Rows(side, {}), kValueOut);
  }
  auto op = Open(ValueJoin(JoinType::kInner), 2);
  EXPECT_EQ(Run(*op, 1, Rows(side, {}), Rows(side, {7}), kValueOut),
            std::vector<std::string>{"7|7"});
}

TEST_F(StreamStreamJoinTest, ChangedInputTypesAreAnError) {
  auto op = Open(ValueJoin(JoinType::kInner));
  const std::string ints = "v::INTEGER AS value, v AS __k0";
  EXPECT_EQ(Run(*op, 0, Rows(ints, {1}), Rows(ints, {}), kValueOut), std::vector<std::string>{});
  // State rows are encoded with the first batch's types: a batch with others is refused.
  OperatorBatch b;
  b.batch_id = BatchId(1);
  const std::string bigints = "v::BIGINT AS value, v AS __k0";
  auto out = op->Process(b, {Rows(bigints, {1}), Rows(ints, {1})});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("changed"), std::string::npos) << out.status().ToString();
}

TEST_F(StreamStreamJoinTest, MissingHiddenColumnIsAnError) {
  auto op = Open(ValueJoin(JoinType::kInner));
  OperatorBatch b;
  auto out = op->Process(b, {Rows("v AS value", {1}), Rows("v AS value, v AS __k0", {1})});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("no column __k0"), std::string::npos)
      << out.status().ToString();
}

}  // namespace
}  // namespace sluice::ops
