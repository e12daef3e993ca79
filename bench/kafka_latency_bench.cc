// End-to-end latency of Kafka -> Delta (issue 6): from the moment a record is produced to the
// moment it is visible in the Delta table, at a steady input rate with the default trigger.
//
// A producer thread writes ~300-byte JSON events into a topic of librdkafka's mock cluster (in
// this process) at --rate events/s for --seconds; a streaming query started through the C++ API
// (Format("kafka") -> SelectExpr -> ToTable, default trigger: the next batch as soon as the last
// one ended and data is there) appends them to a Delta table with the change data feed on. Each
// record carries its produce time (the Kafka CreateTime timestamp, set by the producer when the
// record is handed to it); each row's visibility time is the commit timestamp of the Delta
// version that added it (`_commit_timestamp` of table_changes, taken just before the commit file
// is written). Latency = commit timestamp - produce time, in ms; the first --warmup seconds are
// left out.
//
// Usage: kafka_latency_bench [--rate 10000] [--seconds 20] [--warmup 3] [--partitions 8]
// The mock cluster keeps only ~5 MiB per partition: rate * seconds * 300 B / partitions must stay
// below that.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "sluice/sluice.h"
#include "sources/kafka/test_cluster.h"
#include "sql/session.h"

namespace {

int Fail(const sluice::Status& st, const char* what) {
  std::fprintf(stderr, "kafka_latency_bench: %s: %s\n", what, st.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t rate = 10000, seconds = 20, warmup = 3, partitions = 8;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--rate")) rate = std::atoll(argv[i + 1]);
    if (!std::strcmp(argv[i], "--seconds")) seconds = std::atoll(argv[i + 1]);
    if (!std::strcmp(argv[i], "--warmup")) warmup = std::atoll(argv[i + 1]);
    if (!std::strcmp(argv[i], "--partitions")) partitions = std::atoll(argv[i + 1]);
  }
  sluice::sources::kafka::testing::KafkaTestCluster cluster;
  cluster.CreateTopic("events", static_cast<int>(partitions));
  const std::string dir =
      (std::filesystem::temp_directory_path() / "sluice-kafka-latency-bench").string();
  std::filesystem::remove_all(dir);

  auto session = sluice::Session::Open({.warehouse = dir});
  if (!session.ok()) return Fail(session.status(), "opening the session");
  sluice::Status created =
      (*session)
          ->Sql(
              "SELECT CAST(NULL AS TIMESTAMPTZ) AS produced, CAST(NULL AS VARCHAR) AS v "
              "WHERE false")
          .Write()
          .Option("delta.enableChangeDataFeed", "true")
          .SaveAsTable("events");
  if (!created.ok()) return Fail(created, "creating the table");
  auto query = (*session)
                   ->ReadStream()
                   .Format("kafka")
                   .Option("kafka.bootstrap.servers", cluster.bootstrap())
                   .Option("subscribe", "events")
                   .Option("startingOffsets", "earliest")
                   .Load()
                   .SelectExpr({"`timestamp` AS produced", "decode(value) AS v"})
                   .WriteStream()
                   .QueryName("kafka_latency")
                   .ToTable("events");
  if (!query.ok()) return Fail(query.status(), "starting the query");

  // Produce at the rate, in 1 ms slots.
  const std::string pad(200, 'x');
  const auto start = std::chrono::steady_clock::now();
  int64_t produced = 0;
  const int64_t total = rate * seconds;
  while (produced < total) {
    auto now = std::chrono::steady_clock::now();
    int64_t due = std::min<int64_t>(
        total, rate * std::chrono::duration_cast<std::chrono::microseconds>(now - start).count() /
                   1000000);
    for (; produced < due; ++produced) {
      std::string v = "{\"id\":" + std::to_string(produced) + ",\"customer\":\"c" +
                      std::to_string(produced % 997) +
                      "\",\"amount\":12.5,\"ts\":\"2026-11-30T10:00:00Z\",\"pad\":\"" + pad + "\"}";
      cluster.Produce("events", static_cast<int>(produced % partitions), std::nullopt, v);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  cluster.Flush();
  sluice::Status all = (*query)->ProcessAllAvailable();
  if (!all.ok()) return Fail(all, "draining the query");
  const auto progresses = (*query)->RecentProgress();
  sluice::Status stopped = (*query)->Stop();
  if (!stopped.ok()) return Fail(stopped, "stopping the query");
  query->reset();
  session->reset();

  sluice::sql::SessionOptions options;
  options.warehouse = dir;
  auto sql = sluice::sql::Session::Open(options);
  if (!sql.ok()) return Fail(sql.status(), "opening the SQL session");
  const std::string warm = std::to_string(warmup * 1000);
  auto r = (*sql)->Execute(
      "WITH c AS (SELECT epoch_ms(_commit_timestamp) - epoch_ms(produced) AS ms, produced "
      "FROM table_changes('events', 1)), "
      "w AS (SELECT ms FROM c WHERE epoch_ms(produced) >= (SELECT min(epoch_ms(produced)) FROM c) "
      "+ " +
      warm +
      ") "
      "SELECT count(*), quantile_cont(ms, 0.5), quantile_cont(ms, 0.99), max(ms), "
      "(SELECT count(*) FROM c) FROM w");
  if (!r.ok()) return Fail(r.status(), "computing the latencies");
  std::printf(
      "rate=%lld ev/s seconds=%lld partitions=%lld rows=%s (measured %s after %llds warm-up) "
      "batches=%zu latency_ms p50=%s p99=%s max=%s\n",
      static_cast<long long>(rate), static_cast<long long>(seconds),
      static_cast<long long>(partitions), r->GetString(0, 4).value_or("?").c_str(),
      r->GetString(0, 0).value_or("?").c_str(), static_cast<long long>(warmup), progresses.size(),
      r->GetString(0, 1).value_or("?").c_str(), r->GetString(0, 2).value_or("?").c_str(),
      r->GetString(0, 3).value_or("?").c_str());
  // Where a batch's time goes: the mean of each progress durationMs entry over the batches.
  std::map<std::string, double> sums;
  for (const std::string& p : progresses) {
    nlohmann::json j = nlohmann::json::parse(p, nullptr, false);
    if (j.is_discarded() || !j.contains("durationMs")) continue;
    for (const auto& [k, v] : j["durationMs"].items()) {
      if (v.is_number()) sums[k] += v.get<double>();
    }
  }
  std::printf("mean durationMs per batch:");
  for (const auto& [k, v] : sums) {
    std::printf(" %s=%.1f", k.c_str(), progresses.empty() ? 0.0 : v / progresses.size());
  }
  std::printf("\n");
  return r->GetString(0, 4).value_or("") == std::to_string(total) ? 0 : 1;
}
