// files_json_bench: the files source's JSON readers side by side on the data of
// `stream_bench files_to_delta` (~300-byte lines, id BIGINT, ts TIMESTAMP, user/kind/payload
// VARCHAR, amount DOUBLE): FileSource::GetBatch alone, wall time and process CPU time (user +
// sys, which the other users of a shared machine disturb less), for
//   sql               the SQL path (json_valid + json_transform + json_type in DuckDB)
//   decoder-1-thread  engine/json_decoder.h on one thread
//   decoder-auto      the decoder with the default thread choice (files_source.h)
// Usage: files_json_bench [--rows N] [--files N] [--reps N]. Files go under $TMPDIR (/tmp).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "bench_check.h"
#include "engine/engine.h"
#include "fs/local_file_system.h"
#include "sources/file_source.h"

namespace sluice {
namespace {

using bench::CpuSeconds;
using bench::Seconds;

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one;
  in >> one;
  return one;
}

int Run(int64_t rows, int files, int reps) {
  const char* tmp = std::getenv("TMPDIR");
  const std::filesystem::path dir = std::filesystem::path(tmp ? tmp : "/tmp") /
                                    ("sluice_files_json_bench_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "landing");
  const std::string pad(200, 'p');
  const int64_t per_file = rows / files;
  for (int f = 0; f < files; ++f) {
    std::ofstream out(dir / "landing" / ("part-" + std::to_string(1000 + f) + ".json"));
    for (int64_t r = 0; r < per_file; ++r) {
      const int64_t id = f * per_file + r;
      out << "{\"id\":" << id << ",\"ts\":\"2026-11-30 12:00:00\",\"user\":\"user_" << id % 1000
          << "\",\"kind\":\"click\",\"amount\":" << id % 977 << ".25,\"payload\":\"" << pad
          << "\"}\n";
    }
  }
  auto engine = engine::Engine::Open();
  if (!engine.ok()) {
    std::fprintf(stderr, "files_json_bench: %s\n", engine.status().ToString().c_str());
    return 1;
  }
  struct Variant {
    const char* name;
    bool decoder;
    int threads;
  };
  const Variant variants[] = {
      {"sql", false, 0}, {"decoder-1-thread", true, 1}, {"decoder-auto", true, 0}};
  int run = 0;
  for (int rep = 0; rep < reps; ++rep) {
    for (const Variant& v : variants) {
      sources::SourceContext ctx;
      ctx.fs = fs::LocalFileSystem();
      ctx.engine = engine->get();
      ctx.checkpoint_dir = (dir / ("checkpoint_" + std::to_string(run++))).string();
      sources::FileSourceOptions options;
      options.path = (dir / "landing").string();
      options.schema =
          "id BIGINT, ts TIMESTAMP, user VARCHAR, kind VARCHAR, amount DOUBLE, payload VARCHAR";
      options.json_decoder = v.decoder;
      options.json_decode_threads = v.threads;
      auto source = sources::FileSource::Open(ctx, options);
      if (!source.ok()) {
        std::fprintf(stderr, "files_json_bench: %s\n", source.status().ToString().c_str());
        return 1;
      }
      sources::ReadLimit all;
      all.all_available = true;
      auto end = (*source)->LatestOffset(std::nullopt, all);
      if (!end.ok() || !*end) {
        std::fprintf(stderr, "files_json_bench: no offset\n");
        return 1;
      }
      const std::string load = LoadAverage();
      const double cpu0 = CpuSeconds();
      const auto t0 = std::chrono::steady_clock::now();
      auto batch = (*source)->GetBatch(std::nullopt, **end);
      const double wall = Seconds(t0);
      const double cpu = CpuSeconds() - cpu0;
      if (!batch.ok()) {
        std::fprintf(stderr, "files_json_bench: %s\n", batch.status().ToString().c_str());
        return 1;
      }
      std::printf(
          "files_json: %-16s rows=%lld getBatch=%.3f s rows_per_s=%.0f cpu=%.3f s "
          "decoded=%d load=%s\n",
          v.name, static_cast<long long>(batch->num_rows()), wall,
          static_cast<double>(batch->num_rows()) / wall, cpu,
          (*source)->last_json_decoded() ? 1 : 0, load.c_str());
    }
  }
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  int64_t rows = 2'000'000;
  int files = 20;
  int reps = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--rows") rows = std::atoll(argv[i + 1]);
    if (flag == "--files") files = std::atoi(argv[i + 1]);
    if (flag == "--reps") reps = std::atoi(argv[i + 1]);
  }
  return sluice::Run(rows, files < 1 ? 1 : files, reps);
}
