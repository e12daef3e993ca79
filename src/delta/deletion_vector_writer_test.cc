#include "delta/deletion_vector_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>

#include "delta/deletion_vector.h"
#include "delta/test_util.h"

namespace sluice::delta {
namespace {

using testing::CopyFixture;
using testing::TempDir;

RowIndexSet Set(std::initializer_list<std::pair<uint64_t, uint64_t>> ranges) {
  RowIndexSet s;
  for (const auto& [b, e] : ranges) s.Append(b, e);
  return s;
}

// The bitmap bytes of the DV at `offset` (size field) of a DV file.
std::string StoredBitmap(const std::string& file, size_t offset, size_t size) {
  return file.substr(offset + 4, size);
}

TEST(DeletionVectorWriterTest, Z85EncodesTheUuidAsSparkNamesItsFile) {
  // Spark's fixture: deletion_vector_faa9a331-7067-4729-b46d-a6043d8e37ab.bin is named by
  // pathOrInlineDv "}L*kAAa.V&V#8Vyj=RF4".
  auto bytes = Z85Decode("}L*kAAa.V&V#8Vyj=RF4");
  ASSERT_TRUE(bytes.ok());
  auto text = Z85Encode(*bytes);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "}L*kAAa.V&V#8Vyj=RF4");
  EXPECT_EQ(*Z85Encode(std::string("\x86\x4F\xD2\x6F\xB5\x59\xF7\x5B", 8)), "HelloWorld");
  EXPECT_TRUE(Z85Encode("abc").status().IsInvalidArgument());
}

TEST(DeletionVectorWriterTest, SmallBitmapIsByteForByteWhatSparkWrote) {
  TempDir dir;
  std::string table = CopyFixture("spark/deletion-vectors", dir);
  auto file = fs::LocalFileSystem()->ReadFile(
      table + "/deletion_vector_faa9a331-7067-4729-b46d-a6043d8e37ab.bin");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  // Spark's DELETE of ids 0, 7 and 14 (rows 0, 7, 14): offset 1, sizeInBytes 38.
  auto ours = EncodeDeletionVectorBitmap(Set({{0, 1}, {7, 8}, {14, 15}}));
  ASSERT_TRUE(ours.ok());
  EXPECT_EQ(*ours, StoredBitmap(*file, 1, 38));
  EXPECT_EQ(file->size(), 1u + 4 + 38 + 4);
}

TEST(DeletionVectorWriterTest, LargeSparkBitmapReencodesToTheSameBytes) {
  // 18,715 rows in array, bitmap and run containers (RoaringBitmap's runOptimize choices).
  TempDir dir;
  std::string table = CopyFixture("spark/deletion-vectors-large", dir);
  auto file = fs::LocalFileSystem()->ReadFile(
      table + "/deletion_vector_06bf9c1a-0d78-4709-8a13-0b0690679114.bin");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  const std::string spark = StoredBitmap(*file, 1, 8517);
  auto rows = DecodeDeletionVectorBitmap(spark);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(rows->Cardinality(), 18715u);
  auto ours = EncodeDeletionVectorBitmap(*rows);
  ASSERT_TRUE(ours.ok());
  EXPECT_EQ(ours->size(), spark.size());
  EXPECT_TRUE(*ours == spark) << "re-encoded bytes differ from Spark's";
}

TEST(DeletionVectorWriterTest, RoundTripsEveryContainerKindAndBucket) {
  std::vector<RowIndexSet> cases = {
      Set({{5, 6}}),                                              // one array value
      Set({{0, 65536}}),                                          // a full container: one run
      Set({{65530, 65545}}),                                      // a run across two containers
      Set({{(uint64_t{1} << 32) + 3, (uint64_t{1} << 32) + 4}}),  // a second bucket
      Set({{1, 2},
           {3, 4},
           {100, 5000},
           {70000, 70001},
           {(uint64_t{7} << 32), (uint64_t{7} << 32) + 9000}}),
  };
  // Bitmap containers: more than 4096 scattered values in one container.
  RowIndexSet scattered;
  for (uint64_t v = 0; v < 65536; v += 3) scattered.Append(v, v + 1);
  cases.push_back(scattered);
  // Random sets over several containers, with runs and gaps.
  std::mt19937_64 rng(42);
  for (int c = 0; c < 20; ++c) {
    RowIndexSet s;
    uint64_t pos = rng() % 1000;
    for (int i = 0; i < 300; ++i) {
      uint64_t len = 1 + rng() % (i % 7 == 0 ? 3000 : 4);
      s.Append(pos, pos + len);
      pos += len + 1 + rng() % (i % 5 == 0 ? 40000 : 30);
    }
    cases.push_back(s);
  }
  for (size_t i = 0; i < cases.size(); ++i) {
    auto bytes = EncodeDeletionVectorBitmap(cases[i]);
    ASSERT_TRUE(bytes.ok()) << i;
    auto back = DecodeDeletionVectorBitmap(*bytes);
    ASSERT_TRUE(back.ok()) << i << ": " << back.status().ToString();
    EXPECT_EQ(*back, cases[i]) << "case " << i;
  }
  EXPECT_TRUE(EncodeRoaring64(Set({{uint64_t{1} << 63, (uint64_t{1} << 63) + 1}}))
                  .status()
                  .IsInvalidArgument());
}

TEST(DeletionVectorWriterTest, FileOfSeveralDvsReadsBackThroughTheLoader) {
  TempDir dir;
  auto fs = fs::LocalFileSystem();
  DeletionVectorFileWriter writer(fs.get(), dir.path());
  EXPECT_TRUE(writer.empty());
  auto a = writer.Add(Set({{0, 1}, {7, 8}}));
  auto b = writer.Add(Set({{3, 100000}}));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(writer.Add(RowIndexSet{}).status().IsInvalidArgument());
  ASSERT_TRUE(writer.Write(true).ok());
  EXPECT_EQ(a->storage_type, "u");
  EXPECT_EQ(a->offset, 1);
  EXPECT_EQ(b->offset, 1 + 4 + a->size_in_bytes + 4);
  EXPECT_EQ(a->cardinality, 2);
  EXPECT_EQ(b->cardinality, 99997);
  EXPECT_EQ(a->path_or_inline_dv, b->path_or_inline_dv);
  auto path = DeletionVectorFilePath(dir.path(), *a);
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(*path, writer.path());
  EXPECT_TRUE(std::filesystem::exists(writer.path()));
  DeletionVectorLoader loader(fs.get(), dir.path());
  auto ra = loader.Load(*a, "a.parquet");
  auto rb = loader.Load(*b, "b.parquet");
  ASSERT_TRUE(ra.ok()) << ra.status().ToString();
  ASSERT_TRUE(rb.ok()) << rb.status().ToString();
  EXPECT_EQ(**ra, Set({{0, 1}, {7, 8}}));
  EXPECT_EQ(**rb, Set({{3, 100000}}));
  // Put-if-absent: a second Write does not replace the file.
  EXPECT_FALSE(writer.Write(true).ok());
}

TEST(DeletionVectorWriterTest, UnionMergesOverlapsAndAdjacency) {
  EXPECT_EQ(Union(Set({{0, 3}, {10, 12}}), Set({{2, 5}, {12, 13}, {20, 21}})),
            Set({{0, 5}, {10, 13}, {20, 21}}));
  EXPECT_EQ(Union(RowIndexSet{}, Set({{4, 5}})), Set({{4, 5}}));
  EXPECT_EQ(Union(Set({{0, 100}}), Set({{5, 6}})), Set({{0, 100}}));
}

}  // namespace
}  // namespace sluice::delta
