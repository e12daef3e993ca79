#include "ops/transform_with_state.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/test_util.h"
#include "fs/file_system.h"
#include "fs/test_util.h"
#include "ops/custom_state_codec.h"
#include "ops/test_processors.h"

namespace sluice::ops {
namespace {

using V = std::vector<std::string>;
using engine::DataType;
using engine::TypeId;

using testing::RunningCount;

// Keeps every value of a key in a ListState and counts values per `kind` in a MapState;
// outputs (key, number of values so far, "kind=count;..." of the map).
class ListAndMap : public StatefulProcessor {
 public:
  Status Init(StatefulProcessorHandle& h) override {
    SLUICE_ASSIGN_OR_RETURN(values_, h.GetListState<int64_t>("values"));
    SLUICE_ASSIGN_OR_RETURN(kinds_, (h.GetMapState<std::string, int64_t>("kinds")));
    return Status::OK();
  }
  Result<std::vector<Row>> HandleInputRows(const Row& key, const std::vector<Row>& rows,
                                           const TimerValues&) override {
    for (const Row& r : rows) {  // columns: k, kind, v
      SLUICE_RETURN_NOT_OK(values_.AppendValue(std::get<int64_t>(r[2])));
      const std::string& kind = std::get<std::string>(r[1]);
      SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> n, kinds_.GetValue(kind));
      if (kind == "reset") {
        SLUICE_RETURN_NOT_OK(kinds_.Clear());
        SLUICE_RETURN_NOT_OK(values_.Put({}));
        continue;
      }
      SLUICE_RETURN_NOT_OK(kinds_.UpdateValue(kind, n.value_or(0) + 1));
    }
    SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> all, values_.Get());
    SLUICE_ASSIGN_OR_RETURN(auto entries, kinds_.Entries());
    std::string m;
    for (const auto& [k, n] : entries) m += k + "=" + std::to_string(n) + ";";
    return std::vector<Row>{{key[0], static_cast<int64_t>(all.size()), m}};
  }

 private:
  ListState<int64_t> values_;
  MapState<std::string, int64_t> kinds_;
};

// Event-time sessions: emits (key, rows, last event time s) 10 s after the key's last event.
class Sessions : public StatefulProcessor {
 public:
  Status Init(StatefulProcessorHandle& h) override {
    handle_ = &h;
    SLUICE_ASSIGN_OR_RETURN(count_, h.GetValueState<int64_t>("count"));
    SLUICE_ASSIGN_OR_RETURN(last_, h.GetValueState<int64_t>("last"));
    return Status::OK();
  }
  Result<std::vector<Row>> HandleInputRows(const Row&, const std::vector<Row>& rows,
                                           const TimerValues&) override {
    SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> n, count_.Get());
    SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> last, last_.Get());
    int64_t max_ms = last.value_or(INT64_MIN);
    for (const Row& r : rows) max_ms = std::max(max_ms, std::get<int64_t>(r[1]) / 1000);
    if (last) SLUICE_RETURN_NOT_OK(handle_->DeleteTimer(*last + 10000));
    SLUICE_RETURN_NOT_OK(handle_->RegisterTimer(max_ms + 10000));
    SLUICE_RETURN_NOT_OK(count_.Update(n.value_or(0) + static_cast<int64_t>(rows.size())));
    SLUICE_RETURN_NOT_OK(last_.Update(max_ms));
    return std::vector<Row>{};
  }
  Result<std::vector<Row>> HandleExpiredTimer(const Row& key, const TimerValues& tv,
                                              const ExpiredTimerInfo& t) override {
    SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> n, count_.Get());
    SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> last, last_.Get());
    if (!tv.current_watermark_ms || *tv.current_watermark_ms < t.expiry_time_ms) {
      return Status::Internal("a timer fired before the watermark passed it");
    }
    SLUICE_RETURN_NOT_OK(count_.Clear());
    SLUICE_RETURN_NOT_OK(last_.Clear());
    return std::vector<Row>{{key[0], n.value_or(-1), last.value_or(-1) / 1000}};
  }

 private:
  StatefulProcessorHandle* handle_ = nullptr;
  ValueState<int64_t> count_, last_;
};

// Processing time: on input, a timer 5 s after the batch time; it emits (key, "fired", timers
// still registered).
class Reminder : public StatefulProcessor {
 public:
  Status Init(StatefulProcessorHandle& h) override {
    handle_ = &h;
    return Status::OK();
  }
  Result<std::vector<Row>> HandleInputRows(const Row& key, const std::vector<Row>&,
                                           const TimerValues& tv) override {
    SLUICE_RETURN_NOT_OK(handle_->RegisterTimer(tv.current_processing_time_ms + 5000));
    SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> timers, handle_->ListTimers());
    return std::vector<Row>{{key[0], std::string("timers"), static_cast<int64_t>(timers.size())}};
  }
  Result<std::vector<Row>> HandleExpiredTimer(const Row& key, const TimerValues&,
                                              const ExpiredTimerInfo& t) override {
    SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> timers, handle_->ListTimers());
    return std::vector<Row>{{key[0], "fired at " + std::to_string(t.expiry_time_ms),
                             static_cast<int64_t>(timers.size())}};
  }

 private:
  StatefulProcessorHandle* handle_ = nullptr;
};

// A value with a 10 s TTL; outputs (key, the value before this batch or NULL).
class Remember : public StatefulProcessor {
 public:
  Status Init(StatefulProcessorHandle& h) override {
    SLUICE_ASSIGN_OR_RETURN(last_, h.GetValueState<Row>("last", TtlConfig{10000}));
    return Status::OK();
  }
  Result<std::vector<Row>> HandleInputRows(const Row& key, const std::vector<Row>& rows,
                                           const TimerValues&) override {
    SLUICE_ASSIGN_OR_RETURN(std::optional<Row> prev, last_.Get());
    SLUICE_RETURN_NOT_OK(last_.Update(Row{rows.back()[1], 1.5, true}));
    Value shown = prev ? (*prev)[0] : Value{};
    return std::vector<Row>{{key[0], shown}};
  }

 private:
  ValueState<Row> last_;
};

// Initial counts from the initial state, then as RunningCount.
class SeededCount : public StatefulProcessor {
 public:
  Status Init(StatefulProcessorHandle& h) override {
    SLUICE_ASSIGN_OR_RETURN(count_, h.GetValueState<int64_t>("count"));
    return Status::OK();
  }
  Status HandleInitialState(const Row&, const Row& state, const TimerValues&) override {
    return count_.Update(std::get<int64_t>(state[0]));
  }
  Result<std::vector<Row>> HandleInputRows(const Row& key, const std::vector<Row>& rows,
                                           const TimerValues&) override {
    SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> n, count_.Get());
    SLUICE_RETURN_NOT_OK(count_.Update(n.value_or(0) + static_cast<int64_t>(rows.size())));
    return std::vector<Row>{{key[0], n.value_or(0) + static_cast<int64_t>(rows.size())}};
  }

 private:
  ValueState<int64_t> count_;
};

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
  std::sort(out.begin(), out.end());
  return out;
}

engine::Schema Schema(const std::vector<std::pair<std::string, TypeId>>& cols) {
  engine::Schema s;
  for (const auto& [name, id] : cols) s.push_back({name, DataType{id}});
  return s;
}

class TransformWithStateTest
    : public engine::testing::EngineTestOf<::testing::TestWithParam<const char*>> {
 protected:
  OperatorContext Context(int32_t partitions = 4) {
    OperatorContext c;
    c.engine = engine_.get();
    c.fs = fs::LocalFileSystem();
    c.checkpoint_root = dir_.Join(checkpoint_);
    c.num_partitions = partitions;
    c.conf["sluice.streaming.stateStore.providerClass"] = GetParam();
    return c;
  }

  template <typename P>
  std::unique_ptr<TransformWithState> Op(engine::Schema out, TimeMode mode = TimeMode::kNone,
                                         std::vector<std::string> keys = {"k"}) {
    TransformWithStateOptions o;
    o.key_columns = std::move(keys);
    o.factory = [] { return std::make_unique<P>(); };
    o.time_mode = mode;
    o.output_schema = std::move(out);
    if (mode == TimeMode::kEventTime) o.event_time_column = "ts";
    auto op = std::make_unique<TransformWithState>(std::move(o));
    Status st = op->Open(Context());
    EXPECT_TRUE(st.ok()) << st.ToString();
    return op;
  }

  engine::Batch Query(const std::string& sql) {
    auto r = conn_->Query(sql);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    return r.ok() ? *r : engine::Batch();
  }
  // (k VARCHAR, ts TIMESTAMP) from "k:seconds".
  engine::Batch Events(const std::vector<std::pair<std::string, int>>& rows) {
    std::string sql;
    for (const auto& [k, s] : rows) {
      sql += sql.empty() ? "" : " UNION ALL ";
      sql += "SELECT '" + k + "' AS k, to_timestamp(" + std::to_string(s) + ")::TIMESTAMP AS ts";
    }
    if (sql.empty()) sql = "SELECT 'x' AS k, TIMESTAMP '2000-01-01' AS ts WHERE false";
    return Query(sql);
  }

  static OperatorBatch Batch(int64_t id, int64_t late_ms = 0, int64_t eviction_ms = 0,
                             int64_t ts_ms = 0) {
    OperatorBatch b;
    b.batch_id = BatchId(id);
    b.late_watermark_ms = late_ms;
    b.eviction_watermark_ms = eviction_ms;
    b.batch_timestamp_ms = ts_ms;
    return b;
  }

  std::vector<std::string> Run(StatefulOperator& op, const OperatorBatch& b,
                               const engine::Batch& input) {
    auto out = op.Process(b, {input});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return out.ok() ? Rows(*out) : V{"<error>"};
  }

  static int64_t Custom(const StateOperatorProgress& p, const std::string& name) {
    auto it = p.custom_metrics.find(name);
    return it == p.custom_metrics.end() ? -1 : it->second;
  }

  fs::ScopedTempDir dir_{"sluice-tws-test"};
  std::string checkpoint_ = "checkpoint";
};

const engine::Schema kCountOut = Schema({{"k", TypeId::kVarchar}, {"count", TypeId::kBigInt}});

TEST(CustomStateCodecTest, RowsRoundTripAndIntegersSortNumerically) {
  const Row row{std::monostate{}, true, int64_t{-5}, 2.5, std::string("h\0i", 3)};
  auto back = DecodeValueRowExact(EncodeValueRow(row));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, row);
  EXPECT_LT(EncodeValueRow({int64_t{-7}}), EncodeValueRow({int64_t{3}}));
  EXPECT_LT(EncodeValueRow({-1.5}), EncodeValueRow({0.25}));
  auto list = DecodeValueRows(EncodeValueRows({row, {}, {int64_t{1}}}));
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->size(), 3u);
  std::string bytes = EncodeValueRow(row);
  EXPECT_TRUE(DecodeValueRowExact(bytes.substr(0, bytes.size() - 1)).status().IsCorruption());
  EXPECT_TRUE(DecodeValueRowExact(bytes + "x").status().IsCorruption());
}

TEST_P(TransformWithStateTest, RunningCountWithValueState) {
  auto op = Op<RunningCount>(kCountOut);
  EXPECT_EQ(Run(*op, Batch(0), Query("SELECT * FROM (VALUES ('a'), ('b'), ('a')) t(k)")),
            (V{"a|2", "b|1"}));
  EXPECT_EQ(Run(*op, Batch(1), Query("SELECT * FROM (VALUES ('a'), ('c')) t(k)")),
            (V{"a|3", "c|1"}));
  const StateOperatorProgress p = op->Progress();
  EXPECT_EQ(p.operator_name, "transformWithStateExec");
  EXPECT_EQ(p.num_rows_total, 3);
  EXPECT_EQ(p.num_rows_updated, 2);
  EXPECT_EQ(p.num_shuffle_partitions, 4);
  EXPECT_EQ(Custom(p, "numValueStateVars"), 1);
  EXPECT_EQ(Custom(p, "numListStateVars"), 0);
  EXPECT_EQ(Custom(p, "numRegisteredTimers"), 0);
  // An empty batch calls nothing and outputs nothing.
  EXPECT_EQ(Run(*op, Batch(2), Query("SELECT 'x' AS k WHERE false")), V{});
}

TEST_P(TransformWithStateTest, ListAndMapState) {
  auto op = Op<ListAndMap>(
      Schema({{"k", TypeId::kVarchar}, {"n", TypeId::kBigInt}, {"kinds", TypeId::kVarchar}}));
  EXPECT_EQ(Run(*op, Batch(0),
                Query("SELECT * FROM (VALUES ('a', 'x', 1), ('a', 'y', 2), ('b', 'x', 3), "
                      "('a', 'x', 4)) t(k, kind, v)")),
            (V{"a|3|x=2;y=1;", "b|1|x=1;"}));
  EXPECT_EQ(Run(*op, Batch(1),
                Query("SELECT * FROM (VALUES ('b', 'reset', 0), ('b', 'z', 7), ('a', 'w', 5)) "
                      "t(k, kind, v)")),
            (V{"a|4|w=1;x=2;y=1;", "b|1|z=1;"}));
  EXPECT_EQ(Custom(op->Progress(), "numListStateVars"), 1);
  EXPECT_EQ(Custom(op->Progress(), "numMapStateVars"), 1);
  // 2 lists, map entries w, x, y of a and z of b.
  EXPECT_EQ(op->Progress().num_rows_total, 2 + 3 + 1);
}

TEST_P(TransformWithStateTest, EventTimeTimersFireWhenTheWatermarkPasses) {
  auto op = Op<Sessions>(
      Schema({{"k", TypeId::kVarchar}, {"n", TypeId::kBigInt}, {"last", TypeId::kBigInt}}),
      TimeMode::kEventTime);
  EXPECT_EQ(Run(*op, Batch(0), Events({{"a", 10}, {"b", 12}, {"a", 14}})), V{});
  EXPECT_EQ(Custom(op->Progress(), "numRegisteredTimers"), 2);
  // Watermark 15 s: a's timer is at 24 s, b's at 22 s: nothing fires. a gets more rows.
  EXPECT_EQ(Run(*op, Batch(1, 0, 15000), Events({{"a", 20}})), V{});
  EXPECT_EQ(Custom(op->Progress(), "numDeletedTimers"), 1);
  // Watermark 22 s: b's session closes (timer at 22 s, inclusive); a (timer 30 s) stays.
  EXPECT_EQ(Run(*op, Batch(2, 15000, 22000), Events({})), (V{"b|1|12"}));
  EXPECT_EQ(Custom(op->Progress(), "numExpiredTimers"), 1);
  // A late row (<= 22 s) is dropped and counted; watermark 40 s closes a.
  EXPECT_EQ(Run(*op, Batch(3, 22000, 40000), Events({{"c", 21}})), (V{"a|3|20"}));
  EXPECT_EQ(op->Progress().num_rows_dropped_by_watermark, 1);
  EXPECT_EQ(op->Progress().num_rows_total, 0);  // all state cleared, no timers left
  EXPECT_TRUE(op->WantsNoDataBatch(22000, 40000));
  EXPECT_FALSE(op->WantsNoDataBatch(40000, 40000));
}

TEST_P(TransformWithStateTest, ProcessingTimeTimersFireByTheBatchTimestamp) {
  auto op = Op<Reminder>(
      Schema({{"k", TypeId::kVarchar}, {"what", TypeId::kVarchar}, {"timers", TypeId::kBigInt}}),
      TimeMode::kProcessingTime);
  const engine::Batch a = Query("SELECT 'a' AS k");
  const engine::Batch none = Query("SELECT 'a' AS k WHERE false");
  EXPECT_EQ(Run(*op, Batch(0, 0, 0, 1000), a), (V{"a|timers|1"}));
  EXPECT_EQ(Run(*op, Batch(1, 0, 0, 3000), a), (V{"a|timers|2"}));  // timers 6000 and 8000
  EXPECT_EQ(Run(*op, Batch(2, 0, 0, 5999), none), V{});
  EXPECT_EQ(Run(*op, Batch(3, 0, 0, 6000), none), (V{"a|fired at 6000|1"}));
  EXPECT_EQ(Run(*op, Batch(4, 0, 0, 9000), none), (V{"a|fired at 8000|0"}));
  EXPECT_EQ(Custom(op->Progress(), "numExpiredTimers"), 1);
  EXPECT_EQ(op->Progress().num_rows_total, 0);
  EXPECT_FALSE(op->WantsNoDataBatch(0, 0));  // no timer left
}

TEST_P(TransformWithStateTest, TtlHidesAndRemovesExpiredValues) {
  auto op = Op<Remember>(Schema({{"k", TypeId::kVarchar}, {"prev", TypeId::kBigInt}}));
  const auto input = [&](int v) {
    return Query("SELECT 'a' AS k, " + std::to_string(v) + " AS v");
  };
  EXPECT_EQ(Run(*op, Batch(0, 0, 0, 1000), input(1)), (V{"a|NULL"}));  // expires at 11 s
  EXPECT_EQ(Run(*op, Batch(1, 0, 0, 10999), input(2)), (V{"a|1"}));    // renewed: 20.999 s
  EXPECT_EQ(Run(*op, Batch(2, 0, 0, 20999), Query("SELECT 'b' AS k, 3 AS v")), (V{"b|NULL"}));
  EXPECT_EQ(Custom(op->Progress(), "numValuesRemovedDueToTTLExpiry"), 1);  // a's value
  EXPECT_EQ(op->Progress().num_rows_total, 1);
  EXPECT_EQ(Run(*op, Batch(3, 0, 0, 21000), input(4)), (V{"a|NULL"}));
}

TEST_P(TransformWithStateTest, RestartContinuesAndRerunGivesTheSameOutput) {
  const engine::Batch b0 = Events({{"a", 10}, {"b", 12}});
  const engine::Batch b1 = Events({{"a", 13}, {"c", 30}});
  const engine::Schema out =
      Schema({{"k", TypeId::kVarchar}, {"n", TypeId::kBigInt}, {"last", TypeId::kBigInt}});
  V first;
  StateOperatorProgress first_progress;
  {
    auto op = Op<Sessions>(out, TimeMode::kEventTime);
    EXPECT_EQ(Run(*op, Batch(0), b0), V{});
    first = Run(*op, Batch(1, 0, 22000), b1);  // b's timer (22 s) fires
    first_progress = op->Progress();
  }
  EXPECT_EQ(first, (V{"b|1|12"}));
  // A crash after the state commit of batch 1 and before commits/1: a new process re-runs
  // batch 1 (loading version 1 again), twice in a row.
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto op = Op<Sessions>(out, TimeMode::kEventTime);
    EXPECT_EQ(Run(*op, Batch(1, 0, 22000), b1), first);
    EXPECT_EQ(op->Progress().num_rows_total, first_progress.num_rows_total);
    EXPECT_EQ(Custom(op->Progress(), "numExpiredTimers"), 1);
  }
  // Restart after batch 1 committed: batch 2 continues from version 2.
  auto op = Op<Sessions>(out, TimeMode::kEventTime);
  EXPECT_EQ(Run(*op, Batch(2, 22000, 50000), Events({})), (V{"a|2|13", "c|1|30"}));
}

// Random batches; after some batches the process "crashes" after the state commit and a new
// operator re-runs the batch, after others it restarts. Every batch's output must be the
// reference's (the running count of each key of the batch).
TEST_P(TransformWithStateTest, RandomBatchesWithRerunsAndRestartsMatchAReference) {
  std::mt19937 rng(20261130);
  std::map<std::string, int64_t> counts;
  auto op = Op<RunningCount>(kCountOut);
  for (int64_t id = 0; id < 15; ++id) {
    std::string sql = "SELECT * FROM (VALUES ('x')) t(k) WHERE false";
    std::map<std::string, int64_t> batch_counts;
    const int rows = static_cast<int>(rng() % 12);
    for (int r = 0; r < rows; ++r) {
      const std::string k = "k" + std::to_string(rng() % 7);
      sql += " UNION ALL SELECT '" + k + "'";
      ++batch_counts[k];
    }
    V expected;
    for (const auto& [k, n] : batch_counts) {
      counts[k] += n;
      expected.push_back(k + "|" + std::to_string(counts[k]));
    }
    const engine::Batch input = Query(sql);
    ASSERT_EQ(Run(*op, Batch(id), input), expected) << "batch " << id;
    const unsigned fate = rng() % 4;
    if (fate == 0) {  // crash before commits/<id>: a new process re-runs the batch
      op = Op<RunningCount>(kCountOut);
      ASSERT_EQ(Run(*op, Batch(id), input), expected) << "re-run of batch " << id;
    } else if (fate == 1) {  // restart after the batch
      op = Op<RunningCount>(kCountOut);
    } else if (fate == 2) {  // a re-run in the same process
      ASSERT_EQ(Run(*op, Batch(id), input), expected) << "same-process re-run of batch " << id;
    }
  }
  EXPECT_EQ(op->Progress().num_rows_total, static_cast<int64_t>(counts.size()));
}

TEST_P(TransformWithStateTest, InitialStateSeedsTheFirstBatchOnly) {
  TransformWithStateOptions o;
  o.key_columns = {"k"};
  o.factory = [] { return std::make_unique<SeededCount>(); };
  o.output_schema = kCountOut;
  o.initial_state = Query("SELECT * FROM (VALUES ('a', 10), ('z', 5)) t(k, n)");
  {
    TransformWithState op(o);
    ASSERT_TRUE(op.Open(Context()).ok());
    EXPECT_EQ(Run(op, Batch(0), Query("SELECT * FROM (VALUES ('a'), ('b')) t(k)")),
              (V{"a|11", "b|1"}));
    EXPECT_EQ(Run(op, Batch(1), Query("SELECT * FROM (VALUES ('z')) t(k)")), (V{"z|6"}));
  }
  // A restart does not apply it again.
  TransformWithState op(o);
  ASSERT_TRUE(op.Open(Context()).ok());
  EXPECT_EQ(Run(op, Batch(2), Query("SELECT * FROM (VALUES ('a'), ('z')) t(k)")),
            (V{"a|12", "z|7"}));
}

TEST_P(TransformWithStateTest, ChangedStateVariablesAreRefusedOnRestart) {
  {
    auto op = Op<RunningCount>(kCountOut);
    EXPECT_EQ(Run(*op, Batch(0), Query("SELECT 'a' AS k")), (V{"a|1"}));
  }
  auto op = Op<ListAndMap>(kCountOut);
  auto out = op->Process(Batch(1), {Query("SELECT 'a' AS k, 'x' AS kind, 1 AS v")});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(out.status().IsInvalidArgument()) << out.status().ToString();
  EXPECT_NE(out.status().message().find("ValueState<BIGINT>"), std::string::npos)
      << out.status().ToString();
}

TEST_P(TransformWithStateTest, Errors) {
  // Output rows that do not fit the schema.
  auto op = Op<RunningCount>(Schema({{"k", TypeId::kBigInt}, {"count", TypeId::kBigInt}}));
  auto out = op->Process(Batch(0), {Query("SELECT 'a' AS k")});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("output column k (BIGINT) cannot take the value 'a'"),
            std::string::npos)
      << out.status().ToString();
  // Timers without a time mode.
  checkpoint_ = "checkpoint2";
  auto op2 = Op<Reminder>(
      Schema({{"k", TypeId::kVarchar}, {"what", TypeId::kVarchar}, {"timers", TypeId::kBigInt}}));
  out = op2->Process(Batch(0), {Query("SELECT 'a' AS k")});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("HandleInputRows for key ('a')"), std::string::npos)
      << out.status().ToString();
  EXPECT_NE(out.status().message().find("TimeMode::kNone"), std::string::npos);
  // A missing key column.
  checkpoint_ = "checkpoint3";
  auto op3 = Op<RunningCount>(kCountOut, TimeMode::kNone, {"nope"});
  out = op3->Process(Batch(0), {Query("SELECT 'a' AS k")});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("no column nope"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Providers, TransformWithStateTest, ::testing::Values("rocksdb", "memory"));

}  // namespace
}  // namespace sluice::ops
