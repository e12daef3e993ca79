#include "fs/scratch_dir.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "fs/test_util.h"

namespace sluice::fs {
namespace {

// The pid of a process that has ended (forked, exited and reaped).
pid_t EndedPid() {
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

TEST(ScratchDirTest, IsMadeUnderTmpdirAndRemovedWithItsContents) {
  ScopedTempDir tmp;
  ::setenv("TMPDIR", tmp.path().c_str(), 1);
  std::string path;
  {
    auto dir = ScratchDir::Make("sluice-test");
    ASSERT_TRUE(dir.ok()) << dir.status().ToString();
    path = (*dir)->path();
    EXPECT_EQ(std::filesystem::path(path).parent_path(), std::filesystem::path(tmp.path()));
    EXPECT_EQ(std::filesystem::path(path).filename().string().rfind(
                  "sluice-test-" + std::to_string(::getpid()) + "-", 0),
              0u);
    std::filesystem::create_directories(path + "/a/b");
    EXPECT_TRUE(std::filesystem::exists(path + "/a/b"));
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  ::unsetenv("TMPDIR");
}

// What a killed process left is removed by the next Make of its prefix; a live process's
// directory, another prefix's and names that do not parse are kept.
TEST(ScratchDirTest, TheNextMakeRemovesTheDirectoriesOfEndedProcessesOnly) {
  ScopedTempDir tmp;
  const std::string parent = tmp.path();
  const std::string dead = parent + "/sluice-test-" + std::to_string(EndedPid()) + "-abc123";
  const std::string live = parent + "/sluice-test-" + std::to_string(::getppid()) + "-abc123";
  const std::string other = parent + "/sluice-other-" + std::to_string(EndedPid()) + "-abc123";
  const std::string odd = parent + "/sluice-test-notapid";
  for (const std::string& d : {dead, live, other, odd}) {
    std::filesystem::create_directories(d + "/inner");
  }
  ::setenv("TMPDIR", parent.c_str(), 1);
  {
    auto dir = ScratchDir::Make("sluice-test");
    ASSERT_TRUE(dir.ok()) << dir.status().ToString();
    EXPECT_FALSE(std::filesystem::exists(dead));
    EXPECT_TRUE(std::filesystem::exists(live));
    EXPECT_TRUE(std::filesystem::exists(other));
    EXPECT_TRUE(std::filesystem::exists(odd));
    EXPECT_TRUE(std::filesystem::exists((*dir)->path()));
  }
  ::unsetenv("TMPDIR");
  EXPECT_EQ(ReclaimDeadScratchDirs(parent, "sluice-other"), 1);
  EXPECT_FALSE(std::filesystem::exists(other));
}

TEST(ScratchDirTest, AnUnwritableParentIsAnIOErrorNamingIt) {
  ::setenv("TMPDIR", "/nonexistent/sluice-scratch-parent", 1);
  auto dir = ScratchDir::Make("sluice-test");
  ::unsetenv("TMPDIR");
  ASSERT_FALSE(dir.ok());
  EXPECT_TRUE(dir.status().IsIOError());
  EXPECT_NE(dir.status().message().find("/nonexistent/sluice-scratch-parent"), std::string::npos);
}

}  // namespace
}  // namespace sluice::fs
