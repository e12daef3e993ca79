#include "fs/fault_injection_file_system.h"

#include <unistd.h>

#include <algorithm>
#include <utility>

#include "fs/crash_point.h"

namespace sluice::fs {

namespace {

bool IsTorn(FaultKind kind) {
  return kind == FaultKind::kTornWrite || kind == FaultKind::kTornPublish;
}
bool IsCrash(FaultKind kind) { return kind != FaultKind::kError; }

std::string Describe(FileOp op, std::string_view path, std::string_view path2) {
  std::string out(FileOpVerb(op));
  out += ' ';
  out.append(path);
  if (!path2.empty()) {
    out += " to ";
    out.append(path2);
  }
  return out;
}

}  // namespace

FaultInjectingFileSystem::FaultInjectingFileSystem(std::shared_ptr<FileSystem> base)
    : FaultInjectingFileSystem(std::move(base), Options{}) {}

FaultInjectingFileSystem::FaultInjectingFileSystem(std::shared_ptr<FileSystem> base,
                                                   Options options)
    : base_(std::move(base)), options_(options) {}

// --- configuration ------------------------------------------------------------------------------

Status FaultInjectingFileSystem::InjectFault(Fault fault) {
  if (fault.nth < 1) return Status::InvalidArgument("fault: nth must be >= 1");
  if (IsTorn(fault.kind)) fault.ops &= kWriteOps;
  if ((fault.ops & kAllOps) == 0) {
    return Status::InvalidArgument(IsTorn(fault.kind)
                                       ? "fault: a torn write needs a write operation in ops"
                                       : "fault: ops is empty");
  }
  if (fault.kind == FaultKind::kError && fault.error <= 0) {
    return Status::InvalidArgument("fault: error must be a positive errno value");
  }
  if (fault.torn_bytes && *fault.torn_bytes < 0) {
    return Status::InvalidArgument("fault: torn_bytes must be >= 0");
  }
  if (IsCrash(fault.kind)) fault.sticky = false;
  std::lock_guard<std::mutex> lock(mu_);
  faults_.push_back(ArmedFault{std::move(fault), 0});
  return Status::OK();
}

void FaultInjectingFileSystem::FailNthWrite(int64_t nth, int error, std::string path_substring) {
  Fault f;
  f.kind = FaultKind::kError;
  f.nth = nth;
  f.error = error;
  f.path_substring = std::move(path_substring);
  Status st = InjectFault(std::move(f));
  (void)st;  // only invalid for nth < 1 or error <= 0, which arm nothing
}

void FaultInjectingFileSystem::TearNthWrite(int64_t nth, std::string path_substring, bool publish,
                                            std::optional<int64_t> torn_bytes) {
  Fault f;
  f.kind = publish ? FaultKind::kTornPublish : FaultKind::kTornWrite;
  f.nth = nth;
  f.path_substring = std::move(path_substring);
  f.torn_bytes = torn_bytes;
  Status st = InjectFault(std::move(f));
  (void)st;
}

void FaultInjectingFileSystem::ClearFaults() {
  std::lock_guard<std::mutex> lock(mu_);
  faults_.clear();
}

int FaultInjectingFileSystem::PendingFaults() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(faults_.size());
}

void FaultInjectingFileSystem::SetCrashPoint(std::string point, int64_t hit) {
  std::lock_guard<std::mutex> lock(mu_);
  crash_points_[std::move(point)] = std::max<int64_t>(hit, 1);
}

void FaultInjectingFileSystem::ClearCrashPoints() {
  std::lock_guard<std::mutex> lock(mu_);
  crash_points_.clear();
}

void FaultInjectingFileSystem::Crash(std::string_view point) {
  std::lock_guard<std::mutex> lock(mu_);
  Status ignored = CrashLocked("at " + std::string(point));
  (void)ignored;
}

bool FaultInjectingFileSystem::crashed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return crashed_;
}

void FaultInjectingFileSystem::Restart() {
  std::lock_guard<std::mutex> lock(mu_);
  crashed_ = false;
  crash_point_.clear();
}

std::vector<std::string> FaultInjectingFileSystem::ReachedCrashPoints() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reached_points_;
}

int64_t FaultInjectingFileSystem::CrashPointHits(std::string_view point) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = point_hits_.find(point);
  return it == point_hits_.end() ? 0 : it->second;
}

int64_t FaultInjectingFileSystem::OpCount(FileOp op) const {
  return op_counts_[static_cast<int>(op)].load(std::memory_order_relaxed);
}

// --- machinery ----------------------------------------------------------------------------------

Status FaultInjectingFileSystem::CancelledStatus() const {
  return Status::Cancelled("injected crash " + crash_point_);
}

Status FaultInjectingFileSystem::CrashLocked(std::string point) {
  if (options_.exit_process_on_crash) {
    std::string line = "sluice: injected crash " + point + "\n";
    ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
    (void)ignored;
    ::_exit(kCrashExitCode);
  }
  if (!crashed_) {  // the first crash is the one that killed the "process"
    crashed_ = true;
    crash_point_ = std::move(point);
  }
  return CancelledStatus();
}

Status FaultInjectingFileSystem::CrashAfter(FileOp op, std::string_view path) {
  std::lock_guard<std::mutex> lock(mu_);
  return CrashLocked("after " + Describe(op, path, {}));
}

FaultInjectingFileSystem::Decision FaultInjectingFileSystem::Begin(FileOp op, std::string_view path,
                                                                   std::string_view path2,
                                                                   int64_t data_size) {
  op_counts_[static_cast<int>(op)].fetch_add(1, std::memory_order_relaxed);
  Decision d;
  std::lock_guard<std::mutex> lock(mu_);
  if (crashed_) {
    d.status = CancelledStatus();
    return d;
  }
  const FileOpMask bit = OpBit(op);
  int fired = -1;
  for (size_t i = 0; i < faults_.size(); ++i) {
    ArmedFault& a = faults_[i];
    if ((a.fault.ops & bit) == 0) continue;
    const std::string& sub = a.fault.path_substring;
    if (!sub.empty() && path.find(sub) == std::string_view::npos &&
        path2.find(sub) == std::string_view::npos) {
      continue;
    }
    ++a.seen;
    bool hit = a.seen == a.fault.nth || (a.fault.sticky && a.seen > a.fault.nth);
    if (hit && fired < 0) fired = static_cast<int>(i);
  }
  if (fired < 0) return d;
  Fault fault = faults_[fired].fault;
  if (!fault.sticky) faults_.erase(faults_.begin() + fired);
  switch (fault.kind) {
    case FaultKind::kError:
      d.status = FileOpError(
          op, path2.empty() ? std::string(path) : std::string(path) + " to " + std::string(path2),
          fault.error);
      return d;
    case FaultKind::kCrashBefore:
      d.status = CrashLocked("before " + Describe(op, path, path2));
      return d;
    case FaultKind::kCrashAfter:
      d.kind = fault.kind;
      return d;
    case FaultKind::kTornWrite:
    case FaultKind::kTornPublish:
      d.kind = fault.kind;
      d.torn_bytes = std::clamp<int64_t>(fault.torn_bytes.value_or(data_size / 2), 0, data_size);
      return d;
  }
  return d;
}

Status FaultInjectingFileSystem::Write(FileOp op, const std::string& path, std::string_view data,
                                       const WriteOptions& options) {
  auto forward = [&](const std::string& p, std::string_view bytes) {
    return op == FileOp::kCreateIfAbsent ? base_->CreateIfAbsent(p, bytes, options)
                                         : base_->AtomicReplace(p, bytes, options);
  };
  Decision d = Begin(op, path, {}, static_cast<int64_t>(data.size()));
  if (!d.status.ok()) return d.status;
  if (!d.kind) return forward(path, data);
  std::string_view prefix = data.substr(0, static_cast<size_t>(d.torn_bytes));
  switch (*d.kind) {
    case FaultKind::kCrashAfter: {
      Status ignored = forward(path, data);
      (void)ignored;
      return CrashAfter(op, path);
    }
    case FaultKind::kTornWrite: {
      // The temp file a writer killed mid-write leaves; the target is never touched.
      WriteOptions unsynced;
      unsynced.sync = false;
      Status ignored = base_->AtomicReplace(TempPathFor(path), prefix, unsynced);
      (void)ignored;
      break;
    }
    case FaultKind::kTornPublish: {
      Status ignored = forward(path, prefix);
      (void)ignored;
      break;
    }
    default:
      break;
  }
  std::lock_guard<std::mutex> lock(mu_);
  return CrashLocked("during " + Describe(op, path, {}) +
                     " (torn write: " + std::to_string(d.torn_bytes) + " of " +
                     std::to_string(data.size()) + " bytes)");
}

// --- FileSystem ---------------------------------------------------------------------------------

Status FaultInjectingFileSystem::CreateIfAbsent(const std::string& path, std::string_view data,
                                                const WriteOptions& options) {
  return Write(FileOp::kCreateIfAbsent, path, data, options);
}

Status FaultInjectingFileSystem::AtomicReplace(const std::string& path, std::string_view data,
                                               const WriteOptions& options) {
  return Write(FileOp::kAtomicReplace, path, data, options);
}

// Runs a non-writing (or non-data) operation: Begin, then the base call, then a kCrashAfter.
#define SLUICE_FI_RUN(op, path, path2, call) \
  do {                                       \
    Decision d = Begin(op, path, path2);     \
    if (!d.status.ok()) return d.status;     \
    auto result = (call);                    \
    if (d.kind == FaultKind::kCrashAfter) {  \
      return CrashAfter(op, path);           \
    }                                        \
    return result;                           \
  } while (false)

Result<std::string> FaultInjectingFileSystem::ReadFile(const std::string& path) {
  SLUICE_FI_RUN(FileOp::kReadFile, path, {}, base_->ReadFile(path));
}

Result<std::vector<FileInfo>> FaultInjectingFileSystem::List(const std::string& dir,
                                                             std::string_view name_prefix) {
  SLUICE_FI_RUN(FileOp::kList, dir, {}, base_->List(dir, name_prefix));
}

Result<std::vector<FileInfo>> FaultInjectingFileSystem::ListRecursive(const std::string& dir) {
  SLUICE_FI_RUN(FileOp::kListRecursive, dir, {}, base_->ListRecursive(dir));
}

Result<FileInfo> FaultInjectingFileSystem::Stat(const std::string& path) {
  SLUICE_FI_RUN(FileOp::kStat, path, {}, base_->Stat(path));
}

Result<bool> FaultInjectingFileSystem::Exists(const std::string& path) {
  SLUICE_FI_RUN(FileOp::kExists, path, {}, base_->Exists(path));
}

Status FaultInjectingFileSystem::DeleteFile(const std::string& path) {
  SLUICE_FI_RUN(FileOp::kDeleteFile, path, {}, base_->DeleteFile(path));
}

Status FaultInjectingFileSystem::DeleteRecursive(const std::string& dir) {
  SLUICE_FI_RUN(FileOp::kDeleteRecursive, dir, {}, base_->DeleteRecursive(dir));
}

Status FaultInjectingFileSystem::CreateDirectories(const std::string& dir) {
  SLUICE_FI_RUN(FileOp::kCreateDirectories, dir, {}, base_->CreateDirectories(dir));
}

Status FaultInjectingFileSystem::RenameNoReplace(const std::string& from, const std::string& to) {
  SLUICE_FI_RUN(FileOp::kRenameNoReplace, from, to, base_->RenameNoReplace(from, to));
}

Status FaultInjectingFileSystem::SyncFile(const std::string& path) { return base_->SyncFile(path); }

Status FaultInjectingFileSystem::SetModificationTime(const std::string& path, int64_t mtime_ms) {
  SLUICE_FI_RUN(FileOp::kSetModificationTime, path, {}, base_->SetModificationTime(path, mtime_ms));
}

#undef SLUICE_FI_RUN

Status FaultInjectingFileSystem::MaybeCrash(std::string_view point) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (crashed_) return CancelledStatus();
    auto [hits, inserted] = point_hits_.try_emplace(std::string(point), 0);
    ++hits->second;
    if (inserted) reached_points_.emplace_back(point);
    auto it = crash_points_.find(point);
    if (it != crash_points_.end() && --it->second == 0) {
      crash_points_.erase(it);
      return CrashLocked("at " + std::string(point));
    }
  }
  return base_->MaybeCrash(point);
}

}  // namespace sluice::fs
