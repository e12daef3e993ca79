#include "ops/deduplicate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <string>
#include <vector>

#include "engine/test_util.h"
#include "fs/file_system.h"
#include "fs/test_util.h"
#include "state/state_reader.h"

namespace sluice::ops {
namespace {

// Rows of a batch as text: cells joined by '|', NULL as "NULL".
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

struct Metrics {
  int64_t total, updated, removed, dropped_by_watermark, dropped_duplicates;
  bool operator==(const Metrics&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Metrics& m) {
  return os << "{total " << m.total << ", updated " << m.updated << ", removed " << m.removed
            << ", late " << m.dropped_by_watermark << ", duplicates " << m.dropped_duplicates
            << "}";
}

Metrics Of(const StateOperatorProgress& p) {
  auto it = p.custom_metrics.find("numDroppedDuplicateRows");
  return {p.num_rows_total, p.num_rows_updated, p.num_rows_removed, p.num_rows_dropped_by_watermark,
          it == p.custom_metrics.end() ? -1 : it->second};
}

class DeduplicateTest
    : public engine::testing::EngineTestOf<::testing::TestWithParam<const char*>> {
 protected:
  OperatorContext Context(int32_t partitions = 4) {
    OperatorContext c;
    c.engine = engine_.get();
    c.fs = fs::LocalFileSystem();
    c.checkpoint_root = dir_.Join("checkpoint");
    c.operator_id = 0;
    c.num_partitions = partitions;
    // GetParam(): "<provider>" or "<provider>+cap=<stateMirrorMaxBytes>".
    const std::string param = GetParam();
    const size_t plus = param.find('+');
    c.conf["sluice.streaming.stateStore.providerClass"] = param.substr(0, plus);
    if (plus != std::string::npos) {
      c.conf["sluice.streaming.deduplicate.stateMirrorMaxBytes"] = param.substr(plus + 5);
    }
    return c;
  }

  // A batch of (k VARCHAR, ts TIMESTAMP) rows from "k:seconds" pairs.
  engine::Batch Events(const std::vector<std::pair<std::string, int>>& rows) {
    std::string sql;
    for (const auto& [k, s] : rows) {
      sql += sql.empty() ? "" : " UNION ALL ";
      sql += "SELECT '" + k + "' AS k, to_timestamp(" + std::to_string(s) + ")::TIMESTAMP AS ts";
    }
    if (sql.empty()) sql = "SELECT 'x' AS k, TIMESTAMP '2000-01-01' AS ts WHERE false";
    // Keep the order as written: UNION ALL branches concatenate in order with one thread.
    return Query(sql);
  }

  engine::Batch Query(const std::string& sql) {
    auto r = conn_->Query(sql);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    return r.ok() ? *r : engine::Batch();
  }

  static OperatorBatch Batch(int64_t id, int64_t late_ms = 0, int64_t eviction_ms = 0) {
    OperatorBatch b;
    b.batch_id = BatchId(id);
    b.late_watermark_ms = late_ms;
    b.eviction_watermark_ms = eviction_ms;
    return b;
  }

  // Runs one batch, failing the test on error.
  std::vector<std::string> Run(StatefulOperator& op, const OperatorBatch& b,
                               const engine::Batch& input) {
    auto out = op.Process(b, {input});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return out.ok() ? Rows(*out) : std::vector<std::string>{"<error>"};
  }

  fs::ScopedTempDir dir_{"sluice-dedup-test"};
};

using V = std::vector<std::string>;

TEST_P(DeduplicateTest, AllColumnsAcrossBatches) {
  Deduplicate op(DeduplicateOptions{});
  ASSERT_TRUE(op.Open(Context()).ok());
  EXPECT_EQ(Run(op, Batch(0),
                Query("SELECT * FROM (VALUES ('a', 1), ('b', 2), ('a', 1), "
                      "('a', 2)) t(v, n)")),
            (V{"a|1", "b|2", "a|2"}));
  EXPECT_EQ(Of(op.Progress()), (Metrics{3, 3, 0, 0, 1}));
  EXPECT_EQ(op.Progress().operator_name, "dedupe");
  EXPECT_EQ(op.Progress().num_state_store_instances, 4);
  EXPECT_EQ(Run(op, Batch(1), Query("SELECT * FROM (VALUES ('a', 1), ('c', 3)) t(v, n)")),
            (V{"c|3"}));
  EXPECT_EQ(Of(op.Progress()), (Metrics{4, 1, 0, 0, 1}));
  // An empty batch still commits a version; nothing changes.
  EXPECT_EQ(Run(op, Batch(2), Query("SELECT 'x' AS v, 1 AS n WHERE false")), V{});
  EXPECT_EQ(Of(op.Progress()), (Metrics{4, 0, 0, 0, 0}));
  EXPECT_FALSE(op.WantsNoDataBatch(0, 0));
}

TEST_P(DeduplicateTest, KeyColumnsKeepTheFirstRowAndNullsAreOneKey) {
  DeduplicateOptions o;
  o.key_columns = {"id"};
  Deduplicate op(o);
  ASSERT_TRUE(op.Open(Context()).ok());
  EXPECT_EQ(Run(op, Batch(0),
                Query("SELECT * FROM (VALUES (1, 'x'), (NULL, 'n1'), (1, 'y'), "
                      "(NULL, 'n2'), (2, 'z')) t(id, s)")),
            (V{"1|x", "NULL|n1", "2|z"}));
  EXPECT_EQ(Run(op, Batch(1),
                Query("SELECT * FROM (VALUES (2, 'w'), (NULL, 'n3'), (3, 'v')) "
                      "t(id, s)")),
            (V{"3|v"}));
  EXPECT_EQ(Of(op.Progress()), (Metrics{4, 1, 0, 0, 2}));
}

TEST_P(DeduplicateTest, ManyRowsKeepInputOrder) {
  DeduplicateOptions o;
  o.key_columns = {"k"};
  Deduplicate op(o);
  ASSERT_TRUE(op.Open(Context()).ok());
  // 10,000 rows (several DuckDB chunks); keys repeat every 3,000 rows: the first 3,000 survive,
  // in input order, each with its first value.
  auto out = op.Process(Batch(0), {Query("SELECT i % 3000 AS k, i AS v FROM range(10000) t(i)")});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->num_rows(), 3000);
  for (int64_t r = 0; r < 3000; r += 7) {
    ASSERT_EQ(out->GetString(r, 0).value_or("NULL"), std::to_string(r));
    ASSERT_EQ(out->GetString(r, 1).value_or("NULL"), std::to_string(r));
  }
  EXPECT_EQ(Of(op.Progress()), (Metrics{3000, 3000, 0, 0, 7000}));
}

// The kept rows are selected by position (a 0/1 mask joined with POSITIONAL JOIN): with several
// DuckDB threads too, the output is the first row of each key, in input order.
TEST_P(DeduplicateTest, KeptRowsStayInInputOrderWithSeveralEngineThreads) {
  engine::EngineOptions eo;
  eo.threads = 4;
  auto engine = engine::Engine::Open(eo);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  auto conn = (*engine)->Connect();
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  DeduplicateOptions o;
  o.key_columns = {"k"};
  Deduplicate op(o);
  OperatorContext c = Context();
  c.engine = engine->get();
  ASSERT_TRUE(op.Open(c).ok());
  // 400,000 rows, 200,000 keys whose first rows are scattered over the input.
  auto in = (*conn)->Query("SELECT (i * 7919) % 200000 AS k, i AS v FROM range(400000) t(i)");
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  auto out = op.Process(Batch(0), {*in});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->num_rows(), 200000);
  ASSERT_TRUE(conn_->RegisterBatch("dedup_out", *out).ok());
  // v ascends (input order) and each v is the first row of its key: v < 200000 (7919 and
  // 200000 are coprime, so the first 200,000 rows hold every key once).
  engine::Batch check = Query(
      "SELECT count(*) FILTER (WHERE d <= 0), max(v), count(DISTINCT k) FROM "
      "(SELECT k, v, v - lag(v, 1, -1) OVER () AS d FROM dedup_out)");
  ASSERT_TRUE(conn_->UnregisterBatch("dedup_out").ok());
  EXPECT_EQ(Rows(check), V{"0|199999|200000"});
}

TEST_P(DeduplicateTest, OrderByPicksTheFirstRowWithinABatch) {
  DeduplicateOptions o;
  o.key_columns = {"k"};
  o.order_by = "\"ts\" ASC";
  Deduplicate op(o);
  ASSERT_TRUE(op.Open(Context()).ok());
  EXPECT_EQ(Run(op, Batch(0), Events({{"a", 30}, {"b", 5}, {"a", 10}, {"a", 20}})),
            (V{"b|1970-01-01 00:00:05", "a|1970-01-01 00:00:10"}));
  EXPECT_EQ(Run(op, Batch(1), Events({{"a", 1}, {"c", 2}})), (V{"c|1970-01-01 00:00:02"}));
}

TEST_P(DeduplicateTest, WatermarkWithoutEventTimeKeyDropsLateRowsAndKeepsState) {
  DeduplicateOptions o;
  o.key_columns = {"k"};
  o.event_time_column = "ts";
  Deduplicate op(o);
  ASSERT_TRUE(op.Open(Context()).ok());
  EXPECT_EQ(Run(op, Batch(0), Events({{"a", 10}, {"b", 11}, {"a", 12}})),
            (V{"a|1970-01-01 00:00:10", "b|1970-01-01 00:00:11"}));
  EXPECT_EQ(Of(op.Progress()), (Metrics{2, 2, 0, 0, 1}));
  // Late threshold 10 s: (c, 10) is late (inclusive); (a, 30) is a duplicate; nothing is
  // evicted although the eviction watermark passed every event time.
  EXPECT_EQ(Run(op, Batch(1, 10000, 40000), Events({{"c", 10}, {"a", 30}, {"d", 11}})),
            (V{"d|1970-01-01 00:00:11"}));
  EXPECT_EQ(Of(op.Progress()), (Metrics{3, 1, 0, 1, 1}));
  EXPECT_TRUE(op.WantsNoDataBatch(10000, 40000));
  EXPECT_FALSE(op.WantsNoDataBatch(40000, 40000));
}

TEST_P(DeduplicateTest, EventTimeAmongKeysIsEvicted) {
  DeduplicateOptions o;
  o.key_columns = {"k", "ts"};
  o.event_time_column = "ts";
  Deduplicate op(o);
  ASSERT_TRUE(op.Open(Context()).ok());
  EXPECT_EQ(Run(op, Batch(0), Events({{"a", 10}, {"a", 10}, {"a", 20}, {"b", 30}})),
            (V{"a|1970-01-01 00:00:10", "a|1970-01-01 00:00:20", "b|1970-01-01 00:00:30"}));
  EXPECT_EQ(Of(op.Progress()), (Metrics{3, 3, 0, 0, 1}));
  // Eviction at 20 s removes (a, 10) and (a, 20) (<=, inclusive); (a, 25) is new.
  EXPECT_EQ(Run(op, Batch(1, 0, 20000), Events({{"a", 25}, {"b", 30}})),
            (V{"a|1970-01-01 00:00:25"}));
  EXPECT_EQ(Of(op.Progress()), (Metrics{2, 1, 2, 0, 1}));
}

TEST_P(DeduplicateTest, NegativeEventTimesEvictInOrder) {
  DeduplicateOptions o;
  o.key_columns = {"k", "ts"};
  o.event_time_column = "ts";
  Deduplicate op(o);
  ASSERT_TRUE(op.Open(Context()).ok());
  // (With a late threshold of 0, event times <= 0 would be late; the test starts below them.)
  EXPECT_EQ(
      Run(op, Batch(0, -1000000, -1000000), Events({{"a", -100}, {"b", -5}, {"c", 0}, {"d", 5}}))
          .size(),
      4u);
  // Eviction at -5 s: -100 and -5 go, 0 and 5 stay.
  EXPECT_EQ(Run(op, Batch(1, -1000000, -5000), Events({})), V{});
  EXPECT_EQ(Of(op.Progress()), (Metrics{2, 0, 2, 0, 0}));
}

// The acceptance scenario dedup-within-watermark-all-columns.test at the operator level (delay
// 10 s, key = value, eventTime).
TEST_P(DeduplicateTest, WithinWatermarkExpiresKeys) {
  DeduplicateOptions o;
  o.key_columns = {"k", "ts"};
  o.event_time_column = "ts";
  o.delay_ms = 10000;
  o.order_by = "\"ts\"";
  DeduplicateWithinWatermark op(o);
  ASSERT_TRUE(op.Open(Context()).ok());
  std::vector<std::pair<std::string, int>> first;
  for (int rep = 0; rep < 5; ++rep) {
    for (int v = 10; v <= 15; ++v) first.emplace_back(std::to_string(v), v);
  }
  EXPECT_EQ(Run(op, Batch(0), Events(first)).size(), 6u);
  EXPECT_EQ(Of(op.Progress()), (Metrics{6, 6, 0, 0, 24}));
  EXPECT_EQ(op.Progress().operator_name, "dedupeWithinWatermark");
  EXPECT_TRUE(op.WantsNoDataBatch(0, 5000));
  EXPECT_EQ(Run(op, Batch(1, 0, 5000), Events({})), V{});  // no-data batch
  EXPECT_EQ(Of(op.Progress()), (Metrics{6, 0, 0, 0, 0}));
  EXPECT_EQ(Run(op, Batch(2, 5000, 5000),
                Events({{"13", 13}, {"14", 14}, {"15", 15}, {"16", 16}, {"17", 17}})),
            (V{"16|1970-01-01 00:00:16", "17|1970-01-01 00:00:17"}));
  EXPECT_EQ(Of(op.Progress()), (Metrics{8, 2, 0, 0, 3}));
  EXPECT_EQ(Run(op, Batch(3, 5000, 7000), Events({})), V{});
  EXPECT_EQ(Run(op, Batch(4, 7000, 7000), Events({{"5", 5}})), V{});
  EXPECT_EQ(Of(op.Progress()), (Metrics{8, 0, 0, 1, 0}));
  EXPECT_EQ(Run(op, Batch(5, 7000, 7000), Events({{"35", 35}})), (V{"35|1970-01-01 00:00:35"}));
  EXPECT_EQ(Of(op.Progress()), (Metrics{9, 1, 0, 0, 0}));
  // Watermark 25 s: keys 10..15 expire at 20..25 s (<=, inclusive).
  EXPECT_EQ(Run(op, Batch(6, 7000, 25000), Events({})), V{});
  EXPECT_EQ(Of(op.Progress()), (Metrics{3, 0, 6, 0, 0}));
  // 16 s is late now (<= 25 s).
  EXPECT_EQ(Run(op, Batch(7, 25000, 25000), Events({{"55", 55}, {"16", 16}})),
            (V{"55|1970-01-01 00:00:55"}));
  EXPECT_EQ(Of(op.Progress()), (Metrics{4, 1, 0, 1, 0}));
  // Watermark 45 s: 16, 17 and 35 (expiring 26, 27, 45 s) go; 55 (65 s) stays.
  EXPECT_EQ(Run(op, Batch(8, 25000, 45000), Events({})), V{});
  EXPECT_EQ(Of(op.Progress()), (Metrics{1, 0, 3, 0, 0}));
}

TEST_P(DeduplicateTest, WithinWatermarkKeyWithoutEventTime) {
  DeduplicateOptions o;
  o.key_columns = {"k"};
  o.event_time_column = "ts";
  o.delay_ms = 5000;
  o.order_by = "\"ts\"";
  DeduplicateWithinWatermark op(o);
  ASSERT_TRUE(op.Open(Context()).ok());
  // Within the batch the earliest event time wins; its expiry (12 + 5 s) is what counts.
  EXPECT_EQ(Run(op, Batch(0), Events({{"a", 20}, {"a", 12}, {"b", 30}})),
            (V{"a|1970-01-01 00:00:12", "b|1970-01-01 00:00:30"}));
  EXPECT_EQ(Run(op, Batch(1, 0, 16999), Events({{"a", 40}})), V{});
  EXPECT_EQ(Run(op, Batch(2, 0, 17000), Events({})), V{});
  EXPECT_EQ(Of(op.Progress()), (Metrics{1, 0, 1, 0, 0}));
  EXPECT_EQ(Run(op, Batch(3, 17000, 17000), Events({{"a", 41}})), (V{"a|1970-01-01 00:00:41"}));
}

// A crash after the state commit of batch 1 and before its commit log entry: a new process (a
// new operator, new local directories) re-runs batch 1 from the checkpoint and gets the same
// rows and metrics; batch 2 then continues from the re-run's state.
TEST_P(DeduplicateTest, RerunAfterCrashGivesTheSameResult) {
  DeduplicateOptions o;
  o.key_columns = {"k", "ts"};
  o.event_time_column = "ts";
  o.delay_ms = 10000;
  const engine::Batch b0 = Events({{"a", 10}, {"b", 20}, {"a", 10}});
  const engine::Batch b1 = Events({{"a", 10}, {"c", 30}, {"d", 1}});
  std::vector<std::string> first_out;
  Metrics first_metrics{};
  {
    DeduplicateWithinWatermark op(o);
    ASSERT_TRUE(op.Open(Context()).ok());
    EXPECT_EQ(Run(op, Batch(0), b0).size(), 2u);
    first_out = Run(op, Batch(1, 5000, 20000), b1);
    first_metrics = Of(op.Progress());
  }
  EXPECT_EQ(first_out, (V{"c|1970-01-01 00:00:30"}));  // (a, 10) in state, (d, 1) late
  EXPECT_EQ(first_metrics, (Metrics{2, 1, 1, 1, 1}));  // (a, 10) expired at 20 s
  for (int attempt = 0; attempt < 2; ++attempt) {
    DeduplicateWithinWatermark op(o);
    ASSERT_TRUE(op.Open(Context()).ok());
    EXPECT_EQ(Run(op, Batch(1, 5000, 20000), b1), first_out);
    EXPECT_EQ(Of(op.Progress()), first_metrics);
  }
  DeduplicateWithinWatermark op(o);
  ASSERT_TRUE(op.Open(Context()).ok());
  EXPECT_EQ(Run(op, Batch(1, 5000, 20000), b1), first_out);
  EXPECT_EQ(Run(op, Batch(2, 20000, 20000), Events({{"b", 21}, {"c", 30}, {"a", 25}})),
            (V{"b|1970-01-01 00:00:21", "a|1970-01-01 00:00:25"}));
  EXPECT_EQ(Of(op.Progress()), (Metrics{4, 2, 0, 0, 1}));
}

TEST_P(DeduplicateTest, RestartKeepsStateWithoutWatermark) {
  DeduplicateOptions o;
  o.key_columns = {"v"};
  {
    Deduplicate op(o);
    ASSERT_TRUE(op.Open(Context()).ok());
    EXPECT_EQ(Run(op, Batch(0), Query("SELECT * FROM (VALUES ('a'), ('b')) t(v)")), (V{"a", "b"}));
  }
  Deduplicate op(o);
  ASSERT_TRUE(op.Open(Context()).ok());
  EXPECT_EQ(Run(op, Batch(1), Query("SELECT * FROM (VALUES ('b'), ('c'), ('a')) t(v)")), (V{"c"}));
  EXPECT_EQ(Of(op.Progress()), (Metrics{3, 1, 0, 0, 2}));
}

TEST_P(DeduplicateTest, StateSchemaIsCheckedOnRestart) {
  {
    DeduplicateOptions o;
    o.key_columns = {"v"};
    Deduplicate op(o);
    ASSERT_TRUE(op.Open(Context()).ok());
    EXPECT_EQ(Run(op, Batch(0), Query("SELECT 'a' AS v")), (V{"a"}));
  }
  DeduplicateOptions o;
  o.key_columns = {"v"};
  Deduplicate op(o);
  ASSERT_TRUE(op.Open(Context()).ok());
  auto out = op.Process(Batch(1), {Query("SELECT 1 AS v")});  // INTEGER, was VARCHAR
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(out.status().IsInvalidArgument()) << out.status().ToString();
  EXPECT_NE(out.status().ToString().find("SCHEMA_NOT_COMPATIBLE"), std::string::npos)
      << out.status().ToString();
}

// ORDER BY the event time with a NULL event time in the batch: the hash pass steps aside and
// SQL orders the NULL last; the same batch without the NULL takes the hash pass.
TEST_P(DeduplicateTest, WithinWatermarkNullEventTimeOrdersLast) {
  DeduplicateOptions o;
  o.key_columns = {"k"};
  o.event_time_column = "ts";
  o.delay_ms = 5000;
  o.order_by = "\"ts\" ASC";
  DeduplicateWithinWatermark op(o);
  ASSERT_TRUE(op.Open(Context()).ok());
  EXPECT_EQ(Run(op, Batch(0),
                Query("SELECT * FROM (VALUES ('a', NULL::TIMESTAMP), ('a', TIMESTAMP "
                      "'1970-01-01 00:00:12'), ('b', NULL::TIMESTAMP)) t(k, ts)")),
            (V{"a|1970-01-01 00:00:12", "b|NULL"}));
  EXPECT_EQ(Of(op.Progress()), (Metrics{2, 2, 0, 0, 1}));
  // b's NULL event time counts as 0 s: it expires at 5 s, a at 17 s.
  EXPECT_EQ(Run(op, Batch(1, 0, 5000), Events({{"c", 9}, {"a", 8}, {"c", 7}})),
            (V{"c|1970-01-01 00:00:07"}));
  EXPECT_EQ(Of(op.Progress()), (Metrics{2, 1, 1, 0, 2}));
}

// Many keys across batches with expiry: exercises the mirror's growth, its time index and the
// eviction of only what expired, against the counts the semantics give.
TEST_P(DeduplicateTest, ManyKeysExpireInOrder) {
  DeduplicateOptions o;
  o.key_columns = {"k"};
  o.event_time_column = "ts";
  o.delay_ms = 2000;
  o.order_by = "\"ts\" ASC";
  DeduplicateWithinWatermark op(o);
  ASSERT_TRUE(op.Open(Context()).ok());
  // Batch b: keys 1000b .. 1000b+1999, each twice (the first half was new in batch b-1), event
  // times in second b; the watermark then evicts the keys of batch b-3.
  int64_t total = 0;
  for (int64_t b = 0; b < 5; ++b) {
    const std::string sql = "SELECT (" + std::to_string(b * 1000) +
                            " + i % 2000) AS k, make_timestamp((" + std::to_string(b * 1000) +
                            " + i % 1000 + 1) * 1000) AS ts FROM range(4000) t(i)";
    const int64_t wm = b == 0 ? 0 : (b - 1) * 1000 + 999;  // late and eviction watermark
    auto out = op.Process(Batch(b, wm, wm), {Query(sql)});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    // New keys: 2000 in batch 0, then the 1000 not seen before.
    const int64_t kept = b == 0 ? 2000 : 1000;
    EXPECT_EQ(out->num_rows(), kept) << "batch " << b;
    total += kept;
    const Metrics m = Of(op.Progress());
    total -= m.removed;
    EXPECT_EQ(m.total, total) << "batch " << b;
    EXPECT_EQ(m.updated, kept);
    EXPECT_EQ(m.dropped_by_watermark + m.dropped_duplicates + kept, 4000);
  }
  // A final no-data batch far ahead evicts everything.
  auto out = op.Process(Batch(5, 4999, 100000),
                        {Query("SELECT 0::BIGINT AS k, make_timestamp(0) AS ts WHERE false")});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Of(op.Progress()).total, 0);
  EXPECT_EQ(Of(op.Progress()).removed, total);
}

// With the mirror the stores write changelogs only and snapshots come from the mirror: the
// state in the checkpoint (what a restart or a new machine loads: snapshot + changelogs) must be
// the same as with the mirror off, partition by partition, across the snapshot at version 10,
// with keys that never expire (NULL event times) among keys that do; a restart from it continues
// with the same rows and metrics.
TEST_P(DeduplicateTest, CheckpointStateIsTheSameWithAndWithoutTheMirror) {
  constexpr int64_t kBatches = 13;
  auto input = [&](int64_t b) {
    return Query("SELECT 'k' || ((i + " + std::to_string(b * 30) +
                 ") % 200) AS k, CASE WHEN i % 17 = 0 THEN NULL ELSE make_timestamp((" +
                 std::to_string(b * 5) + " + i % 7) * 1000000) END::TIMESTAMP AS ts " +
                 "FROM range(120) t(i)");
  };
  auto batch = [](int64_t b) {
    const int64_t wm = std::max<int64_t>(0, (b * 5 - 8) * 1000);
    return Batch(b, wm, wm);
  };
  for (bool within : {false, true}) {
    SCOPED_TRACE(within ? "within watermark" : "event time among the keys");
    DeduplicateOptions o;
    o.key_columns = within ? std::vector<std::string>{"k"} : std::vector<std::string>{"k", "ts"};
    o.event_time_column = "ts";
    o.delay_ms = 4000;
    auto make = [&]() -> std::unique_ptr<StatefulOperator> {
      if (within) return std::make_unique<DeduplicateWithinWatermark>(o);
      return std::make_unique<Deduplicate>(o);
    };
    const std::string tested = dir_.Join(within ? "tested-w" : "tested-d");
    const std::string reference = dir_.Join(within ? "reference-w" : "reference-d");
    OperatorContext tc = Context();
    tc.checkpoint_root = tested;
    OperatorContext rc = Context();
    rc.checkpoint_root = reference;
    rc.conf["sluice.streaming.stateStore.providerClass"] = "memory";
    rc.conf["sluice.streaming.deduplicate.stateMirrorMaxBytes"] = "0";
    auto t = make();
    auto r = make();
    ASSERT_TRUE(t->Open(tc).ok());
    ASSERT_TRUE(r->Open(rc).ok());
    for (int64_t b = 0; b < kBatches - 1; ++b) {
      const engine::Batch in = input(b);
      EXPECT_EQ(Run(*t, batch(b), in), Run(*r, batch(b), in)) << "batch " << b;
      EXPECT_EQ(Of(t->Progress()), Of(r->Progress())) << "batch " << b;
    }
    auto fs = fs::LocalFileSystem();
    for (int32_t p = 0; p < 4; ++p) {
      for (int64_t v = 1; v < kBatches; ++v) {
        auto got = state::ReadStoreVersion(fs, {tested, 0, p, "default"}, v);
        auto want = state::ReadStoreVersion(fs, {reference, 0, p, "default"}, v);
        ASSERT_TRUE(got.ok()) << got.status().ToString();
        ASSERT_TRUE(want.ok()) << want.status().ToString();
        EXPECT_EQ(*got, *want) << "partition " << p << " version " << v;
      }
      auto snapshot = fs->Exists(tested + "/state/0/" + std::to_string(p) + "/10.snapshot");
      ASSERT_TRUE(snapshot.ok());
      EXPECT_TRUE(*snapshot) << "partition " << p;
    }
    // A new operator (a restart on a new machine) continues from the checkpoint.
    auto restarted = make();
    ASSERT_TRUE(restarted->Open(tc).ok());
    const engine::Batch last = input(kBatches - 1);
    EXPECT_EQ(Run(*restarted, batch(kBatches - 1), last), Run(*r, batch(kBatches - 1), last));
    EXPECT_EQ(Of(restarted->Progress()), Of(r->Progress()));
  }
}

TEST_P(DeduplicateTest, MirrorCapMustBeAByteCount) {
  for (const char* bad : {"", "-1", "10MB", "99999999999999999999"}) {
    OperatorContext c = Context();
    c.conf["sluice.streaming.deduplicate.stateMirrorMaxBytes"] = bad;
    DeduplicateOptions o;
    o.key_columns = {"k"};
    Deduplicate op(o);
    Status st = op.Open(c);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(st.ToString().find("stateMirrorMaxBytes"), std::string::npos) << st.ToString();
  }
}

TEST_P(DeduplicateTest, Errors) {
  {
    DeduplicateOptions o;
    o.key_columns = {"missing"};
    Deduplicate op(o);
    ASSERT_TRUE(op.Open(Context()).ok());
    auto out = op.Process(Batch(0), {Query("SELECT 1 AS v")});
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().ToString().find("missing"), std::string::npos);
  }
  {
    DeduplicateWithinWatermark op(DeduplicateOptions{});
    Status st = op.Open(Context());
    EXPECT_TRUE(st.IsInvalidArgument()) << st.ToString();
  }
  {
    DeduplicateOptions o;
    o.event_time_column = "v";
    Deduplicate op(o);
    ASSERT_TRUE(op.Open(Context()).ok());
    auto out = op.Process(Batch(0), {Query("SELECT 1 AS v")});
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().ToString().find("event-time column v"), std::string::npos)
        << out.status().ToString();
  }
  {
    Deduplicate op(DeduplicateOptions{});
    ASSERT_TRUE(op.Open(Context()).ok());
    auto out = op.Process(Batch(0), {});
    EXPECT_TRUE(out.status().IsInvalidArgument());
  }
}

// The state mirror on (the default), off, and given up: with a cap of 64 bytes (16 per partition)
// it is given up after the first batch that puts a key, or when a restart loads state.
INSTANTIATE_TEST_SUITE_P(Providers, DeduplicateTest,
                         ::testing::Values("rocksdb", "memory", "rocksdb+cap=0", "memory+cap=0",
                                           "rocksdb+cap=64"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name = info.param;
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace sluice::ops
