#include "delta/post_commit.h"

#include "common/logging.h"
#include "delta/checkpoint_writer.h"
#include "delta/log_cleanup.h"

namespace sluice::delta {

bool NeedsCheckpoint(const Snapshot& snapshot) {
  auto interval = CheckpointInterval(snapshot.metadata);
  return interval.ok() && ShouldCheckpoint(snapshot.version.value(), *interval);
}

bool RunPostCommit(engine::Connection* conn, fs::FileSystem* fs, const Snapshot& snapshot,
                   int64_t now_ms) {
  auto cp = WriteCheckpoint(conn, fs, snapshot, now_ms);
  if (!cp.ok()) {
    SLUICE_LOG(kWarning) << "Delta checkpoint of " << snapshot.table_root << " at version "
                         << snapshot.version
                         << " failed (the commit is durable): " << cp.status().ToString();
    return false;
  }
  if (snapshot.metadata.Config("delta.enableExpiredLogCleanup").value_or("true") == "false") {
    return true;
  }
  auto retention = LogRetentionMs(snapshot.metadata);
  if (!retention.ok()) return true;
  auto cleaned = CleanupExpiredLogs(fs, snapshot.table_root, *retention, now_ms);
  if (!cleaned.ok()) {
    SLUICE_LOG(kWarning) << "Delta log cleanup of " << snapshot.table_root
                         << " failed: " << cleaned.status().ToString();
  }
  return true;
}

BackgroundPostCommit::BackgroundPostCommit(std::shared_ptr<fs::FileSystem> fs,
                                           std::unique_ptr<engine::Connection> conn,
                                           std::function<int64_t()> now_ms)
    : fs_(std::move(fs)), conn_(std::move(conn)), now_ms_(std::move(now_ms)) {}

BackgroundPostCommit::~BackgroundPostCommit() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;  // the loop finishes the waiting job first
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void BackgroundPostCommit::Submit(std::shared_ptr<const Snapshot> snapshot) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_ = std::move(snapshot);
    if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
  }
  cv_.notify_all();
}

void BackgroundPostCommit::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return pending_ == nullptr && !running_; });
}

void BackgroundPostCommit::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || pending_ != nullptr; });
    if (pending_ == nullptr) return;  // stop_ and nothing left
    std::shared_ptr<const Snapshot> job = std::move(pending_);
    pending_ = nullptr;
    running_ = true;
    lock.unlock();
    RunPostCommit(conn_.get(), fs_.get(), *job, now_ms_());
    job.reset();
    lock.lock();
    running_ = false;
    cv_.notify_all();
  }
}

}  // namespace sluice::delta
