// Kafka ingest benchmark (issue 6): JSON events of ~300 bytes in a topic of librdkafka's mock
// cluster -> a streaming table that parses them -> Delta, through SQL (`read_kafka`), one
// REFRESH (AvailableNow). Prints events/s over the REFRESH (fetch, parse, Parquet, commits) and
// the CPU time of the process during it.
//
// Usage: kafka_bench [--events N] [--partitions P] [--batch N]  (maxOffsetsPerTrigger; 0 = none)
// The mock cluster keeps only ~5 MiB per partition: events beyond that are deleted by its
// retention, so N is capped at partitions * 15,000.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "bench_check.h"
#include "sources/kafka/test_cluster.h"
#include "sql/session.h"

using sluice::bench::CpuSeconds;
using sluice::bench::Seconds;

int main(int argc, char** argv) {
  int64_t events = 60000, partitions = 4, batch = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--events")) events = std::atoll(argv[i + 1]);
    if (!std::strcmp(argv[i], "--partitions")) partitions = std::atoll(argv[i + 1]);
    if (!std::strcmp(argv[i], "--batch")) batch = std::atoll(argv[i + 1]);
  }
  events = std::min<int64_t>(events, partitions * 15000);
  sluice::sources::kafka::testing::KafkaTestCluster cluster;
  cluster.CreateTopic("orders", static_cast<int>(partitions));
  std::string pad(170, 'x');
  auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < events; ++i) {
    std::string v = "{\"order_id\":" + std::to_string(i) + ",\"customer\":\"c" +
                    std::to_string(i % 9973) + "\",\"amount\":" + std::to_string(i % 1000) +
                    ".25,\"ts\":\"2026-11-30T10:00:00Z\",\"note\":\"" + pad + "\"}";
    cluster.Produce("orders", static_cast<int>(i % partitions), std::to_string(i), v);
    // The producer's queue holds 100,000 messages: keep under it for large runs.
    if ((i + 1) % 50000 == 0) cluster.Flush();
  }
  cluster.Flush();
  double produce_s = Seconds(t0);

  std::string dir = (std::filesystem::temp_directory_path() / "sluice-kafka-bench").string();
  std::filesystem::remove_all(dir);
  sluice::sql::SessionOptions options;
  options.warehouse = dir;
  auto session = sluice::sql::Session::Open(options);
  if (!session.ok()) {
    std::fprintf(stderr, "%s\n", session.status().ToString().c_str());
    return 1;
  }
  auto run = [&](const std::string& sql) {
    auto r = (*session)->Execute(sql);
    if (!r.ok()) {
      std::fprintf(stderr, "%s: %s\n", sql.c_str(), r.status().ToString().c_str());
      std::exit(1);
    }
    return std::move(*r);
  };
  run("CREATE STREAMING TABLE orders AS SELECT o.order_id, o.customer, o.amount, o.ts, "
      "`partition`, `offset` FROM (SELECT json_transform(decode(value), "
      "'{\"order_id\":\"BIGINT\",\"customer\":\"VARCHAR\",\"amount\":\"DOUBLE\",\"ts\":"
      "\"TIMESTAMPTZ\"}') AS o, `partition`, `offset` FROM STREAM read_kafka(bootstrapServers "
      "=> '" +
      cluster.bootstrap() + "', subscribe => 'orders', startingOffsets => 'earliest'" +
      (batch > 0 ? ", maxOffsetsPerTrigger => " + std::to_string(batch) : std::string()) + "))");
  double cpu0 = CpuSeconds();
  auto t1 = std::chrono::steady_clock::now();
  run("REFRESH STREAMING TABLE orders");
  double secs = Seconds(t1);
  double cpu = CpuSeconds() - cpu0;
  auto count = run("SELECT count(*) FROM orders");
  std::string n = count.GetString(0, 0).value_or("?");
  std::printf(
      "kafka_to_delta: events=%lld partitions=%lld maxOffsetsPerTrigger=%lld rows=%s "
      "seconds=%.3f events_per_s=%.0f cpu_seconds=%.3f events_per_cpu_s=%.0f "
      "(producing into the mock cluster took %.2f s, not counted)\n",
      static_cast<long long>(events), static_cast<long long>(partitions),
      static_cast<long long>(batch), n.c_str(), secs, static_cast<double>(events) / secs, cpu,
      static_cast<double>(events) / cpu, produce_s);
  std::filesystem::remove_all(dir);
  return n == std::to_string(events) ? 0 : 2;
}
