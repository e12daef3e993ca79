// End-to-end latency of Kafka -> Delta (issue 6): from the moment a record is produced to the
// moment it is visible in the Delta table, at a steady input rate with the default trigger.
//
// A producer thread writes ~300-byte JSON events into a topic of librdkafka's mock cluster (in
// this process) at --rate events/s for --seconds; a streaming query started through the C++ API
// (Format("kafka") -> SelectExpr -> ToTable, default trigger: the next batch as soon as the last
// one ended and data is there) appends them to a Delta table with the change data feed on. Each
// record carries its produce time (in its key, the wall clock when the record is handed to the
// producer; on the real broker the record's timestamp is the broker's LogAppendTime, a second
// figure from append to visible, which leaves out the producer's batching and the broker's
// append); each row's visibility time is the commit timestamp of the Delta
// version that added it (`_commit_timestamp` of table_changes, taken just before the commit file
// is written). Latency = commit timestamp - produce time, in ms; the first --warmup seconds are
// left out.
//
// Usage: kafka_latency_bench [--rate 10000] [--seconds 20] [--warmup 3] [--partitions 8]
//                            [--per-batch]
// It prints the latency percentiles, then each progress durationMs entry's mean/p50/p99 over the
// query's recent batches (the last 100: RecentProgress; --per-batch: every batch's entries too).
// On the real broker: SLUICE_KAFKA_BOOTSTRAP (test/interop/kafka/with_broker.sh sets it) makes
// the cluster that broker instead of the mock (sources/kafka/test_cluster.h).
// The mock cluster keeps only ~5 MiB per partition: rate * seconds * 300 B / partitions must stay
// below that.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

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
  bool per_batch = false;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--per-batch")) {
      per_batch = true;
    } else if (has_value && !std::strcmp(argv[i], "--rate")) {
      rate = std::atoll(argv[++i]);
    } else if (has_value && !std::strcmp(argv[i], "--seconds")) {
      seconds = std::atoll(argv[++i]);
    } else if (has_value && !std::strcmp(argv[i], "--warmup")) {
      warmup = std::atoll(argv[++i]);
    } else if (has_value && !std::strcmp(argv[i], "--partitions")) {
      partitions = std::atoll(argv[++i]);
    } else {
      std::fprintf(stderr, "kafka_latency_bench: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  sluice::sources::kafka::testing::KafkaTestCluster cluster;
  // On the real broker the records' timestamp is the broker's append time, and the produce time
  // travels in the key: both legs are measured (the mock ignores the topic config: its
  // timestamps are the producer's, the same as the key's).
  cluster.CreateTopic("events", static_cast<int>(partitions),
                      {{"message.timestamp.type", "LogAppendTime"}});
  const std::string dir =
      (std::filesystem::temp_directory_path() / "sluice-kafka-latency-bench").string();
  std::filesystem::remove_all(dir);

  auto session = sluice::Session::Open({.warehouse = dir});
  if (!session.ok()) return Fail(session.status(), "opening the session");
  sluice::Status created =
      (*session)
          ->Sql(
              "SELECT CAST(NULL AS TIMESTAMPTZ) AS appended, CAST(NULL AS BIGINT) AS sent_ms, "
              "CAST(NULL AS VARCHAR) AS v "
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
                   .SelectExpr({"`timestamp` AS appended", "CAST(decode(key) AS BIGINT) AS sent_ms",
                                "decode(value) AS v"})
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
      const int64_t sent_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
      cluster.Produce("events", static_cast<int>(produced % partitions), std::to_string(sent_ms),
                      v);
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
  // ms: produce -> visible (the key's send time); ams: the broker's append -> visible.
  auto r = (*sql)->Execute(
      "WITH c AS (SELECT epoch_ms(_commit_timestamp) - sent_ms AS ms, "
      "epoch_ms(_commit_timestamp) - epoch_ms(appended) AS ams, sent_ms "
      "FROM table_changes('events', 1)), "
      "w AS (SELECT ms, ams FROM c WHERE sent_ms >= (SELECT min(sent_ms) FROM c) + " +
      warm +
      ") "
      "SELECT count(*), quantile_cont(ms, 0.5), quantile_cont(ms, 0.99), max(ms), "
      "(SELECT count(*) FROM c), quantile_cont(ams, 0.5), quantile_cont(ams, 0.99), max(ams) "
      "FROM w");
  if (!r.ok()) return Fail(r.status(), "computing the latencies");
  auto cell = [&](int col) { return r->GetString(0, col).value_or("?"); };
  std::printf(
      "rate=%lld ev/s seconds=%lld partitions=%lld rows=%s (measured %s after %llds warm-up) "
      "batches=%zu latency_ms p50=%s p99=%s max=%s; from the broker's append p50=%s p99=%s "
      "max=%s\n",
      static_cast<long long>(rate), static_cast<long long>(seconds),
      static_cast<long long>(partitions), cell(4).c_str(), cell(0).c_str(),
      static_cast<long long>(warmup), progresses.size(), cell(1).c_str(), cell(2).c_str(),
      cell(3).c_str(), cell(5).c_str(), cell(6).c_str(), cell(7).c_str());
  // Where a batch's time goes: per progress durationMs entry, its mean, p50 and p99 over the
  // batches (with --per-batch, each batch's line too).
  std::map<std::string, std::vector<double>> phases;
  for (const std::string& p : progresses) {
    nlohmann::json j = nlohmann::json::parse(p, nullptr, false);
    if (j.is_discarded() || !j.contains("durationMs")) continue;
    if (per_batch) {
      std::printf("batch %s rows=%s", j.value("batchId", nlohmann::json()).dump().c_str(),
                  j.value("numInputRows", nlohmann::json()).dump().c_str());
    }
    for (const auto& [k, v] : j["durationMs"].items()) {
      if (!v.is_number()) continue;
      phases[k].push_back(v.get<double>());
      if (per_batch) std::printf(" %s=%.0f", k.c_str(), v.get<double>());
    }
    if (per_batch) std::printf("\n");
  }
  auto quantile = [](std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
  };
  std::printf("durationMs per batch (mean/p50/p99 over %zu batches):", progresses.size());
  for (const auto& [k, v] : phases) {
    double sum = 0;
    for (double x : v) sum += x;
    std::printf(" %s=%.1f/%.0f/%.0f", k.c_str(), sum / static_cast<double>(v.size()),
                quantile(v, 0.5), quantile(v, 0.99));
  }
  std::printf("\n");
  return r->GetString(0, 4).value_or("") == std::to_string(total) ? 0 : 1;
}
