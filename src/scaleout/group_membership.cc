#include "scaleout/group_membership.h"

#include <cstring>

#include "common/logging.h"
#include "kafka/kafka_handle.h"

namespace sluice::scaleout {
namespace {

std::vector<int32_t> PartitionsOf(const rd_kafka_topic_partition_list_t* list) {
  std::vector<int32_t> out;
  out.reserve(static_cast<size_t>(list->cnt));
  for (int i = 0; i < list->cnt; ++i) out.push_back(list->elems[i].partition);
  return out;
}

// Takes ownership of `error`; its text, empty when there is none.
std::string TakeError(rd_kafka_error_t* error) {
  if (error == nullptr) return "";
  std::string text = rd_kafka_error_string(error);
  rd_kafka_error_destroy(error);
  return text;
}

}  // namespace

Result<std::unique_ptr<GroupMembership>> GroupMembership::Open(
    const GroupMembershipOptions& options, GroupListener* listener) {
  if (options.group_id.empty()) return Status::InvalidArgument("group mode: no group name given");
  if (options.topic.empty()) return Status::InvalidArgument("group mode: no topic to subscribe");
  if (listener == nullptr) return Status::InvalidArgument("group mode: no listener");
  std::unique_ptr<GroupMembership> self(new GroupMembership(options, listener));
  kafka::KafkaHandleSpec spec;
  spec.type = RD_KAFKA_CONSUMER;
  spec.what = "group " + options.group_id;
  spec.defaults = {{"group.id", options.group_id},
                   {"partition.assignment.strategy", "cooperative-sticky"},
                   {"enable.auto.commit", "false"},
                   {"enable.auto.offset.store", "false"},
                   {"auto.offset.reset", "latest"},
                   // It reads nothing: keep what a fetch before the pause could buffer small.
                   {"queued.max.messages.kbytes", "1024"},
                   {"fetch.max.bytes", "1048576"}};
  if (options.group_instance_id) spec.defaults["group.instance.id"] = *options.group_instance_id;
  spec.user = kafka::ConnectionSettings(options.config);
  for (const char* key : {"session.timeout.ms", "heartbeat.interval.ms", "max.poll.interval.ms"}) {
    if (auto it = options.config.find(key); it != options.config.end()) spec.user[key] = it->second;
  }
  GroupMembership* raw = self.get();
  spec.configure = [raw](rd_kafka_conf_t* conf) {
    rd_kafka_conf_set_opaque(conf, raw);
    rd_kafka_conf_set_rebalance_cb(conf, &GroupMembership::RebalanceCallback);
  };
  SLUICE_ASSIGN_OR_RETURN(self->rk_, kafka::NewKafkaHandle(spec));
  rd_kafka_poll_set_consumer(self->rk_);
  rd_kafka_topic_partition_list_t* topics = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(topics, options.topic.c_str(), RD_KAFKA_PARTITION_UA);
  const rd_kafka_resp_err_t err = rd_kafka_subscribe(self->rk_, topics);
  rd_kafka_topic_partition_list_destroy(topics);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::IOError("group " + options.group_id + ": cannot subscribe to " + options.topic +
                           ": " + rd_kafka_err2str(err));
  }
  return self;
}

GroupMembership::~GroupMembership() { (void)Close(); }

Result<int32_t> GroupMembership::TopicPartitionCount(int timeout_ms) {
  if (rk_ == nullptr) return Status::Internal("group membership: closed");
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk_, options_.topic.c_str(), nullptr);
  if (rkt == nullptr) {
    return Status::IOError("group " + options_.group_id + ": no handle for topic " +
                           options_.topic);
  }
  const struct rd_kafka_metadata* md = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(rk_, 0, rkt, &md, timeout_ms);
  rd_kafka_topic_destroy(rkt);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::IOError("group " + options_.group_id + ": the metadata of topic " +
                           options_.topic + ": " + rd_kafka_err2str(err));
  }
  Result<int32_t> out = Status::NotFound("group " + options_.group_id + ": topic " +
                                         options_.topic + " is not in the cluster's metadata");
  for (int i = 0; i < md->topic_cnt; ++i) {
    const rd_kafka_metadata_topic& t = md->topics[i];
    if (options_.topic != t.topic) continue;
    if (t.err != RD_KAFKA_RESP_ERR_NO_ERROR || t.partition_cnt <= 0) {
      out = Status::NotFound("group " + options_.group_id + ": topic " + options_.topic + ": " +
                             rd_kafka_err2str(t.err));
    } else {
      out = t.partition_cnt;
    }
  }
  rd_kafka_metadata_destroy(md);
  return out;
}

std::string GroupMembership::Protocol() const {
  return rk_ == nullptr ? "NONE" : rd_kafka_rebalance_protocol(rk_);
}

void GroupMembership::RebalanceCallback(rd_kafka_t*, rd_kafka_resp_err_t err,
                                        rd_kafka_topic_partition_list_t* partitions, void* opaque) {
  static_cast<GroupMembership*>(opaque)->OnRebalance(err, partitions);
}

void GroupMembership::OnRebalance(rd_kafka_resp_err_t err,
                                  rd_kafka_topic_partition_list_t* partitions) {
  const bool cooperative = std::strcmp(rd_kafka_rebalance_protocol(rk_), "COOPERATIVE") == 0;
  const std::vector<int32_t> parts = PartitionsOf(partitions);
  const std::string ctx = "group " + options_.group_id + ": ";
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    std::string failure;
    if (cooperative) {
      failure = TakeError(rd_kafka_incremental_assign(rk_, partitions));
    } else {
      const rd_kafka_resp_err_t e = rd_kafka_assign(rk_, partitions);
      if (e != RD_KAFKA_RESP_ERR_NO_ERROR) failure = rd_kafka_err2str(e);
    }
    if (!failure.empty()) {
      callback_error_ = Status::IOError(ctx + "cannot take the assigned partitions: " + failure);
      return;
    }
    // It never reads: the tasks do.
    (void)rd_kafka_pause_partitions(rk_, partitions);
    owned_.insert(parts.begin(), parts.end());
    if (!parts.empty()) listener_->OnAssigned(parts);
    return;
  }
  if (err == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS) {
    const bool lost = rd_kafka_assignment_lost(rk_) != 0;
    if (!parts.empty()) listener_->OnRevoked(parts, lost);
    for (int32_t p : parts) owned_.erase(p);
    std::string failure;
    if (cooperative) {
      failure = TakeError(rd_kafka_incremental_unassign(rk_, partitions));
    } else {
      const rd_kafka_resp_err_t e = rd_kafka_assign(rk_, nullptr);
      if (e != RD_KAFKA_RESP_ERR_NO_ERROR) failure = rd_kafka_err2str(e);
    }
    if (!failure.empty() && rd_kafka_fatal_error(rk_, nullptr, 0) == RD_KAFKA_RESP_ERR_NO_ERROR &&
        !rd_kafka_consumer_closed(rk_)) {
      SLUICE_LOG(kWarning) << ctx << "giving up the revoked partitions: " << failure;
    }
    return;
  }
  callback_error_ = Status::IOError(ctx + "rebalance failed: " + rd_kafka_err2str(err));
  if (cooperative) {
    (void)TakeError(rd_kafka_incremental_unassign(rk_, partitions));
  } else {
    (void)rd_kafka_assign(rk_, nullptr);
  }
}

Status GroupMembership::Poll(int timeout_ms) {
  if (rk_ == nullptr) return Status::Cancelled("group " + options_.group_id + ": closed");
  rd_kafka_message_t* msg = rd_kafka_consumer_poll(rk_, timeout_ms);
  if (msg != nullptr) {
    if (msg->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      char fatal[512];
      if (rd_kafka_fatal_error(rk_, fatal, sizeof(fatal)) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        rd_kafka_message_destroy(msg);
        return Status::IOError("group " + options_.group_id +
                               ": the group member failed: " + fatal);
      }
      const std::string warning = rd_kafka_message_errstr(msg);
      if (warning != last_warning_) {
        SLUICE_LOG(kWarning) << "group " << options_.group_id << ": " << warning;
        last_warning_ = warning;
      }
    }
    rd_kafka_message_destroy(msg);  // a record fetched before its partition was paused
  }
  if (callback_error_) {
    Status st = *callback_error_;
    callback_error_.reset();
    return st;
  }
  return Status::OK();
}

Status GroupMembership::Close() {
  if (rk_ == nullptr) return Status::OK();
  // Leaves the group; the rebalance callback revokes what is owned, inside this call.
  const rd_kafka_resp_err_t err = rd_kafka_consumer_close(rk_);
  rd_kafka_destroy(rk_);
  rk_ = nullptr;
  if (!owned_.empty()) {
    const std::vector<int32_t> rest(owned_.begin(), owned_.end());
    owned_.clear();
    listener_->OnRevoked(rest, /*lost=*/false);
  }
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::IOError("group " + options_.group_id +
                           ": leaving the group: " + rd_kafka_err2str(err));
  }
  return Status::OK();
}

}  // namespace sluice::scaleout
