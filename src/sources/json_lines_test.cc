#include "sources/json_lines.h"

#include "fs/local_file_system.h"
#include "sources/test_util.h"

namespace sluice::sources {
namespace {

using testing::Rows;

TEST(JsonLinesTest, BlankLinesAreAllSpaceSeparators) {
  EXPECT_TRUE(IsBlankLine(""));
  EXPECT_TRUE(IsBlankLine("   "));
  EXPECT_TRUE(IsBlankLine("\xC2\xA0 \xE3\x80\x80"));  // U+00A0, U+3000
  EXPECT_FALSE(IsBlankLine("\t"));                    // not Zs: DuckDB's trim() keeps it
  EXPECT_FALSE(IsBlankLine("\r"));
  EXPECT_FALSE(IsBlankLine(" {}"));
  EXPECT_FALSE(IsBlankLine("\xC3"));  // truncated UTF-8
}

TEST(JsonLinesTest, SplitsFilesInOrderSkippingBlankLinesAndStrippingCr) {
  testing::TempDir dir;
  auto fs = fs::LocalFileSystem();
  ASSERT_TRUE(
      fs->AtomicReplace(dir.path() + "/a", "{\"a\":1}\r\n\n  \n{\"a\":2}\r\r", {false}).ok());
  ASSERT_TRUE(fs->AtomicReplace(dir.path() + "/b", "x\n\r\n\ry\n", {false}).ok());
  ASSERT_TRUE(fs->AtomicReplace(dir.path() + "/c", "", {false}).ok());
  auto b = ReadJsonLines({dir.path() + "/a", dir.path() + "/c", dir.path() + "/b"});
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  // "\r" alone is kept (trim() does not remove it) and becomes an empty line.
  EXPECT_EQ(Rows(*b), (std::vector<std::string>{"1|0|{\"a\":1}", "1|3|{\"a\":2}", "3|0|x", "3|1|",
                                                "3|2|\ry"}));
  EXPECT_EQ(b->schema().size(), 3u);
}

TEST(JsonLinesTest, InvalidUtf8NamesTheFileAndLine) {
  testing::TempDir dir;
  auto fs = fs::LocalFileSystem();
  ASSERT_TRUE(fs->AtomicReplace(dir.path() + "/a", "{}\n{\"a\":\"\xFF\"}\n", {false}).ok());
  auto b = ReadJsonLines({dir.path() + "/a"});
  ASSERT_FALSE(b.ok());
  EXPECT_TRUE(b.status().IsInvalidArgument());
  EXPECT_NE(b.status().ToString().find(dir.path() + "/a as text: line 2"), std::string::npos)
      << b.status().ToString();
}

TEST(JsonLinesTest, MissingFileIsAnError) {
  testing::TempDir dir;
  EXPECT_FALSE(ReadJsonLines({dir.path() + "/nope"}).ok());
}

TEST(JsonLinesTest, LinesLongerThanTheReadChunkAndAcrossChunkBoundaries) {
  testing::TempDir dir;
  auto fs = fs::LocalFileSystem();
  // Lines of every length around the 1 MiB read chunk, so that newlines fall on, before and
  // after chunk boundaries, and one line spans three chunks.
  std::string text;
  std::vector<size_t> sizes;
  for (size_t n : {size_t{1} << 20, (size_t{1} << 20) - 1, size_t{1}, size_t{3} << 20, size_t{7}}) {
    sizes.push_back(n);
    text += std::string(n, 'x') + "\n";
  }
  text += "tail";
  ASSERT_TRUE(fs->AtomicReplace(dir.path() + "/a", text, {false}).ok());
  auto b = ReadJsonLines({dir.path() + "/a"});
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ASSERT_EQ(b->num_rows(), static_cast<int64_t>(sizes.size() + 1));
  for (size_t i = 0; i < sizes.size(); ++i) {
    auto line = b->GetString(static_cast<int64_t>(i), 2);
    ASSERT_TRUE(line.has_value());
    EXPECT_EQ(line->size(), sizes[i]) << i;
    EXPECT_EQ(*b->GetInt64(static_cast<int64_t>(i), 1), static_cast<int64_t>(i));
  }
  EXPECT_EQ(b->GetString(static_cast<int64_t>(sizes.size()), 2), "tail");
}

}  // namespace
}  // namespace sluice::sources
