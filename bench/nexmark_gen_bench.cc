// Nexmark generator throughput (docs/nexmark.md): events/s per core into the row form, the
// columnar batch form, and JSON lines. Single-threaded; default config (rate 100 K ev/s).
//   nexmark_gen_bench --benchmark_min_time=2s
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

#include "bench_check.h"
#include "sources/nexmark/nexmark_generator.h"
#include "sources/nexmark/nexmark_json.h"

namespace {

using sluice::nexmark::NexmarkBatch;
using sluice::nexmark::NexmarkConfig;
using sluice::nexmark::NexmarkEvent;
using sluice::nexmark::NexmarkGenerator;

std::unique_ptr<NexmarkGenerator> OpenOrDie() {
  return sluice::bench::Check(NexmarkGenerator::Open(NexmarkConfig{}), "opening the generator");
}

// The core: one event at a time into a reused row struct (table strings are views).
void BM_GenerateEventRow(benchmark::State& state) {
  auto gen = OpenOrDie();
  NexmarkEvent event;
  int64_t k = 0;
  for (auto _ : state) {
    gen->GenerateEvent(k++, &event);
    benchmark::DoNotOptimize(event.bid.price);
  }
  state.SetItemsProcessed(k);
}
BENCHMARK(BM_GenerateEventRow);

// Columnar batches of `range(0)` events into one reused NexmarkBatch (table strings as views).
void BM_GenerateBatchColumnar(benchmark::State& state) {
  auto gen = OpenOrDie();
  NexmarkBatch batch;
  const int64_t size = state.range(0);
  int64_t k = 0;
  for (auto _ : state) {
    gen->GenerateBatch(k, size, &batch);
    k += size;
    benchmark::DoNotOptimize(batch.bids.price.data());
  }
  state.SetItemsProcessed(k);
}
BENCHMARK(BM_GenerateBatchColumnar)->Arg(1024)->Arg(8192)->Arg(65536);

// Appends every string of `column` to Arrow's utf8 layout (offsets + one byte buffer).
void Materialize(const sluice::nexmark::StringColumn& column, std::vector<int32_t>* offsets,
                 std::string* bytes) {
  for (std::string_view s : column.views()) {
    bytes->append(s);
    offsets->push_back(static_cast<int32_t>(bytes->size()));
  }
}

// Columnar batches plus copying every string of every column into Arrow layout: the cost a
// consumer pays when it needs contiguous strings (reads every string byte once).
void BM_GenerateBatchArrowStrings(benchmark::State& state) {
  auto gen = OpenOrDie();
  NexmarkBatch batch;
  std::vector<int32_t> offsets;
  std::string bytes;
  const int64_t size = state.range(0);
  int64_t k = 0;
  int64_t total_bytes = 0;
  for (auto _ : state) {
    gen->GenerateBatch(k, size, &batch);
    k += size;
    offsets.clear();
    bytes.clear();
    for (const auto* c :
         {&batch.persons.name, &batch.persons.email_address, &batch.persons.credit_card,
          &batch.persons.city, &batch.persons.state, &batch.persons.extra,
          &batch.auctions.item_name, &batch.auctions.description, &batch.auctions.extra,
          &batch.bids.channel, &batch.bids.url, &batch.bids.extra}) {
      Materialize(*c, &offsets, &bytes);
    }
    total_bytes += static_cast<int64_t>(bytes.size());
    benchmark::DoNotOptimize(bytes.data());
  }
  state.SetItemsProcessed(k);
  state.SetBytesProcessed(total_bytes);
}
BENCHMARK(BM_GenerateBatchArrowStrings)->Arg(8192);

// Discards what is written (counts the bytes).
class NullBuf : public std::streambuf {
 public:
  int64_t bytes = 0;

 protected:
  int overflow(int c) override {
    ++bytes;
    return c;
  }
  std::streamsize xsputn(const char*, std::streamsize n) override {
    bytes += n;
    return n;
  }
};

// EmitJson (generation + JSON lines + stream writes) of `range(0)` events per iteration into a
// stream that discards the bytes.
void BM_EmitJson(benchmark::State& state) {
  auto gen = OpenOrDie();
  NullBuf sink;
  std::ostream os(&sink);
  const int64_t size = state.range(0);
  int64_t k = 0;
  for (auto _ : state) {
    if (!sluice::nexmark::EmitJson(*gen, k, size, os).ok()) std::abort();
    k += size;
  }
  state.SetItemsProcessed(k);
  state.SetBytesProcessed(sink.bytes);
}
BENCHMARK(BM_EmitJson)->Arg(65536);

}  // namespace

BENCHMARK_MAIN();
