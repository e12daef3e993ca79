#include "sinks/kafka_record_writer.h"

#include <librdkafka/rdkafka.h>

#include "common/mutex.h"
#include "kafka/kafka_handle.h"

namespace sluice::sinks {

// Lock discipline: mu guards first_error, written by the delivery callback and Write, read by
// Close; held only for that.
struct KafkaRecordWriter::Handle {
  rd_kafka_t* rk = nullptr;
  Mutex mu;
  std::string first_error SLUICE_GUARDED_BY(mu);
  ~Handle() {
    if (rk) rd_kafka_destroy(rk);
  }
};

KafkaRecordWriter::KafkaRecordWriter(std::string topic)
    : topic_(std::move(topic)), handle_(std::make_unique<Handle>()) {}

KafkaRecordWriter::~KafkaRecordWriter() = default;

void KafkaRecordWriter::OnDelivery(const void* message, void* opaque) {
  auto* self = static_cast<KafkaRecordWriter*>(opaque);
  const auto* m = static_cast<const rd_kafka_message_t*>(message);
  if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    self->delivered_.fetch_add(1);
    return;
  }
  self->failed_.fetch_add(1);
  MutexLock lock(&self->handle_->mu);
  if (self->handle_->first_error.empty()) self->handle_->first_error = rd_kafka_err2str(m->err);
}

Result<std::unique_ptr<KafkaRecordWriter>> KafkaRecordWriter::Open(
    const std::map<std::string, std::string>& config, std::string topic) {
  if (!config.count("bootstrap.servers")) {
    return Status::InvalidArgument("Kafka record writer: bootstrap.servers is required");
  }
  if (topic.empty()) return Status::InvalidArgument("Kafka record writer: the topic is empty");
  std::unique_ptr<KafkaRecordWriter> w(new KafkaRecordWriter(std::move(topic)));
  kafka::KafkaHandleSpec spec;
  spec.type = RD_KAFKA_PRODUCER;
  spec.defaults = {{"enable.idempotence", "true"},
                   {"acks", "all"},
                   {"log_level", "3"},
                   {"queue.buffering.max.messages", "100000"}};
  spec.user = config;
  spec.what = "Kafka record writer";
  spec.configure = [&w](rd_kafka_conf_t* conf) {
    rd_kafka_conf_set_dr_msg_cb(conf, [](rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
      KafkaRecordWriter::OnDelivery(m, opaque);
    });
    rd_kafka_conf_set_opaque(conf, w.get());
  };
  SLUICE_ASSIGN_OR_RETURN(w->handle_->rk, kafka::NewKafkaHandle(spec));
  return w;
}

void KafkaRecordWriter::Write(std::string_view key, std::string_view value) {
  rd_kafka_poll(handle_->rk, 0);  // serve delivery callbacks of earlier records
  rd_kafka_resp_err_t err = rd_kafka_producev(
      handle_->rk, RD_KAFKA_V_TOPIC(topic_.c_str()), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
      RD_KAFKA_V_KEY(key.empty() ? nullptr : const_cast<char*>(key.data()), key.size()),
      RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()), RD_KAFKA_V_END);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    failed_.fetch_add(1);
    MutexLock lock(&handle_->mu);
    if (handle_->first_error.empty()) handle_->first_error = rd_kafka_err2str(err);
  }
}

Status KafkaRecordWriter::Close(int timeout_ms) {
  rd_kafka_resp_err_t flushed = rd_kafka_flush(handle_->rk, timeout_ms);
  int64_t pending = rd_kafka_outq_len(handle_->rk);
  MutexLock lock(&handle_->mu);
  if (failed_.load() > 0 || flushed != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::IOError(
        "Kafka topic " + topic_ + ": " + std::to_string(failed_.load()) + " records not delivered" +
        (pending > 0 ? ", " + std::to_string(pending) + " still queued" : "") +
        (handle_->first_error.empty() ? "" : "; first error: " + handle_->first_error));
  }
  return Status::OK();
}

}  // namespace sluice::sinks
