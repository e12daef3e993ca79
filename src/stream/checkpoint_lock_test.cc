#include "stream/checkpoint_lock.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "fs/test_util.h"
#include "stream/checkpoint_layout.h"

namespace sluice::stream {
namespace {

using fs::ScopedTempDir;

constexpr int64_t kStart = 1700000000123;  // 2023-11-14T22:13:20.123Z

LockHolder Holder(const std::string& run) {
  return CurrentProcessHolder("9f3c2b1a-0e4d-4c5b-8a6f-7e8d9c0b1a2f", run, kStart);
}

std::string ReadAllFrom(int fd) {
  std::string out;
  char buf[1024];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

TEST(CheckpointLockTest, HolderJsonRoundTrip) {
  LockHolder h{4242, "worker-1", "q", "r", kStart};
  EXPECT_EQ(
      SerializeLockHolder(h),
      R"({"pid":4242,"host":"worker-1","queryId":"q","runId":"r","startTime":"2023-11-14T22:13:20.123Z"})");
  auto parsed = ParseLockHolder(SerializeLockHolder(h));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, h);
  EXPECT_TRUE(ParseLockHolder("").status().IsCorruption());
  EXPECT_TRUE(ParseLockHolder(R"({"pid":1})").status().IsCorruption());
}

TEST(CheckpointLockTest, SecondAcquirerIsRefusedNamingTheHolder) {
  ScopedTempDir dir;
  const std::string root = dir.Join("ckpt");  // created by Acquire
  auto first = CheckpointLock::Acquire(root, Holder("run-one"));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE((*first)->held());
  EXPECT_EQ(*CheckpointLock::IsLocked(root), true);
  auto recorded = CheckpointLock::ReadHolder(root);
  ASSERT_TRUE(recorded.ok() && recorded->has_value());
  EXPECT_EQ(**recorded, Holder("run-one"));

  auto second = CheckpointLock::Acquire(root, Holder("run-two"));
  ASSERT_FALSE(second.ok());
  const Status& st = second.status();
  EXPECT_TRUE(st.IsConflict()) << st.ToString();
  EXPECT_NE(st.message().find("checkpoint " + root + " is in use by another query"),
            std::string::npos)
      << st.ToString();
  EXPECT_NE(st.message().find("pid " + std::to_string(::getpid())), std::string::npos);
  EXPECT_NE(st.message().find("host " + Holder("x").host), std::string::npos);
  EXPECT_NE(st.message().find("run id run-one"), std::string::npos);
  EXPECT_NE(st.message().find("started 2023-11-14T22:13:20.123Z"), std::string::npos);

  ASSERT_TRUE((*first)->Release().ok());
  EXPECT_FALSE((*first)->held());
  EXPECT_TRUE((*first)->Release().ok());  // idempotent
  EXPECT_EQ(*CheckpointLock::IsLocked(root), false);
  EXPECT_FALSE(CheckpointLock::ReadHolder(root)->has_value());  // truncated on release

  auto third = CheckpointLock::Acquire(root, Holder("run-three"));
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  EXPECT_EQ(**CheckpointLock::ReadHolder(root), Holder("run-three"));
}

TEST(CheckpointLockTest, DestructorReleases) {
  ScopedTempDir dir;
  {
    auto lock = CheckpointLock::Acquire(dir.path(), Holder("a"));
    ASSERT_TRUE(lock.ok());
  }
  EXPECT_EQ(*CheckpointLock::IsLocked(dir.path()), false);
  EXPECT_TRUE(CheckpointLock::Acquire(dir.path(), Holder("b")).ok());
}

TEST(CheckpointLockTest, NoLockFileMeansUnlocked) {
  ScopedTempDir dir;
  EXPECT_EQ(*CheckpointLock::IsLocked(dir.path()), false);
  EXPECT_FALSE(CheckpointLock::ReadHolder(dir.path())->has_value());
}

TEST(CheckpointLockTest, ChildProcessIsRefusedWhileParentHolds) {
  ScopedTempDir dir;
  auto lock = CheckpointLock::Acquire(dir.path(), Holder("parent-run"));
  ASSERT_TRUE(lock.ok());
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(out[0]);
    auto mine = CheckpointLock::Acquire(dir.path(), Holder("child-run"));
    std::string msg = mine.ok() ? "ACQUIRED" : mine.status().ToString();
    (void)!::write(out[1], msg.data(), msg.size());
    ::_exit(mine.ok() ? 0 : 1);
  }
  ::close(out[1]);
  std::string msg = ReadAllFrom(out[0]);
  ::close(out[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1) << msg;
  EXPECT_NE(msg.find("Conflict"), std::string::npos) << msg;
  EXPECT_NE(msg.find("pid " + std::to_string(::getpid())), std::string::npos) << msg;
  EXPECT_NE(msg.find("run id parent-run"), std::string::npos) << msg;
}

TEST(CheckpointLockTest, ProcessDeathReleasesTheLock) {
  ScopedTempDir dir;
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(ready[0]);
    auto mine = CheckpointLock::Acquire(dir.path(), Holder("child-run"));
    char c = mine.ok() ? 'y' : 'n';
    (void)!::write(ready[1], &c, 1);
    while (true) ::pause();  // hold until killed
  }
  ::close(ready[1]);
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::close(ready[0]);
  ASSERT_EQ(c, 'y');

  auto refused = CheckpointLock::Acquire(dir.path(), Holder("parent-run"));
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(refused.status().IsConflict());
  EXPECT_NE(refused.status().message().find("pid " + std::to_string(pid)), std::string::npos)
      << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("run id child-run"), std::string::npos);
  EXPECT_EQ(*CheckpointLock::IsLocked(dir.path()), true);

  ASSERT_EQ(::kill(pid, SIGKILL), 0);  // no clean-up runs in the child
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status));

  // The stale holder line is still in the file, but the lock is free.
  EXPECT_EQ(*CheckpointLock::IsLocked(dir.path()), false);
  auto taken = CheckpointLock::Acquire(dir.path(), Holder("parent-run"));
  ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  EXPECT_EQ(**CheckpointLock::ReadHolder(dir.path()), Holder("parent-run"));
}

TEST(CheckpointLockTest, HolderWithoutInfoIsReportedAsUnknown) {
  ScopedTempDir dir;
  // Someone holds the flock but never writes a holder line.
  int fd = ::open(LockPath(dir.path()).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  CheckpointLock::Options options;
  options.holder_read_timeout_ms = 20;
  auto refused = CheckpointLock::Acquire(dir.path(), Holder("x"), options);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(refused.status().IsConflict());
  EXPECT_NE(refused.status().message().find("holder details not readable"), std::string::npos)
      << refused.status().ToString();
  ::close(fd);
  EXPECT_TRUE(CheckpointLock::Acquire(dir.path(), Holder("x"), options).ok());
}

TEST(CheckpointLockTest, ProbeDoesNotMakeAnAcquirerFail) {
  ScopedTempDir dir;
  // A shared flock held briefly (what IsLocked does) while Acquire runs: Acquire retries.
  int fd = ::open(LockPath(dir.path()).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_SH), 0);
  std::thread releaser([fd] {
    ::usleep(30 * 1000);
    ::flock(fd, LOCK_UN);
  });
  auto lock = CheckpointLock::Acquire(dir.path(), Holder("x"));
  releaser.join();
  ::close(fd);
  EXPECT_TRUE(lock.ok()) << lock.status().ToString();
}

TEST(CheckpointLockTest, OtherSchemesAreRefusedByNameAndNothingLocalIsMade) {
  ScopedTempDir dir("sluice-lock-scheme");
  char old_cwd[4096];
  ASSERT_NE(::getcwd(old_cwd, sizeof(old_cwd)), nullptr);
  ASSERT_EQ(::chdir(dir.path().c_str()), 0);
  for (const std::string root : {"gs://b/cp", "s3a://b/cp", "abfss://c@a/cp"}) {
    auto lock = CheckpointLock::Acquire(root, Holder("r"));
    ASSERT_FALSE(lock.ok()) << root;
    EXPECT_TRUE(lock.status().IsNotSupported()) << lock.status().ToString();
    EXPECT_NE(lock.status().message().find("checkpoint location '" + root + "'"), std::string::npos)
        << lock.status().ToString();
    EXPECT_NE(lock.status().message().find("is not supported"), std::string::npos);
    EXPECT_TRUE(CheckpointLock::IsLocked(root).status().IsNotSupported());
    EXPECT_TRUE(CheckpointLock::ReadHolder(root).status().IsNotSupported());
  }
  ASSERT_EQ(::chdir(old_cwd), 0);
  auto listed = fs::LocalFileSystem()->List(dir.path());
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty());  // no "gs:" directory or lock file
}

}  // namespace
}  // namespace sluice::stream
