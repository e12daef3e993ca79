#include "fs/crash_point.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "fs/fault_injection_file_system.h"
#include "fs/local_file_system.h"
#include "fs/test_util.h"

namespace sluice::fs {
namespace {

TEST(ParseCrashAtTest, ParsesPointAndHit) {
  std::string_view point;
  long long hit = 0;
  ASSERT_TRUE(ParseCrashAt("stream.after_commit", &point, &hit));
  EXPECT_EQ(point, "stream.after_commit");
  EXPECT_EQ(hit, 1);
  ASSERT_TRUE(ParseCrashAt("stream.after_commit:12", &point, &hit));
  EXPECT_EQ(point, "stream.after_commit");
  EXPECT_EQ(hit, 12);
  EXPECT_FALSE(ParseCrashAt("", &point, &hit));
  EXPECT_FALSE(ParseCrashAt(":3", &point, &hit));
  EXPECT_FALSE(ParseCrashAt("p:0", &point, &hit));
  EXPECT_FALSE(ParseCrashAt("p:", &point, &hit));
  EXPECT_FALSE(ParseCrashAt("p:x1", &point, &hit));
}

// Forks a child that sets SLUICE_CRASH_AT=`crash_at`, runs `body(marker)` and exits 0.
// `marker(name)` creates a file, so the parent can see how far the child got.
template <typename F>
int RunChildWithCrashAt(const std::string& crash_at, const ScopedTempDir& dir, F body) {
  pid_t pid = fork();
  if (pid == 0) {
    alarm(60);
    if (crash_at.empty()) {
      unsetenv(kCrashAtEnvVar);
    } else {
      setenv(kCrashAtEnvVar, crash_at.c_str(), 1);
    }
    auto marker = [&](const std::string& name) {
      Status st = LocalFileSystem()->CreateIfAbsent(dir.Join(name), name);
      if (!st.ok()) _exit(2);
    };
    body(marker);
    _exit(0);
  }
  int wstatus = -1;
  if (pid < 0 || waitpid(pid, &wstatus, 0) != pid) return -1;
  return wstatus;
}

int ExitCode(int wstatus) { return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1000 - wstatus; }

class CrashAtTest : public ::testing::Test {
 protected:
  bool Has(const std::string& name) { return *LocalFileSystem()->Exists(tmp_.Join(name)); }
  ScopedTempDir tmp_{"sluice-crash"};
};

TEST_F(CrashAtTest, KillsTheChildAtTheNamedPoint) {
  int wstatus = RunChildWithCrashAt("test.second", tmp_, [](auto marker) {
    MaybeCrashProcess("test.first");
    marker("after-first");
    Status st = LocalFileSystem()->MaybeCrash("test.second");  // via the FileSystem hook
    (void)st;
    marker("after-second");
  });
  EXPECT_EQ(ExitCode(wstatus), kCrashExitCode);
  EXPECT_TRUE(Has("after-first"));
  EXPECT_FALSE(Has("after-second"));
}

TEST_F(CrashAtTest, KillsOnTheNthHit) {
  int wstatus = RunChildWithCrashAt("test.loop:3", tmp_, [](auto marker) {
    for (int i = 1; i <= 5; ++i) {
      marker("before-" + std::to_string(i));
      MaybeCrashProcess("test.loop");
    }
  });
  EXPECT_EQ(ExitCode(wstatus), kCrashExitCode);
  EXPECT_TRUE(Has("before-3"));
  EXPECT_FALSE(Has("before-4"));
}

TEST_F(CrashAtTest, UnarmedOrOtherPointsDoNotKill) {
  int wstatus = RunChildWithCrashAt("test.elsewhere", tmp_, [](auto marker) {
    MaybeCrashProcess("test.first");
    marker("done");
  });
  EXPECT_EQ(ExitCode(wstatus), 0);
  EXPECT_TRUE(Has("done"));
  wstatus = RunChildWithCrashAt("", tmp_, [](auto marker) {
    MaybeCrashProcess("test.first");
    marker("done-unset");
  });
  EXPECT_EQ(ExitCode(wstatus), 0);
  EXPECT_TRUE(Has("done-unset"));
}

TEST_F(CrashAtTest, FaultInjectingFileSystemForwardsToTheEnvironment) {
  int wstatus = RunChildWithCrashAt("stream.after_offsets_write", tmp_, [](auto marker) {
    FaultInjectingFileSystem fi(LocalFileSystem());
    fi.SetCrashPoint("other.point");  // armed in-process, not reached
    Status st = fi.MaybeCrash("stream.before_offsets_write");
    if (!st.ok()) _exit(4);
    marker("before");
    st = fi.MaybeCrash("stream.after_offsets_write");
    (void)st;
    marker("after");
  });
  EXPECT_EQ(ExitCode(wstatus), kCrashExitCode);
  EXPECT_TRUE(Has("before"));
  EXPECT_FALSE(Has("after"));
}

// SLUICE_TEST_FAIL_AT (moved here from stream/test_fail_point with the one CrashPoint call).
class InjectedFailureTest : public ::testing::Test {
 protected:
  void TearDown() override {
    unsetenv(kFailAtEnvVar);
    ResetInjectedFailuresForTesting();
  }
};

TEST_F(InjectedFailureTest, UnsetDoesNothing) {
  unsetenv(kFailAtEnvVar);
  EXPECT_TRUE(MaybeInjectFailure("after_sink_write").ok());
}

TEST_F(InjectedFailureTest, FailsTheArmedPointNTimesThenPasses) {
  setenv(kFailAtEnvVar, "after_sink_write:2", 1);
  ResetInjectedFailuresForTesting();
  EXPECT_TRUE(MaybeInjectFailure("after_commit_write").ok());  // another point
  Status first = MaybeInjectFailure("after_sink_write");
  EXPECT_TRUE(first.IsIOError());
  EXPECT_EQ(first.message(), "injected failure at after_sink_write (SLUICE_TEST_FAIL_AT, 1 of 2)");
  EXPECT_TRUE(MaybeInjectFailure("after_sink_write").IsIOError());
  EXPECT_TRUE(MaybeInjectFailure("after_sink_write").ok());
  EXPECT_TRUE(MaybeInjectFailure("after_sink_write").ok());
}

TEST_F(InjectedFailureTest, MalformedIsIgnored) {
  for (const char* bad :
       {"after_sink_write:zero", "after_sink_write:0", ":2", "after_sink_write:"}) {
    setenv(kFailAtEnvVar, bad, 1);
    EXPECT_TRUE(MaybeInjectFailure("after_sink_write").ok()) << bad;
  }
}

TEST_F(InjectedFailureTest, CrashPointIsTheOneCallForAllThreeMechanisms) {
  FaultInjectingFileSystem fi(LocalFileSystem());
  EXPECT_TRUE(CrashPoint(fi, "after_sink_write", "batch 3").ok());  // nothing armed

  setenv(kFailAtEnvVar, "after_sink_write", 1);
  ResetInjectedFailuresForTesting();
  Status failed = CrashPoint(fi, "after_sink_write", "batch 3");
  EXPECT_TRUE(failed.IsIOError());
  EXPECT_EQ(failed.message(),
            "batch 3: injected failure at after_sink_write (SLUICE_TEST_FAIL_AT, 1 of 1)");
  EXPECT_TRUE(CrashPoint(fi, "after_sink_write", "batch 4").ok());  // used up
  unsetenv(kFailAtEnvVar);

  fi.SetCrashPoint("after_commit_write");
  Status crashed = CrashPoint(fi, "after_commit_write", "batch 4");
  EXPECT_TRUE(crashed.IsCancelled());
  EXPECT_NE(crashed.message().find("batch 4: "), std::string::npos) << crashed.ToString();
  EXPECT_NE(crashed.message().find("injected crash at after_commit_write"), std::string::npos)
      << crashed.ToString();
}

TEST_F(CrashAtTest, CrashPointKillsTheProcessWhenSluiceCrashAtNamesIt) {
  int wstatus = RunChildWithCrashAt("after_state_commit", tmp_, [](auto marker) {
    if (!CrashPoint(*LocalFileSystem(), "after_offsets_write", "batch 0").ok()) _exit(4);
    marker("before");
    Status st = CrashPoint(*LocalFileSystem(), "after_state_commit", "batch 0");
    (void)st;
    marker("after");
  });
  EXPECT_EQ(ExitCode(wstatus), kCrashExitCode);
  EXPECT_TRUE(Has("before"));
  EXPECT_FALSE(Has("after"));
}

}  // namespace
}  // namespace sluice::fs
