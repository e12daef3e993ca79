#include "sources/kafka/kafka_client.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <set>
#include <string_view>
#include <thread>
#include <vector>

#include "kafka/kafka_handle.h"
#include "kafka/kafka_log.h"

namespace sluice::sources::kafka {

namespace {

std::string Err(rd_kafka_resp_err_t err) { return rd_kafka_err2str(err); }

struct PartitionListDeleter {
  void operator()(rd_kafka_topic_partition_list_t* l) const {
    if (l) rd_kafka_topic_partition_list_destroy(l);
  }
};
using PartitionList = std::unique_ptr<rd_kafka_topic_partition_list_t, PartitionListDeleter>;

// True for the answers of a cluster whose partition leadership is moving (a broker restarted and
// does not lead its partitions yet): asked again, as the Java client retries them.
bool LeaderMoving(rd_kafka_resp_err_t err) {
  return err == RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION ||
         err == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE ||
         err == RD_KAFKA_RESP_ERR_NOT_COORDINATOR ||
         err == RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE ||
         // A broker that restarted: the client's leader epoch is older than the broker's
         // (interop/kafka/broker_restart saw "Leader epoch is older than broker epoch" from the
         // batched ListOffsets), or the new leader has no high watermark yet. The Java client
         // retries all three after a metadata refresh.
         err == RD_KAFKA_RESP_ERR_FENCED_LEADER_EPOCH ||
         err == RD_KAFKA_RESP_ERR_UNKNOWN_LEADER_EPOCH ||
         err == RD_KAFKA_RESP_ERR_OFFSET_NOT_AVAILABLE;
}

// Runs a metadata or offset query through sluice::kafka::WaitUnlessRefused, and while no broker
// can be reached (a broker restarting: librdkafka answers at once with a transport error instead
// of waiting for it), or while a partition's leader is moving (LeaderMoving), asks again every
// 250 ms until `timeout_ms` has passed, as the Java client waits for its brokers. Not kept waiting:
// a client the broker refused (a SASL/TLS failure logged in the last 60 s), a client that has never
// reached any of its bootstrap servers (nothing listens there:
// RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN), and a cancelled query (RD_KAFKA_RESP_ERR__INTR once
// `cancelled` is set).
rd_kafka_resp_err_t QueryWaitingForBrokers(rd_kafka_t* rk, int64_t timeout_ms,
                                           const std::atomic<bool>& cancelled,
                                           const std::function<rd_kafka_resp_err_t(int)>& op) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  auto is_cancelled = [&] { return cancelled.load(); };
  for (;;) {
    int64_t left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    rd_kafka_resp_err_t err =
        sluice::kafka::WaitUnlessRefused(rk, std::max<int64_t>(0, left), op, is_cancelled);
    if (LeaderMoving(err)) {
      // A broker that restarted answers before it leads its partitions again.
      if (cancelled.load()) return RD_KAFKA_RESP_ERR__INTR;
      if (Clock::now() + std::chrono::milliseconds(250) >= deadline) return err;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      continue;
    }
    if (err != RD_KAFKA_RESP_ERR__TRANSPORT && err != RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN) {
      return err;
    }
    if (sluice::kafka::KafkaClusterUnreachable(rk, nullptr)) {
      return RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN;
    }
    sluice::kafka::KafkaSecurityFailure refused = sluice::kafka::KafkaSecurityFailures(rk);
    if (refused.count > 0 && Clock::now() - refused.last_time < std::chrono::seconds(60)) {
      return err;
    }
    if (Clock::now() + std::chrono::milliseconds(250) >= deadline) return err;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

// The error of a failed query: Cancelled when the query was interrupted, else IOError with the
// reason librdkafka's log gave (kafka_log.h).
Status QueryFailed(rd_kafka_t* rk, rd_kafka_resp_err_t err, const std::string& what) {
  if (err == RD_KAFKA_RESP_ERR__INTR) {
    return Status::Cancelled("Kafka: " + what + " interrupted: the query is stopping");
  }
  return sluice::kafka::WithKafkaClientFailure(
      rk, Status::IOError("Kafka: " + what + " failed: " + Err(err)));
}

// Asks the cluster for `topic`'s metadata, which updates the handle's cache (a consumer's
// request never creates the topic). Waits like every query here (QueryWaitingForBrokers): up to
// `timeout_ms`, and no longer once `cancelled` is set (a stopping query).
void RefreshTopicMetadata(rd_kafka_t* rk, const std::string& topic, int64_t timeout_ms,
                          const std::atomic<bool>& cancelled) {
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  if (!rkt) return;
  const rd_kafka_metadata_t* md = nullptr;
  if (QueryWaitingForBrokers(rk, timeout_ms, cancelled, [&](int ms) {
        return rd_kafka_metadata(rk, 0, rkt, &md, ms);
      }) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    rd_kafka_metadata_destroy(md);
  }
  rd_kafka_topic_destroy(rkt);
}

// True for a partition's error in a ListOffsets answer that is about the partition itself (it
// does not exist, or the handle's metadata does not know it yet): asked again alone, where
// Watermarks refreshes the metadata or reports it gone.
bool PartitionUnknown(rd_kafka_resp_err_t err) {
  return err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ||
         err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION || err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC;
}

// One admin ListOffsets request for `partitions` at `spec` (RD_KAFKA_OFFSET_SPEC_EARLIEST or
// _LATEST) with `isolation`, waiting up to about `timeout_ms` for its answer. Fills `answers`
// with each partition's offset, or its error when the error is PartitionUnknown. Returns the
// error to wait and ask again on, as one Watermarks call would (QueryWaitingForBrokers): the
// request's (its timeout, a transport error, RD_KAFKA_RESP_ERR__NOENT when no partition has a
// known leader), or a partition's other error (a moving leader, a broker that did not answer:
// RD_KAFKA_RESP_ERR__TIMED_OUT for a partition left without an offset).
rd_kafka_resp_err_t ListOffsetsRequest(
    rd_kafka_t* rk, const std::set<TopicPartition>& partitions, int64_t spec,
    rd_kafka_IsolationLevel_t isolation, int timeout_ms,
    std::map<TopicPartition, std::pair<rd_kafka_resp_err_t, int64_t>>* answers) {
  timeout_ms = std::max(timeout_ms, 1);
  PartitionList list(rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size())));
  for (const TopicPartition& tp : partitions) {
    rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(), tp.partition)->offset = spec;
  }
  std::unique_ptr<rd_kafka_AdminOptions_t, void (*)(rd_kafka_AdminOptions_t*)> options(
      rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_LISTOFFSETS), rd_kafka_AdminOptions_destroy);
  char errstr[256];
  if (rd_kafka_AdminOptions_set_request_timeout(options.get(), timeout_ms, errstr,
                                                sizeof(errstr)) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return RD_KAFKA_RESP_ERR__INVALID_ARG;
  }
  rd_kafka_error_t* e = rd_kafka_AdminOptions_set_isolation_level(options.get(), isolation);
  if (e) {
    rd_kafka_error_destroy(e);
    return RD_KAFKA_RESP_ERR__INVALID_ARG;
  }
  // A queue per request: an answer that comes after this call gave up is dropped with it.
  std::unique_ptr<rd_kafka_queue_t, void (*)(rd_kafka_queue_t*)> queue(rd_kafka_queue_new(rk),
                                                                       rd_kafka_queue_destroy);
  rd_kafka_ListOffsets(rk, list.get(), options.get(), queue.get());
  // The request times out by itself after timeout_ms; the margin lets its answer arrive.
  std::unique_ptr<rd_kafka_event_t, void (*)(rd_kafka_event_t*)> ev(
      rd_kafka_queue_poll(queue.get(), timeout_ms + 1000), rd_kafka_event_destroy);
  if (!ev) return RD_KAFKA_RESP_ERR__TIMED_OUT;
  if (rd_kafka_event_error(ev.get()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return rd_kafka_event_error(ev.get());
  }
  const rd_kafka_ListOffsets_result_t* result = rd_kafka_event_ListOffsets_result(ev.get());
  if (!result) return RD_KAFKA_RESP_ERR__BAD_MSG;
  size_t n = 0;
  const rd_kafka_ListOffsetsResultInfo_t** infos = rd_kafka_ListOffsets_result_infos(result, &n);
  answers->clear();
  for (size_t i = 0; i < n; ++i) {
    const rd_kafka_topic_partition_t* p = rd_kafka_ListOffsetsResultInfo_topic_partition(infos[i]);
    TopicPartition tp{p->topic, p->partition};
    if (!partitions.count(tp)) continue;
    if (p->err != RD_KAFKA_RESP_ERR_NO_ERROR && !PartitionUnknown(p->err)) return p->err;
    // No offset and no error: the request to its leader failed (librdkafka leaves the
    // partition's offset unset when a leader's part of the request times out).
    if (p->err == RD_KAFKA_RESP_ERR_NO_ERROR && p->offset < 0) return RD_KAFKA_RESP_ERR__TIMED_OUT;
    (*answers)[tp] = {p->err, p->offset};
  }
  return RD_KAFKA_RESP_ERR_NO_ERROR;
}

// The isolation level the handle was configured with (isolation.level).
rd_kafka_IsolationLevel_t IsolationOf(rd_kafka_t* rk) {
  char value[64];
  size_t size = sizeof(value);
  if (rd_kafka_conf_get(rd_kafka_conf(rk), "isolation.level", value, &size) == RD_KAFKA_CONF_OK &&
      std::string_view(value) == "read_committed") {
    return RD_KAFKA_ISOLATION_LEVEL_READ_COMMITTED;
  }
  return RD_KAFKA_ISOLATION_LEVEL_READ_UNCOMMITTED;
}

}  // namespace

struct KafkaClient::Handle {
  rd_kafka_t* rk = nullptr;  // reads: keeps its assignment (and background fetches) between them
  // Offset queries, and ListTopics once a read has assigned partitions: a second connection,
  // so that they do not queue behind the read handle's fetch requests, which wait up to
  // fetch.wait.max.ms at a partition's end (a broker answers one request of a connection at a
  // time: a metadata request on `rk` took about 500 ms per trigger on the mock cluster). Before
  // the first read, ListTopics runs on `rk` and so opens the read handle's connections.
  rd_kafka_t* query = nullptr;
  // Per partition read since the last (re)assignment. Each partition's records arrive on its own
  // queue (not forwarded to the consumer queue), so a read takes them partition by partition
  // while librdkafka fetches all of them in the background; what was fetched past a read's end
  // stays in librdkafka's queue (bounded by queued.min.messages / queued.max.messages.kbytes per
  // partition) for the next read.
  struct Partition {
    rd_kafka_queue_t* queue = nullptr;
    int64_t next = 0;  // the next read continues here without a seek
    int64_t eof = -1;  // every record below this offset has been taken from `queue`
    // The record taken from `queue` that lies at or past the last read's end (a gap of offsets
    // without records before it): the first record of the next read. Offset >= next.
    rd_kafka_message_t* held = nullptr;
  };
  std::map<TopicPartition, Partition> assigned;

  void DropAll() {
    for (auto& [tp, p] : assigned) {
      if (p.held) rd_kafka_message_destroy(p.held);
      if (p.queue) rd_kafka_queue_destroy(p.queue);
    }
    assigned.clear();
  }
  // Serves the consumer queue (logs, client-level errors); returns the last client-level error.
  std::string DrainConsumerQueue() {
    std::string error;
    while (rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 0)) {
      if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR && m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        error = rd_kafka_message_errstr(m);
      }
      rd_kafka_message_destroy(m);
    }
    return error;
  }
  ~Handle() {
    DropAll();  // partition queues go before the consumer is closed (librdkafka's rule)
    if (rk) {
      rd_kafka_consumer_close(rk);
      rd_kafka_destroy(rk);
    }
    if (query) rd_kafka_destroy(query);
  }
};

void KafkaClient::ResetAssignment() {
  handle_->DropAll();
  rd_kafka_assign(handle_->rk, nullptr);
}

KafkaClient::KafkaClient(std::unique_ptr<Handle> handle, int64_t timeout_ms, bool read_headers)
    : handle_(std::move(handle)), timeout_ms_(timeout_ms), read_headers_(read_headers) {}

KafkaClient::~KafkaClient() = default;

void KafkaClient::Interrupt() { interrupted_.store(true); }

Result<std::unique_ptr<KafkaClient>> KafkaClient::Open(const KafkaClientOptions& options) {
  for (const auto& [k, v] : options.config) {
    if (k == "group.id" || k == "enable.auto.commit" || k == "auto.offset.reset") {
      return Status::InvalidArgument("option 'kafka." + k +
                                     "' is not supported: the Kafka source manages it (Spark "
                                     "refuses it too); use groupIdPrefix for the group id");
    }
  }
  sluice::kafka::KafkaHandleSpec spec;
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
      // Prefetch per partition (each has its own queue, see Handle::Partition); librdkafka's
      // default, 64 MiB, is meant for one queue of all partitions.
      {"queued.max.messages.kbytes", "16384"},
      // How soon a partition whose prefetch queue was full is fetched again: librdkafka does not
      // notice the reader draining the queue and waits this long (its default, 1000 ms, made a
      // 92 000-record batch of 2 partitions wait ~400 ms on the real broker; docs/latency.md).
      {"fetch.queue.backoff.ms", "10"},
  };
  spec.user = options.config;
  spec.what = "Kafka consumer";
  auto handle = std::make_unique<Handle>();
  SLUICE_ASSIGN_OR_RETURN(handle->rk, sluice::kafka::NewKafkaHandle(spec));
  rd_kafka_poll_set_consumer(handle->rk);
  SLUICE_ASSIGN_OR_RETURN(handle->query, sluice::kafka::NewKafkaHandle(spec));
  return std::unique_ptr<KafkaClient>(
      new KafkaClient(std::move(handle), options.timeout_ms, options.read_headers));
}

Result<std::map<std::string, int32_t>> KafkaClient::ListTopics() {
  // After the first read the read handle's connections are open and carry its fetches.
  rd_kafka_t* rk = handle_->assigned.empty() && !read_once_ ? handle_->rk : handle_->query;
  if (rk == handle_->query) rd_kafka_poll(rk, 0);  // drops the handle's queued events
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t err = QueryWaitingForBrokers(rk, timeout_ms_, interrupted_, [&](int ms) {
    return rd_kafka_metadata(rk, 1, nullptr, &md, ms);
  });
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return QueryFailed(rk, err, "listing topics");
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
  rd_kafka_poll(handle_->query, 0);  // drops the query handle's queued events (errors, logs)
  int64_t low = 0, high = 0;
  auto query = [&] {
    return QueryWaitingForBrokers(handle_->query, timeout_ms_, interrupted_, [&](int ms) {
      return rd_kafka_query_watermark_offsets(handle_->query, tp.topic.c_str(), tp.partition, &low,
                                              &high, ms);
    });
  };
  rd_kafka_resp_err_t err = query();
  if (err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION) {
    // The handle's cached metadata predates the partition (partitions were added to the topic;
    // librdkafka refreshes it only every topic.metadata.refresh.interval.ms): refresh, ask again.
    RefreshTopicMetadata(handle_->query, tp.topic, timeout_ms_, interrupted_);
    err = query();
  }
  if (err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ||
      err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION || err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC) {
    return Status::NotFound("Kafka: " + tp.ToString() + " does not exist");
  }
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return QueryFailed(handle_->query, err, "querying the offsets of " + tp.ToString());
  }
  return std::make_pair(low, high);
}

Result<PartitionOffsets> KafkaClient::ListOffsets(const std::set<TopicPartition>& partitions,
                                                  OffsetQuery which) {
  PartitionOffsets out;
  if (partitions.empty()) return out;
  rd_kafka_poll(handle_->query, 0);  // drops the query handle's queued events (errors, logs)
  const bool earliest = which == OffsetQuery::kEarliest;
  const int64_t spec = earliest ? RD_KAFKA_OFFSET_SPEC_EARLIEST : RD_KAFKA_OFFSET_SPEC_LATEST;
  const rd_kafka_IsolationLevel_t isolation = IsolationOf(handle_->query);
  std::map<TopicPartition, std::pair<rd_kafka_resp_err_t, int64_t>> answers;
  rd_kafka_resp_err_t err =
      QueryWaitingForBrokers(handle_->query, timeout_ms_, interrupted_, [&](int ms) {
        return ListOffsetsRequest(handle_->query, partitions, spec, isolation, ms, &answers);
      });
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR && err != RD_KAFKA_RESP_ERR__NOENT) {
    std::string what = std::string(earliest ? "the earliest" : "the latest") + " offsets of " +
                       std::to_string(partitions.size()) + " partition(s) of " +
                       partitions.begin()->topic;
    return QueryFailed(handle_->query, err, "querying " + what);
  }
  // No partition had a known leader (every one unknown, or none with a leader now): each is asked
  // alone, as below.
  if (err == RD_KAFKA_RESP_ERR__NOENT) answers.clear();
  for (const TopicPartition& tp : partitions) {
    auto a = answers.find(tp);
    if (a != answers.end() && a->second.first == RD_KAFKA_RESP_ERR_NO_ERROR) {
      out[tp] = a->second.second;
      continue;
    }
    // Unknown to the batched answer: asked alone, where Watermarks refreshes the metadata
    // (partitions added since it was read) or reports the partition gone.
    auto w = Watermarks(tp);
    if (!w.ok()) {
      if (w.status().IsNotFound()) continue;
      return w.status();
    }
    out[tp] = earliest ? w->first : w->second;
  }
  return out;
}

Status KafkaClient::ReadRanges(const std::map<TopicPartition, std::pair<int64_t, int64_t>>& ranges,
                               const RecordFn& fn) {
  std::map<TopicPartition, std::pair<int64_t, int64_t>> parts;  // the non-empty ranges
  bool continues = true;
  for (const auto& [tp, range] : ranges) {
    if (range.first >= range.second) continue;
    parts.emplace(tp, range);
    auto a = handle_->assigned.find(tp);
    if (a == handle_->assigned.end() || a->second.next != range.first) continues = false;
  }
  if (parts.empty()) return Status::OK();
  handle_->DrainConsumerQueue();  // the handle's events; records are on the partition queues
  // A new assignment takes the empty ranges too, so that an idle partition is fetched from its
  // end and its first new records do not force the next re-assignment.
  if (!continues) SLUICE_RETURN_NOT_OK(Assign(ranges));
  read_once_ = true;
  Status st;
  for (const auto& [tp, range] : parts) {
    st = ReadPartition(tp, range.first, range.second, fn);
    if (!st.ok()) break;
  }
  if (!st.ok()) ResetAssignment();
  return st;
}

Status KafkaClient::Assign(const std::map<TopicPartition, std::pair<int64_t, int64_t>>& parts) {
  // A new assignment of exactly these partitions at their first offsets: librdkafka drops what
  // it fetched for the previous one (its version barrier discards records still queued).
  ResetAssignment();
  ++assignments_;
  PartitionList list(rd_kafka_topic_partition_list_new(static_cast<int>(parts.size())));
  for (const auto& [tp, range] : parts) {
    // The partition's queue stops forwarding to the consumer queue before the fetch starts
    // (librdkafka keeps that choice for the partition), so no record of it goes there.
    rd_kafka_queue_t* q = rd_kafka_queue_get_partition(handle_->rk, tp.topic.c_str(), tp.partition);
    if (!q) {
      ResetAssignment();
      return Status::IOError("Kafka: cannot get the queue of " + tp.ToString());
    }
    rd_kafka_queue_forward(q, nullptr);
    Handle::Partition& p = handle_->assigned[tp];
    p.queue = q;
    p.next = range.first;
    rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(), tp.partition)->offset =
        range.first;
  }
  rd_kafka_resp_err_t err = rd_kafka_assign(handle_->rk, list.get());
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    ResetAssignment();
    return Status::IOError("Kafka: assigning partitions failed: " + Err(err));
  }
  return Status::OK();
}

Status KafkaClient::ReadPartition(const TopicPartition& tp, int64_t first, int64_t end,
                                  const RecordFn& fn) {
  Handle::Partition& p = handle_->assigned.at(tp);
  auto describe = [&] {
    return "offsets [" + std::to_string(first) + ", " + std::to_string(end) + ") of " +
           tp.ToString();
  };
  std::vector<KafkaHeader> headers;  // the current record's, reused
  bool done = false;
  // Takes `m` (a record or event of this partition, in queue order); sets `done` when every
  // offset below `end` has been seen. Ownership of `m` stays with the caller unless it is held.
  auto take = [&](rd_kafka_message_t* m, bool* held) -> Status {
    *held = false;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      // The end of the partition: every record below m->offset has been delivered. Before `end`
      // the records are on their way, or were not records (transaction markers).
      p.eof = std::max(p.eof, m->offset);
      if (m->offset >= end) done = true;
      return Status::OK();
    }
    if (m->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET ||
        m->err == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE) {
      return Status::NotFound(
          "Kafka: " + describe() +
          " are no longer available (deleted by retention?): " + rd_kafka_message_errstr(m));
    }
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return Status::IOError("Kafka: reading " + tp.ToString() + ": " + rd_kafka_message_errstr(m));
    }
    if (m->offset >= end) {  // a gap of offsets without records up to the end: the next read's
      p.held = m;
      *held = true;
      done = true;
      return Status::OK();
    }
    if (m->offset < first) return Status::OK();  // not expected: the fetch starts at `first`
    KafkaRecord r;
    r.tp = &tp;
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
        for (size_t h = 0;
             rd_kafka_header_get_all(hdrs, h, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
             ++h) {
          headers.push_back(KafkaHeader{name, value, size});
        }
      }
      r.headers = &headers;
    }
    if (m->offset >= end - 1) done = true;
    return fn(r);
  };
  // First the record the previous read held, then what the queue has.
  if (p.held) {
    rd_kafka_message_t* m = p.held;
    p.held = nullptr;
    bool held = false;
    Status st = take(m, &held);
    if (!held) rd_kafka_message_destroy(m);
    SLUICE_RETURN_NOT_OK(st);
  }
  if (!done && p.eof >= end) done = true;  // seen to the partition's end past `end` already
  auto last_progress = std::chrono::steady_clock::now();
  while (!done) {
    rd_kafka_message_t* m = rd_kafka_consume_queue(p.queue, 100);
    if (m == nullptr) {
      if (interrupted_.load()) {
        return Status::Cancelled("Kafka: reading " + describe() +
                                 " interrupted: the query is stopping");
      }
      // Nothing for 100 ms: serve the consumer queue (client-level errors such as all brokers
      // down are reported only if nothing arrives for the whole timeout).
      std::string client_error = handle_->DrainConsumerQueue();
      if (std::chrono::steady_clock::now() - last_progress >
          std::chrono::milliseconds(timeout_ms_)) {
        return Status::IOError("Kafka: timed out after " + std::to_string(timeout_ms_) +
                               " ms reading " + describe() + " (kafkaConsumer.pollTimeoutMs)" +
                               (client_error.empty() ? "" : ": " + client_error));
      }
      continue;
    }
    last_progress = std::chrono::steady_clock::now();
    bool held = false;
    Status st = take(m, &held);
    if (!held) rd_kafka_message_destroy(m);
    SLUICE_RETURN_NOT_OK(st);
  }
  p.next = end;
  return Status::OK();
}

}  // namespace sluice::sources::kafka
