// KafkaRecordWriter: produces text records to one Kafka topic without waiting, for the
// progress listener of `sluice run --progress-kafka` (docs/operations.md "Listeners"). Not a
// query sink: a record that cannot be delivered is counted and reported at Close, never an error
// of the caller, so monitoring can never fail or slow a query.
//
// Options are librdkafka properties (bootstrap.servers required; security.protocol, sasl.*,
// ssl.*, ...). Values never appear in messages. The producer is idempotent with acks=all.
//
// Thread safety: Write may be called from any thread (librdkafka's producer is thread-safe);
// Close once, after the last Write.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"

namespace sluice::sinks {

class KafkaRecordWriter {
 public:
  // InvalidArgument naming the property for a bad option, or when bootstrap.servers is missing.
  static Result<std::unique_ptr<KafkaRecordWriter>> Open(
      const std::map<std::string, std::string>& config, std::string topic);
  ~KafkaRecordWriter();
  KafkaRecordWriter(const KafkaRecordWriter&) = delete;
  KafkaRecordWriter& operator=(const KafkaRecordWriter&) = delete;

  // Queues one record (key may be empty: no key). Returns at once; a full local queue drops the
  // record and counts it as failed.
  void Write(std::string_view key, std::string_view value);

  // Waits up to timeout_ms for queued records. IOError with the counts when any record was not
  // delivered (the first broker error included); OK otherwise.
  Status Close(int timeout_ms);

  const std::string& topic() const { return topic_; }
  int64_t delivered() const { return delivered_.load(); }
  int64_t failed() const { return failed_.load(); }

 private:
  struct Handle;
  KafkaRecordWriter(std::string topic);
  // librdkafka's delivery report for `message` (an rd_kafka_message_t); opaque = this.
  static void OnDelivery(const void* message, void* opaque);

  std::string topic_;
  std::unique_ptr<Handle> handle_;
  std::atomic<int64_t> delivered_{0};
  std::atomic<int64_t> failed_{0};
};

}  // namespace sluice::sinks
