#include "sinks/kafka_sink.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstring>
#include <mutex>
#include <set>

#include "common/strings.h"
#include "kafka/kafka_handle.h"
#include "kafka/kafka_log.h"

namespace sluice::sinks {

namespace {

constexpr const char* kView = "__kafka_sink_batch";
constexpr int64_t kRowsPerCell = 4096;

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Decodes a field of the record text: "~" is NULL, anything else hex.
Result<std::optional<std::string>> Unhex(std::string_view s) {
  if (s == "~") return std::optional<std::string>();
  if (s.size() % 2 != 0) return Status::Internal("Kafka sink: odd hex field");
  std::string out(s.size() / 2, '\0');
  for (size_t i = 0; i < out.size(); ++i) {
    int hi = HexValue(s[2 * i]), lo = HexValue(s[2 * i + 1]);
    if (hi < 0 || lo < 0) return Status::Internal("Kafka sink: bad hex field");
    out[i] = static_cast<char>(hi * 16 + lo);
  }
  return std::optional<std::string>(std::move(out));
}

}  // namespace

struct KafkaSink::Producer {
  rd_kafka_t* rk = nullptr;
  std::mutex mu;
  int64_t failed = 0;
  std::string first_error;
  ~Producer() {
    if (rk) {
      rd_kafka_flush(rk, 5000);
      rd_kafka_destroy(rk);
    }
  }
  static void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) return;
    auto* self = static_cast<Producer*>(opaque);
    std::lock_guard<std::mutex> lock(self->mu);
    if (self->failed++ == 0) {
      self->first_error = std::string(rd_kafka_err2str(m->err)) + " (topic " +
                          (m->rkt ? rd_kafka_topic_name(m->rkt) : "?") + ")";
    }
  }
};

Result<KafkaSinkOptions> ParseKafkaSinkOptions(const std::map<std::string, std::string>& options) {
  KafkaSinkOptions out;
  for (const auto& [name, value] : options) {
    std::string lower = AsciiLower(name);
    if (lower == "kafka.transactional.id") {
      if (value.empty()) {
        return Status::InvalidArgument("kafka sink: option 'kafka.transactional.id' is empty");
      }
      out.transactional_id = value;
    } else if (lower.rfind("kafka.", 0) == 0) {
      out.kafka_config[name.substr(6)] = value;
    } else if (lower == "bootstrapservers") {
      out.kafka_config["bootstrap.servers"] = value;
    } else if (lower == "topic") {
      out.topic = value;
    } else if (lower == "transactionmarkertopic") {
      if (value.empty()) {
        return Status::InvalidArgument("kafka sink: option 'transactionMarkerTopic' is empty");
      }
      out.marker_topic = value;
    } else if (lower == "checkpointlocation") {
      // Handled by the query.
    } else {
      return Status::InvalidArgument("kafka sink: unknown option '" + name +
                                     "' (known: kafka.bootstrap.servers and other kafka.* "
                                     "options such as kafka.transactional.id, topic, "
                                     "transactionMarkerTopic)");
    }
  }
  if (!out.kafka_config.count("bootstrap.servers")) {
    return Status::InvalidArgument("kafka sink: option 'kafka.bootstrap.servers' is required");
  }
  return out;
}

KafkaSink::KafkaSink(std::unique_ptr<engine::Connection> conn, KafkaSinkOptions options,
                     std::unique_ptr<Producer> producer)
    : conn_(std::move(conn)), options_(std::move(options)), producer_(std::move(producer)) {}

KafkaSink::~KafkaSink() = default;

Result<std::unique_ptr<KafkaSink>> KafkaSink::Open(engine::Engine* engine,
                                                   KafkaSinkOptions options) {
  if (engine == nullptr) return Status::InvalidArgument("kafka sink needs an engine");
  SLUICE_ASSIGN_OR_RETURN(auto conn, engine->Connect());
  auto producer = std::make_unique<Producer>();
  kafka::KafkaHandleSpec spec;
  spec.type = RD_KAFKA_PRODUCER;
  spec.defaults = {
      {"enable.idempotence", "true"},
      {"acks", "all"},
      {"log_level", "3"},
      {"delivery.timeout.ms", std::to_string(options.delivery_timeout_ms)},
  };
  spec.user = options.kafka_config;
  if (options.transactional_id) {
    spec.user["transactional.id"] = *options.transactional_id;
    spec.user["transaction.timeout.ms"] =
        std::to_string(std::max<int64_t>(60000, options.delivery_timeout_ms + 10000));
  }
  spec.what = "kafka sink";
  spec.configure = [&producer](rd_kafka_conf_t* conf) {
    rd_kafka_conf_set_dr_msg_cb(conf, &Producer::OnDelivery);
    rd_kafka_conf_set_opaque(conf, producer.get());
  };
  SLUICE_ASSIGN_OR_RETURN(producer->rk, kafka::NewKafkaHandle(spec));
  if (options.transactional_id) {
    // Fences an older producer with this id and aborts its open transaction.
    if (rd_kafka_error_t* e = rd_kafka_init_transactions(
            producer->rk, static_cast<int>(options.delivery_timeout_ms))) {
      std::string msg = rd_kafka_error_string(e);
      rd_kafka_error_destroy(e);
      return kafka::WithKafkaClientFailure(
          producer->rk, Status::IOError("kafka sink: starting transactions for transactional.id '" +
                                        *options.transactional_id + "': " + msg));
    }
  }
  auto sink = std::unique_ptr<KafkaSink>(
      new KafkaSink(std::move(conn), std::move(options), std::move(producer)));
  if (sink->options_.transactional_id) {
    SLUICE_ASSIGN_OR_RETURN(int64_t next, sink->ReadMarkers());
    sink->next_uncommitted_ = next;
  }
  return sink;
}

Result<int64_t> KafkaSink::ReadMarkers() {
  const std::string what = Description() + ": reading the transaction markers of '" +
                           *options_.transactional_id + "' in topic " + options_.marker_topic;
  kafka::KafkaHandleSpec spec;
  spec.type = RD_KAFKA_CONSUMER;
  spec.defaults = {{"log_level", "3"},
                   {"group.id", "sluice-sink-markers"},
                   {"enable.auto.commit", "false"},
                   {"enable.partition.eof", "true"},
                   {"isolation.level", "read_committed"}};
  // Connection and security settings apply to the marker reader too; producer ones do not.
  spec.user = kafka::ConnectionSettings(options_.kafka_config);
  spec.what = what;
  SLUICE_ASSIGN_OR_RETURN(rd_kafka_t * rk, kafka::NewKafkaHandle(spec));
  struct Closer {
    rd_kafka_t* rk;
    ~Closer() {
      rd_kafka_assign(rk, nullptr);
      rd_kafka_consumer_close(rk);
      rd_kafka_destroy(rk);
    }
  } closer{rk};
  const int timeout = static_cast<int>(options_.delivery_timeout_ms);
  int64_t low = 0, high = 0;
  rd_kafka_resp_err_t err = kafka::WaitUnlessRefused(rk, timeout, [&](int ms) {
    return rd_kafka_query_watermark_offsets(rk, options_.marker_topic.c_str(), 0, &low, &high, ms);
  });
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return kafka::WithKafkaClientFailure(
        rk, Status::IOError(what + ": " + rd_kafka_err2str(err) +
                            " (create the topic with one partition, or allow auto-creation)"));
  }
  int64_t next = 0;
  if (high <= low) return next;
  rd_kafka_topic_partition_list_t* parts = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(parts, options_.marker_topic.c_str(), 0)->offset = low;
  err = rd_kafka_assign(rk, parts);
  rd_kafka_topic_partition_list_destroy(parts);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    return Status::IOError(what + ": " + rd_kafka_err2str(err));
  const std::string& id = *options_.transactional_id;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout);
  while (true) {
    if (std::chrono::steady_clock::now() > deadline) {
      return Status::IOError(what + ": timed out before the end of the partition");
    }
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 100);
    if (m == nullptr) continue;
    bool eof = m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF;
    Status st;
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR && !eof) {
      st = Status::IOError(what + ": " + rd_kafka_message_errstr(m));
    } else if (!eof && m->key_len == id.size() && std::memcmp(m->key, id.data(), id.size()) == 0) {
      std::string value(static_cast<const char*>(m->payload), m->len);
      int64_t batch = -1;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), batch);
      if (ec != std::errc() || end != value.data() + value.size() || batch < 0) {
        st = Status::Corruption(what + ": the marker at offset " + std::to_string(m->offset) +
                                " is not a batch id: '" + value + "'");
      } else {
        next = batch + 1;
      }
    }
    rd_kafka_message_destroy(m);
    SLUICE_RETURN_NOT_OK(st);
    if (eof) return next;
  }
}

std::optional<int64_t> KafkaSink::NextUncommittedBatch() const { return next_uncommitted_; }

Status KafkaSink::CommitTransaction(const std::string& ctx, BatchId batch_id) {
  const int timeout = static_cast<int>(options_.delivery_timeout_ms);
  const std::string& id = *options_.transactional_id;
  const std::string value = std::to_string(batch_id.value());
  rd_kafka_error_t* e = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_producev(
      producer_->rk, RD_KAFKA_V_TOPIC(options_.marker_topic.c_str()), RD_KAFKA_V_PARTITION(0),
      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_KEY(id.data(), id.size()),
      RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()), RD_KAFKA_V_END);
  std::string msg;
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    msg = std::string("writing the marker to ") + options_.marker_topic + ": " +
          rd_kafka_err2str(err);
  } else {
    e = rd_kafka_commit_transaction(producer_->rk, timeout);
    if (e == nullptr) {
      next_uncommitted_ = batch_id.value() + 1;
      return Status::OK();
    }
    msg = rd_kafka_error_string(e);
    rd_kafka_error_destroy(e);
  }
  if (rd_kafka_error_t* a = rd_kafka_abort_transaction(producer_->rk, timeout)) {
    rd_kafka_error_destroy(a);  // the commit's error is the one to report
  }
  return Status::IOError(ctx + ": committing the Kafka transaction: " + msg);
}

std::string KafkaSink::Description() const {
  return "KafkaSink[" + (options_.topic ? *options_.topic : std::string("topic column")) + "]";
}

Status KafkaSink::AddBatch(BatchId batch_id, const engine::Batch& data, OutputMode mode) {
  (void)mode;  // Spark's Kafka sink writes the rows it gets in every mode
  const std::string ctx = Description() + " batch " + batch_id.ToString();
  if (!next_uncommitted_) {
    SLUICE_ASSIGN_OR_RETURN(last_rows_, ProduceRecords(ctx, data));
    return Status::OK();
  }
  if (batch_id.value() < *next_uncommitted_) {
    last_rows_ = 0;  // committed by an earlier run: a re-run after a crash writes nothing
    return Status::OK();
  }
  if (rd_kafka_error_t* e = rd_kafka_begin_transaction(producer_->rk)) {
    std::string msg = rd_kafka_error_string(e);
    rd_kafka_error_destroy(e);
    return Status::IOError(ctx + ": beginning a Kafka transaction: " + msg);
  }
  Result<int64_t> produced = ProduceRecords(ctx, data);
  if (!produced.ok()) {
    if (rd_kafka_error_t* a = rd_kafka_abort_transaction(
            producer_->rk, static_cast<int>(options_.delivery_timeout_ms))) {
      rd_kafka_error_destroy(a);
    }
    return produced.status();
  }
  SLUICE_RETURN_NOT_OK(CommitTransaction(ctx, batch_id));
  last_rows_ = *produced;
  return Status::OK();
}

Result<int64_t> KafkaSink::ProduceRecords(const std::string& ctx, const engine::Batch& data) {
  // Columns: which ones there are and how to render each as hex.
  std::map<std::string, engine::TypeId> cols;
  for (const auto& f : data.schema()) {
    std::string n = AsciiLower(f.name);
    if (n != "key" && n != "value" && n != "topic" && n != "partition") {
      return Status::InvalidArgument(ctx + ": column '" + f.name +
                                     "' cannot be written to Kafka (the columns are value, and "
                                     "optionally key, topic, partition)");
    }
    cols[n] = f.type.id;
  }
  if (!cols.count("value")) {
    return Status::InvalidArgument(ctx + ": the query must have a 'value' column");
  }
  if (!cols.count("topic") && !options_.topic) {
    return Status::InvalidArgument(
        ctx + ": there is no topic: give the option 'topic' or a 'topic' column");
  }
  auto bytes_expr = [&](const std::string& col) -> Result<std::string> {
    auto it = cols.find(col);
    if (it == cols.end()) return std::string("'~'");
    std::string q = QuoteIdentifier(col);
    if (it->second == engine::TypeId::kBlob) return "coalesce(hex(" + q + "), '~')";
    if (it->second == engine::TypeId::kVarchar) return "coalesce(hex(encode(" + q + ")), '~')";
    return Status::InvalidArgument(ctx + ": column '" + col +
                                   "' must be VARCHAR or BLOB (cast it, e.g. to_json(...))");
  };
  std::string partition = "'~'";
  if (auto it = cols.find("partition"); it != cols.end()) {
    partition = "coalesce(CAST(CAST(\"partition\" AS INTEGER) AS VARCHAR), '~')";
  }
  SLUICE_ASSIGN_OR_RETURN(std::string key, bytes_expr("key"));
  SLUICE_ASSIGN_OR_RETURN(std::string value, bytes_expr("value"));
  std::string topic = "'~'";
  if (!options_.topic) {
    SLUICE_ASSIGN_OR_RETURN(topic, bytes_expr("topic"));
  }
  SLUICE_RETURN_NOT_OK_CTX(conn_->RegisterBatch(kView, data), ctx);
  // One cell per kRowsPerCell rows: "topic,key,value,partition;" records (hex, ~ for NULL).
  auto cells = conn_->Query(
      "SELECT string_agg(" + topic + " || ',' || " + key + " || ',' || " + value + " || ',' || " +
      partition + " || ';', '' ORDER BY rn) FROM (SELECT *, row_number() OVER () - 1 AS rn FROM " +
      kView + ") GROUP BY rn // " + std::to_string(kRowsPerCell) + " ORDER BY rn // " +
      std::to_string(kRowsPerCell));
  (void)conn_->UnregisterBatch(kView);
  if (!cells.ok()) return cells.status().WithContext(ctx);
  {
    std::lock_guard<std::mutex> lock(producer_->mu);
    producer_->failed = 0;
    producer_->first_error.clear();
  }
  int64_t produced = 0;
  for (int64_t c = 0; c < cells->num_rows(); ++c) {
    std::string text = cells->GetString(c, 0).value_or("");
    size_t pos = 0;
    while (pos < text.size()) {
      size_t end = text.find(';', pos);
      if (end == std::string::npos) break;
      std::string_view rec(text.data() + pos, end - pos);
      pos = end + 1;
      std::string_view f[4];
      size_t start = 0;
      for (int i = 0; i < 4; ++i) {
        size_t comma = i < 3 ? rec.find(',', start) : rec.size();
        if (comma == std::string_view::npos) return Status::Internal(ctx + ": bad record text");
        f[i] = rec.substr(start, comma - start);
        start = comma + 1;
      }
      std::optional<std::string> t = options_.topic;
      if (!t) {
        SLUICE_ASSIGN_OR_RETURN(t, Unhex(f[0]));
      }
      if (!t || t->empty()) {
        return Status::InvalidArgument(ctx + ": a row has a NULL or empty topic");
      }
      SLUICE_ASSIGN_OR_RETURN(auto k, Unhex(f[1]));
      SLUICE_ASSIGN_OR_RETURN(auto v, Unhex(f[2]));
      int32_t part = RD_KAFKA_PARTITION_UA;
      if (f[3] != "~") part = static_cast<int32_t>(std::stol(std::string(f[3])));
      void* key_ptr = k ? k->data() : nullptr;
      size_t key_len = k ? k->size() : 0;
      void* value_ptr = v ? v->data() : nullptr;
      size_t value_len = v ? v->size() : 0;
      for (;;) {
        rd_kafka_resp_err_t err = rd_kafka_producev(
            producer_->rk, RD_KAFKA_V_TOPIC(t->c_str()), RD_KAFKA_V_PARTITION(part),
            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_KEY(key_ptr, key_len),
            RD_KAFKA_V_VALUE(value_ptr, value_len), RD_KAFKA_V_END);
        if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
          rd_kafka_poll(producer_->rk, 50);
          continue;
        }
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
          return Status::IOError(ctx + ": producing to topic " + *t + ": " + rd_kafka_err2str(err));
        }
        break;
      }
      ++produced;
    }
  }
  // Ends early when the broker refuses the producer (authentication, TLS), as the Java client's
  // send fails; librdkafka alone would retry until the delivery timeout.
  SLUICE_RETURN_NOT_OK(
      kafka::FlushUnlessRefused(producer_->rk, options_.delivery_timeout_ms + 5000, ctx));
  std::lock_guard<std::mutex> lock(producer_->mu);
  if (producer_->failed > 0) {
    return Status::IOError(ctx + ": " + std::to_string(producer_->failed) + " of " +
                           std::to_string(produced) +
                           " records were not delivered; first error: " + producer_->first_error);
  }
  return produced;
}

}  // namespace sluice::sinks
