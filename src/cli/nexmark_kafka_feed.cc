#include "cli/nexmark_kafka_feed.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <unistd.h>
#include <algorithm>
#include <atomic>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "kafka/kafka_handle.h"
#include "sources/nexmark/nexmark_generator.h"
#include "sources/nexmark/nexmark_json.h"

namespace sluice::cli {

namespace {

// Estimated bytes a record takes in the mock's log besides its value (record header, varints,
// the record batch header shared by many records).
constexpr int64_t kRecordOverheadBytes = 32;
constexpr const char* kKindNames[3] = {"person", "auction", "bid"};

int64_t EventTimeMs(const nexmark::NexmarkEvent& e) {
  switch (e.kind) {
    case nexmark::EventKind::kPerson:
      return e.person.date_time;
    case nexmark::EventKind::kAuction:
      return e.auction.date_time;
    case nexmark::EventKind::kBid:
      break;
  }
  return e.bid.date_time;
}

}  // namespace

struct NexmarkKafkaFeed::Handles {
  rd_kafka_t* producer = nullptr;  // also owns the mock cluster (test.mock.num.brokers)
  rd_kafka_topic_t* topics[3] = {nullptr, nullptr, nullptr};
  std::atomic<int64_t> failed{0};  // records the cluster refused (delivery callback)

  ~Handles() {
    for (rd_kafka_topic_t* t : topics) {
      if (t) rd_kafka_topic_destroy(t);
    }
    if (producer) {
      rd_kafka_flush(producer, 10000);
      rd_kafka_destroy(producer);  // stops the mock cluster too
    }
  }
};

namespace {

void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
  if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) return;
  auto* failed = static_cast<std::atomic<int64_t>*>(opaque);
  failed->fetch_add(1);
}

}  // namespace

NexmarkKafkaFeed::NexmarkKafkaFeed(std::unique_ptr<nexmark::NexmarkGenerator> generator,
                                   std::unique_ptr<Handles> handles, std::string bootstrap,
                                   int partitions)
    : generator_(std::move(generator)),
      handles_(std::move(handles)),
      bootstrap_(std::move(bootstrap)),
      partitions_(partitions) {}

NexmarkKafkaFeed::~NexmarkKafkaFeed() = default;

Result<std::unique_ptr<NexmarkKafkaFeed>> NexmarkKafkaFeed::Start(
    const nexmark::NexmarkConfig& config, int partitions) {
  if (partitions < 1) {
    return Status::InvalidArgument("nexmark kafka feed: partitions must be at least 1, not " +
                                   std::to_string(partitions));
  }
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<nexmark::NexmarkGenerator> generator,
                          nexmark::NexmarkGenerator::Open(config));
  auto handles = std::make_unique<Handles>();
  kafka::KafkaHandleSpec spec;
  spec.type = RD_KAFKA_PRODUCER;
  spec.defaults = {{"test.mock.num.brokers", "1"},
                   {"log_level", "3"},
                   {"linger.ms", "5"},
                   {"batch.num.messages", "10000"},
                   {"compression.type", "none"}};
  spec.what = "nexmark kafka feed";
  spec.configure = [&handles](rd_kafka_conf_t* conf) {
    rd_kafka_conf_set_dr_msg_cb(conf, OnDelivery);
    rd_kafka_conf_set_opaque(conf, &handles->failed);
  };
  SLUICE_ASSIGN_OR_RETURN(handles->producer, kafka::NewKafkaHandle(spec));
  rd_kafka_mock_cluster_t* cluster = rd_kafka_handle_mock_cluster(handles->producer);
  if (cluster == nullptr) {
    return Status::IOError("nexmark kafka feed: librdkafka did not start its mock cluster");
  }
  std::string bootstrap = rd_kafka_mock_cluster_bootstraps(cluster);
  for (int k = 0; k < 3; ++k) {
    const std::string topic = Topic(kKindNames[k]);
    rd_kafka_resp_err_t err = rd_kafka_mock_topic_create(cluster, topic.c_str(), partitions, 1);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return Status::IOError("nexmark kafka feed: creating topic " + topic + " in the mock " +
                             "cluster: " + rd_kafka_err2str(err));
    }
    handles->topics[k] = rd_kafka_topic_new(handles->producer, topic.c_str(), nullptr);
    if (handles->topics[k] == nullptr) {
      return Status::IOError("nexmark kafka feed: opening topic " + topic + ": " +
                             rd_kafka_err2str(rd_kafka_last_error()));
    }
  }
  return std::unique_ptr<NexmarkKafkaFeed>(new NexmarkKafkaFeed(
      std::move(generator), std::move(handles), std::move(bootstrap), partitions));
}

Result<int64_t> NexmarkKafkaFeed::ProduceRound(int64_t max_events, int64_t multiple) {
  const auto t0 = std::chrono::steady_clock::now();
  struct Record {
    size_t offset, size;
    int kind, partition;
    int64_t time_ms;
  };
  std::vector<Record> records;
  std::string buffer;      // the values, one after the other
  std::vector<char> line;  // one event's JSON line
  std::vector<int64_t> bytes(static_cast<size_t>(3 * partitions_), 0);
  int64_t counts[3] = {kind_counts_[0], kind_counts_[1], kind_counts_[2]};
  nexmark::JsonFormatter formatter;
  nexmark::NexmarkEvent event;
  for (int64_t k = next_event_; k < next_event_ + max_events; ++k) {
    generator_->GenerateEvent(k, &event);
    const int kind = static_cast<int>(event.kind);
    const int partition = static_cast<int>(counts[kind] % partitions_);
    line.resize(std::max(line.size(), nexmark::JsonFormatter::MaxLineSize(event)));
    const size_t size =
        static_cast<size_t>(formatter.WriteEvent(event, line.data()) - line.data()) - 1;  // no \n
    int64_t& used = bytes[static_cast<size_t>(kind) * static_cast<size_t>(partitions_) +
                          static_cast<size_t>(partition)];
    const int64_t cost = static_cast<int64_t>(size) + kRecordOverheadBytes;
    if (used + cost > kPartitionBudgetBytes && !records.empty()) break;
    const size_t at = buffer.size();
    buffer.append(line.data(), size);
    used += cost;
    ++counts[kind];
    records.push_back(Record{at, size, kind, partition, EventTimeMs(event)});
  }
  size_t n = records.size();
  if (static_cast<int64_t>(n) < max_events && multiple > 0 && static_cast<int64_t>(n) >= multiple) {
    n = n / static_cast<size_t>(multiple) * static_cast<size_t>(multiple);
  }
  const int64_t failed_before = handles_->failed.load();
  for (size_t i = 0; i < n; ++i) {
    const Record& r = records[i];
    char* value = buffer.data() + r.offset;
    for (;;) {
      rd_kafka_resp_err_t err = rd_kafka_producev(
          handles_->producer, RD_KAFKA_V_RKT(handles_->topics[r.kind]),
          RD_KAFKA_V_PARTITION(r.partition), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
          RD_KAFKA_V_VALUE(value, r.size), RD_KAFKA_V_TIMESTAMP(r.time_ms), RD_KAFKA_V_END);
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) break;
      if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        return Status::IOError("nexmark kafka feed: producing event " +
                               std::to_string(next_event_ + static_cast<int64_t>(i)) + " to " +
                               Topic(kKindNames[r.kind]) + ": " + rd_kafka_err2str(err));
      }
      rd_kafka_poll(handles_->producer, 10);  // the queue is full: let deliveries drain
    }
    ++kind_counts_[r.kind];
  }
  if (rd_kafka_flush(handles_->producer, 60000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::IOError("nexmark kafka feed: records of events [" + std::to_string(next_event_) +
                           ", " + std::to_string(next_event_ + static_cast<int64_t>(n)) +
                           ") not acknowledged within 60 s");
  }
  if (const int64_t failed = handles_->failed.load() - failed_before; failed > 0) {
    return Status::IOError("nexmark kafka feed: " + std::to_string(failed) +
                           " records of events [" + std::to_string(next_event_) + ", " +
                           std::to_string(next_event_ + static_cast<int64_t>(n)) +
                           ") were refused by the mock cluster");
  }
  next_event_ += static_cast<int64_t>(n);
  produce_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return static_cast<int64_t>(n);
}

double NexmarkKafkaFeed::MockBrokerCpuSeconds() {
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  if (ticks <= 0) return 0;
  double seconds = 0;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::string comm;
    std::getline(std::ifstream(task.path() / "comm"), comm);
    if (comm != "rdk:mock") continue;
    std::string stat;
    std::getline(std::ifstream(task.path() / "stat"), stat);
    // Fields after "(comm)": state is field 3; utime and stime are fields 14 and 15.
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 2));
    std::string field;
    double utime = 0, stime = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i) {
      if (i == 14) utime = std::stod(field);
      if (i == 15) stime = std::stod(field);
    }
    seconds += (utime + stime) / ticks;
  }
  return seconds;
}

}  // namespace sluice::cli
