// DeltaTableWriter: create, append, overwrite, partitions, all types, idempotency, schema checks.
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "delta/paths.h"
#include "delta/schema.h"
#include "delta/writer_test_util.h"

namespace sluice::delta {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::Rows;
using testing::Sorted;

class WriterTest : public testing::WriterTestBase {};

TEST_F(WriterTest, CreateAppendAndReadEveryVersion) {
  auto w = Writer();
  ASSERT_TRUE(w);
  auto r0 = w->Write(Sql("SELECT range AS id, 'v' || range AS s FROM range(3)"));
  ASSERT_TRUE(r0.ok()) << r0.status().ToString();
  EXPECT_EQ(r0->version, Version(0));
  EXPECT_EQ(r0->num_rows, 3);
  EXPECT_EQ(r0->num_files, 1);
  auto r1 = w->Write(Sql("SELECT range + 10 AS id, 'w' AS s FROM range(2)"));
  ASSERT_TRUE(r1.ok()) << r1.status().ToString();
  EXPECT_EQ(r1->version, Version(1));

  EXPECT_EQ(ValidateLog(), 1);
  EXPECT_THAT(ReadRows(0), ElementsAre("0|v0", "1|v1", "2|v2"));
  EXPECT_THAT(ReadRows(1), ElementsAre("0|v0", "10|w", "11|w", "1|v1", "2|v2"));

  // Commit 0: commitInfo, protocol (1,2), metaData; commit 1: commitInfo + one add, blind append.
  auto c0 = CommitLines(0);
  ASSERT_GE(c0.size(), 4u);
  EXPECT_TRUE(c0[0].contains("commitInfo"));
  EXPECT_EQ(c0[1]["protocol"]["minReaderVersion"], 1);
  EXPECT_EQ(c0[1]["protocol"]["minWriterVersion"], 2);
  const auto& md = c0[2]["metaData"];
  EXPECT_EQ(md["id"].get<std::string>().size(), 36u);
  EXPECT_EQ(md["format"]["provider"], "parquet");
  EXPECT_TRUE(md.contains("createdTime"));
  EXPECT_EQ(
      md["schemaString"],
      R"({"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},)"
      R"({"name":"s","type":"string","nullable":true,"metadata":{}}]})");
  auto c1 = CommitLines(1);
  ASSERT_EQ(c1.size(), 2u);
  const auto& ci = c1[0]["commitInfo"];
  EXPECT_EQ(ci["operation"], "WRITE");
  EXPECT_EQ(ci["operationParameters"]["mode"], "Append");
  EXPECT_EQ(ci["readVersion"], 0);
  EXPECT_EQ(ci["isBlindAppend"], true);
  EXPECT_EQ(ci["operationMetrics"]["numFiles"], "1");
  EXPECT_EQ(ci["operationMetrics"]["numOutputRows"], "2");
  const auto& add = c1[1]["add"];
  EXPECT_THAT(add["path"].get<std::string>(),
              ::testing::MatchesRegex("part-00000-[0-9a-f-]{36}\\.c000\\.snappy\\.parquet"));
  EXPECT_EQ(add["dataChange"], true);
  EXPECT_EQ(add["partitionValues"], nlohmann::json::object());
  int64_t now = NowMillis();
  EXPECT_GT(add["modificationTime"].get<int64_t>(), now - 600000);
  EXPECT_LE(add["modificationTime"].get<int64_t>(), now + 1000);
  auto stats = nlohmann::json::parse(add["stats"].get<std::string>());
  EXPECT_EQ(stats["numRecords"], 2);
  EXPECT_EQ(stats["minValues"]["id"], 10);
  EXPECT_EQ(stats["maxValues"]["id"], 11);
  EXPECT_EQ(stats["minValues"]["s"], "w");
  EXPECT_EQ(stats["nullCount"]["s"], 0);
}

TEST_F(WriterTest, ReaderReadsBackEveryVersionExactly) {
  auto w = Writer();
  std::vector<std::vector<std::string>> expected;  // rows per version
  std::vector<std::string> rows;
  auto append = [&](const std::string& sql, std::vector<std::string> added, WriteOptions o = {}) {
    auto r = w->Write(Sql(sql), o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->version, Version(static_cast<int64_t>(expected.size())));
    if (o.mode == SaveMode::kOverwrite) rows.clear();
    rows.insert(rows.end(), added.begin(), added.end());
    expected.push_back(Sorted(rows));
  };
  WriteOptions part;
  part.partition_by = {"k"};
  append("SELECT 1 AS id, 'a' AS k", {"1|a"}, part);
  append("SELECT 2 AS id, 'b' AS k UNION ALL SELECT 3, NULL", {"2|b", "3|NULL"});
  append("SELECT 4 AS id, 'a' AS k", {"4|a"});
  WriteOptions ow;
  ow.mode = SaveMode::kOverwrite;
  append("SELECT 5 AS id, 'c' AS k", {"5|c"}, ow);
  append("SELECT range::INTEGER AS id, 'd' AS k FROM range(6, 9)", {"6|d", "7|d", "8|d"});
  ASSERT_TRUE(w->SetProperties({{"owner", "me"}}).ok());
  expected.push_back(expected.back());
  append("SELECT 9 AS id, 'a' AS k", {"9|a"});
  EXPECT_EQ(ValidateLog(), static_cast<int64_t>(expected.size()) - 1);
  for (size_t v = 0; v < expected.size(); ++v) {
    EXPECT_EQ(ReadRows(static_cast<int64_t>(v)), expected[v]) << "version " << v;
  }
}

TEST_F(WriterTest, AllTypesRoundTrip) {
  const std::string sql = R"(
    SELECT * FROM (VALUES
      (true, 1::TINYINT, 2::SMALLINT, 3::INTEGER, 4::BIGINT, 1.5::FLOAT, 2.25::DOUBLE, 123.45::DECIMAL(10,2),
       12345678901234567890.0123456789::DECIMAL(38,10), 'héllo', '\x00\xFF'::BLOB, DATE '2024-02-29',
       TIMESTAMPTZ '2024-01-02 03:04:05.123456+00', {'a': 1, 'b': 'x'}::STRUCT(a INTEGER, b VARCHAR),
       [1, 2, NULL]::INTEGER[], MAP {'k': 1, 'l': NULL}::MAP(VARCHAR, INTEGER)),
      (false, (-128)::TINYINT, (-32768)::SMALLINT, (-2147483648)::INTEGER, (-9223372036854775808)::BIGINT, -0.5::FLOAT,
       -1e300::DOUBLE, -0.01::DECIMAL(10,2), 0::DECIMAL(38,10), '', ''::BLOB, DATE '1970-01-01',
       TIMESTAMPTZ '1969-12-31 23:59:59.999999+00', {'a': NULL, 'b': NULL}::STRUCT(a INTEGER, b VARCHAR),
       []::INTEGER[], MAP {}::MAP(VARCHAR, INTEGER)),
      (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
    ) t(b, i8, i16, i32, i64, f, d, dec, dec38, s, bin, dt, ts, st, arr, m))";
  engine::Batch data = Sql(sql);
  ASSERT_EQ(data.num_rows(), 3);
  auto w = Writer();
  auto r = w->Write(data);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ValidateLog();

  auto t = Reader();
  auto snap = t->Latest();
  ASSERT_TRUE(snap.ok());
  ASSERT_EQ((*snap)->schema.fields.size(), data.schema().size());
  for (size_t i = 0; i < data.schema().size(); ++i) {
    const auto& a = (*snap)->schema.fields[i];
    const auto& b = data.schema()[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.type.ToSql(), b.type.ToSql()) << a.name;
    EXPECT_EQ(a.nullable, b.nullable) << a.name;
  }
  auto back = t->Scan(**snap);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  for (size_t i = 0; i < data.schema().size(); ++i) {
    EXPECT_EQ(back->schema()[i].type.ToSql(), data.schema()[i].type.ToSql());
  }
  EXPECT_EQ(Rows(*back), Rows(data));

  // Stats: decimals exact, timestamps in ms, no min/max for booleans/binary/arrays/maps.
  const std::string& stats_text = *(*snap)->files.at(0).stats;
  EXPECT_THAT(stats_text, HasSubstr("\"dec38\":12345678901234567890.0123456789"));
  EXPECT_THAT(stats_text, HasSubstr("\"dec\":-0.01"));
  auto stats = nlohmann::json::parse(stats_text);
  EXPECT_EQ(stats["numRecords"], 3);
  EXPECT_EQ(stats["minValues"]["ts"], "1969-12-31T23:59:59.999Z");
  EXPECT_EQ(stats["maxValues"]["ts"], "2024-01-02T03:04:05.123Z");
  EXPECT_EQ(stats["minValues"]["dt"], "1970-01-01");
  EXPECT_EQ(stats["maxValues"]["st"]["a"], 1);
  EXPECT_EQ(stats["nullCount"]["st"]["b"], 2);
  EXPECT_FALSE(stats["minValues"].contains("b"));
  EXPECT_FALSE(stats["minValues"].contains("bin"));
  EXPECT_FALSE(stats["minValues"].contains("arr"));
  EXPECT_EQ(stats["nullCount"]["arr"], 1);
  EXPECT_EQ(stats["nullCount"]["i64"], 1);
}

TEST_F(WriterTest, PartitionsWithNullsAndSpecialCharacters) {
  engine::Batch data = Sql(R"(
    SELECT * FROM (VALUES (1, 'a b', 1), (2, 'x=y', 1), (3, 'a/b', 2), (4, '100%', 2), (5, 'ünï', NULL),
                          (6, NULL, 3), (7, 'a b', 1), (8, 'q?#[]', 1)) t(id, p, q))");
  WriteOptions opts;
  opts.partition_by = {"p", "q"};
  auto w = Writer();
  auto r = w->Write(data, opts);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->num_files, 7);
  ValidateLog();
  EXPECT_EQ(ReadRows(), Rows(data));

  auto files = DataFiles();
  auto has_dir = [&](const std::string& prefix) {
    for (const auto& f : files) {
      if (f.rfind(prefix, 0) == 0) return true;
    }
    return false;
  };
  EXPECT_TRUE(has_dir("p=a b/q=1/part-")) << ::testing::PrintToString(files);
  EXPECT_TRUE(has_dir("p=x%3Dy/q=1/"));
  EXPECT_TRUE(has_dir("p=a%2Fb/q=2/"));
  EXPECT_TRUE(has_dir("p=100%25/q=2/"));
  EXPECT_TRUE(has_dir("p=ünï/q=__HIVE_DEFAULT_PARTITION__/"));
  EXPECT_TRUE(has_dir("p=__HIVE_DEFAULT_PARTITION__/q=3/"));
  EXPECT_TRUE(has_dir("p=q%3F%23%5B%5D/q=1/"));

  // The log holds raw values (JSON null for null) and URI-encoded paths.
  std::map<std::string, nlohmann::json> by_p;
  for (const auto& line : CommitLines(0)) {
    if (!line.contains("add")) continue;
    const auto& pv = line["add"]["partitionValues"];
    by_p[pv["p"].is_null() ? "<null>" : pv["p"].get<std::string>()] = line["add"];
  }
  ASSERT_EQ(by_p.count("x=y"), 1u);
  EXPECT_THAT(by_p["x=y"]["path"].get<std::string>(), ::testing::StartsWith("p=x%253Dy/q=1/"));
  EXPECT_THAT(by_p["a b"]["path"].get<std::string>(), ::testing::StartsWith("p=a%20b/q=1/"));
  EXPECT_EQ(by_p["a b"]["partitionValues"]["q"], "1");
  EXPECT_TRUE(by_p["ünï"]["partitionValues"]["q"].is_null());
  EXPECT_EQ(by_p.count("<null>"), 1u);
  // Stats leave partition columns out.
  auto stats = nlohmann::json::parse(by_p["a b"]["stats"].get<std::string>());
  EXPECT_EQ(stats["numRecords"], 2);
  EXPECT_FALSE(stats["minValues"].contains("p"));

  // Partition pruning reads one file.
  auto t = Reader();
  auto snap = t->Latest();
  ASSERT_TRUE(snap.ok());
  std::vector<AddFile> read;
  ScanFilter f;
  f.conjuncts.push_back({"p", CompareOp::kEq, "100%"});
  auto b = t->Scan(**snap, f, &read);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_THAT(Rows(*b), ElementsAre("4|100%|2"));
  EXPECT_EQ(read.size(), 1u);

  // A second write into the same table keeps its partitioning; a different one is refused.
  WriteOptions other;
  other.partition_by = {"q"};
  auto bad = w->Write(Sql("SELECT 9 AS id, 'z' AS p, 1 AS q"), other);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("do not match"));
  ASSERT_TRUE(w->Write(Sql("SELECT 9 AS id, 'z' AS p, 1 AS q")).ok());
  EXPECT_EQ(ReadRows().size(), 9u);
}

TEST_F(WriterTest, TimestampAndDatePartitions) {
  engine::Batch data =
      Sql("SELECT 1 AS id, DATE '2024-03-01' AS d, TIMESTAMPTZ '2024-03-01 10:11:12.5+00' AS ts, "
          "true AS flag, "
          "1.25::DECIMAL(5,2) AS dec");
  WriteOptions opts;
  opts.partition_by = {"d", "ts", "flag", "dec"};
  auto w = Writer();
  ASSERT_TRUE(w->Write(data, opts).ok());
  auto lines = CommitLines(0);
  const auto& pv = lines.back()["add"]["partitionValues"];
  EXPECT_EQ(pv["d"], "2024-03-01");
  EXPECT_EQ(pv["ts"], "2024-03-01T10:11:12.500000Z");
  EXPECT_EQ(pv["flag"], "true");
  EXPECT_EQ(pv["dec"], "1.25");
  EXPECT_EQ(ReadRows(), Rows(data));
}

// Durability: every data file (written under its final name) is fsynced, then its directory,
// before the commit that references it is published; commit.sync=false turns the data fsyncs off
// too.
TEST_F(WriterTest, DataFilesAreSyncedBeforeTheCommit) {
  auto counting = std::make_shared<testing::CountingFileSystem>(fs::LocalFileSystem());
  TableWriterOptions options;
  options.commit.sync = true;
  auto w = DeltaTableWriter::Open(counting, engine_, table_, options);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  WriteOptions partitioned;
  partitioned.partition_by = {"p"};
  auto r = (*w)->Write(Sql("SELECT range AS id, range % 3 AS p FROM range(9)"), partitioned);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->num_files, 3);
  std::vector<std::string> events = counting->events();
  auto commit = std::find(events.begin(), events.end(),
                          "create " + table_ + "/_delta_log/00000000000000000000.json");
  ASSERT_NE(commit, events.end());
  std::set<std::string> synced_files, synced_dirs;
  for (auto it = events.begin(); it != commit; ++it) {
    EXPECT_NE(it->rfind("rename ", 0), 0u) << "data files are not renamed: " << *it;
    if (it->rfind("sync ", 0) == 0) {
      const std::string file = it->substr(5);
      EXPECT_EQ(synced_dirs.count(fs::DirName(file)), 0u) << "directory synced before " << file;
      synced_files.insert(file);
    }
    if (it->rfind("syncdir ", 0) == 0) synced_dirs.insert(it->substr(8));
  }
  auto table = Reader();
  ASSERT_NE(table, nullptr);
  auto snap = table->Latest();
  ASSERT_TRUE(snap.ok());
  ASSERT_EQ((*snap)->files.size(), 3u);
  for (const AddFile& f : (*snap)->files) {
    auto storage = ResolveLogPath(table_, f.path);
    ASSERT_TRUE(storage.ok());
    EXPECT_EQ(synced_files.count(*storage), 1u) << *storage;
    EXPECT_EQ(synced_dirs.count(fs::DirName(*storage)), 1u) << *storage;
  }

  counting->Reset();
  options.commit.sync = false;
  auto unsynced = DeltaTableWriter::Open(counting, engine_, table_, options);
  ASSERT_TRUE(unsynced.ok());
  ASSERT_TRUE((*unsynced)->Write(Sql("SELECT 10 AS id, 1 AS p")).ok());
  for (const std::string& e : counting->events()) EXPECT_NE(e.rfind("sync ", 0), 0u) << e;
  EXPECT_EQ(ReadRows().size(), 10u);
}

// REPLACE TABLE: one commit with the new metaData (same id), a remove of every file and the new
// rows; old versions stay readable; the protocol is never downgraded.
TEST_F(WriterTest, ReplaceTableReplacesSchemaAndFiles) {
  auto w = Writer();
  WriteOptions create;
  create.partition_by = {"p"};
  create.configuration = {{"delta.enableChangeDataFeed", "true"}};
  ASSERT_TRUE(w->Write(Sql("SELECT range AS id, range % 2 AS p FROM range(4)"), create).ok());
  auto before = w->Latest();
  ASSERT_TRUE(before.ok());
  const std::string id = (*before)->metadata.id;

  engine::Batch rows = Sql("SELECT 'x' AS name, 1.5::DOUBLE AS score");
  ReplaceTableOptions options;
  options.operation = "CREATE OR REPLACE TABLE AS SELECT";
  options.configuration = {{"owner", "me"}};
  auto r = w->ReplaceTable(rows.schema(), &rows, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->version, Version(1));
  EXPECT_EQ(r->num_removed_files, 2);
  EXPECT_EQ(r->num_rows, 1);
  EXPECT_THAT(ReadRows(), ElementsAre("x|1.5"));
  EXPECT_EQ(ReadRows(0).size(), 4u);
  auto lines = CommitLines(1);
  EXPECT_EQ(lines[0]["commitInfo"]["operation"], "CREATE OR REPLACE TABLE AS SELECT");
  EXPECT_EQ(lines[0]["commitInfo"]["operationMetrics"]["numRemovedFiles"], "2");
  auto after = w->Latest();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ((*after)->metadata.id, id);
  EXPECT_TRUE((*after)->metadata.partition_columns.empty());
  EXPECT_EQ((*after)->metadata.configuration,
            (std::map<std::string, std::string>{{"owner", "me"}}));
  EXPECT_EQ((*after)->protocol.min_writer_version, 4);  // not downgraded
  EXPECT_EQ(ValidateLog(), 1);

  // Without rows: an empty table of the new schema.
  ReplaceTableOptions plain;
  auto empty =
      w->ReplaceTable({{"k", *engine::DataType::FromSql("INTEGER"), false}}, nullptr, plain);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_TRUE(ReadRows().empty());
  EXPECT_EQ(CommitLines(2)[0]["commitInfo"]["operation"], "CREATE OR REPLACE TABLE");
  EXPECT_FALSE(w->Write(Sql("SELECT NULL::INTEGER AS k")).ok());  // NOT NULL of the new schema

  // Refusals commit nothing.
  ReplaceTableOptions constrained;
  constrained.configuration = {{"delta.constraints.positive", "id > 0"}};
  EXPECT_FALSE(w->ReplaceTable(rows.schema(), &rows, constrained).ok());
  ReplaceTableOptions bad_part;
  bad_part.partition_columns = {"nope"};
  EXPECT_FALSE(w->ReplaceTable(rows.schema(), &rows, bad_part).ok());
  EXPECT_EQ(ValidateLog(), 2);
  table_ = dir_.path() + "/missing";
  auto missing = Writer()->ReplaceTable(rows.schema(), &rows, plain);
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(missing.status().IsNotFound()) << missing.status().ToString();
}

TEST_F(WriterTest, IdempotentTxnWrites) {
  auto w = Writer();
  WriteOptions opts;
  opts.txn_app_id = "query-1";
  opts.txn_version = 0;
  opts.operation = "STREAMING UPDATE";
  opts.operation_parameters = {{"outputMode", "Append"}, {"queryId", "query-1"}, {"epochId", "0"}};
  auto r0 = w->Write(Sql("SELECT 1 AS id"), opts);
  ASSERT_TRUE(r0.ok()) << r0.status().ToString();
  EXPECT_FALSE(r0->skipped);
  auto files_before = DataFiles();

  // Same (appId, version): nothing written, nothing committed.
  auto again = w->Write(Sql("SELECT 1 AS id"), opts);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->skipped);
  EXPECT_FALSE(again->version.has_value());
  EXPECT_EQ(DataFiles(), files_before);
  EXPECT_EQ(ValidateLog(), 0);

  // A fresh writer (another process after a restart) sees the txn too.
  auto w2 = Writer();
  EXPECT_TRUE(w2->Write(Sql("SELECT 1 AS id"), opts)->skipped);

  opts.txn_version = 1;
  auto r1 = w2->Write(Sql("SELECT 2 AS id"), opts);
  ASSERT_TRUE(r1.ok());
  EXPECT_EQ(r1->version, Version(1));
  opts.txn_version = 0;  // an older batch after a newer one: skipped as well
  EXPECT_TRUE(w2->Write(Sql("SELECT 3 AS id"), opts)->skipped);
  EXPECT_THAT(ReadRows(), ElementsAre("1", "2"));

  auto t = Reader();
  auto v = t->LatestTxnVersion("query-1");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, std::optional<int64_t>(1));
  auto lines = CommitLines(1);
  bool found = false;
  for (const auto& l : lines) {
    if (l.contains("txn")) {
      found = true;
      EXPECT_EQ(l["txn"]["appId"], "query-1");
      EXPECT_EQ(l["txn"]["version"], 1);
      EXPECT_TRUE(l["txn"].contains("lastUpdated"));
    }
    if (l.contains("commitInfo")) {
      EXPECT_EQ(l["commitInfo"]["operation"], "STREAMING UPDATE");
      EXPECT_EQ(l["commitInfo"]["operationParameters"]["epochId"], "0");
    }
  }
  EXPECT_TRUE(found);
  // Other appIds are independent.
  opts.txn_app_id = "query-2";
  EXPECT_FALSE(w2->Write(Sql("SELECT 4 AS id"), opts)->skipped);
}

TEST_F(WriterTest, SchemaChecksBeforeAnyFileIsWritten) {
  auto w = Writer();
  engine::Schema schema = Sql("SELECT 1::BIGINT AS id, 'a' AS s").schema();
  schema[0].nullable = false;
  auto created = w->CreateTable(schema);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto c0 = CommitLines(0);
  EXPECT_EQ(c0[0]["commitInfo"]["operation"], "CREATE TABLE");
  EXPECT_EQ(w->CreateTable(schema).status().code(), StatusCode::kAlreadyExists);

  auto expect_refused = [&](const std::string& sql, const std::vector<std::string>& parts,
                            bool merge = false) {
    WriteOptions o;
    o.merge_schema = merge;
    auto r = w->Write(Sql(sql), o);
    ASSERT_FALSE(r.ok()) << sql;
    EXPECT_TRUE(r.status().IsInvalidArgument()) << r.status().ToString();
    for (const auto& p : parts) EXPECT_THAT(r.status().message(), HasSubstr(p)) << sql;
    EXPECT_TRUE(DataFiles().empty()) << "a refused write left files: " << sql;
  };
  expect_refused("SELECT 1::BIGINT AS id, 5 AS s", {"'s'", "integer", "string"});
  expect_refused("SELECT 1::BIGINT AS id, 'x' AS s, 2 AS extra", {"'extra'", "mergeSchema"});
  expect_refused("SELECT NULL::BIGINT AS id, 'x' AS s", {"NOT NULL", "'id'"});
  expect_refused("SELECT 'x' AS s", {"'id'", "NOT NULL"});
  expect_refused("SELECT 'x' AS id, 'x' AS s", {"'id'", "string", "long"});
  expect_refused("SELECT 1::BIGINT AS id, 'x' AS s, 2 AS extra, 3 AS extra2", {"extra"}, false);

  // Safe widening, column order and case are fine; missing nullable columns become NULL.
  ASSERT_TRUE(w->Write(Sql("SELECT 'x' AS S, 7::INTEGER AS ID")).ok());
  ASSERT_TRUE(w->Write(Sql("SELECT 8::BIGINT AS id")).ok());
  EXPECT_THAT(ReadRows(), ElementsAre("7|x", "8|NULL"));

  // mergeSchema adds the column; old rows read NULL.
  WriteOptions merge;
  merge.merge_schema = true;
  auto r = w->Write(Sql("SELECT 9::BIGINT AS id, 'y' AS s, 1.5::DOUBLE AS extra"), merge);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_THAT(ReadRows(), ElementsAre("7|x|NULL", "8|NULL|NULL", "9|y|1.5"));
  bool has_md = false;
  for (const auto& l : CommitLines(r->version->value())) has_md |= l.contains("metaData");
  EXPECT_TRUE(has_md);

  // ALTER TABLE ADD COLUMNS / SET TBLPROPERTIES are metadata-only commits.
  auto v = w->AddColumns({{"note", *engine::DataType::FromSql("VARCHAR"), true}});
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  auto lines = CommitLines(v->value());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["commitInfo"]["operation"], "ADD COLUMNS");
  EXPECT_TRUE(lines[1].contains("metaData"));
  EXPECT_FALSE(w->AddColumns({{"NOTE", *engine::DataType::FromSql("INTEGER"), true}}).ok());
  auto p = w->SetProperties({{"delta.appendOnly", "true"}});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(CommitLines(p->value())[0]["commitInfo"]["operation"], "SET TBLPROPERTIES");
  EXPECT_THAT(ReadRows(), ElementsAre("7|x|NULL|NULL", "8|NULL|NULL|NULL", "9|y|1.5|NULL"));
  WriteOptions ow;
  ow.mode = SaveMode::kOverwrite;
  EXPECT_THAT(w->Write(Sql("SELECT 1::BIGINT AS id"), ow).status().message(),
              HasSubstr("append-only"));
  ValidateLog();
}

TEST_F(WriterTest, OverwriteRemovesEveryLiveFile) {
  auto w = Writer();
  ASSERT_TRUE(w->Write(Sql("SELECT 1 AS id")).ok());
  ASSERT_TRUE(w->Write(Sql("SELECT 2 AS id")).ok());
  WriteOptions o;
  o.mode = SaveMode::kOverwrite;
  auto r = w->Write(Sql("SELECT 3 AS id UNION ALL SELECT 4"), o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->num_removed_files, 2);
  int removes = 0;
  for (const auto& l : CommitLines(2)) {
    if (l.contains("remove")) {
      ++removes;
      EXPECT_EQ(l["remove"]["dataChange"], true);
      EXPECT_TRUE(l["remove"].contains("deletionTimestamp"));
      EXPECT_TRUE(l["remove"].contains("size"));
    }
    if (l.contains("commitInfo")) {
      EXPECT_EQ(l["commitInfo"]["operationParameters"]["mode"], "Overwrite");
      EXPECT_EQ(l["commitInfo"]["isBlindAppend"], false);
    }
  }
  EXPECT_EQ(removes, 2);
  EXPECT_THAT(ReadRows(), ElementsAre("3", "4"));
  EXPECT_THAT(ReadRows(1), ElementsAre("1", "2"));
  WriteOptions e;
  e.mode = SaveMode::kErrorIfExists;
  EXPECT_TRUE(w->Write(Sql("SELECT 5 AS id"), e).status().IsAlreadyExists());
  ValidateLog();
}

TEST_F(WriterTest, ProtocolForChangeDataFeed) {
  auto w = Writer();
  WriteOptions o;
  o.configuration = {{"delta.enableChangeDataFeed", "true"}};
  ASSERT_TRUE(w->Write(Sql("SELECT 1 AS id"), o).ok());
  auto c0 = CommitLines(0);
  EXPECT_EQ(c0[1]["protocol"]["minWriterVersion"], 4);
  EXPECT_EQ(c0[1]["protocol"]["minReaderVersion"], 1);
  EXPECT_EQ(c0[2]["metaData"]["configuration"]["delta.enableChangeDataFeed"], "true");
  // The reader's change feed sees the insert.
  auto t = Reader();
  auto ch = t->Changes(Version(0));
  ASSERT_TRUE(ch.ok()) << ch.status().ToString();
  EXPECT_EQ(ch->num_rows(), 1);

  // Enabling the feed later upgrades a (1,2) table to writer 4 in the same commit.
  table_ = dir_.path() + "/t2";
  auto w2 = Writer();
  ASSERT_TRUE(w2->Write(Sql("SELECT 1 AS id")).ok());
  EXPECT_EQ(CommitLines(0)[1]["protocol"]["minWriterVersion"], 2);
  auto v = w2->SetProperties({{"delta.enableChangeDataFeed", "true"}});
  ASSERT_TRUE(v.ok());
  auto lines = CommitLines(1);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1]["protocol"]["minWriterVersion"], 4);
  // Unsupported settings are refused.
  EXPECT_TRUE(
      w2->SetProperties({{"delta.constraints.positive", "id > 0"}}).status().IsNotSupported());
}

TEST_F(WriterTest, TimestampNtzAndBadPartitionColumnsRefused) {
  auto w = Writer();
  auto r = w->Write(Sql("SELECT TIMESTAMP '2024-01-01 00:00:00' AS t"));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("timestamp_ntz"));
  WriteOptions o;
  o.partition_by = {"missing"};
  EXPECT_THAT(w->Write(Sql("SELECT 1 AS id, 2 AS x"), o).status().message(),
              HasSubstr("'missing'"));
  o.partition_by = {"id"};
  EXPECT_THAT(w->Write(Sql("SELECT 1 AS id"), o).status().message(), HasSubstr("every column"));
  EXPECT_TRUE(DataFiles().empty());
}

// Issue 24 #4: an empty (0-byte) or blank latest commit file was read as a commit without
// actions, so that version's rows vanished and the next append landed on top of it. It is a
// damaged file: readers and writers refuse it naming the file, and nothing is committed after it.
// Spark 4.2 with Delta 4.4 does not refuse it (checked with PySpark: two appends of range(0,3)
// and range(3,6), commit 1 truncated to 0 bytes: count() gives 3, an append of range(6,8)
// commits version 2, the table reads [0, 1, 2, 6, 7]); Sluice refuses it on purpose.
TEST_F(WriterTest, EmptyOrBlankCommitFileIsRefusedNamingTheFile) {
  for (std::string damaged : {std::string(), std::string("\n \n")}) {
    std::filesystem::remove_all(table_);
    auto w = Writer();
    ASSERT_TRUE(w);
    ASSERT_TRUE(w->Write(Sql("SELECT range AS id FROM range(2)")).ok());
    auto stale = Writer();  // holds the snapshot at version 0: it probes for version 1
    ASSERT_TRUE(stale);
    ASSERT_TRUE(w->Write(Sql("SELECT range + 10 AS id FROM range(2)")).ok());
    std::string commit1 = table_ + "/_delta_log/" + CommitFileName(Version(1));
    ASSERT_TRUE(fs::LocalFileSystem()->AtomicReplace(commit1, damaged, {}).ok());

    auto reader = DeltaTable::Open(fs::LocalFileSystem(), engine_, table_);
    ASSERT_FALSE(reader.ok()) << "damaged commit read as a snapshot";
    EXPECT_TRUE(reader.status().IsCorruption()) << reader.status().ToString();
    EXPECT_THAT(reader.status().message(), HasSubstr(commit1));
    EXPECT_THAT(reader.status().message(), HasSubstr("holds no action"));

    auto r = stale->Write(Sql("SELECT 99 AS id"));
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.status().message(), HasSubstr(commit1));
    auto fresh = DeltaTableWriter::Open(fs::LocalFileSystem(), engine_, table_, {});
    Status st = fresh.ok() ? (*fresh)->Write(Sql("SELECT 99 AS id")).status() : fresh.status();
    ASSERT_FALSE(st.ok());
    EXPECT_THAT(st.message(), HasSubstr(commit1));
    EXPECT_FALSE(std::filesystem::exists(table_ + "/_delta_log/" + CommitFileName(Version(2))));
  }
}

}  // namespace
}  // namespace sluice::delta
