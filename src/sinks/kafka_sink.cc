#include "sinks/kafka_sink.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstring>
#include <set>
#include <thread>

#include "common/mutex.h"
#include "common/strings.h"
#include "engine/registered_batch.h"
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

// init_transactions: fences an older producer with the transactional.id and aborts its open
// transaction. Called in slices through WaitUnlessRefused (librdkafka resumes a timed-out call),
// so that a cluster never reached (nothing listening at any bootstrap server) or a broker that
// refuses the client fails at once instead of after the whole delivery timeout; a cluster reached
// once is waited for.
Status InitTransactions(rd_kafka_t* rk, const KafkaSinkOptions& options) {
  rd_kafka_error_t* last = nullptr;
  rd_kafka_resp_err_t err = kafka::WaitUnlessRefused(rk, options.delivery_timeout_ms, [&](int ms) {
    if (last != nullptr) rd_kafka_error_destroy(last);
    const auto start = std::chrono::steady_clock::now();
    last = rd_kafka_init_transactions(rk, ms);
    if (last == nullptr) return RD_KAFKA_RESP_ERR_NO_ERROR;
    // A retriable error is another try (not at once: at most every 100 ms); anything else
    // (fenced, not authorized) is final.
    if (!rd_kafka_error_is_retriable(last)) return rd_kafka_error_code(last);
    const auto spent = std::chrono::steady_clock::now() - start;
    if (spent < std::chrono::milliseconds(100)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100) - spent);
    }
    return RD_KAFKA_RESP_ERR__TIMED_OUT;
  });
  std::string msg = last != nullptr ? rd_kafka_error_string(last) : rd_kafka_err2str(err);
  if (last != nullptr) rd_kafka_error_destroy(last);
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return Status::OK();
  if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN || err == RD_KAFKA_RESP_ERR__AUTHENTICATION) {
    msg = rd_kafka_err2str(err);
  }
  return kafka::WithKafkaClientFailure(
      rk, Status::IOError("kafka sink: starting transactions for transactional.id '" +
                          *options.transactional_id + "': " + msg));
}

// The `headers` column must be Spark's ARRAY<STRUCT<key STRING, value BINARY>>; a VARCHAR value
// (its UTF-8 bytes) is taken too, and a column of NULLs (type NULL, NULL[]).
Status CheckHeadersType(const std::string& ctx, const engine::DataType& type) {
  if (type.id == engine::TypeId::kNull) return Status::OK();
  bool ok = type.id == engine::TypeId::kList && type.children.size() == 1;
  if (ok) {
    const engine::DataType& element = type.children[0].type;
    if (element.id != engine::TypeId::kNull) {
      ok = element.id == engine::TypeId::kStruct && element.children.size() == 2 &&
           AsciiLower(element.children[0].name) == "key" &&
           AsciiLower(element.children[1].name) == "value" &&
           element.children[0].type.id == engine::TypeId::kVarchar &&
           (element.children[1].type.id == engine::TypeId::kBlob ||
            element.children[1].type.id == engine::TypeId::kVarchar ||
            element.children[1].type.id == engine::TypeId::kNull);
    }
  }
  if (ok) return Status::OK();
  return Status::InvalidArgument(
      ctx +
      ": column 'headers' must be a list of STRUCT(key VARCHAR, value BLOB) (Spark's "
      "ARRAY<STRUCT<key: STRING, value: BINARY>>), not " +
      type.ToSql());
}

// The headers of one record from its text field (see ProduceRecords); nullptr for none. The
// caller owns the result. `row` counts from 0 within the batch.
Result<rd_kafka_headers_t*> DecodeHeaders(const std::string& ctx, std::string_view field,
                                          int64_t row) {
  if (field == "~" || field.empty()) return nullptr;
  size_t count = 1 + static_cast<size_t>(std::count(field.begin(), field.end(), '|'));
  rd_kafka_headers_t* hdrs = rd_kafka_headers_new(count);
  for (size_t pos = 0; pos <= field.size();) {
    size_t bar = field.find('|', pos);
    if (bar == std::string_view::npos) bar = field.size();
    std::string_view h = field.substr(pos, bar - pos);
    pos = bar + 1;
    size_t colon = h.find(':');
    Result<std::optional<std::string>> name = Status::Internal(ctx + ": bad header text");
    Result<std::optional<std::string>> value = name;
    if (colon != std::string_view::npos) {
      name = Unhex(h.substr(0, colon));
      value = Unhex(h.substr(colon + 1));
    }
    Status st = h == "!" ? Status::InvalidArgument(
                               ctx + ": row " + std::to_string(row) +
                               " has a NULL header or a header with a NULL key in column "
                               "'headers' (a header's key is required; its value may be NULL)")
                : !name.ok()  ? name.status()
                : !value.ok() ? value.status()
                              : Status::OK();
    if (!st.ok()) {
      rd_kafka_headers_destroy(hdrs);
      return st;
    }
    const std::string& key = **name;
    const std::optional<std::string>& v = *value;
    rd_kafka_header_add(hdrs, key.data(), static_cast<ssize_t>(key.size()), v ? v->data() : nullptr,
                        v ? static_cast<ssize_t>(v->size()) : 0);
  }
  return hdrs;
}

}  // namespace

// Lock discipline: mu guards the delivery failures, counted by the delivery callback (inside
// librdkafka's poll and flush) and reset and read by AddBatch; held only for that.
struct KafkaSink::Producer {
  rd_kafka_t* rk = nullptr;
  Mutex mu;
  int64_t failed SLUICE_GUARDED_BY(mu) = 0;
  std::string first_error SLUICE_GUARDED_BY(mu);
  ~Producer() {
    if (rk) {
      rd_kafka_flush(rk, 5000);
      rd_kafka_destroy(rk);
    }
  }
  static void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) return;
    auto* self = static_cast<Producer*>(opaque);
    MutexLock lock(&self->mu);
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
    SLUICE_RETURN_NOT_OK(InitTransactions(producer->rk, options));
  }
  auto sink = std::unique_ptr<KafkaSink>(
      new KafkaSink(std::move(conn), std::move(options), std::move(producer)));
  if (sink->options_.transactional_id) {
    SLUICE_ASSIGN_OR_RETURN(int64_t next, sink->ReadMarkers());
    sink->next_uncommitted_ = next;
    // Batches up to next - 1 are committed to Kafka; the checkpoint must have planned them.
    const std::optional<int64_t> planned = sink->options_.checkpoint_last_planned_batch;
    if (planned && next > *planned + 1) {
      return Status::InvalidArgument(
          "kafka sink: kafka.transactional.id '" + *sink->options_.transactional_id +
          "' has committed batches up to " + std::to_string(next - 1) +
          " to Kafka, but the query's checkpoint " +
          (*planned < 0 ? std::string("has planned none")
                        : "has planned only up to batch " + std::to_string(*planned)) +
          ": the id belongs to another checkpoint (a new checkpoint, or a flow or sink dropped "
          "and created again?), and its batches would be skipped; give the query a new "
          "kafka.transactional.id");
    }
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
    if (n != "key" && n != "value" && n != "topic" && n != "partition" && n != "headers") {
      return Status::InvalidArgument(ctx + ": column '" + f.name +
                                     "' cannot be written to Kafka (the columns are value, and "
                                     "optionally key, topic, partition, headers)");
    }
    if (n == "headers") SLUICE_RETURN_NOT_OK(CheckHeadersType(ctx, f.type));
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
  // Headers: "~" for a NULL list (no headers), else "<hex key>:<hex value or ~>" per element
  // joined by '|' (empty: none); "!" marks a NULL element or key (refused below).
  std::string headers = "'~'";
  const engine::Field* headers_field = nullptr;
  for (const auto& f : data.schema()) {
    if (AsciiLower(f.name) == "headers") headers_field = &f;
  }
  if (headers_field != nullptr && headers_field->type.id == engine::TypeId::kList &&
      headers_field->type.children[0].type.id == engine::TypeId::kNull) {
    // A list of NULL elements only (e.g. []): empty is no headers, any element is refused.
    headers = "CASE WHEN headers IS NULL THEN '~' WHEN len(headers) = 0 THEN '' ELSE '!' END";
  } else if (headers_field != nullptr && headers_field->type.id == engine::TypeId::kList) {
    headers =
        "CASE WHEN headers IS NULL THEN '~' ELSE coalesce(array_to_string(list_transform(headers, "
        "lambda h: CASE WHEN h IS NULL OR h.key IS NULL THEN '!' ELSE hex(h.key) || ':' || "
        "coalesce(hex(h.value), '~') END), '|'), '') END";
  }
  // One cell per kRowsPerCell rows: "topic,key,value,partition,headers;" records (hex, ~ for
  // NULL).
  auto cells = engine::QueryOver(
      conn_.get(), kView, data,
      "SELECT string_agg(" + topic + " || ',' || " + key + " || ',' || " + value + " || ',' || " +
          partition + " || ',' || " + headers +
          " || ';', '' ORDER BY rn) FROM (SELECT *, row_number() OVER () - 1 AS rn FROM " + kView +
          ") GROUP BY rn // " + std::to_string(kRowsPerCell) + " ORDER BY rn // " +
          std::to_string(kRowsPerCell));
  if (!cells.ok()) return cells.status().WithContext(ctx);
  // A NULL header or header key fails the batch before any of its records is produced.
  for (int64_t c = 0; c < cells->num_rows(); ++c) {
    std::string text = cells->GetString(c, 0).value_or("");
    if (size_t bad = text.find('!'); bad != std::string::npos) {
      const int64_t row = c * kRowsPerCell + std::count(text.begin(), text.begin() + bad, ';');
      SLUICE_ASSIGN_OR_RETURN(rd_kafka_headers_t * none, DecodeHeaders(ctx, "!", row));
      (void)none;  // DecodeHeaders("!") always fails
    }
  }
  {
    MutexLock lock(&producer_->mu);
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
      std::string_view f[5];
      size_t start = 0;
      for (int i = 0; i < 5; ++i) {
        size_t comma = i < 4 ? rec.find(',', start) : rec.size();
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
        // librdkafka owns the headers once the record is queued; until then they are ours.
        SLUICE_ASSIGN_OR_RETURN(rd_kafka_headers_t * hdrs, DecodeHeaders(ctx, f[4], produced));
        rd_kafka_resp_err_t err = rd_kafka_producev(
            producer_->rk, RD_KAFKA_V_TOPIC(t->c_str()), RD_KAFKA_V_PARTITION(part),
            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_KEY(key_ptr, key_len),
            RD_KAFKA_V_VALUE(value_ptr, value_len), RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_END);
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR && hdrs != nullptr) rd_kafka_headers_destroy(hdrs);
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
  MutexLock lock(&producer_->mu);
  if (producer_->failed > 0) {
    return Status::IOError(ctx + ": " + std::to_string(producer_->failed) + " of " +
                           std::to_string(produced) +
                           " records were not delivered; first error: " + producer_->first_error);
  }
  return produced;
}

}  // namespace sluice::sinks
