// The post-commit steps of a Delta writer (checkpoint + log cleanup), run in the committing
// thread or on a background thread that the writer owns.
//
// RunPostCommit(snapshot at v): when v is a multiple of delta.checkpointInterval, writes the
// checkpoint of exactly that snapshot (checkpoint_writer.h) and then, unless
// delta.enableExpiredLogCleanup=false, runs log cleanup (log_cleanup.h). Failures are logged,
// never returned: the commit v is durable without them (readers use _last_checkpoint as a hint
// and fall back to older checkpoints and the commits).
//
// BackgroundPostCommit runs RunPostCommit on its own thread and its own engine connection, so a
// commit returns as soon as its commit file is durable. Contract:
// - A job describes one immutable snapshot (shared, never modified), so the checkpoint for v
//   holds exactly the state of v even while the writer commits v+1, v+2, ... meanwhile.
// - At most one job waits: Submit replaces a waiting (not yet started) job by the newer one
//   (a newer checkpoint makes the older one useless). A running job is never interrupted.
// - Two writers of the same checkpoint never leave a torn file: the checkpoint is written to a
//   hidden temporary name, fsynced and published with RenameNoReplace (the loser keeps the
//   winner's file); _last_checkpoint is replaced atomically.
// - Drain() waits until nothing is waiting or running; the destructor drains, then joins.
//
// Ownership: shares the FileSystem; owns its Connection (the Engine must outlive it).
// Thread safety: Submit and Drain may be called from any thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "delta/snapshot.h"
#include "engine/engine.h"
#include "fs/file_system.h"

namespace sluice::delta {

// See above. Returns true when a checkpoint was written (or already existed).
bool RunPostCommit(engine::Connection* conn, fs::FileSystem* fs, const Snapshot& snapshot,
                   int64_t now_ms);

// True when committing `snapshot`'s version calls for a checkpoint (the interval property;
// an invalid interval means no checkpoint).
bool NeedsCheckpoint(const Snapshot& snapshot);

class BackgroundPostCommit {
 public:
  BackgroundPostCommit(std::shared_ptr<fs::FileSystem> fs, std::unique_ptr<engine::Connection> conn,
                       std::function<int64_t()> now_ms);
  ~BackgroundPostCommit();
  BackgroundPostCommit(const BackgroundPostCommit&) = delete;
  BackgroundPostCommit& operator=(const BackgroundPostCommit&) = delete;

  // Queues the post-commit steps of `snapshot` (replacing a job that has not started yet).
  void Submit(std::shared_ptr<const Snapshot> snapshot);
  // Returns once no job is waiting or running.
  void Drain();

 private:
  void Loop();

  std::shared_ptr<fs::FileSystem> fs_;
  std::unique_ptr<engine::Connection> conn_;  // used only by the worker thread
  std::function<int64_t()> now_ms_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<const Snapshot> pending_;  // guarded by mu_
  bool running_ = false;                     // guarded by mu_
  bool stop_ = false;                        // guarded by mu_
  std::thread thread_;                       // started by the first Submit
};

}  // namespace sluice::delta
