// Differential test of the files source's two JSON readers: the C++ decoder
// (engine/json_decoder.h) must give the batches (every column, _rescued_data included) and the
// errors of the SQL path, in every schemaEvolutionMode.
#include <map>
#include <string>
#include <vector>

#include "engine/json_test_corpus.h"
#include "fs/local_file_system.h"
#include "sources/file_source.h"
#include "sources/test_util.h"

namespace sluice::sources {
namespace {

class FileSourceJsonTest : public testing::SourceTest {
 protected:
  void SetUp() override {
    SourceTest::SetUp();
    in_ = dir_.path() + "/in";
  }
  void Put(const std::string& name, const std::string& text, int64_t mtime_ms) {
    auto fs = fs::LocalFileSystem();
    ASSERT_TRUE(fs->AtomicReplace(in_ + "/" + name, text, {false}).ok());
    ASSERT_TRUE(fs->SetModificationTime(in_ + "/" + name, mtime_ms).ok());
  }
  // Reads every file of in_ in one batch with a fresh source (its own checkpoint).
  Result<engine::Batch> ReadAll(const std::string& schema, SchemaEvolutionMode mode, bool decoder,
                                bool* decoded = nullptr, int threads = 0) {
    FileSourceOptions o;
    o.path = in_;
    o.format = FileFormat::kJson;
    o.schema = schema;
    o.schema_evolution_mode = mode;
    o.json_decoder = decoder;
    o.json_decode_threads = threads;
    SLUICE_ASSIGN_OR_RETURN(
        auto src, FileSource::Open(Ctx(dir_.path() + "/ckpt" + std::to_string(next_++), {}), o));
    ReadLimit all;
    all.all_available = true;
    SLUICE_ASSIGN_OR_RETURN(auto end, src->LatestOffset(std::nullopt, all));
    if (!end) return Status::Internal("no files");
    auto out = src->GetBatch(std::nullopt, *end);
    if (decoded) *decoded = src->last_json_decoded();
    return out;
  }
  // Both readers, compared.
  // expect_decoded: whether the decoder should have read the batch itself (when it succeeds).
  // threads: the decoder's (0: automatic, 1 for these small files).
  void ExpectSame(const std::string& schema, SchemaEvolutionMode mode, const std::string& what,
                  bool expect_decoded = true, int threads = 0) {
    bool decoded = false;
    auto sql = ReadAll(schema, mode, false);
    auto dec = ReadAll(schema, mode, true, &decoded, threads);
    if (dec.ok()) {
      EXPECT_EQ(decoded, expect_decoded) << what;
    }
    ASSERT_EQ(sql.ok(), dec.ok()) << what << ": sql " << sql.status().ToString() << " decoder "
                                  << dec.status().ToString();
    if (!sql.ok()) {
      EXPECT_EQ(sql.status().ToString(), dec.status().ToString()) << what;
      return;
    }
    ASSERT_EQ(sql->schema(), dec->schema()) << what;
    ASSERT_EQ(sql->num_rows(), dec->num_rows()) << what;
    auto a = testing::Rows(*sql), b = testing::Rows(*dec);
    int shown = 0;
    for (size_t r = 0; r < a.size() && shown < 10; ++r) {
      if (a[r] != b[r]) {
        ++shown;
        ADD_FAILURE() << what << " row " << r << "\n  sql:     " << a[r] << "\n  decoder: " << b[r];
      }
    }
  }

  testing::TempDir dir_;
  std::string in_;
  int next_ = 0;
};

const SchemaEvolutionMode kModes[] = {SchemaEvolutionMode::kNone, SchemaEvolutionMode::kRescue,
                                      SchemaEvolutionMode::kAddNewColumns,
                                      SchemaEvolutionMode::kFailOnNewColumns};

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

TEST_F(FileSourceJsonTest, EdgeCasesAndRandomLinesInEveryMode) {
  const std::vector<std::string> keys = engine::testing::JsonCorpusKeys();
  std::vector<std::string> values_lines;
  for (const std::string& v : engine::testing::JsonEdgeValues()) {
    std::string line = "{";
    for (size_t k = 0; k < keys.size(); ++k) line += (k ? ",\"" : "\"") + keys[k] + "\":" + v;
    values_lines.push_back(line + "}");
    values_lines.push_back(v);
  }
  Put("a.json", Join(values_lines), 1000);
  // Blank and whitespace-only lines, CRLF, a last line without '\n'.
  Put("b.json", Join(engine::testing::JsonEdgeLines()) + "\n   \r\n{\"i\":2}\r\n{\"s\":\"end\"}",
      2000);
  Put("c \"quoted\".json", Join(engine::testing::JsonRandomLines(2500, 11)), 3000);
  Put("d.json", Join(engine::testing::JsonRandomLines(3000, 12)), 4000);
  for (SchemaEvolutionMode mode : kModes) {
    for (int threads : {1, 2, 3}) {
      ExpectSame(
          engine::testing::JsonCorpusSchemaText(), mode,
          "mode " + std::to_string(static_cast<int>(mode)) + " threads " + std::to_string(threads),
          true, threads);
    }
  }
}

TEST_F(FileSourceJsonTest, KnownKeysOnlyInEveryMode) {
  // No unknown keys: addNewColumns and failOnNewColumns read the batch too.
  std::vector<std::string> lines;
  for (const std::string& l : engine::testing::JsonRandomLines(3000, 5)) {
    if (l.find("zz") == std::string::npos && l.find("extra") == std::string::npos &&
        l.find("q\\\"k") == std::string::npos && l.find("\\u00e9t") == std::string::npos &&
        l.find("\"I\"") == std::string::npos && l.find("nested") == std::string::npos) {
      lines.push_back(l);
    }
  }
  ASSERT_GT(lines.size(), 100u);
  Put("a.json", Join(lines), 1000);
  for (SchemaEvolutionMode mode : kModes) {
    ExpectSame(engine::testing::JsonCorpusSchemaText(), mode,
               "mode " + std::to_string(static_cast<int>(mode)));
  }
}

TEST_F(FileSourceJsonTest, NewColumnsAreReportedInTheSameOrder) {
  Put("a.json", "{\"id\":1,\"zeta\":1}\n{\"id\":2,\"beta\":1,\"alpha\":2}\n", 1000);
  Put("b.json", "{\"id\":3,\"alpha\":1}\n{\"gamma\":1,\"delta\":2}\n", 2000);
  Put("c.json", "{\"id\":3,\"beta\":1}\n", 3000);
  for (SchemaEvolutionMode mode : kModes) {
    for (int threads : {1, 3}) {
      ExpectSame("id BIGINT", mode, "mode " + std::to_string(static_cast<int>(mode)), true,
                 threads);
    }
  }
}

TEST_F(FileSourceJsonTest, BackslashAndEmptyUnknownKeysInRescueMode) {
  // The SQL looks such keys up with a path it builds itself: the decoder hands the batch over.
  Put("a.json", "{\"id\":1}\n", 500);
  Put("b.json", "{\"id\":1,\"a\\\\b\":2}\n{\"id\":2,\"\":3}\n{\"id\":\"x\",\"q\\\\\\\"\":4}\n",
      1000);
  for (int threads : {1, 2}) {
    ExpectSame("id BIGINT", SchemaEvolutionMode::kRescue, "rescue", /*expect_decoded=*/false,
               threads);
    ExpectSame("id BIGINT", SchemaEvolutionMode::kNone, "none", true, threads);
  }
}

TEST_F(FileSourceJsonTest, FilesWithoutRows) {
  Put("a.json", "", 500);
  Put("b.json", "\n   \n\r\n", 1000);
  for (SchemaEvolutionMode mode : kModes) {
    ExpectSame("id BIGINT, s VARCHAR", mode, "mode " + std::to_string(static_cast<int>(mode)));
  }
}

TEST_F(FileSourceJsonTest, InvalidUtf8IsTheSameError) {
  Put("a.json", "{\"id\":1}\n", 500);
  Put("b.json", "{\"id\":1}\n{\"id\":\"\xff\"}\n", 1000);
  Put("c.json", "\xfe\n", 2000);
  for (int threads : {1, 3})
    ExpectSame("id BIGINT", SchemaEvolutionMode::kNone, "utf8", true, threads);
}

TEST_F(FileSourceJsonTest, UnsupportedTypesUseTheSqlPath) {
  Put("a.json", "{\"id\":1,\"m\":1.25,\"l\":[1,2]}\n{\"id\":2,\"m\":\"x\",\"l\":3}\n", 1000);
  ExpectSame("id BIGINT, m DECIMAL(10,2)", SchemaEvolutionMode::kRescue, "decimal");
  ExpectSame("id BIGINT, m DECIMAL(10,2), l BIGINT[]", SchemaEvolutionMode::kRescue, "nested",
             /*expect_decoded=*/false);
}

TEST_F(FileSourceJsonTest, SpecialColumnNames) {
  Put("a.json",
      "{\"a b\":1,\"q\\\"t\":\"x\",\"b\\\\s\":true,\"\\u00e9\":2}\n"
      "{\"a b\":1.5,\"q\\\"t\":[1],\"b\\\\s\":\"nope\",\"\\u00e9\":\"2\"}\n",
      1000);
  ExpectSame("\"a b\" BIGINT, \"q\"\"t\" VARCHAR, \"b\\s\" BOOLEAN, \"\xc3\xa9\" INTEGER",
             SchemaEvolutionMode::kRescue, "names");
}

}  // namespace
}  // namespace sluice::sources
