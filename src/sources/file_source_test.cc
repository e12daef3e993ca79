#include "sources/file_source.h"

#include "sources/source_factory.h"
#include "sources/test_util.h"

namespace sluice::sources {
namespace {

using testing::Sorted;

class FileSourceTest : public testing::SourceTest {
 protected:
  void SetUp() override {
    SourceTest::SetUp();
    in_ = dir_.path() + "/in";
    ckpt_ = dir_.path() + "/ckpt/sources/0";
  }
  void Put(const std::string& name, const std::string& text, int64_t mtime_ms) {
    auto fs = fs::LocalFileSystem();
    ASSERT_TRUE(fs->AtomicReplace(in_ + "/" + name, text, {false}).ok());
    ASSERT_TRUE(fs->SetModificationTime(in_ + "/" + name, mtime_ms).ok());
  }
  Result<std::unique_ptr<Source>> Make(std::map<std::string, std::string> options) {
    if (!options.count("path")) options["path"] = in_;
    if (!options.count("format")) options["format"] = "json";
    return CreateSource("files", Ctx(ckpt_, options));
  }
  std::unique_ptr<Source> Open(std::map<std::string, std::string> options = {}) {
    auto s = Make(std::move(options));
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? s.MoveValueUnsafe() : nullptr;
  }
  static ReadLimit Files(int64_t n) {
    ReadLimit l;
    l.max_files = n;
    return l;
  }

  testing::TempDir dir_;
  std::string in_;
  std::string ckpt_;
};

TEST_F(FileSourceTest, NewFilesInModificationTimeOrderEachReadOnce) {
  Put("b.json", "{\"id\":2}\n", 2000);
  Put("a.json", "{\"id\":1}\n", 3000);
  Put("c.json", "{\"id\":3}\n", 2000);
  Put(".hidden.json", "{\"id\":99}\n", 1000);
  Put("_tmp.json", "{\"id\":98}\n", 1000);
  auto src = Open({{"schema", "id BIGINT"}});
  ASSERT_NE(src, nullptr);
  ASSERT_EQ(src->schema().size(), 2u);
  EXPECT_EQ(src->schema()[1].name, "_rescued_data");
  auto o1 = Latest(src.get(), std::nullopt, Files(2));
  EXPECT_EQ(o1, "{\"logOffset\":0}");
  EXPECT_EQ(Get(src.get(), std::nullopt, *o1),
            (std::vector<std::string>{"2|NULL", "3|NULL"}));  // b, c (mtime 2000)
  EXPECT_EQ(src->Metrics(o1).at("numFilesOutstanding"), "1");
  auto log0 = fs::LocalFileSystem()->ReadFile(ckpt_ + "/0");
  ASSERT_TRUE(log0.ok());
  EXPECT_EQ(*log0, "v1\n{\"path\":\"file://" + in_ +
                       "/b.json\",\"timestamp\":2000,\"batchId\":0,\"numFiles\":2}\n"
                       "{\"path\":\"file://" +
                       in_ + "/c.json\",\"timestamp\":2000,\"batchId\":0,\"numFiles\":2}");
  auto o2 = Latest(src.get(), o1, Files(2));
  EXPECT_EQ(o2, "{\"logOffset\":1}");
  EXPECT_EQ(Get(src.get(), o1, *o2), std::vector<std::string>{"1|NULL"});
  EXPECT_EQ(Latest(src.get(), o2), o2);
  // A file that changes after being read is not read again.
  Put("a.json", "{\"id\":100}\n", 9000);
  EXPECT_EQ(Latest(src.get(), o2), o2);
  // Determinism: same range, and a new source over the same checkpoint.
  EXPECT_EQ(Get(src.get(), std::nullopt, *o1), (std::vector<std::string>{"2|NULL", "3|NULL"}));
  auto again = Open({{"schema", "id BIGINT"}});
  EXPECT_EQ(Get(again.get(), std::nullopt, *o1), (std::vector<std::string>{"2|NULL", "3|NULL"}));
  EXPECT_EQ(Latest(again.get(), o2), o2);
  Put("d.json", "{\"id\":4}\n", 10000);
  auto o3 = Latest(again.get(), o2);
  EXPECT_EQ(Get(again.get(), o2, *o3), std::vector<std::string>{"4|NULL"});
}

TEST_F(FileSourceTest, EntryWrittenBeforeACrashIsDeliveredFirst) {
  Put("a.json", "{\"id\":1}\n", 1000);
  auto src = Open({{"schema", "id BIGINT"}});
  auto o1 = Latest(src.get(), std::nullopt);  // writes log entry 0; the query "crashes" here
  Put("b.json", "{\"id\":2}\n", 2000);
  auto restarted = Open({{"schema", "id BIGINT"}});
  EXPECT_EQ(Latest(restarted.get(), std::nullopt), o1);
  EXPECT_EQ(Get(restarted.get(), std::nullopt, *o1), std::vector<std::string>{"1|NULL"});
  auto o2 = Latest(restarted.get(), o1);
  EXPECT_EQ(Get(restarted.get(), o1, *o2), std::vector<std::string>{"2|NULL"});
}

TEST_F(FileSourceTest, MaxBytesAndRecursive) {
  Put("a.json", "{\"id\":1}\n", 1000);
  Put("sub/b.json", "{\"id\":2}\n", 2000);
  auto flat = Open({{"schema", "id BIGINT"}, {"maxBytesPerTrigger", "1"}});
  auto f1 = Latest(flat.get(), std::nullopt);
  EXPECT_EQ(Get(flat.get(), std::nullopt, *f1), std::vector<std::string>{"1|NULL"});
  EXPECT_EQ(Latest(flat.get(), f1), f1);  // sub/ is not read without recursive

  testing::TempDir other;
  auto ctx = Ctx(other.path() + "/s", {{"path", in_},
                                       {"format", "json"},
                                       {"schema", "id BIGINT"},
                                       {"recursive", "true"},
                                       {"maxBytesPerTrigger", "1"}});
  auto rec = CreateSource("files", ctx);
  ASSERT_TRUE(rec.ok()) << rec.status().ToString();
  auto r1 = Latest(rec->get(), std::nullopt);
  auto r2 = Latest(rec->get(), r1);
  EXPECT_EQ(Get(rec->get(), r1, *r2), std::vector<std::string>{"2|NULL"});
}

TEST_F(FileSourceTest, BadRowsGoToRescuedDataAndAreCounted) {
  Put("a.json",
      "{\"id\":1,\"ts\":\"2024-01-01T00:00:00Z\"}\nnot json at "
      "all\n{\"id\":\"x\",\"ts\":null}\n\n{\"id\":3}\r\n"
      "[1,2]\n{\"id\":1.5}\n",
      1000);
  auto src =
      Open({{"schema", "id BIGINT, ts TIMESTAMP"}, {"badRecordsPath", dir_.path() + "/bad"}});
  ASSERT_NE(src, nullptr);
  EXPECT_EQ(src->schema()[1].type.id, engine::TypeId::kTimestampTz);
  auto o = Latest(src.get(), std::nullopt);
  auto rows = Get(src.get(), std::nullopt, *o);
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[0], "1|2024-01-01 00:00:00+00|NULL");
  EXPECT_EQ(rows[1], "NULL|NULL|not json at all");
  EXPECT_EQ(rows[2], "NULL|NULL|{\"id\":\"x\",\"_file_path\":\"" + in_ + "/a.json\"}");
  EXPECT_EQ(rows[3], "3|NULL|NULL");
  EXPECT_EQ(rows[4], "NULL|NULL|[1,2]");
  EXPECT_EQ(rows[5], "NULL|NULL|{\"id\":1.5,\"_file_path\":\"" + in_ + "/a.json\"}");
  EXPECT_EQ(src->Metrics(o).at("numRescuedRows"), "4");
  auto bad = fs::LocalFileSystem()->ReadFile(dir_.path() + "/bad/0/bad_records/part-00000.json");
  ASSERT_TRUE(bad.ok()) << bad.status().ToString();
  EXPECT_NE(bad->find("not json at all"), std::string::npos);
}

TEST_F(FileSourceTest, RescueModePutsUnknownFieldsInRescuedData) {
  Put("a.json", "{\"id\":1,\"extra\":\"e\"}\n", 1000);
  auto src = Open({{"schema", "id BIGINT"}, {"schemaEvolutionMode", "rescue"}});
  auto o = Latest(src.get(), std::nullopt);
  EXPECT_EQ(Get(src.get(), std::nullopt, *o),
            std::vector<std::string>{"1|{\"extra\":\"e\",\"_file_path\":\"" + in_ + "/a.json\"}"});
  auto none = CreateSource(
      "files",
      Ctx(dir_.path() + "/other", {{"path", in_}, {"format", "json"}, {"schema", "id BIGINT"}}));
  ASSERT_TRUE(none.ok());
  auto o2 = Latest(none->get(), std::nullopt);
  EXPECT_EQ(Get(none->get(), std::nullopt, *o2),
            std::vector<std::string>{"1|NULL"});  // mode none ignores it
}

TEST_F(FileSourceTest, InferredSchemaIsPersistedAndNewColumnsStopThenContinue) {
  Put("a.json", "{\"id\":1,\"name\":\"a\"}\n", 1000);
  auto src = Open();
  ASSERT_NE(src, nullptr);
  ASSERT_EQ(src->schema().size(), 3u);
  EXPECT_EQ(src->schema()[0].type.id, engine::TypeId::kBigInt);
  auto o1 = Latest(src.get(), std::nullopt);
  EXPECT_EQ(Get(src.get(), std::nullopt, *o1), std::vector<std::string>{"1|a|NULL"});
  Put("b.json", "{\"id\":2,\"name\":\"b\",\"score\":7}\n", 2000);
  auto o2 = Latest(src.get(), o1);
  auto err = src->GetBatch(o1, *o2);
  ASSERT_FALSE(err.ok());
  EXPECT_NE(err.status().message().find("new columns [score]"), std::string::npos)
      << err.status().ToString();
  EXPECT_NE(err.status().message().find("restart"), std::string::npos);
  auto restarted = Open();
  ASSERT_EQ(restarted->schema().size(), 4u);
  EXPECT_EQ(restarted->schema()[2].name, "score");
  EXPECT_EQ(Get(restarted.get(), o1, *o2), std::vector<std::string>{"2|b|7|NULL"});
  EXPECT_EQ(Get(restarted.get(), std::nullopt, *o1), std::vector<std::string>{"1|a|NULL|NULL"});
}

// Issue 24 #9: a file given as the path was an I/O error (listing: ENOTDIR), which a supervised
// run retried for 70 s. It is a permanent error (InvalidArgument) naming the path, at once.
TEST_F(FileSourceTest, AFileAsThePathIsAnInvalidArgumentNamingIt) {
  Put("a.json", "{\"id\":1}\n", 1000);
  for (const char* recursive : {"false", "true"}) {
    auto s = Make({{"path", in_ + "/a.json"}, {"schema", "id BIGINT"}, {"recursive", recursive}});
    Status st = s.ok() ? (*s)->LatestOffset(std::nullopt, ReadLimit{}).status() : s.status();
    ASSERT_FALSE(st.ok()) << recursive;
    EXPECT_TRUE(st.IsInvalidArgument()) << st.ToString();
    EXPECT_NE(st.message().find("'" + in_ + "/a.json' is a file, not a directory"),
              std::string::npos)
        << st.ToString();
  }
}

TEST_F(FileSourceTest, NoSchemaAndNoFilesIsAClearError) {
  auto s = Make({});
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.status().IsInvalidArgument());
  EXPECT_NE(s.status().message().find("unable to infer the schema"), std::string::npos);
  EXPECT_NE(s.status().message().find("'schema'"), std::string::npos);
}

TEST_F(FileSourceTest, CsvRowsAndRejectedLines) {
  Put("a.csv", "id,name\n1,a\nx,b\n3,c,extra\n", 1000);
  auto src = Open({{"format", "csv"}, {"schema", "id BIGINT, name STRING"}});
  ASSERT_NE(src, nullptr);
  auto o = Latest(src.get(), std::nullopt);
  auto rows = Get(src.get(), std::nullopt, *o);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], "1|a|NULL");
  EXPECT_EQ(rows[1], "NULL|b|{\"id\":\"x\",\"_file_path\":\"" + in_ + "/a.csv\"}");
  EXPECT_EQ(rows[2], "NULL|NULL|3,c,extra");
  EXPECT_EQ(src->Metrics(o).at("numRescuedRows"), "2");
}

// A CSV header that names none of the schema's columns (issue 24 #5) gives Spark's rows: the
// columns by position (enforceSchema, Spark's default), never all-NULL rows; enforceSchema =>
// false refuses the file, naming it, whatever the mode (Spark's CSVHeaderChecker).
TEST_F(FileSourceTest, CsvHeaderNamingNoneOfTheSchemaIsReadByPositionAsSpark) {
  Put("a.csv", "x,y\n1,a\n3,c\n", 1000);
  auto src = Open({{"format", "csv"}, {"schema", "id BIGINT, name STRING"}});
  ASSERT_NE(src, nullptr);
  auto o = Latest(src.get(), std::nullopt);
  EXPECT_EQ(Get(src.get(), std::nullopt, *o), (std::vector<std::string>{"1|a|NULL", "3|c|NULL"}));

  auto strict =
      Open({{"format", "csv"}, {"schema", "id BIGINT, name STRING"}, {"enforceSchema", "false"}});
  ASSERT_NE(strict, nullptr);
  auto so = Latest(strict.get(), std::nullopt);
  auto batch = strict->GetBatch(std::nullopt, *so);
  ASSERT_FALSE(batch.ok());
  EXPECT_TRUE(batch.status().IsInvalidArgument()) << batch.status().ToString();
  EXPECT_NE(batch.status().message().find(in_ + "/a.csv: the CSV header does not conform"),
            std::string::npos)
      << batch.status().ToString();
  EXPECT_NE(batch.status().message().find("header [x, y], schema [id, name]"), std::string::npos)
      << batch.status().ToString();
}

TEST_F(FileSourceTest, CsvConformingHeaderPassesWithoutEnforceSchema) {
  Put("a.csv", "id,name\n5,e\n", 1000);
  auto src =
      Open({{"format", "csv"}, {"schema", "id BIGINT, name STRING"}, {"enforceSchema", "false"}});
  ASSERT_NE(src, nullptr);
  auto o = Latest(src.get(), std::nullopt);
  EXPECT_EQ(Get(src.get(), std::nullopt, *o), (std::vector<std::string>{"5|e|NULL"}));
}

TEST_F(FileSourceTest, ParquetFiles) {
  ASSERT_TRUE(fs::LocalFileSystem()->CreateDirectories(in_).ok());
  Sql("COPY (SELECT 1::BIGINT AS id, 'a' AS name) TO '" + in_ + "/a.parquet' (FORMAT parquet)");
  Sql("COPY (SELECT 2::BIGINT AS id) TO '" + in_ + "/b.parquet' (FORMAT parquet)");
  ASSERT_TRUE(fs::LocalFileSystem()->SetModificationTime(in_ + "/a.parquet", 1000).ok());
  ASSERT_TRUE(fs::LocalFileSystem()->SetModificationTime(in_ + "/b.parquet", 2000).ok());
  auto src = Open({{"format", "parquet"}});
  ASSERT_NE(src, nullptr);
  auto o = Latest(src.get(), std::nullopt);
  EXPECT_EQ(Sorted(Get(src.get(), std::nullopt, *o)),
            (std::vector<std::string>{"1|a|NULL", "2|NULL|NULL"}));
}

TEST_F(FileSourceTest, OptionErrorsNameTheOption) {
  Put("a.json", "{\"id\":1}\n", 1000);
  auto fmt = Make({{"format", "xml"}});
  ASSERT_FALSE(fmt.ok());
  EXPECT_NE(fmt.status().message().find("'format'"), std::string::npos);
  auto mode = Make({{"schemaEvolutionMode", "sometimes"}});
  EXPECT_NE(mode.status().message().find("'schemaEvolutionMode'"), std::string::npos);
  auto schema = Make({{"schema", "id NOTATYPE"}});
  ASSERT_FALSE(schema.ok());
  EXPECT_NE(schema.status().message().find("'schema'"), std::string::npos);
  auto max = Make({{"maxFilesPerTrigger", "0"}});
  EXPECT_NE(max.status().message().find("'maxFilesPerTrigger' must be >= 1"), std::string::npos);
  auto unknown = Make({{"maxFilePerTrigger", "3"}});
  EXPECT_NE(unknown.status().message().find("unknown option 'maxFilePerTrigger'"),
            std::string::npos);
  auto cloud =
      CreateSource("cloudFiles", Ctx(ckpt_, {{"path", in_},
                                             {"cloudFiles.format", "json"},
                                             {"cloudFiles.schemaEvolutionMode", "rescue"}}));
  EXPECT_TRUE(cloud.ok()) << cloud.status().ToString();
}

}  // namespace
}  // namespace sluice::sources

namespace sluice::sources {
namespace {

class FileSourceMoreTest : public testing::SourceTest {
 protected:
  void Put(const std::string& name, const std::string& text, int64_t mtime_ms) {
    auto fs = fs::LocalFileSystem();
    ASSERT_TRUE(fs->AtomicReplace(dir_.path() + "/in/" + name, text, {false}).ok());
    ASSERT_TRUE(fs->SetModificationTime(dir_.path() + "/in/" + name, mtime_ms).ok());
  }
  testing::TempDir dir_;
};

TEST_F(FileSourceMoreTest, AvailableNowTakesOnlyFilesPresentAtPrepare) {
  Put("a.json", "{\"id\":1}\n", 1000);
  Put("b.json", "{\"id\":2}\n", 2000);
  auto s = CreateSource("files", Ctx(dir_.path() + "/ck", {{"path", dir_.path() + "/in"},
                                                           {"format", "json"},
                                                           {"schema", "id BIGINT"},
                                                           {"maxFilesPerTrigger", "1"}}));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_TRUE((*s)->PrepareForAvailableNow().ok());
  Put("c.json", "{\"id\":3}\n", 500);
  auto o1 = Latest(s->get(), std::nullopt);
  auto o2 = Latest(s->get(), o1);
  EXPECT_EQ(o2, "{\"logOffset\":1}");
  EXPECT_EQ(Latest(s->get(), o2), o2);
  EXPECT_EQ(Get(s->get(), std::nullopt, *o2), (std::vector<std::string>{"1|NULL", "2|NULL"}));
}

TEST_F(FileSourceMoreTest, FailOnNewColumnsKeepsFailing) {
  Put("a.json", "{\"id\":1,\"new\":2}\n", 1000);
  auto make = [&]() {
    return CreateSource("files",
                        Ctx(dir_.path() + "/ck", {{"path", dir_.path() + "/in"},
                                                  {"format", "json"},
                                                  {"schema", "id BIGINT"},
                                                  {"schemaEvolutionMode", "failOnNewColumns"}}));
  };
  auto s = make();
  ASSERT_TRUE(s.ok());
  auto o = Latest(s->get(), std::nullopt);
  auto b = (*s)->GetBatch(std::nullopt, *o);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("new columns [new]"), std::string::npos)
      << b.status().ToString();
  auto again = make();
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE((*again)->GetBatch(std::nullopt, *o).ok());
}

TEST_F(FileSourceMoreTest, CsvHeaderWithNewColumnStopsThenContinues) {
  Put("a.csv", "id,name\n1,a\n", 1000);
  auto make = [&]() {
    return CreateSource(
        "files", Ctx(dir_.path() + "/ck", {{"path", dir_.path() + "/in"}, {"format", "csv"}}));
  };
  auto s = make();
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto o1 = Latest(s->get(), std::nullopt);
  EXPECT_EQ(Get(s->get(), std::nullopt, *o1), std::vector<std::string>{"1|a|NULL"});
  Put("b.csv", "id,name,score\n2,b,5\n", 2000);
  auto o2 = Latest(s->get(), o1);
  auto err = (*s)->GetBatch(o1, *o2);
  ASSERT_FALSE(err.ok());
  EXPECT_NE(err.status().message().find("[score]"), std::string::npos) << err.status().ToString();
  auto restarted = make();
  ASSERT_TRUE(restarted.ok());
  EXPECT_EQ(Get(restarted->get(), o1, *o2), std::vector<std::string>{"2|b|5|NULL"});
}

}  // namespace
}  // namespace sluice::sources
