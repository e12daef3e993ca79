// Nexmark streaming source throughput (docs/nexmark.md, "The streaming source"): events of the
// unified stream per second through NexmarkSource::GetBatch, i.e. generation of one kind plus
// the copy into an engine Batch (DuckDB vectors). Single-threaded; default generator config.
//   nexmark_source_bench --benchmark_min_time=2s
// Arg: events per batch (maxEventsPerTrigger). items/s = events of the unified stream per second
// (a bid source yields 92 % of them as rows, a person source 2 %, an auction source 6 %).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "bench_check.h"
#include "sources/nexmark/nexmark_source.h"
#include "sources/source_factory.h"

namespace {

using sluice::sources::Source;

std::unique_ptr<Source> OpenOrDie(const std::string& kind) {
  sluice::sources::SourceContext ctx;
  ctx.options = {{"kind", kind}};
  return sluice::bench::Check(sluice::sources::CreateSource("nexmark", ctx), "opening the source");
}

void RunGetBatch(benchmark::State& state, const std::string& kind) {
  auto src = OpenOrDie(kind);
  const int64_t size = state.range(0);
  int64_t k = 0;
  int64_t rows = 0;
  for (auto _ : state) {
    auto batch = src->GetBatch(std::to_string(k), std::to_string(k + size));
    if (!batch.ok()) {
      state.SkipWithError(batch.status().ToString().c_str());
      return;
    }
    rows += batch->num_rows();
    k += size;
  }
  state.SetItemsProcessed(k);
  state.counters["rows/s"] =
      benchmark::Counter(static_cast<double>(rows), benchmark::Counter::kIsRate);
}

void BM_SourceBid(benchmark::State& state) { RunGetBatch(state, "bid"); }
void BM_SourcePerson(benchmark::State& state) { RunGetBatch(state, "person"); }
void BM_SourceAuction(benchmark::State& state) { RunGetBatch(state, "auction"); }
BENCHMARK(BM_SourceBid)
    ->Arg(16384)
    ->Arg(100000)
    ->Arg(250000)
    ->Arg(500000)
    ->Arg(1000000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SourcePerson)->Arg(1000000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SourceAuction)->Arg(1000000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
