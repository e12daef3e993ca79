// GroupMembership: this process's member of a Kafka consumer group, used only to learn which
// partitions of one topic the process owns (docs/scale-out.md "The model"). A librdkafka
// consumer subscribed to the topic with partition.assignment.strategy = cooperative-sticky (and
// group.instance.id for static membership) that never reads a record (its partitions are paused
// as soon as they are assigned) and never commits an offset: the offsets that count are the
// tasks' checkpoints.
//
// The listener is called on the thread that calls Poll() or Close(), inside librdkafka's
// rebalance callback: OnAssigned after the partitions are added, OnRevoked before they are given
// up (a cooperative revoke is acknowledged when OnRevoked returns, so a task stopped there stops
// before another process starts it). `lost` is true when the group took the partitions away
// without asking (the session timed out: this process was a zombie); nothing may be committed
// for them then.
//
// Thread safety: one thread calls Poll() and Close(); Owned() is for that thread as well. The
// listener outlives the membership.
#pragma once

#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/result.h"

namespace sluice::scaleout {

class GroupListener {
 public:
  virtual ~GroupListener() = default;
  virtual void OnAssigned(const std::vector<int32_t>& partitions) = 0;
  virtual void OnRevoked(const std::vector<int32_t>& partitions, bool lost) = 0;
};

struct GroupMembershipOptions {
  // librdkafka properties of the cluster: the source's kafka.* options without the prefix. Only
  // how to reach and authenticate (kafka/kafka_handle.h ConnectionSettings) and the group's
  // timeouts (session.timeout.ms, heartbeat.interval.ms, max.poll.interval.ms) are taken.
  std::map<std::string, std::string> config;
  std::string group_id;                          // required: group.id
  std::optional<std::string> group_instance_id;  // static membership; nullopt: dynamic
  std::string topic;                             // required: the one subscribed topic
};

class GroupMembership {
 public:
  // Subscribes; the first assignment arrives in a later Poll(). InvalidArgument for a refused
  // property (named, its value never shown) or a missing group id or topic.
  static Result<std::unique_ptr<GroupMembership>> Open(const GroupMembershipOptions& options,
                                                       GroupListener* listener);
  // Closes (Close()) if not closed yet.
  ~GroupMembership();
  GroupMembership(const GroupMembership&) = delete;
  GroupMembership& operator=(const GroupMembership&) = delete;

  // Serves the group for up to `timeout_ms`: heartbeats and rebalances (the listener is called
  // here). Errors: a fatal error of the consumer (e.g. another process uses the same
  // group.instance.id: FENCED_INSTANCE_ID), naming the group. A transient error (the broker
  // unreachable, the topic missing) is logged as a warning and Poll returns OK.
  Status Poll(int timeout_ms);
  // Leaves the group: the listener's OnRevoked gets every owned partition, then the consumer is
  // closed. Further calls do nothing.
  Status Close();

  // The topic's partition count from the cluster's metadata. An error (naming the topic) when the
  // brokers do not answer within `timeout_ms` or the topic does not exist.
  Result<int32_t> TopicPartitionCount(int timeout_ms);

  // The partitions this process owns now.
  const std::set<int32_t>& Owned() const { return owned_; }
  // "COOPERATIVE", "EAGER" or "NONE" (librdkafka's rd_kafka_rebalance_protocol).
  std::string Protocol() const;

 private:
  GroupMembership(GroupMembershipOptions options, GroupListener* listener)
      : options_(std::move(options)), listener_(listener) {}
  static void RebalanceCallback(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                                rd_kafka_topic_partition_list_t* partitions, void* opaque);
  void OnRebalance(rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* partitions);

  GroupMembershipOptions options_;
  GroupListener* listener_;
  rd_kafka_t* rk_ = nullptr;
  std::set<int32_t> owned_;
  std::optional<Status> callback_error_;  // an assign/unassign failure, reported by Poll
  std::string last_warning_;              // logged once until it changes
};

}  // namespace sluice::scaleout
