#include "sources/kafka/test_cluster.h"

#include <chrono>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <thread>

namespace sluice::sources::kafka::testing {

namespace {

constexpr int kAdminTimeoutMs = 30000;
constexpr auto kAwait = std::chrono::seconds(30);

[[noreturn]] void Fail(const std::string& what) {
  throw std::runtime_error("KafkaTestCluster: " + what);
}

// A mock call's answer: anything but NO_ERROR fails, naming the call.
void Check(rd_kafka_resp_err_t err, const std::string& what) {
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) Fail(what + ": " + rd_kafka_err2str(err));
}

// Delivery reports: a failed delivery is kept (as the producer's opaque) for Flush to report.
void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
  if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    static_cast<std::string*>(opaque)->assign(rd_kafka_err2str(m->err));
  }
}

rd_kafka_t* NewProducer(const std::string& bootstrap, std::string* delivery_error) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set_dr_msg_cb(conf, OnDelivery);
  rd_kafka_conf_set_opaque(conf, delivery_error);
  if (rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), err, sizeof(err)) !=
          RD_KAFKA_CONF_OK ||
      rd_kafka_conf_set(conf, "log_level", "3", err, sizeof(err)) != RD_KAFKA_CONF_OK) {
    rd_kafka_conf_destroy(conf);
    Fail(err);
  }
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
  if (!rk) Fail(std::string("creating the producer: ") + err);
  return rk;
}

// Every host of a "host:port,..." list is on loopback.
bool IsLoopback(const std::string& bootstrap) {
  size_t start = 0;
  while (start <= bootstrap.size()) {
    size_t comma = bootstrap.find(',', start);
    std::string server = bootstrap.substr(start, comma - start);
    std::string host = server.substr(0, server.rfind(':'));
    if (host.rfind("127.", 0) != 0 && host != "localhost" && host != "[::1]") return false;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return true;
}

struct QueueDeleter {
  void operator()(rd_kafka_queue_t* q) const { rd_kafka_queue_destroy(q); }
};
struct EventDeleter {
  void operator()(rd_kafka_event_t* e) const { rd_kafka_event_destroy(e); }
};
struct OptionsDeleter {
  void operator()(rd_kafka_AdminOptions_t* o) const { rd_kafka_AdminOptions_destroy(o); }
};
using Queue = std::unique_ptr<rd_kafka_queue_t, QueueDeleter>;
using Event = std::unique_ptr<rd_kafka_event_t, EventDeleter>;
using Options = std::unique_ptr<rd_kafka_AdminOptions_t, OptionsDeleter>;

Options AdminOptions(rd_kafka_t* rk, rd_kafka_admin_op_t op) {
  Options o(rd_kafka_AdminOptions_new(rk, op));
  char err[256];
  rd_kafka_AdminOptions_set_request_timeout(o.get(), kAdminTimeoutMs, err, sizeof(err));
  if (op != RD_KAFKA_ADMIN_OP_DELETERECORDS) {
    rd_kafka_AdminOptions_set_operation_timeout(o.get(), kAdminTimeoutMs, err, sizeof(err));
  }
  return o;
}

// Waits for the admin result of `type` on `q`; fails on a request-level error.
Event AwaitResult(rd_kafka_queue_t* q, rd_kafka_event_type_t type, const std::string& what) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(2 * kAdminTimeoutMs);
  while (std::chrono::steady_clock::now() < deadline) {
    Event ev(rd_kafka_queue_poll(q, 1000));
    if (!ev || rd_kafka_event_type(ev.get()) != type) continue;
    if (rd_kafka_event_error(ev.get()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      Fail(what + ": " + rd_kafka_event_error_string(ev.get()));
    }
    return ev;
  }
  Fail(what + ": no answer within " + std::to_string(2 * kAdminTimeoutMs) + " ms");
}

}  // namespace

std::string RealKafkaBootstrap() {
  const char* v = std::getenv("SLUICE_KAFKA_BOOTSTRAP");
  return v ? std::string(v) : std::string();
}

KafkaTestCluster::KafkaTestCluster(int brokers) {
  bootstrap_ = RealKafkaBootstrap();
  if (bootstrap_.empty()) {
    char err[256];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "log_level", "3", err, sizeof(err));
    owner_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
    if (!owner_) Fail(err);
    cluster_ = rd_kafka_mock_cluster_new(owner_, brokers);
    if (!cluster_) Fail("rd_kafka_mock_cluster_new failed");
    bootstrap_ = rd_kafka_mock_cluster_bootstraps(cluster_);
    producer_ = NewProducer(bootstrap_, &delivery_error_);
    return;
  }
  if (!IsLoopback(bootstrap_)) {
    Fail("SLUICE_KAFKA_BOOTSTRAP=" + bootstrap_ +
         " must name a test broker on loopback (the tests delete its topics)");
  }
  producer_ = NewProducer(bootstrap_, &delivery_error_);
  std::vector<std::string> topics;
  for (const auto& [name, partitions] : ListTopics()) topics.push_back(name);
  DeleteTopics(topics);
}

KafkaTestCluster::~KafkaTestCluster() {
  rd_kafka_flush(producer_, 10000);
  rd_kafka_destroy(producer_);
  if (cluster_) rd_kafka_mock_cluster_destroy(cluster_);
  if (owner_) rd_kafka_destroy(owner_);
}

std::map<std::string, int> KafkaTestCluster::ListTopics() {
  const rd_kafka_metadata_t* md = nullptr;
  // All topics: asking for one topic by name would auto-create it.
  rd_kafka_resp_err_t err = rd_kafka_metadata(producer_, 1, nullptr, &md, kAdminTimeoutMs);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    Fail(std::string("listing the topics of ") + bootstrap_ + ": " + rd_kafka_err2str(err));
  }
  std::map<std::string, int> out;
  for (int i = 0; i < md->topic_cnt; ++i) {
    const rd_kafka_metadata_topic_t& t = md->topics[i];
    std::string name = t.topic;
    if (t.err != RD_KAFKA_RESP_ERR_NO_ERROR || name.rfind("__", 0) == 0) continue;
    int with_leader = 0;
    for (int p = 0; p < t.partition_cnt; ++p) {
      if (t.partitions[p].err == RD_KAFKA_RESP_ERR_NO_ERROR && t.partitions[p].leader >= 0) {
        ++with_leader;
      }
    }
    // A partition without a leader counts as not there yet.
    out[name] = with_leader == t.partition_cnt ? t.partition_cnt : -1;
  }
  rd_kafka_metadata_destroy(md);
  return out;
}

void KafkaTestCluster::AwaitTopic(const std::string& topic, int partitions) {
  auto deadline = std::chrono::steady_clock::now() + kAwait;
  std::string seen;
  while (std::chrono::steady_clock::now() < deadline) {
    auto topics = ListTopics();
    auto it = topics.find(topic);
    if (partitions == 0 ? it == topics.end() : it != topics.end() && it->second == partitions) {
      return;
    }
    seen = it == topics.end() ? "not listed" : std::to_string(it->second) + " partitions led";
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  Fail("topic " + topic + (partitions == 0 ? " still listed" : " not ready (" + seen + ")") +
       " after 30 s");
}

void KafkaTestCluster::CreateTopic(const std::string& topic, int partitions,
                                   const std::map<std::string, std::string>& config) {
  if (!real()) {
    if (rd_kafka_mock_topic_create(cluster_, topic.c_str(), partitions, 1) !=
        RD_KAFKA_RESP_ERR_NO_ERROR) {
      Fail("creating topic " + topic);
    }
    return;
  }
  // A topic deleted a moment ago may still be on its way out: "already exists" is retried
  // (up to 30 s) unless the topic is listed with the partitions asked for.
  auto deadline = std::chrono::steady_clock::now() + kAwait;
  for (;;) {
    char err[512];
    rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(topic.c_str(), partitions, 1, err, sizeof(err));
    if (!nt) Fail("topic " + topic + ": " + err);
    for (const auto& [k, v] : config) {
      if (rd_kafka_NewTopic_set_config(nt, k.c_str(), v.c_str()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        rd_kafka_NewTopic_destroy(nt);
        Fail("topic " + topic + ": config " + k);
      }
    }
    Queue q(rd_kafka_queue_new(producer_));
    Options opts = AdminOptions(producer_, RD_KAFKA_ADMIN_OP_CREATETOPICS);
    rd_kafka_CreateTopics(producer_, &nt, 1, opts.get(), q.get());
    rd_kafka_NewTopic_destroy(nt);
    Event ev = AwaitResult(q.get(), RD_KAFKA_EVENT_CREATETOPICS_RESULT, "creating topic " + topic);
    size_t n = 0;
    const rd_kafka_topic_result_t** results =
        rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev.get()), &n);
    rd_kafka_resp_err_t e =
        n == 1 ? rd_kafka_topic_result_error(results[0]) : RD_KAFKA_RESP_ERR__BAD_MSG;
    if (e == RD_KAFKA_RESP_ERR_NO_ERROR) break;
    if (e == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
      // librdkafka may have sent the request again after a slow first answer (a fresh broker):
      // the topic it made is listed as asked. One still being deleted is not listed.
      auto listed = ListTopics();
      if (auto it = listed.find(topic); it != listed.end() && it->second == partitions) break;
    }
    if (e != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS ||
        std::chrono::steady_clock::now() > deadline) {
      Fail("creating topic " + topic + ": " +
           (n == 1 && rd_kafka_topic_result_error_string(results[0])
                ? rd_kafka_topic_result_error_string(results[0])
                : rd_kafka_err2str(e)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  AwaitTopic(topic, partitions);
}

void KafkaTestCluster::DeleteTopic(const std::string& topic) {
  if (!real()) Fail("the mock cluster cannot delete topic " + topic);
  DeleteTopics({topic});
}

void KafkaTestCluster::DeleteTopics(const std::vector<std::string>& topics) {
  if (topics.empty()) return;
  std::vector<rd_kafka_DeleteTopic_t*> del;
  del.reserve(topics.size());
  for (const auto& t : topics) del.push_back(rd_kafka_DeleteTopic_new(t.c_str()));
  Queue q(rd_kafka_queue_new(producer_));
  Options opts = AdminOptions(producer_, RD_KAFKA_ADMIN_OP_DELETETOPICS);
  rd_kafka_DeleteTopics(producer_, del.data(), del.size(), opts.get(), q.get());
  rd_kafka_DeleteTopic_destroy_array(del.data(), del.size());
  Event ev = AwaitResult(q.get(), RD_KAFKA_EVENT_DELETETOPICS_RESULT, "deleting topics");
  size_t n = 0;
  const rd_kafka_topic_result_t** results =
      rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(ev.get()), &n);
  for (size_t i = 0; i < n; ++i) {
    rd_kafka_resp_err_t e = rd_kafka_topic_result_error(results[i]);
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR && e != RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
      Fail(std::string("deleting topic ") + rd_kafka_topic_result_name(results[i]) + ": " +
           rd_kafka_err2str(e));
    }
  }
  for (const auto& t : topics) AwaitTopic(t, 0);
}

void KafkaTestCluster::AddPartitions(const std::string& topic, int total) {
  if (!real()) Fail("the mock cluster cannot add partitions to " + topic);
  char err[512];
  rd_kafka_NewPartitions_t* np = rd_kafka_NewPartitions_new(topic.c_str(), total, err, sizeof(err));
  if (!np) Fail("topic " + topic + ": " + err);
  Queue q(rd_kafka_queue_new(producer_));
  Options opts = AdminOptions(producer_, RD_KAFKA_ADMIN_OP_CREATEPARTITIONS);
  rd_kafka_CreatePartitions(producer_, &np, 1, opts.get(), q.get());
  rd_kafka_NewPartitions_destroy(np);
  std::string what = "adding partitions to " + topic;
  Event ev = AwaitResult(q.get(), RD_KAFKA_EVENT_CREATEPARTITIONS_RESULT, what);
  size_t n = 0;
  const rd_kafka_topic_result_t** results =
      rd_kafka_CreatePartitions_result_topics(rd_kafka_event_CreatePartitions_result(ev.get()), &n);
  if (n != 1) Fail(what + ": no result");
  if (rd_kafka_topic_result_error(results[0]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    Fail(what + ": " + rd_kafka_err2str(rd_kafka_topic_result_error(results[0])));
  }
  AwaitTopic(topic, total);
}

void KafkaTestCluster::DeleteRecordsBefore(const std::string& topic, int partition,
                                           int64_t before) {
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(list, topic.c_str(), partition)->offset = before;
  rd_kafka_DeleteRecords_t* del = rd_kafka_DeleteRecords_new(list);
  rd_kafka_topic_partition_list_destroy(list);
  Queue q(rd_kafka_queue_new(producer_));
  Options opts = AdminOptions(producer_, RD_KAFKA_ADMIN_OP_DELETERECORDS);
  rd_kafka_DeleteRecords(producer_, &del, 1, opts.get(), q.get());
  rd_kafka_DeleteRecords_destroy(del);
  std::string what = "deleting the records of " + topic + "-" + std::to_string(partition);
  Event ev = AwaitResult(q.get(), RD_KAFKA_EVENT_DELETERECORDS_RESULT, what);
  const rd_kafka_topic_partition_list_t* offsets =
      rd_kafka_DeleteRecords_result_offsets(rd_kafka_event_DeleteRecords_result(ev.get()));
  if (!offsets || offsets->cnt != 1) Fail(what + ": no result");
  if (offsets->elems[0].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    Fail(what + ": " + rd_kafka_err2str(offsets->elems[0].err));
  }
}

std::pair<int64_t, int64_t> KafkaTestCluster::Watermarks(const std::string& topic, int partition) {
  int64_t low = 0, high = 0;
  rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(producer_, topic.c_str(), partition,
                                                             &low, &high, kAdminTimeoutMs);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    Fail("the offsets of " + topic + "-" + std::to_string(partition) + ": " +
         rd_kafka_err2str(err));
  }
  return {low, high};
}

void KafkaTestCluster::Produce(const std::string& topic, int partition,
                               std::optional<std::string> key, const std::string& value) {
  rd_kafka_resp_err_t err;
  if (key) {
    err = rd_kafka_producev(
        producer_, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_KEY(key->data(), key->size()),
        RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()), RD_KAFKA_V_END);
  } else {
    err = rd_kafka_producev(
        producer_, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()), RD_KAFKA_V_END);
  }
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) Fail(std::string("producing: ") + rd_kafka_err2str(err));
}

void KafkaTestCluster::ProduceWithHeaders(
    const std::string& topic, int partition, const std::string& value,
    const std::vector<std::pair<std::string, std::optional<std::string>>>& headers) {
  rd_kafka_headers_t* hdrs = rd_kafka_headers_new(headers.size());
  for (const auto& [name, v] : headers) {
    rd_kafka_header_add(hdrs, name.data(), static_cast<ssize_t>(name.size()),
                        v ? v->data() : nullptr, v ? static_cast<ssize_t>(v->size()) : 0);
  }
  rd_kafka_resp_err_t err =
      rd_kafka_producev(producer_, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
                        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                        RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                        RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_END);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    rd_kafka_headers_destroy(hdrs);  // owned by the message only on success
    Fail(std::string("producing: ") + rd_kafka_err2str(err));
  }
}

void KafkaTestCluster::Flush() {
  if (rd_kafka_flush(producer_, 30000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    Fail("flush timed out after 30 s");
  }
  if (!delivery_error_.empty()) {
    std::string e = std::move(delivery_error_);
    delivery_error_.clear();
    Fail("a produced record was not delivered: " + e);
  }
}

void KafkaTestCluster::TrackRequests() {
  if (!cluster_) Fail("request tracking needs the mock cluster");
  rd_kafka_mock_clear_requests(cluster_);
  rd_kafka_mock_start_request_tracking(cluster_);
}

size_t KafkaTestCluster::CountRequests(int16_t api_key) {
  if (!cluster_) Fail("request tracking needs the mock cluster");
  size_t n = 0, count = 0;
  rd_kafka_mock_request_t** requests = rd_kafka_mock_get_requests(cluster_, &n);
  for (size_t i = 0; i < n; ++i) {
    if (rd_kafka_mock_request_api_key(requests[i]) == api_key) ++count;
  }
  rd_kafka_mock_request_destroy_array(requests, n);
  return count;
}

void KafkaTestCluster::PushRequestErrors(int16_t api_key,
                                         const std::vector<rd_kafka_resp_err_t>& errors) {
  if (!cluster_) Fail("injecting request errors needs the mock cluster");
  rd_kafka_mock_push_request_errors_array(cluster_, api_key, errors.size(), errors.data());
}

void KafkaTestCluster::SetBrokersDown() {
  if (!cluster_) Fail("cutting the network needs the mock cluster");
  Check(rd_kafka_mock_broker_set_down(cluster_, -1), "rd_kafka_mock_broker_set_down");
}

void KafkaTestCluster::SetBrokersUp() {
  if (!cluster_) Fail("restoring the network needs the mock cluster");
  Check(rd_kafka_mock_broker_set_up(cluster_, -1), "rd_kafka_mock_broker_set_up");
}

void KafkaTestCluster::SetPartitionLeader(const std::string& topic, int partition,
                                          int32_t broker_id) {
  if (!cluster_) Fail("moving a leader needs the mock cluster");
  Check(rd_kafka_mock_partition_set_leader(cluster_, topic.c_str(), partition, broker_id),
        "rd_kafka_mock_partition_set_leader(" + topic + ", " + std::to_string(partition) + ", " +
            std::to_string(broker_id) + ")");
}

void KafkaTestCluster::SetRoundTripMs(int rtt_ms) {
  if (!cluster_) Fail("delaying answers needs the mock cluster");
  Check(rd_kafka_mock_broker_set_rtt(cluster_, -1, rtt_ms), "rd_kafka_mock_broker_set_rtt");
}

}  // namespace sluice::sources::kafka::testing
