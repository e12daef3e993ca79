#include "ops/streaming_aggregate_top.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "engine/test_util.h"
#include "fs/test_util.h"
#include "ops/streaming_aggregate.h"

namespace sluice::ops {
namespace {

// Rows of an aggregation output: (price, bidder, window, count, max) as text, sorted.
using Rows = std::vector<std::vector<std::optional<std::string>>>;

class TopOneTest : public engine::testing::EngineTest {
 protected:
  // "(price, bidder, seconds, v), ..." -> __k0 BIGINT, __k1 VARCHAR, __t TIMESTAMP, __a0 INTEGER.
  engine::Batch Input(const std::string& values) {
    auto b = conn_->Query(
        values.empty()
            ? "SELECT 0::BIGINT AS __k0, ''::VARCHAR AS __k1, TIMESTAMP '2020-01-01' AS __t, "
              "0::INTEGER AS __a0 LIMIT 0"
            : "SELECT p::BIGINT AS __k0, b::VARCHAR AS __k1, make_timestamp(s::BIGINT * 1000000) "
              "AS __t, v::INTEGER AS __a0 FROM (VALUES " +
                  values + ") t(p, b, s, v)");
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    return b.ok() ? *b : engine::Batch();
  }

  std::unique_ptr<StreamingAggregate> Make(const std::string& root, bool hint, bool descending,
                                           int64_t slide_s, const std::string& mirror_bytes) {
    StreamingAggregateOptions o;
    o.keys = {"__k0", "__k1"};
    TimeWindowSpec w;
    w.time_column = "__t";
    w.size_us = 10'000'000;
    w.slide_us = slide_s * 1'000'000;
    w.kind =
        w.slide_us == w.size_us ? TimeWindowSpec::Kind::kTumbling : TimeWindowSpec::Kind::kSliding;
    w.watermarked = true;
    o.window = w;
    o.aggregates = {{AggregateFunction::kCountStar, "", "__agg0"},
                    {AggregateFunction::kMax, "__a0", "__agg1"}};
    if (hint) o.keep_top = KeepTopSpec{"__k0", descending};
    auto op = std::make_unique<StreamingAggregate>(o);
    OperatorContext c;
    c.engine = engine_.get();
    c.checkpoint_root = root;
    c.num_partitions = 3;
    c.output_mode = sluice::OutputMode::kAppend;
    if (!mirror_bytes.empty())
      c.conf["sluice.streaming.aggregate.stateMirrorMaxBytes"] = mirror_bytes;
    Status st = op->Open(c);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return op;
  }

  static Rows ToRows(const engine::Batch& b) {
    Rows out;
    for (int64_t r = 0; r < b.num_rows(); ++r) {
      std::vector<std::optional<std::string>> row;
      for (size_t c = 0; c < b.num_columns(); ++c) row.push_back(b.GetString(r, c));
      out.push_back(row);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // What `QUALIFY rank() OVER (PARTITION BY window ORDER BY price [DESC] NULLS {FIRST|LAST}) = 1`
  // keeps of `rows`.
  static Rows RankOne(const Rows& rows, bool descending, bool nulls_first) {
    std::map<std::string, std::vector<const std::vector<std::optional<std::string>>*>> by_window;
    for (const auto& r : rows) by_window[*r[2]].push_back(&r);
    Rows out;
    for (const auto& [w, members] : by_window) {
      // rank key: (null placement, value); the best has the least key.
      auto key = [&](const std::vector<std::optional<std::string>>* r) {
        const bool null = !(*r)[0];
        const int64_t v = null ? 0 : std::stoll(*(*r)[0]);
        return std::make_pair(null != nulls_first, descending ? -v : v);
      };
      auto best = key(members[0]);
      for (const auto* m : members) best = std::min(best, key(m));
      for (const auto* m : members) {
        if (key(m) == best) out.push_back(*m);
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  fs::ScopedTempDir dir_;
};

// Random batches (ties, NULL prices, late rows, windows straddling batches) through the
// aggregation with and without the hint: after the rank, the same rows in every batch; with the
// hint every emitted row is one the full aggregation emits too (the same aggregates), the late
// rows are counted alike, and the state holds fewer rows. Restarts, a re-run batch and the mirror
// on / off / given up change nothing.
TEST_F(TopOneTest, SameRankOneRowsAsTheFullAggregation) {
  struct Case {
    bool descending;
    int64_t slide_s;
    std::string mirror;
  };
  const std::vector<Case> cases = {
      {true, 10, ""}, {false, 10, ""}, {true, 5, ""}, {true, 10, "0"}, {false, 5, "300"}};
  int case_no = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE("case " + std::to_string(case_no) + (c.descending ? " DESC" : " ASC") + " slide " +
                 std::to_string(c.slide_s) + " mirror '" + c.mirror + "'");
    const std::string root = dir_.path() + "/case" + std::to_string(case_no++);
    auto full = Make(root + "/full", false, c.descending, c.slide_s, c.mirror);
    auto top = Make(root + "/top", true, c.descending, c.slide_s, c.mirror);
    std::mt19937 rng(42 + case_no);
    int64_t max_t = 0;
    int64_t late_ms = 0;
    int64_t total_full = 0, total_top = 0;
    for (int64_t batch = 0; batch < 14; ++batch) {
      std::string values;
      const int rows = static_cast<int>(rng() % 25);
      for (int i = 0; i < rows; ++i) {
        // Mostly around the newest time; some late (older than the watermark).
        const int64_t t = std::max<int64_t>(0, max_t - 12 + static_cast<int64_t>(rng() % 18));
        const bool null_price = rng() % 10 == 0;
        values += std::string(values.empty() ? "" : ", ") + "(" +
                  (null_price ? "NULL" : std::to_string(rng() % 6)) + ", 'b" +
                  std::to_string(rng() % 3) + "', " + std::to_string(t) + ", " +
                  std::to_string(rng() % 100) + ")";
        max_t = std::max(max_t, t);
      }
      const engine::Batch in = Input(values);
      OperatorBatch ob;
      ob.batch_id = BatchId(batch);
      ob.late_watermark_ms = late_ms;
      ob.eviction_watermark_ms = std::max<int64_t>(0, (max_t - 4) * 1000);
      struct Seen {
        Rows rows;
        int64_t dropped = 0;
        int64_t total = 0;
      };
      auto run = [&](std::unique_ptr<StreamingAggregate>& op, bool hint) {
        Seen seen;
        auto out = op->Process(ob, {in});
        EXPECT_TRUE(out.ok()) << out.status().ToString();
        if (!out.ok()) return seen;
        if (batch == 6) {  // a re-run of the batch (the loop after a failure) gives the same
          auto again = op->Process(ob, {in});
          EXPECT_TRUE(again.ok()) << again.status().ToString();
          if (again.ok()) {
            EXPECT_EQ(ToRows(*out), ToRows(*again));
          }
        }
        seen.rows = ToRows(*out);
        seen.dropped = op->Progress().num_rows_dropped_by_watermark;
        seen.total = op->Progress().num_rows_total;
        if (batch == 9) {  // a restart after the batch
          op = Make(root + (hint ? "/top" : "/full"), hint, c.descending, c.slide_s, c.mirror);
        }
        return seen;
      };
      const Seen a = run(full, false);
      const Seen b = run(top, true);
      SCOPED_TRACE("batch " + std::to_string(batch) + ": " + values);
      for (bool nulls_first : {false, true}) {
        EXPECT_EQ(RankOne(a.rows, c.descending, nulls_first),
                  RankOne(b.rows, c.descending, nulls_first));
      }
      for (const auto& row : b.rows) {
        EXPECT_TRUE(std::binary_search(a.rows.begin(), a.rows.end(), row));
      }
      EXPECT_EQ(a.dropped, b.dropped);
      EXPECT_LE(b.total, a.total);
      total_full += a.total;
      total_top += b.total;
      late_ms = ob.eviction_watermark_ms;
    }
    EXPECT_LT(total_top, total_full);  // the hint pruned something
    EXPECT_GT(top->Progress().num_rows_total + total_top, 0);
  }
}

// The hint applies only where it is exact: APPEND, a watermarked tumbling / sliding window, a
// grouping key whose type orders by its bytes.
TEST_F(TopOneTest, MakeRefusesWhereThePruningWouldNotBeExact) {
  engine::Schema schema = {{"__k0", *engine::DataType::FromSql("BIGINT"), true},
                           {"__k1", *engine::DataType::FromSql("VARCHAR"), true},
                           {"__k2", *engine::DataType::FromSql("INTERVAL"), true}};
  const std::vector<std::string> keys = {"__k0", "__k1", "__k2"};
  EXPECT_NE(TopOneFilter::Make({"__k0", true}, true, true, true, 10, keys, schema), nullptr);
  EXPECT_EQ(TopOneFilter::Make({"__k0", true}, false, true, true, 10, keys, schema), nullptr);
  EXPECT_EQ(TopOneFilter::Make({"__k0", true}, true, false, true, 10, keys, schema), nullptr);
  EXPECT_EQ(TopOneFilter::Make({"__k0", true}, true, true, false, 10, keys, schema), nullptr);
  EXPECT_EQ(TopOneFilter::Make({"__k1", true}, true, true, true, 10, keys, schema), nullptr);
  EXPECT_EQ(TopOneFilter::Make({"__k2", true}, true, true, true, 10, keys, schema), nullptr);
  EXPECT_EQ(TopOneFilter::Make({"__a0", true}, true, true, true, 10, keys, schema), nullptr);
  for (const char* t : {"DOUBLE", "DECIMAL(10,2)", "DATE", "TIMESTAMP WITH TIME ZONE", "UUID"}) {
    EXPECT_TRUE(TopOneFilter::OrdersByBytes(*engine::DataType::FromSql(t))) << t;
  }
}

// The late watermark placeholder of the pre-reduction is filled per batch.
TEST_F(TopOneTest, PreReductionKeepsBestNullAndLateWindowsRows) {
  engine::Schema schema = {{"__k0", *engine::DataType::FromSql("BIGINT"), true}};
  auto f = TopOneFilter::Make({"__k0", true}, true, true, true, 1000, {"__k0"}, schema);
  ASSERT_NE(f, nullptr);
  const std::string rows =
      "SELECT * FROM (VALUES (1, 0), (3, 0), (3, 0), (NULL, 0), (1, 1000), (2, 1000)) t(__k0, "
      "__ws)";
  const std::string sql = TopOneFilter::BindLateWatermark(f->PreReduceSql(rows, "__ws"), 0);
  auto kept = conn_->Query("SELECT __k0, __ws FROM (" + sql + ") ORDER BY ALL");
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  Rows expected = {{"2", "1000"}, {"3", "0"}, {"3", "0"}, {std::nullopt, "0"}};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(ToRows(*kept), expected);
  // Window 0 ends at 1000 us: late at a watermark of 1 ms, so all its rows stay.
  const std::string late = TopOneFilter::BindLateWatermark(f->PreReduceSql(rows, "__ws"), 1);
  kept = conn_->Query("SELECT count(*) FROM (" + late + ")");
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ(kept->GetString(0, 0), "5");
}

}  // namespace
}  // namespace sluice::ops
