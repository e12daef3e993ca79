// Issue 24: a files-source log entry damaged after it was written (cut at any byte, emptied) must
// never make the stream read a file twice or skip one. These tests cut entries at every byte
// offset and drive a FileSource as the micro-batch loop does across a restart.
#include <filesystem>

#include "sources/file_source.h"
#include "sources/file_source_log.h"
#include "sources/source_factory.h"
#include "sources/test_util.h"

namespace sluice::sources {
namespace {

using testing::Sorted;

class FileSourceLogTornTest : public testing::SourceTest {
 protected:
  void SetUp() override {
    SourceTest::SetUp();
    in_ = dir_.path() + "/in";
    Put("a.json", "{\"id\":1}\n{\"id\":2}\n", 1000);
    Put("b.json", "{\"id\":3}\n", 2000);
    Put("c.json", "{\"id\":4}\n{\"id\":5}\n", 3000);
  }
  void Put(const std::string& name, const std::string& text, int64_t mtime_ms) {
    auto fs = fs::LocalFileSystem();
    ASSERT_TRUE(fs->AtomicReplace(in_ + "/" + name, text, {false}).ok());
    ASSERT_TRUE(fs->SetModificationTime(in_ + "/" + name, mtime_ms).ok());
  }
  Result<std::unique_ptr<Source>> Make(const std::string& ckpt) {
    return CreateSource("files",
                        Ctx(ckpt, {{"path", in_}, {"format", "json"}, {"schema", "id BIGINT"}}));
  }
  static ReadLimit Files(int64_t n) {
    ReadLimit l;
    l.max_files = n;
    return l;
  }
  // A first run: entry 0 = {a} (planned and read), entry 1 = {b, c} (written by LatestOffset).
  // Returns the text of entry 1.
  std::string FirstRun(const std::string& ckpt) {
    auto src = Make(ckpt);
    EXPECT_TRUE(src.ok()) << src.status().ToString();
    if (!src.ok()) return "";
    auto o0 = Latest(src->get(), std::nullopt, Files(1));
    EXPECT_EQ(o0, "{\"logOffset\":0}");
    EXPECT_EQ(Get(src->get(), std::nullopt, *o0), (std::vector<std::string>{"1|NULL", "2|NULL"}));
    EXPECT_EQ(Latest(src->get(), o0, Files(2)), "{\"logOffset\":1}");
    auto text = fs::LocalFileSystem()->ReadFile(ckpt + "/1");
    EXPECT_TRUE(text.ok());
    return text.ok() ? *text : "";
  }
  void Truncate(const std::string& path, size_t size) {
    std::error_code ec;
    std::filesystem::resize_file(path, size, ec);
    ASSERT_FALSE(ec) << path << ": " << ec.message();
  }

  testing::TempDir dir_;
  std::string in_;
};

const OffsetJson kO0 = "{\"logOffset\":0}";
const OffsetJson kO1 = "{\"logOffset\":1}";

// The crash came after entry 1 was written and before a batch was planned with it (the offsets
// end at entry 0): the damaged entry is removed and written again from the listing, and every
// file is read exactly once.
TEST_F(FileSourceLogTornTest, DamagedUnplannedLatestEntryIsRebuiltAtEveryCut) {
  std::string full;
  {
    std::string ckpt = dir_.path() + "/probe";
    full = FirstRun(ckpt);
  }
  ASSERT_GT(full.size(), 20u);
  for (size_t cut = 0; cut < full.size(); ++cut) {
    SCOPED_TRACE("cut at byte " + std::to_string(cut));
    std::string ckpt = dir_.path() + "/a" + std::to_string(cut);
    ASSERT_EQ(FirstRun(ckpt), full);
    Truncate(ckpt + "/1", cut);
    auto src = Make(ckpt);  // a restart
    ASSERT_TRUE(src.ok()) << src.status().ToString();
    std::vector<std::string> rows = {"1|NULL", "2|NULL"};  // batch 0, committed before the crash
    auto o1 = Latest(src->get(), kO0, Files(2));
    ASSERT_EQ(o1, kO1);
    for (auto& r : Get(src->get(), kO0, *o1)) rows.push_back(r);
    EXPECT_EQ(Latest(src->get(), o1, Files(2)), o1);  // nothing left
    EXPECT_EQ(Sorted(rows),
              (std::vector<std::string>{"1|NULL", "2|NULL", "3|NULL", "4|NULL", "5|NULL"}));
    auto rebuilt = fs::LocalFileSystem()->ReadFile(ckpt + "/1");
    ASSERT_TRUE(rebuilt.ok());
    EXPECT_EQ(*rebuilt, full);
  }
}

// A batch was planned with entry 1 (the offsets name logOffset 1): its files cannot be known, so
// the restart fails naming the file, both for re-running that batch (GetBatch) and for planning
// the next one (LatestOffset). Never a silent re-read.
TEST_F(FileSourceLogTornTest, DamagedPlannedEntryIsCorruptionNamingTheFileAtEveryCut) {
  std::string full;
  {
    std::string ckpt = dir_.path() + "/probe";
    full = FirstRun(ckpt);
  }
  for (size_t cut = 0; cut < full.size(); ++cut) {
    SCOPED_TRACE("cut at byte " + std::to_string(cut));
    std::string ckpt = dir_.path() + "/p" + std::to_string(cut);
    ASSERT_EQ(FirstRun(ckpt), full);
    Truncate(ckpt + "/1", cut);
    auto src = Make(ckpt);
    ASSERT_TRUE(src.ok()) << src.status().ToString();
    auto rerun = (*src)->GetBatch(kO0, kO1);
    ASSERT_FALSE(rerun.ok());
    EXPECT_TRUE(rerun.status().IsCorruption()) << rerun.status().ToString();
    EXPECT_NE(rerun.status().message().find(ckpt + "/1"), std::string::npos)
        << rerun.status().ToString();
    auto next = (*src)->LatestOffset(kO1, Files(2));
    ASSERT_FALSE(next.ok());
    EXPECT_TRUE(next.status().IsCorruption()) << next.status().ToString();
    EXPECT_NE(next.status().message().find(ckpt + "/1"), std::string::npos);
    EXPECT_NE(next.status().message().find("a batch was planned"), std::string::npos)
        << next.status().ToString();
  }
}

// An entry below the latest one was planned (entry 1 exists only after entry 0 was delivered):
// damage to it fails the source's open, naming the file.
TEST_F(FileSourceLogTornTest, DamagedEarlierEntryFailsTheOpenAtEveryCut) {
  std::string ckpt = dir_.path() + "/ckpt";
  FirstRun(ckpt);
  auto full = fs::LocalFileSystem()->ReadFile(ckpt + "/0");
  ASSERT_TRUE(full.ok());
  for (size_t cut = full->size(); cut-- > 0;) {
    SCOPED_TRACE("cut at byte " + std::to_string(cut));
    ASSERT_TRUE(fs::LocalFileSystem()->AtomicReplace(ckpt + "/0", full->substr(0, cut)).ok());
    auto src = Make(ckpt);
    ASSERT_FALSE(src.ok());
    EXPECT_TRUE(src.status().IsCorruption()) << src.status().ToString();
    EXPECT_NE(src.status().message().find(ckpt + "/0"), std::string::npos)
        << src.status().ToString();
  }
}

}  // namespace
}  // namespace sluice::sources
