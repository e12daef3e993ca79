// End-to-end latency from Kafka (issue 6, issue 21 section 1): from the moment a record is
// produced to the moment its result is visible, at a steady input rate with the default trigger.
//
// A producer thread writes ~300-byte JSON events into a topic at --rate events/s for --seconds,
// each record's key holding its produce time (the wall clock when the record is handed to the
// producer). A streaming query started through the C++ API (default trigger: the next batch as
// soon as the last one ended and data is there) reads them; --case chooses what it writes:
//   kafka_to_delta (default): SelectExpr -> ToTable, a Delta table with the change data feed on;
//     a row's visibility time is the commit timestamp of the Delta version that added it
//     (`_commit_timestamp` of table_changes, taken just before the commit file is written).
//     On the real broker the input topic's timestamps are the broker's LogAppendTime, a second
//     figure from append to visible (it leaves out the producer's batching and the broker's
//     append; on the mock, which ignores topic configs, the two are the same).
//   stateless: SelectExpr(key, value) -> the Kafka sink with kafka.transactional.id (exactly
//     once: one transaction per batch); a read_committed consumer in this process reads the
//     output topic, and a record's visibility time is when that consumer received it
//     (fetch.wait.max.ms 5 on the consumer, so the measuring consumer adds little).
//   stream_static_join: as stateless, each record joined on its `customer` with a static Delta
//     table of the 997 customers (read in every batch, Spark's stream-static join): one output
//     record per input record, its key the input's.
//   stateful: a windowed count into the same sink, update mode: count(*) and max(produce time)
//     per 1-second tumbling window of the broker's append time and customer (watermark 10 s),
//     so each batch emits one record per group it changed, keyed by the newest produce time in
//     the group. Its latency is per emitted record: receive time - the group's newest produce
//     time (at 10K records/s over 997 customers a group gets ~10 records a second, so a batch's
//     update of a group mostly carries one new record). The run checks that the last count of
//     every group adds up to the records produced.
// Latency = visibility time - produce time, in ms; records produced in the first --warmup
// seconds are left out.
//
// Usage: kafka_latency_bench [--case kafka_to_delta|stateless|stream_static_join|stateful]
//                            [--rate 10000] [--seconds 20] [--warmup 3] [--partitions 8]
//                            [--trigger-ms T] [--kafka-option KEY=VALUE]... [--per-batch] [--json]
// --kafka-option KEY=VALUE: the source's option kafka.KEY (e.g. fetch.queue.backoff.ms=1000,
// librdkafka's default before 89a9fac), repeatable.
// --trigger-ms T: Trigger.ProcessingTime(T ms) (0, as Spark's processingTime 0, starts the next
// batch as soon as the last one ended); without it the default trigger.
// It prints the latency percentiles, then each progress durationMs entry's mean/p50/p99 over the
// query's recent batches (the last 100: RecentProgress; --per-batch: every batch's entries too).
// --json: one JSON object instead, with case, rate, p50_ms, p99_ms, max_ms, rows, measured,
// batches, broker ("real" or "mock"), trigger ("default" or "processingTime <T> ms"),
// trigger_ms (null for the default) and durationMs {entry: {mean, p50, p99}}.
// `sluice bench latency` (bench/latency/README.md) runs it on a broker of its own.
// On the real broker: SLUICE_KAFKA_BOOTSTRAP (test/interop/kafka/with_broker.sh sets it) makes
// the cluster that broker instead of the mock (sources/kafka/test_cluster.h).
// The mock cluster keeps only ~5 MiB per partition: rate * seconds * 300 B / partitions must stay
// below that.
#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "sluice/sluice.h"
#include "sources/kafka/test_cluster.h"
#include "sql/session.h"

namespace {

int Fail(const std::string& what, const std::string& why) {
  std::fprintf(stderr, "kafka_latency_bench: %s: %s\n", what.c_str(), why.c_str());
  return 1;
}
int Fail(const sluice::Status& st, const char* what) { return Fail(what, st.ToString()); }

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// DuckDB's quantile_cont: linear interpolation between the closest ranks.
double QuantileCont(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

// One record of the output topic: the produce time in its key, when it was received, its value.
struct OutputRecord {
  int64_t sent_ms;
  int64_t received_ms;
  std::string value;
};

// The Kafka -> Kafka cases' measuring consumer: reads every partition of `topic` from the
// beginning with read_committed and keeps each record (OutputRecord), until `want` records
// arrived (want < 0: until stopped), or a record keyed `last_key` (>= 0) arrived.
class OutputConsumer {
 public:
  OutputConsumer(const std::string& bootstrap, const std::string& topic, int partitions,
                 int64_t want)
      : want_(want) {
    char err[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    const std::vector<std::pair<const char*, std::string>> settings = {
        {"bootstrap.servers", bootstrap},
        {"group.id", "kafka-latency-bench-reader"},
        {"isolation.level", "read_committed"},
        {"enable.auto.commit", "false"},
        {"fetch.wait.max.ms", "5"},
        {"log_level", "3"},
        {"enable.partition.eof", "false"}};
    for (const auto& [k, v] : settings) {
      if (rd_kafka_conf_set(conf, k, v.c_str(), err, sizeof(err)) != RD_KAFKA_CONF_OK) {
        error_ = err;
      }
    }
    rk_ = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
    if (!rk_) {
      error_ = err;
      return;
    }
    rd_kafka_poll_set_consumer(rk_);
    rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(partitions);
    for (int p = 0; p < partitions; ++p) {
      rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    }
    rd_kafka_assign(rk_, list);
    rd_kafka_topic_partition_list_destroy(list);
    thread_ = std::thread([this] { Run(); });
  }
  ~OutputConsumer() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
    if (rk_) {
      rd_kafka_consumer_close(rk_);
      rd_kafka_destroy(rk_);
    }
  }
  // Waits up to `timeout_ms` for every wanted record (want >= 0), or for a record whose key is
  // `last_key`; true when it came.
  bool Await(int64_t timeout_ms, int64_t last_key = -1) {
    const int64_t deadline = WallMs() + timeout_ms;
    auto done = [&] {
      return want_ >= 0 ? received_.load() >= want_ : max_key_.load() >= last_key;
    };
    while (!done() && WallMs() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return done();
  }
  int64_t received() const { return received_.load(); }
  const std::string& error() const { return error_; }
  // Every record received; call after Await.
  std::vector<OutputRecord> samples() {
    std::lock_guard<std::mutex> l(mu_);
    return samples_;
  }

 private:
  void Run() {
    while (!stop_.load() && (want_ < 0 || received_.load() < want_)) {
      rd_kafka_message_t* m = rd_kafka_consumer_poll(rk_, 100);
      if (!m) continue;
      const int64_t now = WallMs();
      if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR && m->key) {
        const std::string key(static_cast<const char*>(m->key), m->key_len);
        const int64_t sent = std::atoll(key.c_str());
        std::lock_guard<std::mutex> l(mu_);
        samples_.push_back(
            {sent, now,
             m->payload ? std::string(static_cast<const char*>(m->payload), m->len) : ""});
        received_.fetch_add(1);
        if (sent > max_key_.load()) max_key_.store(sent);
      }
      rd_kafka_message_destroy(m);
    }
  }

  rd_kafka_t* rk_ = nullptr;
  int64_t want_;
  std::atomic<int64_t> received_{0};
  std::atomic<int64_t> max_key_{-1};
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<OutputRecord> samples_;
  std::string error_;
  std::thread thread_;
};

struct Latencies {
  int64_t rows = 0;      // records that arrived
  int64_t measured = 0;  // after the warm-up
  int64_t counted = 0;   // stateful: the last counts of the groups, added up
  int64_t groups = 0;    // stateful: the groups (window, customer) emitted
  double p50 = 0, p99 = 0, max = 0;
  // kafka_to_delta on the real broker: from the broker's append time.
  std::optional<double> append_p50, append_p99, append_max;
};

}  // namespace

int main(int argc, char** argv) {
  int64_t rate = 10000, seconds = 20, warmup = 3, partitions = 8, trigger_ms = -1;
  bool per_batch = false, json = false;
  std::string which = "kafka_to_delta";
  std::map<std::string, std::string> kafka_options;  // --kafka-option: the source's kafka.KEY
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--per-batch")) {
      per_batch = true;
    } else if (!std::strcmp(argv[i], "--json")) {
      json = true;
    } else if (has_value && !std::strcmp(argv[i], "--case")) {
      which = argv[++i];
    } else if (has_value && !std::strcmp(argv[i], "--rate")) {
      rate = std::atoll(argv[++i]);
    } else if (has_value && !std::strcmp(argv[i], "--seconds")) {
      seconds = std::atoll(argv[++i]);
    } else if (has_value && !std::strcmp(argv[i], "--warmup")) {
      warmup = std::atoll(argv[++i]);
    } else if (has_value && !std::strcmp(argv[i], "--partitions")) {
      partitions = std::atoll(argv[++i]);
    } else if (has_value && !std::strcmp(argv[i], "--kafka-option")) {
      const std::string kv = argv[++i];
      const size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) {
        std::fprintf(stderr, "kafka_latency_bench: --kafka-option wants KEY=VALUE, got '%s'\n",
                     kv.c_str());
        return 2;
      }
      kafka_options["kafka." + kv.substr(0, eq)] = kv.substr(eq + 1);
    } else if (has_value && !std::strcmp(argv[i], "--trigger-ms")) {
      trigger_ms = std::atoll(argv[++i]);
      if (trigger_ms < 0) {
        std::fprintf(stderr, "kafka_latency_bench: --trigger-ms must be >= 0\n");
        return 2;
      }
    } else {
      std::fprintf(stderr, "kafka_latency_bench: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  if (which != "kafka_to_delta" && which != "stateless" && which != "stream_static_join" &&
      which != "stateful") {
    std::fprintf(stderr,
                 "kafka_latency_bench: --case must be kafka_to_delta, stateless, "
                 "stream_static_join or stateful, got '%s'\n",
                 which.c_str());
    return 2;
  }
  if (rate <= 0 || seconds <= 0 || partitions <= 0 || warmup < 0 || warmup >= seconds) {
    std::fprintf(stderr,
                 "kafka_latency_bench: --rate, --seconds and --partitions must be positive and "
                 "--warmup in [0, --seconds)\n");
    return 2;
  }
  const bool to_delta = which == "kafka_to_delta";
  const bool stateful = which == "stateful";
  const sluice::Trigger trigger =
      trigger_ms < 0 ? sluice::Trigger::Default()
                     : sluice::Trigger::ProcessingTime(std::chrono::milliseconds(trigger_ms));
  const std::string trigger_text =
      trigger_ms < 0 ? "default" : "processingTime " + std::to_string(trigger_ms) + " ms";
  sluice::sources::kafka::testing::KafkaTestCluster cluster;
  const int parts = static_cast<int>(partitions);
  // On the real broker the input records' timestamp is the broker's append time (the mock
  // ignores the topic config).
  cluster.CreateTopic("events", parts, {{"message.timestamp.type", "LogAppendTime"}});
  if (!to_delta) {
    cluster.CreateTopic("out", parts);
    cluster.CreateTopic("sluice-transaction-markers", 1, {{"cleanup.policy", "compact"}});
  }
  const std::string dir =
      (std::filesystem::temp_directory_path() / "sluice-kafka-latency-bench").string();
  std::filesystem::remove_all(dir);
  const int64_t total = rate * seconds;

  auto session = sluice::Session::Open({.warehouse = dir});
  if (!session.ok()) return Fail(session.status(), "opening the session");
  auto reader = (*session)->ReadStream();
  reader.Format("kafka")
      .Options(kafka_options)
      .Option("kafka.bootstrap.servers", cluster.bootstrap())
      .Option("subscribe", "events")
      .Option("startingOffsets", "earliest");
  auto input = reader.Load();
  sluice::Result<std::shared_ptr<sluice::StreamingQuery>> query =
      sluice::Status::Internal("no query started");
  std::unique_ptr<OutputConsumer> consumer;
  if (to_delta) {
    sluice::Status created =
        (*session)
            ->Sql(
                "SELECT CAST(NULL AS TIMESTAMPTZ) AS appended, CAST(NULL AS BIGINT) AS sent_ms, "
                "CAST(NULL AS VARCHAR) AS v WHERE false")
            .Write()
            .Option("delta.enableChangeDataFeed", "true")
            .SaveAsTable("events");
    if (!created.ok()) return Fail(created, "creating the table");
    query = input
                .SelectExpr({"`timestamp` AS appended", "CAST(decode(key) AS BIGINT) AS sent_ms",
                             "decode(value) AS v"})
                .WriteStream()
                .Trigger(trigger)
                .QueryName("kafka_latency")
                .ToTable("events");
  } else {
    // stateful: the emitted records are not known in advance; the run waits for the group of the
    // last record produced.
    consumer =
        std::make_unique<OutputConsumer>(cluster.bootstrap(), "out", parts, stateful ? -1 : total);
    if (!consumer->error().empty()) return Fail("the output consumer", consumer->error());
    sluice::DataFrame output = input.SelectExpr({"key", "value"});
    if (which == "stream_static_join") {
      sluice::Status created =
          (*session)
              ->Sql(
                  "SELECT concat('c', CAST(id AS STRING)) AS customer, "
                  "concat('tier', CAST(id % 5 AS STRING)) AS tier FROM range(997)")
              .Write()
              .SaveAsTable("customers");
      if (!created.ok()) return Fail(created, "creating the static table");
      output = input
                   .SelectExpr({"key", "decode(value) AS v",
                                "get_json_object(decode(value), '$.customer') AS customer"})
                   .Alias("e")
                   .Join((*session)->Table("customers").Alias("c"), "e.customer = c.customer")
                   .SelectExpr({"e.key AS key", "concat(c.tier, ':', e.v) AS value"});
    } else if (stateful) {
      output = input
                   .SelectExpr({"`timestamp` AS ts", "CAST(decode(key) AS BIGINT) AS sent_ms",
                                "get_json_object(decode(value), '$.customer') AS customer"})
                   .WithWatermark("ts", "10 seconds")
                   .GroupBy({"window(ts, '1 second')", "customer"})
                   .Agg({"count(*) AS n", "max(sent_ms) AS newest"})
                   .SelectExpr({"CAST(newest AS STRING) AS key",
                                "concat(CAST(unix_millis(window.start) AS STRING), '|', customer, "
                                "'|', CAST(n AS STRING)) AS value"});
    }
    query = output.WriteStream()
                .Trigger(trigger)
                .OutputMode(stateful ? "update" : "append")
                .Format("kafka")
                .Option("kafka.bootstrap.servers", cluster.bootstrap())
                .Option("topic", "out")
                .Option("kafka.transactional.id", "kafka-latency-bench-" + std::to_string(WallMs()))
                .Option("checkpointLocation", dir + "/checkpoint")
                .QueryName("kafka_latency")
                .Start();
  }
  if (!query.ok()) return Fail(query.status(), "starting the query");

  // Produce at the rate, in 1 ms slots.
  const std::string pad(200, 'x');
  const auto start = std::chrono::steady_clock::now();
  int64_t produced = 0;
  int64_t last_sent = 0;  // the newest produce time (the stateful case waits for its group)
  while (produced < total) {
    auto now = std::chrono::steady_clock::now();
    int64_t due = std::min<int64_t>(
        total, rate * std::chrono::duration_cast<std::chrono::microseconds>(now - start).count() /
                   1000000);
    for (; produced < due; ++produced) {
      std::string v = "{\"id\":" + std::to_string(produced) + ",\"customer\":\"c" +
                      std::to_string(produced % 997) +
                      "\",\"amount\":12.5,\"ts\":\"2026-11-30T10:00:00Z\",\"pad\":\"" + pad + "\"}";
      last_sent = WallMs();
      cluster.Produce("events", static_cast<int>(produced % partitions), std::to_string(last_sent),
                      v);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  cluster.Flush();
  sluice::Status all = (*query)->ProcessAllAvailable();
  if (!all.ok()) return Fail(all, "draining the query");
  if (consumer && !consumer->Await(60000, last_sent)) {
    return Fail("the output consumer",
                stateful ? "no update of the last record's group (key " +
                               std::to_string(last_sent) + ") in 60 s"
                         : "received " + std::to_string(consumer->received()) + " of " +
                               std::to_string(total) + " records in 60 s");
  }
  const auto progresses = (*query)->RecentProgress();
  sluice::Status stopped = (*query)->Stop();
  if (!stopped.ok()) return Fail(stopped, "stopping the query");
  query->reset();
  session->reset();

  Latencies lat;
  if (to_delta) {
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
        "(SELECT count(*) FROM c), quantile_cont(ams, 0.5), quantile_cont(ams, 0.99), "
        "max(ams) FROM w");
    if (!r.ok()) return Fail(r.status(), "computing the latencies");
    auto number = [&](int col) { return std::atof(r->GetString(0, col).value_or("0").c_str()); };
    lat.measured = static_cast<int64_t>(number(0));
    lat.p50 = number(1);
    lat.p99 = number(2);
    lat.max = number(3);
    lat.rows = static_cast<int64_t>(number(4));
    if (cluster.real()) {
      lat.append_p50 = number(5);
      lat.append_p99 = number(6);
      lat.append_max = number(7);
    }
  } else {
    const auto samples = consumer->samples();
    lat.rows = static_cast<int64_t>(samples.size());
    int64_t first = INT64_MAX;
    for (const OutputRecord& r : samples) first = std::min(first, r.sent_ms);
    std::vector<double> ms;
    for (const OutputRecord& r : samples) {
      if (r.sent_ms >= first + warmup * 1000) {
        ms.push_back(static_cast<double>(r.received_ms - r.sent_ms));
      }
    }
    if (stateful) {
      // value = "<window start ms>|<customer>|<count>": the last count of each group (the
      // output topic's partitions are read in parallel, so the largest, counts only grow).
      std::map<std::string, int64_t> counts;
      for (const OutputRecord& r : samples) {
        const size_t bar = r.value.rfind('|');
        if (bar == std::string::npos) return Fail("the output", "bad record '" + r.value + "'");
        int64_t& n = counts[r.value.substr(0, bar)];
        n = std::max<int64_t>(n, std::atoll(r.value.c_str() + bar + 1));
      }
      for (const auto& [group, n] : counts) lat.counted += n;
      lat.groups = static_cast<int64_t>(counts.size());
    }
    lat.measured = static_cast<int64_t>(ms.size());
    lat.p50 = QuantileCont(ms, 0.5);
    lat.p99 = QuantileCont(ms, 0.99);
    lat.max = ms.empty() ? 0 : *std::max_element(ms.begin(), ms.end());
  }

  // Where a batch's time goes: per progress durationMs entry, its mean, p50 and p99 over the
  // batches (with --per-batch, each batch's line too).
  std::map<std::string, std::vector<double>> phases;
  int64_t batches = 0;  // all of the run's batches (progresses holds the last 100 at most)
  for (const sluice::StreamingQueryProgress& p : progresses) {
    nlohmann::json j = nlohmann::json::parse(p.Json(), nullptr, false);
    if (j.is_discarded()) continue;
    if (j.contains("batchId") && j["batchId"].is_number()) {
      batches = std::max<int64_t>(batches, j["batchId"].get<int64_t>() + 1);
    }
    if (!j.contains("durationMs")) continue;
    if (per_batch && !json) {
      std::printf("batch %s rows=%s", j.value("batchId", nlohmann::json()).dump().c_str(),
                  j.value("numInputRows", nlohmann::json()).dump().c_str());
    }
    for (const auto& [k, v] : j["durationMs"].items()) {
      if (!v.is_number()) continue;
      phases[k].push_back(v.get<double>());
      if (per_batch && !json) std::printf(" %s=%.0f", k.c_str(), v.get<double>());
    }
    if (per_batch && !json) std::printf("\n");
  }
  auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    for (double x : v) sum += x;
    return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
  };
  if (json) {
    nlohmann::json out = {
        {"case", which},
        {"rate", rate},
        {"p50_ms", lat.p50},
        {"p99_ms", lat.p99},
        {"max_ms", lat.max},
        {"rows", lat.rows},
        {"measured", lat.measured},
        {"batches", batches},
        {"profiled_batches", progresses.size()},
        {"kafka_options", kafka_options},
        {"broker", cluster.real() ? "real" : "mock"},
        {"partitions", partitions},
        {"seconds", seconds},
        {"trigger", trigger_text},
        {"trigger_ms", trigger_ms < 0 ? nlohmann::json() : nlohmann::json(trigger_ms)}};
    if (stateful) {
      out["groups"] = lat.groups;
      out["counted"] = lat.counted;
    }
    if (lat.append_p50) {
      out["append_p50_ms"] = *lat.append_p50;
      out["append_p99_ms"] = *lat.append_p99;
      out["append_max_ms"] = *lat.append_max;
    }
    for (const auto& [k, v] : phases) {
      out["durationMs"][k] = {
          {"mean", mean(v)}, {"p50", QuantileCont(v, 0.5)}, {"p99", QuantileCont(v, 0.99)}};
    }
    std::printf("%s\n", out.dump().c_str());
  } else {
    std::printf(
        "case=%s broker=%s trigger=%s rate=%lld ev/s seconds=%lld partitions=%lld rows=%lld "
        "(measured %lld after %llds warm-up) batches=%lld latency_ms p50=%.1f p99=%.1f max=%.0f",
        which.c_str(), cluster.real() ? "real" : "mock", trigger_text.c_str(),
        static_cast<long long>(rate), static_cast<long long>(seconds),
        static_cast<long long>(partitions), static_cast<long long>(lat.rows),
        static_cast<long long>(lat.measured), static_cast<long long>(warmup),
        static_cast<long long>(batches), lat.p50, lat.p99, lat.max);
    if (lat.append_p50) {
      std::printf("; from the broker's append p50=%.1f p99=%.1f max=%.0f", *lat.append_p50,
                  *lat.append_p99, *lat.append_max);
    }
    std::printf("\ndurationMs per batch (mean/p50/p99 over %zu batches):", progresses.size());
    for (const auto& [k, v] : phases) {
      std::printf(" %s=%.1f/%.0f/%.0f", k.c_str(), mean(v), QuantileCont(v, 0.5),
                  QuantileCont(v, 0.99));
    }
    std::printf("\n");
  }
  if (stateful && lat.counted != total) {
    std::fprintf(stderr, "kafka_latency_bench: the groups' counts add up to %lld, produced %lld\n",
                 static_cast<long long>(lat.counted), static_cast<long long>(total));
    return 1;
  }
  return (stateful ? lat.counted : lat.rows) == total ? 0 : 1;
}
