// Engine micro-benchmarks: what running SQL over micro-batches costs (src/engine).
//
//   cmake --build <dir> --target engine_bench && <dir>/bench/engine_bench
//
// Figures are recorded in bench/RESULTS.md ("## Engine (src/engine)").
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bench_check.h"
#include "engine/batch_builder.h"
#include "engine/engine.h"
#include "engine/row_codec.h"

namespace sluice::engine {
namespace {

using bench::Check;

struct Env {
  std::unique_ptr<Engine> engine;
  std::unique_ptr<Connection> conn;
  Env() {
    engine = Check(Engine::Open(), "open");  // threads = 1, the micro-batch setting
    conn = Check(engine->Connect(), "connect");
  }
};

// A batch of `rows` rows with four columns of common types.
std::string RowsSql(int64_t rows) {
  return "SELECT i AS a, i * 0.5 AS b, 'user_' || (i % 1000) AS c, "
         "TIMESTAMP '2024-01-01' + INTERVAL (i) SECOND AS d FROM range(" +
         std::to_string(rows) + ") t(i)";
}

const char* kFilterAgg = "SELECT sum(a), count(*) FROM %s WHERE b > 10";

std::string FilterAgg(const char* table) {
  char buf[128];
  std::snprintf(buf, sizeof(buf), kFilterAgg, table);
  return buf;
}

// Fixed cost of one query round trip.
void BM_SelectOne(benchmark::State& state) {
  Env env;
  for (auto _ : state) {
    Batch b = Check(env.conn->Query("SELECT 1"), "query");
    benchmark::DoNotOptimize(b);
  }
}
BENCHMARK(BM_SelectOne);

// A trivial filter over an already registered 1-row batch.
void BM_FilterOneRowBatch(benchmark::State& state) {
  Env env;
  Batch one = Check(env.conn->Query("SELECT 1 AS x, 'a' AS s"), "batch");
  Check(env.conn->RegisterBatch("v", one), "register");
  for (auto _ : state) {
    Batch b = Check(env.conn->Query("SELECT s FROM v WHERE x > 0"), "query");
    benchmark::DoNotOptimize(b);
  }
}
BENCHMARK(BM_FilterOneRowBatch);

// Baselines for the above: the same filter over a 1-row DuckDB table, and over a temporary view
// (defined in SQL) on that table.
void BM_FilterOneRowTable(benchmark::State& state) {
  Env env;
  Check(env.conn->Execute("CREATE TABLE t AS SELECT 1 AS x, 'a' AS s"), "table");
  Check(env.conn->Execute("CREATE TEMP VIEW tv AS SELECT * FROM t"), "view");
  const char* sql =
      state.range(0) == 0 ? "SELECT s FROM t WHERE x > 0" : "SELECT s FROM tv WHERE x > 0";
  for (auto _ : state) {
    Batch b = Check(env.conn->Query(sql), "query");
    benchmark::DoNotOptimize(b);
  }
  state.SetLabel(state.range(0) == 0 ? "table" : "temp view over table");
}
BENCHMARK(BM_FilterOneRowTable)->Arg(0)->Arg(1);

// RegisterBatch alone (creating the temporary view), for a batch of range(0) rows.
void BM_RegisterOnly(benchmark::State& state) {
  Env env;
  Batch batch = Check(env.conn->Query(RowsSql(state.range(0))), "batch");
  for (auto _ : state) Check(env.conn->RegisterBatch("v", batch), "register");
}
BENCHMARK(BM_RegisterOnly)->Arg(4096)->Arg(1 << 20);

// Register a batch and run a filter + aggregate over it: rows/s in.
void BM_RegisterAndScan(benchmark::State& state) {
  Env env;
  Batch batch = Check(env.conn->Query(RowsSql(state.range(0))), "batch");
  const std::string sql = FilterAgg("v");
  for (auto _ : state) {
    Check(env.conn->RegisterBatch("v", batch), "register");
    Batch b = Check(env.conn->Query(sql), "query");
    benchmark::DoNotOptimize(b);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_RegisterAndScan)->Arg(4096)->Arg(1 << 20);

// The same query over a registered batch that stays registered (no RegisterBatch in the loop).
void BM_ScanRegistered(benchmark::State& state) {
  Env env;
  Batch batch = Check(env.conn->Query(RowsSql(state.range(0))), "batch");
  Check(env.conn->RegisterBatch("v", batch), "register");
  const std::string sql = FilterAgg("v");
  for (auto _ : state) {
    Batch b = Check(env.conn->Query(sql), "query");
    benchmark::DoNotOptimize(b);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_ScanRegistered)->Arg(4096)->Arg(1 << 20);

// The same query over a DuckDB table holding the same rows: the baseline.
void BM_ScanDuckDbTable(benchmark::State& state) {
  Env env;
  Check(env.conn->Execute("CREATE TABLE t AS " + RowsSql(state.range(0))), "table");
  const std::string sql = FilterAgg("t");
  for (auto _ : state) {
    Batch b = Check(env.conn->Query(sql), "query");
    benchmark::DoNotOptimize(b);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_ScanDuckDbTable)->Arg(4096)->Arg(1 << 20);

// Register a batch and read one of its four columns (projection over a registered batch).
void BM_RegisterAndScanOneColumn(benchmark::State& state) {
  Env env;
  Batch batch = Check(env.conn->Query(RowsSql(state.range(0))), "batch");
  for (auto _ : state) {
    Check(env.conn->RegisterBatch("v", batch), "register");
    Batch b = Check(env.conn->Query("SELECT max(c) FROM v"), "query");
    benchmark::DoNotOptimize(b);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_RegisterAndScanOneColumn)->Arg(4096)->Arg(1 << 20);

// Materializing a query result into a Batch: rows/s out (all four columns of a table).
void BM_MaterializeResult(benchmark::State& state) {
  Env env;
  Check(env.conn->Execute("CREATE TABLE t AS " + RowsSql(state.range(0))), "table");
  for (auto _ : state) {
    Batch b = Check(env.conn->Query("SELECT * FROM t"), "query");
    benchmark::DoNotOptimize(b);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_MaterializeResult)->Arg(4096)->Arg(1 << 20);

// A registered batch through a projection and filter back into a Batch: the shape of a
// stateless micro-batch step (rows in = rows of the batch).
void BM_RegisterProjectMaterialize(benchmark::State& state) {
  Env env;
  Batch batch = Check(env.conn->Query(RowsSql(state.range(0))), "batch");
  for (auto _ : state) {
    Check(env.conn->RegisterBatch("v", batch), "register");
    Batch b = Check(env.conn->Query("SELECT a, upper(c) AS c, d FROM v WHERE a % 2 = 0"), "query");
    benchmark::DoNotOptimize(b);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_RegisterProjectMaterialize)->Arg(4096)->Arg(1 << 20);

// Row codec (engine/row_codec.h): encoding `rows` rows of (BIGINT, VARCHAR(20)) into one key
// string per row, and decoding them back into a Batch.
std::string CodecRowsSql(int64_t rows) {
  return "SELECT i AS k, lpad((i * 7919 % 100000)::VARCHAR, 20, 'x') AS s FROM range(" +
         std::to_string(rows) + ") t(i)";
}

void BM_EncodeRows(benchmark::State& state) {
  Env env;
  Batch batch = Check(env.conn->Query(CodecRowsSql(state.range(0))), "rows");
  for (auto _ : state) {
    auto rows = Check(EncodeRows(batch, {0, 1}), "encode");
    benchmark::DoNotOptimize(rows.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_EncodeRows)->Arg(4096)->Arg(1 << 20)->Unit(benchmark::kMillisecond);

void BM_DecodeRows(benchmark::State& state) {
  Env env;
  Batch batch = Check(env.conn->Query(CodecRowsSql(state.range(0))), "rows");
  auto rows = Check(EncodeRows(batch, {0, 1}), "encode");
  std::vector<std::string_view> views(rows.begin(), rows.end());
  for (auto _ : state) {
    Batch decoded = Check(DecodeRows(batch.schema(), views), "decode");
    benchmark::DoNotOptimize(decoded.num_rows());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_DecodeRows)->Arg(4096)->Arg(1 << 20)->Unit(benchmark::kMillisecond);

// BatchBuilder: `rows` rows of (BIGINT, VARCHAR, TIMESTAMP) appended value by value.
void BM_BatchBuilder(benchmark::State& state) {
  const Schema schema = {{"id", DataType{TypeId::kBigInt}, true},
                         {"name", DataType{TypeId::kVarchar}, true},
                         {"ts", DataType{TypeId::kTimestamp}, true}};
  const std::string name = "a name of twenty chr";
  for (auto _ : state) {
    BatchBuilder b(schema);
    for (int64_t i = 0; i < state.range(0); ++i) {
      Check(b.AppendInt64(i), "int");
      Check(b.AppendString(name), "string");
      Check(b.AppendTimestampMicros(i * 1000), "ts");
      Check(b.EndRow(), "row");
    }
    Batch batch = Check(b.Finish(), "finish");
    benchmark::DoNotOptimize(batch.num_rows());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_BatchBuilder)->Arg(4096)->Arg(1 << 20)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sluice::engine

BENCHMARK_MAIN();
