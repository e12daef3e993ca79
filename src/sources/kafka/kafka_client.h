// KafkaClient: the librdkafka handle the Kafka source reads through (docs/kafka.md): topic
// metadata, watermark offsets, and exact reads of offset ranges.
//
// Thread safety: one thread at a time (the query thread), except Interrupt, which any thread may
// call. librdkafka runs its own threads underneath; all of them are stopped when the client is
// destroyed.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "sources/kafka/kafka_offsets.h"

namespace sluice::sources::kafka {

// One record header; the views are valid only during the callback.
struct KafkaHeader {
  std::string_view key;
  const void* value = nullptr;  // nullptr: NULL value
  size_t value_len = 0;
};

// One record as read; the views are valid only during the callback.
struct KafkaRecord {
  const TopicPartition* tp = nullptr;
  int64_t offset = 0;
  const void* key = nullptr;  // nullptr: NULL key
  size_t key_len = 0;
  const void* value = nullptr;  // nullptr: NULL value (a tombstone)
  size_t value_len = 0;
  int64_t timestamp_ms = -1;   // -1: not available
  int32_t timestamp_type = 0;  // 0 create time, 1 log append time (Spark's timestampType)
  // The record's headers in order, when KafkaClientOptions::read_headers; else empty.
  const std::vector<KafkaHeader>* headers = nullptr;
};

struct KafkaClientOptions {
  // librdkafka properties ("bootstrap.servers", "security.protocol", ...): the source's
  // "kafka.*" options without the prefix.
  std::map<std::string, std::string> config;
  std::string group_id;         // never committed to
  int64_t timeout_ms = 120000;  // metadata and watermark queries, and a read's wait for a record
  bool read_headers = false;    // fill KafkaRecord::headers (includeHeaders)
};

class KafkaClient {
 public:
  static Result<std::unique_ptr<KafkaClient>> Open(const KafkaClientOptions& options);
  ~KafkaClient();
  KafkaClient(const KafkaClient&) = delete;
  KafkaClient& operator=(const KafkaClient&) = delete;

  // Topic name -> number of partitions, for every topic the cluster has (internal topics such
  // as __consumer_offsets left out).
  Result<std::map<std::string, int32_t>> ListTopics();

  // The earliest available offset and the high watermark (the next offset to be written).
  // NotFound when the topic or partition does not exist. One partition, two round trips to its
  // leader; ListOffsets asks for many partitions at once.
  Result<std::pair<int64_t, int64_t>> Watermarks(const TopicPartition& tp);

  // The earliest available offset (kEarliest) or the latest offset (kLatest: the high
  // watermark, or the last stable offset under isolation.level read_committed, as Watermarks)
  // of every partition of `partitions`, asked in one ListOffsets request per leader broker
  // (librdkafka's admin ListOffsets), not a round trip per partition (docs/latency.md).
  // A moving leader or a broker that does not answer makes the whole request wait and ask again
  // (every 250 ms, or in 0.5-1 s tries) up to the timeout, as Watermarks waits. A partition the
  // answer says is unknown (the handle's metadata predates it, or it does not exist), or every
  // partition when none has a known leader, is asked again alone through Watermarks, which
  // refreshes the metadata; a partition that does not exist is left out of the result.
  // Cancelled after Interrupt.
  enum class OffsetQuery { kEarliest, kLatest };
  Result<PartitionOffsets> ListOffsets(const std::set<TopicPartition>& partitions,
                                       OffsetQuery which);

  // Calls `fn` for every record with offset in [first, end) of each partition of `ranges`:
  // partition by partition in the map's order, each partition's in offset order (so the same
  // ranges give the same sequence of records in any process). Never a record outside
  // [first, end). librdkafka fetches all partitions together in the background.
  // The assignment is kept after the read: when every non-empty range of the next call starts
  // exactly where the last read of its partition stopped (`end`), the consumer goes on without a
  // seek, so what librdkafka prefetched past `end` is used (it stays in the partition's queue,
  // bounded by librdkafka's queued.min.messages / queued.max.messages.kbytes per partition).
  // Any other range (first call, a re-run, a restart, a new partition) re-assigns every
  // partition of `ranges` at its `first`, the empty ranges' too (an idle partition is then
  // fetched from where its next range starts, so its first new records continue without a
  // seek). Empty ranges never cause a re-assignment. After an error the assignment is dropped.
  // Offsets without a record (transaction markers, compacted records) are skipped.
  // An error from `fn` stops the read and is returned. IOError when a partition delivers nothing
  // for timeout_ms although its range is not done; NotFound ("... no longer available") when a
  // range starts below the partition's earliest available offset: the caller checks data loss
  // first.
  using RecordFn = std::function<Status(const KafkaRecord&)>;
  Status ReadRanges(const std::map<TopicPartition, std::pair<int64_t, int64_t>>& ranges,
                    const RecordFn& fn);

  // Makes a query or read in progress, and every later one, return Cancelled within about a
  // second (a query waiting for a broker, a read waiting for records). For stopping the query;
  // the client is not usable afterwards. Any thread.
  void Interrupt();

  // How many times ReadRanges has (re)assigned partitions: each drops what was prefetched.
  int64_t assignments() const { return assignments_; }

 private:
  struct Handle;
  // Drops the held records, the partition queues and the consumer's assignment.
  void ResetAssignment();
  // Assigns exactly the partitions of `parts` at their first offsets, each on its own queue
  // (empty ranges included).
  Status Assign(const std::map<TopicPartition, std::pair<int64_t, int64_t>>& parts);
  // Reads [first, end) of an assigned partition from its queue (see ReadRanges).
  Status ReadPartition(const TopicPartition& tp, int64_t first, int64_t end, const RecordFn& fn);
  explicit KafkaClient(std::unique_ptr<Handle> handle, int64_t timeout_ms, bool read_headers);
  std::unique_ptr<Handle> handle_;
  int64_t timeout_ms_;
  bool read_headers_;
  std::atomic<bool> interrupted_{false};
  bool read_once_ = false;  // a read has assigned partitions (ListTopics moves off `rk`)
  int64_t assignments_ = 0;
};

}  // namespace sluice::sources::kafka
