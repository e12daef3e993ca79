#include "sources/kafka/kafka_client.h"

#include <librdkafka/rdkafka.h>

#include <chrono>

#include "sinks/kafka_handle.h"

namespace sluice::sources::kafka {

namespace {

std::string Err(rd_kafka_resp_err_t err) { return rd_kafka_err2str(err); }

struct PartitionListDeleter {
  void operator()(rd_kafka_topic_partition_list_t* l) const {
    if (l) rd_kafka_topic_partition_list_destroy(l);
  }
};
using PartitionList = std::unique_ptr<rd_kafka_topic_partition_list_t, PartitionListDeleter>;

}  // namespace

struct KafkaClient::Handle {
  rd_kafka_t* rk = nullptr;
  ~Handle() {
    if (rk) {
      rd_kafka_consumer_close(rk);
      rd_kafka_destroy(rk);
    }
  }
};

KafkaClient::KafkaClient(std::unique_ptr<Handle> handle, int64_t timeout_ms, bool read_headers)
    : handle_(std::move(handle)), timeout_ms_(timeout_ms), read_headers_(read_headers) {}

KafkaClient::~KafkaClient() = default;

Result<std::unique_ptr<KafkaClient>> KafkaClient::Open(const KafkaClientOptions& options) {
  for (const auto& [k, v] : options.config) {
    if (k == "group.id" || k == "enable.auto.commit" || k == "auto.offset.reset") {
      return Status::InvalidArgument("option 'kafka." + k +
                                     "' is not supported: the Kafka source manages it (Spark "
                                     "refuses it too); use groupIdPrefix for the group id");
    }
  }
  sinks::KafkaHandleSpec spec;
  spec.type = RD_KAFKA_CONSUMER;
  // Defaults the source relies on; a user's kafka.* option may override the isolation level.
  spec.defaults = {
      {"group.id", options.group_id},
      {"enable.auto.commit", "false"},
      {"enable.auto.offset.store", "false"},
      {"enable.partition.eof", "true"},
      {"auto.offset.reset", "error"},
      {"isolation.level", "read_uncommitted"},
      {"log_level", "3"},
  };
  spec.user = options.config;
  spec.what = "Kafka consumer";
  auto handle = std::make_unique<Handle>();
  SLUICE_ASSIGN_OR_RETURN(handle->rk, sinks::NewKafkaHandle(spec));
  rd_kafka_poll_set_consumer(handle->rk);
  return std::unique_ptr<KafkaClient>(
      new KafkaClient(std::move(handle), options.timeout_ms, options.read_headers));
}

Result<std::map<std::string, int32_t>> KafkaClient::ListTopics() {
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t err =
      rd_kafka_metadata(handle_->rk, 1, nullptr, &md, static_cast<int>(timeout_ms_));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::IOError("Kafka: listing topics failed: " + Err(err));
  }
  std::map<std::string, int32_t> out;
  for (int i = 0; i < md->topic_cnt; ++i) {
    const rd_kafka_metadata_topic_t& t = md->topics[i];
    std::string name = t.topic;
    if (t.err != RD_KAFKA_RESP_ERR_NO_ERROR || name.rfind("__", 0) == 0) continue;
    out[name] = t.partition_cnt;
  }
  rd_kafka_metadata_destroy(md);
  return out;
}

Result<std::pair<int64_t, int64_t>> KafkaClient::Watermarks(const TopicPartition& tp) {
  int64_t low = 0, high = 0;
  rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
      handle_->rk, tp.topic.c_str(), tp.partition, &low, &high, static_cast<int>(timeout_ms_));
  if (err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ||
      err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION || err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC) {
    return Status::NotFound("Kafka: " + tp.ToString() + " does not exist");
  }
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::IOError("Kafka: querying the offsets of " + tp.ToString() +
                           " failed: " + Err(err));
  }
  return std::make_pair(low, high);
}

Status KafkaClient::ReadRanges(const std::map<TopicPartition, std::pair<int64_t, int64_t>>& ranges,
                               const RecordFn& fn) {
  // All partitions are fetched at once (one fetch session, so the broker's fetch wait is paid
  // once, not per partition); records go to `fn` as they arrive.
  struct Progress {
    int64_t first, end;
    bool done = false;
  };
  std::map<TopicPartition, Progress> parts;
  std::vector<KafkaHeader> headers;  // the current record's, reused
  PartitionList list(rd_kafka_topic_partition_list_new(static_cast<int>(ranges.size())));
  for (const auto& [tp, range] : ranges) {
    if (range.first >= range.second) continue;
    parts[tp] = Progress{range.first, range.second};
    rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(), tp.partition)->offset =
        range.first;
  }
  if (parts.empty()) return Status::OK();
  rd_kafka_resp_err_t err = rd_kafka_assign(handle_->rk, list.get());
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::IOError("Kafka: assigning partitions failed: " + Err(err));
  }
  size_t remaining = parts.size();
  Status st;
  auto last_progress = std::chrono::steady_clock::now();
  auto describe = [](const TopicPartition& tp, const Progress& p) {
    return "offsets [" + std::to_string(p.first) + ", " + std::to_string(p.end) + ") of " +
           tp.ToString();
  };
  while (remaining > 0 && st.ok()) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(handle_->rk, 100);
    auto now = std::chrono::steady_clock::now();
    if (m == nullptr) {
      if (now - last_progress > std::chrono::milliseconds(timeout_ms_)) {
        for (const auto& [tp, p] : parts) {
          if (p.done) continue;
          st = Status::IOError("Kafka: timed out after " + std::to_string(timeout_ms_) +
                               " ms reading " + describe(tp, p) + " (kafkaConsumer.pollTimeoutMs)");
          break;
        }
      }
      continue;
    }
    auto it = m->rkt ? parts.find(TopicPartition{rd_kafka_topic_name(m->rkt), m->partition})
                     : parts.end();
    if (it != parts.end() && !it->second.done) {
      Progress& p = it->second;
      auto finish = [&] {
        p.done = true;
        --remaining;
      };
      if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        // The end of the partition: done once it is at or past `end`. Before `end` the records
        // are on their way, or were not records (transaction markers): keep polling.
        last_progress = now;
        if (m->offset >= p.end) finish();
      } else if (m->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET ||
                 m->err == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE) {
        st = Status::NotFound(
            "Kafka: " + describe(it->first, p) +
            " are no longer available (deleted by retention?): " + rd_kafka_message_errstr(m));
      } else if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        st = Status::IOError("Kafka: reading " + it->first.ToString() + ": " +
                             rd_kafka_message_errstr(m));
      } else {
        last_progress = now;
        if (m->offset >= p.end) {
          finish();
        } else if (m->offset >= p.first) {
          KafkaRecord r;
          r.tp = &it->first;
          r.offset = m->offset;
          r.key = m->key;
          r.key_len = m->key_len;
          r.value = m->payload;
          r.value_len = m->len;
          rd_kafka_timestamp_type_t type;
          r.timestamp_ms = rd_kafka_message_timestamp(m, &type);
          r.timestamp_type = type == RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME ? 1 : 0;
          if (read_headers_) {
            headers.clear();
            rd_kafka_headers_t* hdrs = nullptr;
            if (rd_kafka_message_headers(m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR) {
              const char* name = nullptr;
              const void* value = nullptr;
              size_t size = 0;
              for (size_t h = 0; rd_kafka_header_get_all(hdrs, h, &name, &value, &size) ==
                                 RD_KAFKA_RESP_ERR_NO_ERROR;
                   ++h) {
                headers.push_back(KafkaHeader{name, value, size});
              }
            }
            r.headers = &headers;
          }
          st = fn(r);
          if (m->offset >= p.end - 1) finish();
        }
      }
    } else if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR && m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF &&
               it == parts.end() && !m->rkt) {
      // A client-level error (e.g. all brokers down): report it unless it clears up.
      if (now - last_progress > std::chrono::milliseconds(timeout_ms_)) {
        st = Status::IOError(std::string("Kafka: ") + rd_kafka_message_errstr(m));
      }
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_assign(handle_->rk, nullptr);
  return st;
}

}  // namespace sluice::sources::kafka
