#include "fs/fault_injection_file_system.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "fs/crash_point.h"
#include "fs/local_file_system.h"
#include "fs/test_util.h"

namespace sluice::fs {
namespace {

std::vector<std::string> Names(const Result<std::vector<FileInfo>>& list) {
  std::vector<std::string> out;
  EXPECT_TRUE(list.ok()) << list.status().ToString();
  if (!list.ok()) return out;
  for (const FileInfo& i : *list) out.push_back(BaseName(i.path));
  return out;
}

class FaultInjectionTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(tmp_.path().empty()); }
  std::string P(std::string_view name) const { return tmp_.Join(name); }

  ScopedTempDir tmp_{"sluice-fi"};
  std::shared_ptr<FileSystem> base_ = LocalFileSystem();
  std::shared_ptr<FaultInjectingFileSystem> fs_ = std::make_shared<FaultInjectingFileSystem>(base_);
};

TEST_F(FaultInjectionTest, PassesThroughWhenNothingIsArmed) {
  ASSERT_TRUE(fs_->CreateIfAbsent(P("a"), "A").ok());
  EXPECT_TRUE(fs_->CreateIfAbsent(P("a"), "B").IsAlreadyExists());
  ASSERT_TRUE(fs_->AtomicReplace(P("b"), "B").ok());
  EXPECT_EQ(*fs_->ReadFile(P("a")), "A");
  EXPECT_EQ(Names(fs_->List(tmp_.path())), (std::vector<std::string>{"a", "b"}));
  ASSERT_TRUE(fs_->RenameNoReplace(P("b"), P("c")).ok());
  EXPECT_TRUE(*base_->Exists(P("c")));
  EXPECT_TRUE(fs_->MaybeCrash("some.point").ok());
  EXPECT_EQ(fs_->OpCount(FileOp::kCreateIfAbsent), 2);
  EXPECT_EQ(fs_->OpCount(FileOp::kAtomicReplace), 1);
  EXPECT_EQ(fs_->OpCount(FileOp::kReadFile), 1);
  EXPECT_FALSE(fs_->crashed());
}

TEST_F(FaultInjectionTest, NthWriteFailsWithEioLikeTheOsAndLeavesNothing) {
  fs_->FailNthWrite(3, EIO);
  EXPECT_EQ(fs_->PendingFaults(), 1);
  ASSERT_TRUE(fs_->CreateIfAbsent(P("log/1"), "one").ok());
  ASSERT_TRUE(fs_->AtomicReplace(P("log/2"), "two").ok());
  Status st = fs_->CreateIfAbsent(P("log/3"), "three");
  EXPECT_TRUE(st.IsIOError()) << st.ToString();
  EXPECT_EQ(st.message(), "creating " + P("log/3") + ": Input/output error");
  EXPECT_EQ(st, FileOpError(FileOp::kCreateIfAbsent, P("log/3"), EIO));
  EXPECT_FALSE(*base_->Exists(P("log/3")));
  EXPECT_EQ(Names(base_->List(P("log"))), (std::vector<std::string>{"1", "2"}));  // no debris
  EXPECT_FALSE(fs_->crashed());
  // One-shot: the retry and later writes succeed.
  EXPECT_EQ(fs_->PendingFaults(), 0);
  ASSERT_TRUE(fs_->CreateIfAbsent(P("log/3"), "three").ok());
  EXPECT_EQ(*base_->ReadFile(P("log/3")), "three");
}

TEST_F(FaultInjectionTest, EnospcFilteredByPathKeepsOldContent) {
  ASSERT_TRUE(fs_->AtomicReplace(P("_delta_log/_last_checkpoint"), "keep").ok());
  fs_->FailNthWrite(2, ENOSPC, ".json");
  ASSERT_TRUE(fs_->AtomicReplace(P("data/part-0.parquet"), "pq").ok());  // not counted
  ASSERT_TRUE(fs_->CreateIfAbsent(P("_delta_log/0.json"), "c0").ok());   // 1st counted
  ASSERT_TRUE(fs_->AtomicReplace(P("data/part-1.parquet"), "pq").ok());  // not counted
  Status st = fs_->CreateIfAbsent(P("_delta_log/1.json"), "c1");         // 2nd counted
  EXPECT_TRUE(st.IsIOError());
  EXPECT_EQ(st.message(), "creating " + P("_delta_log/1.json") + ": No space left on device");
  EXPECT_FALSE(*base_->Exists(P("_delta_log/1.json")));

  fs_->FailNthWrite(1, ENOSPC, "_last_checkpoint");
  st = fs_->AtomicReplace(P("_delta_log/_last_checkpoint"), "new");
  EXPECT_EQ(st.message(),
            "replacing " + P("_delta_log/_last_checkpoint") + ": No space left on device");
  EXPECT_EQ(*base_->ReadFile(P("_delta_log/_last_checkpoint")), "keep");
  EXPECT_EQ(Names(base_->List(P("_delta_log"))),
            (std::vector<std::string>{"0.json", "_last_checkpoint"}));
}

TEST_F(FaultInjectionTest, StickyFaultKeepsFailingUntilCleared) {
  Fault f;
  f.nth = 2;
  f.sticky = true;
  f.error = ENOSPC;
  ASSERT_TRUE(fs_->InjectFault(f).ok());
  EXPECT_TRUE(fs_->CreateIfAbsent(P("0"), "x").ok());
  for (int i = 1; i <= 3; ++i) {
    Status st = fs_->CreateIfAbsent(P(std::to_string(i)), "x");
    EXPECT_TRUE(st.IsIOError()) << i;
  }
  EXPECT_EQ(fs_->PendingFaults(), 1);
  fs_->ClearFaults();
  EXPECT_TRUE(fs_->CreateIfAbsent(P("1"), "x").ok());
}

TEST_F(FaultInjectionTest, FaultsOnOtherOperations) {
  ASSERT_TRUE(fs_->CreateIfAbsent(P("a"), "A").ok());
  Fault read_fault;
  read_fault.ops = OpBit(FileOp::kReadFile);
  ASSERT_TRUE(fs_->InjectFault(read_fault).ok());
  Status st = fs_->ReadFile(P("a")).status();
  EXPECT_EQ(st, FileOpError(FileOp::kReadFile, P("a"), EIO));
  EXPECT_EQ(*fs_->ReadFile(P("a")), "A");

  Fault rename_fault;
  rename_fault.ops = OpBit(FileOp::kRenameNoReplace);
  rename_fault.error = EROFS;
  rename_fault.path_substring = "target";
  ASSERT_TRUE(fs_->InjectFault(rename_fault).ok());
  st = fs_->RenameNoReplace(P("a"), P("target"));
  EXPECT_TRUE(st.IsIOError());
  EXPECT_EQ(st.message(), "renaming " + P("a") + " to " + P("target") + ": Read-only file system");
  EXPECT_TRUE(*base_->Exists(P("a")));
  EXPECT_FALSE(*base_->Exists(P("target")));
}

TEST_F(FaultInjectionTest, RejectsInvalidFaults) {
  Fault f;
  f.nth = 0;
  EXPECT_TRUE(fs_->InjectFault(f).IsInvalidArgument());
  f.nth = 1;
  f.ops = 0;
  EXPECT_TRUE(fs_->InjectFault(f).IsInvalidArgument());
  f.ops = kWriteOps;
  f.error = 0;
  EXPECT_TRUE(fs_->InjectFault(f).IsInvalidArgument());
  Fault torn;
  torn.kind = FaultKind::kTornWrite;
  torn.ops = OpBit(FileOp::kReadFile);
  EXPECT_TRUE(fs_->InjectFault(torn).IsInvalidArgument());
  EXPECT_EQ(fs_->PendingFaults(), 0);
}

TEST_F(FaultInjectionTest, TornReplaceLeavesTargetIntactAndPrefixInTempFile) {
  ASSERT_TRUE(fs_->AtomicReplace(P("ckpt/metadata"), "old").ok());
  fs_->TearNthWrite(1, "metadata", /*publish=*/false, /*torn_bytes=*/4);
  Status st = fs_->AtomicReplace(P("ckpt/metadata"), "0123456789");
  EXPECT_TRUE(st.IsCancelled()) << st.ToString();
  EXPECT_EQ(st.message(), "injected crash during replacing " + P("ckpt/metadata") +
                              " (torn write: 4 of 10 bytes)");
  EXPECT_TRUE(fs_->crashed());
  EXPECT_EQ(*base_->ReadFile(P("ckpt/metadata")), "old");  // atomicity: never partial

  std::vector<std::string> names = Names(base_->List(P("ckpt")));
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[1], "metadata");
  EXPECT_TRUE(IsTempFileName(names[0])) << names[0];
  EXPECT_EQ(names[0].rfind(".metadata.", 0), 0u) << names[0];
  EXPECT_EQ(*base_->ReadFile(P("ckpt/" + names[0])), "0123");

  // The "process" is dead until restarted.
  EXPECT_TRUE(fs_->ReadFile(P("ckpt/metadata")).status().IsCancelled());
  fs_->Restart();
  EXPECT_EQ(*fs_->ReadFile(P("ckpt/metadata")), "old");
}

TEST_F(FaultInjectionTest, TornCreateLeavesNoTarget) {
  fs_->TearNthWrite(2);
  ASSERT_TRUE(fs_->CreateIfAbsent(P("offsets/0"), "first").ok());
  Status st = fs_->CreateIfAbsent(P("offsets/1"), "abcdefghij");
  EXPECT_TRUE(st.IsCancelled());
  EXPECT_FALSE(*base_->Exists(P("offsets/1")));
  std::vector<std::string> names = Names(base_->List(P("offsets")));
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[1], "0");
  ASSERT_TRUE(IsTempFileName(names[0]));
  EXPECT_EQ(*base_->ReadFile(P("offsets/" + names[0])), "abcde");  // default: half the bytes
  // A log reader that lists with a name prefix never sees the temp file.
  EXPECT_EQ(Names(base_->List(P("offsets"), "1")), std::vector<std::string>{});
}

TEST_F(FaultInjectionTest, TornPublishShowsPrefixAtTarget) {
  fs_->TearNthWrite(1, "", /*publish=*/true);
  Status st = fs_->CreateIfAbsent(P("commits/7"), "{\"nextBatchWatermarkMs\":0}\n");
  EXPECT_TRUE(st.IsCancelled());
  auto data = base_->ReadFile(P("commits/7"));
  ASSERT_TRUE(data.ok());
  EXPECT_EQ(*data, std::string("{\"nextBatchWatermarkMs\":0}\n").substr(0, 13));
  EXPECT_EQ(Names(base_->List(P("commits"))), std::vector<std::string>{"7"});
}

TEST_F(FaultInjectionTest, CrashAfterMakesTheChangeButReportsCancelled) {
  Fault f;
  f.kind = FaultKind::kCrashAfter;
  f.path_substring = "/5";
  ASSERT_TRUE(fs_->InjectFault(f).ok());
  Status st = fs_->CreateIfAbsent(P("commits/5"), "done");
  EXPECT_TRUE(st.IsCancelled());
  EXPECT_EQ(st.message(), "injected crash after creating " + P("commits/5"));
  EXPECT_EQ(*base_->ReadFile(P("commits/5")), "done");
  EXPECT_TRUE(fs_->Exists(P("commits/5")).status().IsCancelled());
}

TEST_F(FaultInjectionTest, CrashBeforeChangesNothing) {
  Fault f;
  f.kind = FaultKind::kCrashBefore;
  f.ops = OpBit(FileOp::kDeleteFile);
  ASSERT_TRUE(fs_->CreateIfAbsent(P("keep"), "k").ok());
  ASSERT_TRUE(fs_->InjectFault(f).ok());
  Status st = fs_->DeleteFile(P("keep"));
  EXPECT_EQ(st, Status::Cancelled("injected crash before deleting " + P("keep")));
  EXPECT_TRUE(*base_->Exists(P("keep")));
}

TEST_F(FaultInjectionTest, CrashPointMakesThatAndEveryLaterOperationFail) {
  fs_->SetCrashPoint("stream.after_offsets_write");
  EXPECT_TRUE(fs_->MaybeCrash("stream.before_offsets_write").ok());
  ASSERT_TRUE(fs_->CreateIfAbsent(P("offsets/0"), "o").ok());
  Status st = fs_->MaybeCrash("stream.after_offsets_write");
  const Status expected = Status::Cancelled("injected crash at stream.after_offsets_write");
  EXPECT_EQ(st, expected);
  EXPECT_TRUE(fs_->crashed());
  EXPECT_EQ(fs_->CreateIfAbsent(P("commits/0"), "c"), expected);
  EXPECT_EQ(fs_->AtomicReplace(P("x"), "c"), expected);
  EXPECT_EQ(fs_->ReadFile(P("offsets/0")).status(), expected);
  EXPECT_EQ(fs_->List(P("offsets")).status(), expected);
  EXPECT_EQ(fs_->Exists(P("offsets/0")).status(), expected);
  EXPECT_EQ(fs_->DeleteRecursive(P("offsets")), expected);
  EXPECT_EQ(fs_->MaybeCrash("stream.before_offsets_write"), expected);
  EXPECT_FALSE(*base_->Exists(P("commits/0")));
  EXPECT_TRUE(*base_->Exists(P("offsets/0")));  // the disk outlives the process
  EXPECT_EQ(fs_->ReachedCrashPoints(), (std::vector<std::string>{"stream.before_offsets_write",
                                                                 "stream.after_offsets_write"}));

  fs_->Restart();
  EXPECT_FALSE(fs_->crashed());
  EXPECT_TRUE(fs_->CreateIfAbsent(P("commits/0"), "c").ok());
  EXPECT_TRUE(fs_->MaybeCrash("stream.after_offsets_write").ok());  // point was one-shot
}

TEST_F(FaultInjectionTest, CrashPointOnNthHit) {
  fs_->SetCrashPoint("loop", 3);
  EXPECT_TRUE(fs_->MaybeCrash("loop").ok());
  EXPECT_TRUE(fs_->MaybeCrash("loop").ok());
  EXPECT_TRUE(fs_->MaybeCrash("loop").IsCancelled());
  EXPECT_EQ(fs_->CrashPointHits("loop"), 3);
  EXPECT_EQ(fs_->CrashPointHits("never"), 0);

  FaultInjectingFileSystem other(base_);
  other.SetCrashPoint("p");
  other.ClearCrashPoints();
  EXPECT_TRUE(other.MaybeCrash("p").ok());
  other.Crash("test.kill");
  EXPECT_EQ(other.Stat(tmp_.path()).status(), Status::Cancelled("injected crash at test.kill"));
}

TEST_F(FaultInjectionTest, ConcurrentWritersSeeExactlyOneInjectedFailure) {
  fs_->FailNthWrite(50, EIO);
  constexpr int kThreads = 4, kPerThread = 25;
  std::atomic<int> failures{0}, others{0};
  std::vector<std::thread> threads;
  WriteOptions nosync;
  nosync.sync = false;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        Status st = fs_->CreateIfAbsent(P("c/" + std::to_string(t * 100 + i)), "x", nosync);
        if (st.IsIOError()) {
          failures.fetch_add(1);
        } else if (!st.ok()) {
          others.fetch_add(1);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 1);
  EXPECT_EQ(others.load(), 0);
  EXPECT_EQ(base_->List(P("c"))->size(), static_cast<size_t>(kThreads * kPerThread - 1));
  EXPECT_EQ(fs_->OpCount(FileOp::kCreateIfAbsent), kThreads * kPerThread);
}

// Runs `body` in a forked child that then exits 0; returns the child's wait status.
template <typename F>
int RunInChild(F body) {
  pid_t pid = fork();
  if (pid == 0) {
    alarm(60);
    body();
    _exit(0);
  }
  int wstatus = -1;
  if (pid < 0 || waitpid(pid, &wstatus, 0) != pid) return -1;
  return wstatus;
}

TEST_F(FaultInjectionTest, ExitProcessOnCrashKillsTheChildMidWrite) {
  const std::string target = P("log/3");
  int wstatus = RunInChild([&] {
    FaultInjectingFileSystem::Options options;
    options.exit_process_on_crash = true;
    FaultInjectingFileSystem fi(LocalFileSystem(), options);
    fi.TearNthWrite(1, "log/3", false, 6);
    Status st = fi.CreateIfAbsent(target, "torn-write-data");
    (void)st;
    _exit(3);  // not reached when the crash works
  });
  ASSERT_TRUE(WIFEXITED(wstatus)) << wstatus;
  EXPECT_EQ(WEXITSTATUS(wstatus), kCrashExitCode);
  EXPECT_FALSE(*base_->Exists(target));
  std::vector<std::string> names = Names(base_->List(P("log")));
  ASSERT_EQ(names.size(), 1u);
  EXPECT_TRUE(IsTempFileName(names[0]));
  EXPECT_EQ(*base_->ReadFile(P("log/" + names[0])), "torn-w");
}

}  // namespace
}  // namespace sluice::fs
