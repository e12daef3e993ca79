#include "sinks/kafka_sink.h"

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <mutex>
#include <set>

#include "common/strings.h"

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
    if (lower.rfind("kafka.", 0) == 0) {
      out.kafka_config[name.substr(6)] = value;
    } else if (lower == "bootstrapservers") {
      out.kafka_config["bootstrap.servers"] = value;
    } else if (lower == "topic") {
      out.topic = value;
    } else if (lower == "checkpointlocation") {
      // Handled by the query.
    } else {
      return Status::InvalidArgument("kafka sink: unknown option '" + name +
                                     "' (known: kafka.bootstrap.servers and other kafka.* "
                                     "options, topic)");
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
  char errstr[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  std::map<std::string, std::string> settings = {
      {"enable.idempotence", "true"},
      {"acks", "all"},
      {"log_level", "3"},
      {"delivery.timeout.ms", std::to_string(options.delivery_timeout_ms)},
  };
  for (const auto& [k, v] : options.kafka_config) settings[k] = v;
  for (const auto& [k, v] : settings) {
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), errstr, sizeof(errstr)) !=
        RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      // The value is not repeated: it may be a secret.
      return Status::InvalidArgument("kafka sink: option 'kafka." + k + "': " + errstr);
    }
  }
  rd_kafka_conf_set_dr_msg_cb(conf, &Producer::OnDelivery);
  rd_kafka_conf_set_opaque(conf, producer.get());
  producer->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
  if (producer->rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    return Status::InvalidArgument(std::string("kafka sink: ") + errstr);
  }
  return std::unique_ptr<KafkaSink>(
      new KafkaSink(std::move(conn), std::move(options), std::move(producer)));
}

std::string KafkaSink::Description() const {
  return "KafkaSink[" + (options_.topic ? *options_.topic : std::string("topic column")) + "]";
}

Status KafkaSink::AddBatch(BatchId batch_id, const engine::Batch& data, OutputMode mode) {
  (void)mode;  // Spark's Kafka sink writes the rows it gets in every mode
  const std::string ctx = Description() + " batch " + batch_id.ToString();
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
  rd_kafka_resp_err_t flushed =
      rd_kafka_flush(producer_->rk, static_cast<int>(options_.delivery_timeout_ms + 5000));
  if (flushed != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::IOError(ctx + ": records not delivered in time: " + rd_kafka_err2str(flushed));
  }
  std::lock_guard<std::mutex> lock(producer_->mu);
  if (producer_->failed > 0) {
    return Status::IOError(ctx + ": " + std::to_string(producer_->failed) + " of " +
                           std::to_string(produced) +
                           " records were not delivered; first error: " + producer_->first_error);
  }
  last_rows_ = produced;
  return Status::OK();
}

}  // namespace sluice::sinks
