#include "delta/commit.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <thread>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "common/mutex.h"
#include "common/thread_annotations.h"
#include "common/uuid.h"
#include "delta/log_segment.h"
#include "delta/write_util.h"

namespace sluice::delta {

namespace {

// commitInfo first (in-commit timestamps require it), then protocol, metaData, txn, removes, adds.
int ActionRank(const Action& a) {
  if (std::holds_alternative<CommitInfo>(a)) return 0;
  if (std::holds_alternative<Protocol>(a)) return 1;
  if (std::holds_alternative<Metadata>(a)) return 2;
  if (std::holds_alternative<SetTransaction>(a)) return 3;
  if (std::holds_alternative<DomainMetadata>(a)) return 4;
  if (std::holds_alternative<RemoveFile>(a)) return 5;
  if (std::holds_alternative<AddFile>(a)) return 6;
  return 7;
}

// The backoff after the `lost`-th lost race of one commit, in microseconds: it grows
// (initial * 2^(lost-1), capped at max) over the first kGrowingLosses losses, as contention shows,
// then halves with every further loss down to a quarter of the initial backoff: a commit that has
// lost many races retries sooner than those that lost few, instead of waiting the longest while
// writers that keep winning commit back to back (issue 24, finding 10). Times a random factor in
// [0.5, 1.5).
constexpr int kGrowingLosses = 4;

int64_t Backoff(const CommitOptions& o, int lost) {
  double ms = static_cast<double>(o.initial_backoff_ms);
  for (int i = 1; i < std::min(lost, kGrowingLosses); ++i) ms *= 2;
  ms = std::min(ms, static_cast<double>(o.max_backoff_ms));
  for (int i = kGrowingLosses; i < lost; ++i) ms /= 2;
  ms = std::max(ms, static_cast<double>(o.initial_backoff_ms) / 4);
  thread_local std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<double> jitter(0.5, 1.5);
  return static_cast<int64_t>(ms * jitter(rng) * 1000.0);
}

// The commits of one process to one table take turns, first come first served, so that threads
// of one process (the tasks of a group, the queries of a pipeline) never lose races to each other
// and a commit waits at most for the commits queued before it. Keyed by the table root as given.
struct Turnstile {
  Mutex mu;
  CondVar turn_changed;
  uint64_t next_ticket SLUICE_GUARDED_BY(mu) = 0;
  uint64_t serving SLUICE_GUARDED_BY(mu) = 0;
};

std::shared_ptr<Turnstile> TurnstileFor(const std::string& table_root) {
  static Mutex* mu = new Mutex;
  static auto* turnstiles = new std::map<std::string, std::weak_ptr<Turnstile>>;
  MutexLock lock(mu);
  if (auto found = (*turnstiles)[table_root].lock()) return found;
  if (turnstiles->size() > 64) {  // forget the tables nobody commits to now
    std::erase_if(*turnstiles, [](const auto& e) { return e.second.expired(); });
  }
  auto made = std::make_shared<Turnstile>();
  (*turnstiles)[table_root] = made;
  return made;
}

// Holds the turn of one table from construction (waiting for it) to destruction.
class Turn {
 public:
  explicit Turn(std::shared_ptr<Turnstile> t) : t_(std::move(t)) {
    MutexLock lock(&t_->mu);
    const uint64_t mine = t_->next_ticket++;
    while (t_->serving != mine) t_->turn_changed.Wait(&t_->mu);
  }
  ~Turn() {
    MutexLock lock(&t_->mu);
    ++t_->serving;
    t_->turn_changed.SignalAll();
  }
  Turn(const Turn&) = delete;
  Turn& operator=(const Turn&) = delete;

 private:
  std::shared_ptr<Turnstile> t_;
};

}  // namespace

std::string CommitPath(const std::string& table_root, Version version) {
  return fs::JoinPath(fs::JoinPath(table_root, "_delta_log"), CommitFileName(version));
}

Transaction::Transaction(std::shared_ptr<fs::FileSystem> fs, std::string table_root,
                         std::shared_ptr<const Snapshot> read_snapshot, CommitOptions options)
    : fs_(std::move(fs)),
      table_root_(std::move(table_root)),
      read_snapshot_(std::move(read_snapshot)),
      options_(options),
      txn_id_(NewUuidV4()) {}

std::optional<Version> Transaction::read_version() const {
  if (!read_snapshot_) return std::nullopt;
  return read_snapshot_->version;
}

void Transaction::SetOperation(std::string operation,
                               std::map<std::string, std::string> parameters_json) {
  operation_ = std::move(operation);
  parameters_ = std::move(parameters_json);
}

std::string Transaction::CommitInfoJson(int64_t now_ms, bool blind_append) const {
  nlohmann::ordered_json ci = nlohmann::ordered_json::object();
  ci["timestamp"] = now_ms;
  ci["operation"] = operation_;
  nlohmann::ordered_json params = nlohmann::ordered_json::object();
  for (const auto& [k, v] : parameters_) {
    auto parsed = nlohmann::ordered_json::parse(v, nullptr, false);
    params[k] = parsed.is_discarded() ? nlohmann::ordered_json(v) : parsed;
  }
  ci["operationParameters"] = params;
  if (read_snapshot_) ci["readVersion"] = read_snapshot_->version.value();
  // Delta's isolation level: SnapshotIsolation when the commit has file actions and none of them
  // changes data (OPTIMIZE, REORG), else Serializable (Spark 4.2 / Delta 4.4's commitInfo).
  bool files = false, data_change = false;
  for (const Action& a : actions_) {
    if (const auto* add = std::get_if<AddFile>(&a)) {
      files = true;
      data_change = data_change || add->data_change;
    } else if (const auto* remove = std::get_if<RemoveFile>(&a)) {
      files = true;
      data_change = data_change || remove->data_change;
    } else if (std::holds_alternative<AddCdcFile>(a)) {
      files = true;
      data_change = true;
    }
  }
  ci["isolationLevel"] = files && !data_change ? "SnapshotIsolation" : "Serializable";
  ci["isBlindAppend"] = blind_append;
  nlohmann::ordered_json metrics = nlohmann::ordered_json::object();
  for (const auto& [k, v] : metrics_) metrics[k] = v;
  ci["operationMetrics"] = metrics;
  ci["engineInfo"] = kEngineInfo;
  ci["txnId"] = txn_id_;
  return ci.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

Result<std::shared_ptr<const Snapshot>> Transaction::SnapshotAfter(
    Version version, const std::vector<std::pair<Version, std::vector<Action>>>& winners,
    const std::vector<Action>& ours, const fs::FileInfo& committed) const {
  LogReplay replay = read_snapshot_ ? LogReplay::FromSnapshot(*read_snapshot_) : LogReplay();
  LogSegment segment;
  if (read_snapshot_) segment = read_snapshot_->segment;
  auto log_file = [&](Version v, fs::FileInfo info) {
    LogFile f;
    f.info = std::move(info);
    f.name.kind = LogFileKind::kCommit;
    f.name.version = v;
    return f;
  };
  for (const auto& [v, actions] : winners) {
    replay.Apply(actions, v);
    // Only the path is known of a winner (its size and time are not needed).
    segment.commits.push_back(log_file(v, fs::FileInfo{CommitPath(table_root_, v), 0, 0, false}));
  }
  replay.Apply(ours, version);
  segment.commits.push_back(log_file(version, committed));
  segment.version = version;
  SLUICE_ASSIGN_OR_RETURN(Snapshot snap,
                          replay.Finish(table_root_, std::move(segment), committed.mtime_ms));
  return std::shared_ptr<const Snapshot>(std::make_shared<Snapshot>(std::move(snap)));
}

Result<CommitResult> Transaction::Commit() {
  const std::string ctx = "committing to Delta table " + table_root_;
  // Validate the actions.
  std::set<std::string> app_ids;
  int metadata_count = 0, protocol_count = 0;
  for (const Action& a : actions_) {
    if (const auto* t = std::get_if<SetTransaction>(&a)) {
      if (!app_ids.insert(t->app_id).second) {
        return Status::InvalidArgument(ctx + ": two txn actions for appId '" + t->app_id +
                                       "' in one commit");
      }
    }
    if (std::holds_alternative<Metadata>(a)) ++metadata_count;
    if (std::holds_alternative<Protocol>(a)) ++protocol_count;
    if (std::holds_alternative<CommitInfo>(a)) {
      return Status::InvalidArgument(ctx +
                                     ": commitInfo is built by the transaction, do not add one");
    }
  }
  if (metadata_count > 1 || protocol_count > 1) {
    return Status::InvalidArgument(ctx +
                                   ": at most one metaData and one protocol action per commit");
  }
  if (!read_snapshot_ && (metadata_count != 1 || protocol_count != 1)) {
    return Status::InvalidArgument(
        ctx + ": the first commit of a table needs protocol and metaData actions");
  }
  // A remove names the entry it removes by (path, deletion vector): one that named a live file
  // without the DV that file has now would leave the file live beside the new entry (rows
  // resurrected or read twice). Every writer copies the DV (RemoveFor); this is the backstop.
  if (read_snapshot_) {
    const auto& files = read_snapshot_->files;
    auto dv_id = [](const std::optional<DeletionVector>& dv) {
      return dv ? dv->UniqueId() : std::string();
    };
    for (const Action& a : actions_) {
      const auto* r = std::get_if<RemoveFile>(&a);
      if (!r) continue;
      auto it = std::lower_bound(files.begin(), files.end(), r->path,
                                 [](const AddFile& f, const std::string& p) { return f.path < p; });
      bool live_path = false, live_entry = false;
      for (; it != files.end() && it->path == r->path; ++it) {
        live_path = true;
        live_entry |= dv_id(it->deletion_vector) == dv_id(r->deletion_vector);
      }
      if (live_path && !live_entry) {
        return Status::Internal(ctx + ": the remove of '" + r->path +
                                "' does not carry the deletion vector of its live entry");
      }
    }
  }

  PendingTransaction pending;
  pending.read = read_;
  SummarizeActions(actions_, &pending);
  pending.blind_append = read_.Empty() && pending.removed_files.empty();

  std::vector<Action> ordered = actions_;
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const Action& a, const Action& b) { return ActionRank(a) < ActionRank(b); });
  // metaData changes are not blind appends in commitInfo either (Spark's isBlindAppend).
  bool blind_append_info = pending.blind_append && metadata_count == 0 && protocol_count == 0;

  Version version = read_snapshot_ ? read_snapshot_->version.Next() : Version(0);
  std::vector<std::pair<Version, std::vector<Action>>> winners;
  fs::WriteOptions wo;
  wo.sync = options_.sync;
  const int max_attempts = std::max(1, options_.max_attempts);
  // Checks every commit from `version` on (the winners of a lost race, or what was committed since
  // the read snapshot) and moves `version` past them; true when there was one.
  auto catch_up = [&]() -> Result<bool> {
    bool found = false;
    for (;;) {
      auto actions = ReadCommitActions(fs_.get(), CommitPath(table_root_, version));
      if (!actions.ok()) {
        if (actions.status().IsNotFound()) return found;
        return actions.status().WithContext(ctx);
      }
      if (!read_snapshot_ && version == Version(0)) {
        return Status::Conflict("Delta table " + table_root_ +
                                " was created concurrently (commit 0 exists)");
      }
      SLUICE_RETURN_NOT_OK(CheckConflict(pending, *actions, version, table_root_));
      winners.emplace_back(version, std::move(*actions));
      version = version.Next();
      found = true;
    }
  };
  Turn turn(TurnstileFor(table_root_));  // no race with this process's other commits
  auto give_up = [&](int attempts) {
    return Status::Conflict(
        "gave up " + ctx + " after " + std::to_string(attempts) +
        " attempts: every attempt lost the race to a concurrent commit (last tried version " +
        version.Prev().ToString() + ")");
  };
  // Commits made while this one waited for its turn (or since its snapshot) are checked before the
  // first attempt rather than after a write that cannot win; they count as one lost race.
  SLUICE_ASSIGN_OR_RETURN(const bool behind, catch_up());
  if (behind && max_attempts < 2) return give_up(1);
  for (int attempt = behind ? 2 : 1;; ++attempt) {
    int64_t now = NowMillis();
    CommitInfo info;
    info.raw_json = CommitInfoJson(now, blind_append_info);
    info.timestamp = now;
    info.operation = operation_;
    std::vector<Action> commit;
    commit.reserve(ordered.size() + 1);
    commit.push_back(info);
    commit.insert(commit.end(), ordered.begin(), ordered.end());
    std::string contents = SerializeCommit(commit);
    const std::string path = CommitPath(table_root_, version);

    Status st;
    auto prepared = fs_->PrepareCreate(path, contents, wo);
    if (prepared.ok()) {
      if (before_publish_) {
        st = before_publish_();
        before_publish_ = nullptr;  // once: later attempts publish what is already durable
      }
      if (st.ok()) st = fs_->MaybeCrash("delta.before_commit").WithContext(ctx);
      if (!st.ok()) {
        fs_->AbandonCreate(*prepared);
        return st;
      }
      st = fs_->PublishCreate(*prepared, wo);
    } else {
      st = prepared.status();
    }
    if (st.ok()) {
      SLUICE_RETURN_NOT_OK_CTX(fs_->MaybeCrash("delta.after_commit"), ctx);
      CommitResult result;
      result.version = version;
      result.attempts = attempt;
      // The commit is durable: a failure to build the new snapshot only leaves it null. Its
      // timestamp is the commit file's modification time, as readers of the log see it.
      fs::FileInfo committed{path, static_cast<int64_t>(contents.size()), now, false};
      if (auto info = fs_->Stat(path); info.ok()) committed = *info;
      auto snap = SnapshotAfter(version, winners, commit, committed);
      if (snap.ok()) result.snapshot = *snap;
      return result;
    }
    if (!st.IsAlreadyExists()) return st.WithContext(ctx + " at version " + version.ToString());

    // Lost the race: check every commit that won, from `version` on, then retry after them.
    SLUICE_RETURN_NOT_OK(catch_up().status());
    if (attempt >= max_attempts) return give_up(attempt);
    std::this_thread::sleep_for(std::chrono::microseconds(Backoff(options_, attempt)));
  }
}

}  // namespace sluice::delta
