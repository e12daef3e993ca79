#include "fs/file_system.h"

#include <cerrno>
#include <set>

#include <gtest/gtest.h>

namespace sluice::fs {
namespace {

TEST(JoinPathTest, JoinsWithOneSlash) {
  EXPECT_EQ(JoinPath("a", "b"), "a/b");
  EXPECT_EQ(JoinPath("a/", "b"), "a/b");
  EXPECT_EQ(JoinPath("a//", "/b"), "a/b");
  EXPECT_EQ(JoinPath("/", "b"), "/b");
  EXPECT_EQ(JoinPath("/x/y", "b/c"), "/x/y/b/c");
  EXPECT_EQ(JoinPath("", "b"), "b");
  EXPECT_EQ(JoinPath("a", ""), "a");
}

TEST(DirNameTest, SplitsPaths) {
  EXPECT_EQ(DirName("a/b/c"), "a/b");
  EXPECT_EQ(DirName("a/b/c/"), "a/b");
  EXPECT_EQ(DirName("c"), ".");
  EXPECT_EQ(DirName("/c"), "/");
  EXPECT_EQ(DirName("/x//c"), "/x");
  EXPECT_EQ(BaseName("a/b/c"), "c");
  EXPECT_EQ(BaseName("a/b/"), "b");
  EXPECT_EQ(BaseName("c"), "c");
  EXPECT_EQ(BaseName("/"), "/");
}

TEST(TempFileNameTest, RecognizesHiddenTmpNames) {
  EXPECT_TRUE(IsTempFileName(".00001.json.123-4-abc.tmp"));
  EXPECT_TRUE(IsTempFileName(".x.tmp"));
  EXPECT_FALSE(IsTempFileName("00001.json"));
  EXPECT_FALSE(IsTempFileName("x.tmp"));    // not hidden
  EXPECT_FALSE(IsTempFileName(".hidden"));  // no .tmp suffix
  EXPECT_FALSE(IsTempFileName(".tmp"));     // nothing between
  EXPECT_FALSE(IsTempFileName(""));
}

TEST(TempFileNameTest, TempPathsAreUniqueHiddenAndBesideTheTarget) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    std::string t = TempPathFor("/d/e/00000000000000000001.json");
    EXPECT_EQ(DirName(t), "/d/e");
    EXPECT_TRUE(IsTempFileName(BaseName(t))) << t;
    EXPECT_EQ(BaseName(t).rfind(".00000000000000000001.json.", 0), 0u) << t;
    EXPECT_TRUE(seen.insert(t).second) << "duplicate " << t;
  }
  std::string rel = TempPathFor("x");
  EXPECT_EQ(rel.find('/'), std::string::npos) << rel;
  EXPECT_TRUE(IsTempFileName(rel));
  std::string long_name(250, 'n');
  EXPECT_LE(BaseName(TempPathFor("/d/" + long_name)).size(), 255u);
}

TEST(FileOpErrorTest, NamesOperationAndPathAndMapsCodes) {
  Status st = FileOpError(FileOp::kCreateIfAbsent, "/t/x", ENOSPC);
  EXPECT_TRUE(st.IsIOError());
  EXPECT_EQ(st.message(), "creating /t/x: No space left on device");
  EXPECT_TRUE(FileOpError(FileOp::kReadFile, "/t/x", ENOENT).IsNotFound());
  EXPECT_EQ(FileOpError(FileOp::kReadFile, "/t/x", ENOENT).message(),
            "reading /t/x: No such file or directory");
  EXPECT_TRUE(FileOpError(FileOp::kCreateIfAbsent, "/t/x", EEXIST).IsAlreadyExists());
  EXPECT_EQ(FileOpError(FileOp::kAtomicReplace, "/t/x", EIO).message(),
            "replacing /t/x: Input/output error");
}

}  // namespace
}  // namespace sluice::fs
