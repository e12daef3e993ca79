#include "delta/deletion_vector.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "delta/test_util.h"

namespace sluice::delta {
namespace {

using testing::CopyFixture;
using ::testing::HasSubstr;
using testing::TempDir;

std::vector<uint64_t> Values(const RowIndexSet& s) {
  std::vector<uint64_t> out;
  for (const RowRange& r : s.ranges) {
    for (uint64_t v = r.begin; v < r.end; ++v) out.push_back(v);
  }
  return out;
}

TEST(DeletionVectorTest, Z85AndCrc32KnownValues) {
  // ZeroMQ's RFC 32 test vector.
  auto hello = Z85Decode("HelloWorld");
  ASSERT_TRUE(hello.ok());
  EXPECT_EQ(*hello, std::string("\x86\x4F\xD2\x6F\xB5\x59\xF7\x5B", 8));
  EXPECT_TRUE(Z85Decode("Hell").status().IsCorruption());
  EXPECT_THAT(Z85Decode("Hell~").status().message(), HasSubstr("position 4"));
  EXPECT_THAT(Z85Decode("#####").status().message(), HasSubstr("exceeds 32 bits"));
  EXPECT_EQ(Crc32("123456789"), 0xCBF43926u);
  EXPECT_EQ(Crc32(""), 0u);
}

// The three descriptor examples of the Delta protocol's "Deletion Vector Descriptor Schema".
TEST(DeletionVectorTest, ProtocolExamples) {
  DeletionVector u{"u", "ab^-aqEH.-t@S}K{vb[*k^", 4, 40, 6};
  auto path = DeletionVectorFilePath("s3://mytable", u);
  ASSERT_TRUE(path.ok()) << path.status().ToString();
  EXPECT_EQ(*path, "s3://mytable/ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin");

  DeletionVector p{"p", "s3://mytable/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin", 4,
                   40, 6};
  auto abs = DeletionVectorFilePath("/elsewhere", p);
  ASSERT_TRUE(abs.ok());
  EXPECT_EQ(*abs, "s3://mytable/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin");

  DeletionVector i{"i", "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", std::nullopt, 40, 6};
  DeletionVectorLoader loader(nullptr, "/unused");
  auto set = loader.Load(i, "part-0.parquet");
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(Values(**set), (std::vector<uint64_t>{3, 4, 7, 11, 18, 29}));
  EXPECT_TRUE(DeletionVectorFilePath("/t", i).status().IsInvalidArgument());
  // That example is Delta's "native" format (magic 1681511376) framed big endian; Delta itself
  // writes the native framing little endian: the same bitmap so framed decodes the same.
  auto example = Z85Decode(i.path_or_inline_dv);
  ASSERT_TRUE(example.ok());
  std::string le = *example;
  for (size_t at : {0, 4, 8}) std::reverse(le.begin() + at, le.begin() + at + 4);
  auto native_le = DecodeDeletionVectorBitmap(le);
  ASSERT_TRUE(native_le.ok()) << native_le.status().ToString();
  EXPECT_EQ(*native_le, **set);
  auto cut = DecodeDeletionVectorBitmap(le.substr(0, 30));
  EXPECT_TRUE(cut.status().IsCorruption());
  EXPECT_THAT(cut.status().message(), HasSubstr("truncated at byte 12"));

  DeletionVector bad{"x", "abc", std::nullopt, 1, 1};
  EXPECT_THAT(loader.Load(bad, "f.parquet").status().message(),
              HasSubstr("unknown deletion vector storageType 'x'"));
  DeletionVector wrong_card = i;
  wrong_card.cardinality = 7;
  auto st = loader.Load(wrong_card, "part-0.parquet").status();
  EXPECT_TRUE(st.IsCorruption());
  EXPECT_THAT(st.message(), HasSubstr("holds 6 row indexes, the log's cardinality is 7"));
}

// The DV file Spark wrote for DELETE WHERE id IN (0, 7, 14) (fixture spark/deletion-vectors).
constexpr const char* kFixtureUuidZ85 = "}L*kAAa.V&V#8Vyj=RF4";
constexpr const char* kFixtureFile = "deletion_vector_faa9a331-7067-4729-b46d-a6043d8e37ab.bin";

TEST(DeletionVectorTest, ReadsSparksFile) {
  std::string root = testing::Fixture("spark/deletion-vectors");
  DeletionVector dv{"u", kFixtureUuidZ85, 1, 38, 3};
  auto path = DeletionVectorFilePath(root, dv);
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(*path, root + "/" + kFixtureFile);
  DeletionVectorLoader loader(fs::LocalFileSystem().get(), root);
  auto set = loader.Load(dv, "part-00000.parquet");
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(Values(**set), (std::vector<uint64_t>{0, 7, 14}));
}

TEST(DeletionVectorTest, CorruptFilesAreErrorsNamingFileAndOffset) {
  TempDir tmp;
  std::string root = CopyFixture("spark/deletion-vectors", tmp);
  std::string file = root + "/" + kFixtureFile;
  std::string original;
  {
    std::ifstream in(file, std::ios::binary);
    original.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_EQ(original.size(), 47u);
  auto write = [&](const std::string& bytes) {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << bytes;
  };
  DeletionVector dv{"u", kFixtureUuidZ85, 1, 38, 3};
  auto load = [&](const DeletionVector& d) {
    DeletionVectorLoader loader(fs::LocalFileSystem().get(), root);
    return loader.Load(d, "part-00000.parquet").status();
  };
  struct Case {
    std::string name;
    std::string bytes;
    std::string message;
  };
  std::vector<Case> cases;
  {
    std::string b = original;
    b[30] ^= 0x01;  // inside the bitmap: the checksum no longer matches
    cases.push_back({"checksum", b, "checksum mismatch"});
  }
  {
    std::string b = original;
    b[0] = 2;
    cases.push_back({"version", b, "format version 2, expected 1"});
  }
  {
    std::string b = original;
    b[4] = 37;  // dataSize
    cases.push_back({"size", b, "the file says 37 bytes, the log's sizeInBytes 38"});
  }
  cases.push_back({"truncated", original.substr(0, 40), "does not fit in the file's 40 bytes"});
  {
    // A valid frame around a bitmap with a wrong magic number (checksum recomputed).
    std::string b = original;
    b[8] ^= 0x01;  // the magic number's last byte
    uint32_t crc = Crc32(std::string_view(b).substr(5, 38));
    for (int k = 0; k < 4; ++k) b[43 + k] = static_cast<char>((crc >> (24 - 8 * k)) & 0xFF);
    cases.push_back({"magic", b, "is neither 1681511377"});
  }
  for (const Case& c : cases) {
    write(c.bytes);
    Status st = load(dv);
    ASSERT_FALSE(st.ok()) << c.name;
    EXPECT_TRUE(st.IsCorruption()) << c.name << ": " << st.ToString();
    EXPECT_THAT(st.message(), HasSubstr(c.message)) << c.name;
    EXPECT_THAT(st.message(), HasSubstr(file + " at offset 1")) << c.name;
    EXPECT_THAT(st.message(), HasSubstr("deletion vector of part-00000.parquet")) << c.name;
  }
  write(original);
  EXPECT_TRUE(load(dv).ok());
  DeletionVector past_end = dv;
  past_end.offset = 100;
  EXPECT_THAT(load(past_end).message(), HasSubstr("at offset 100"));
  std::filesystem::remove(file);
  Status missing = load(dv);
  EXPECT_TRUE(missing.IsNotFound()) << missing.ToString();
  EXPECT_THAT(missing.message(), HasSubstr(file));
}

}  // namespace
}  // namespace sluice::delta
