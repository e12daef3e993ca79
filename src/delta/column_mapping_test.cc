// Column mapping (column_mapping.h): the physical schema and the physical-to-logical SQL, and the
// Spark fixtures with mode name and id (renamed, dropped and re-added columns, nested fields, a
// renamed partition column, stats keyed by physical names) read as Spark reads them.
#include "delta/column_mapping.h"

#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/strings.h"
#include "delta/protocol_check.h"
#include "delta/scan.h"
#include "delta/table.h"
#include "delta/test_util.h"
#include "fs/file_system.h"

namespace sluice::delta {
namespace {

using testing::Fixture;
using ::testing::HasSubstr;

// A schemaString with column mapping metadata: id long -> col-1, s struct<x int -> col-3> ->
// col-2, arr array<struct<a int -> col-5>> -> col-4, m map<string, struct<c int -> col-7>> ->
// col-6.
constexpr const char* kMappedSchema = R"({"type":"struct","fields":[
 {"name":"id","type":"long","nullable":true,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-1"}},
 {"name":"s","type":{"type":"struct","fields":[
   {"name":"x","type":"integer","nullable":true,"metadata":{"delta.columnMapping.id":3,"delta.columnMapping.physicalName":"col-3"}}]},
  "nullable":true,"metadata":{"delta.columnMapping.id":2,"delta.columnMapping.physicalName":"col-2"}},
 {"name":"arr","type":{"type":"array","elementType":{"type":"struct","fields":[
   {"name":"a","type":"integer","nullable":true,"metadata":{"delta.columnMapping.id":5,"delta.columnMapping.physicalName":"col-5"}}]},"containsNull":true},
  "nullable":true,"metadata":{"delta.columnMapping.id":4,"delta.columnMapping.physicalName":"col-4"}},
 {"name":"m","type":{"type":"map","keyType":"string","valueType":{"type":"struct","fields":[
   {"name":"c","type":"integer","nullable":true,"metadata":{"delta.columnMapping.id":7,"delta.columnMapping.physicalName":"col-7"}}]},"valueContainsNull":true},
  "nullable":true,"metadata":{"delta.columnMapping.id":6,"delta.columnMapping.physicalName":"col-6"}}]})";

DeltaSchema Parse(const std::string& json) {
  auto s = ParseSchemaString(json);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : DeltaSchema{};
}

Metadata WithMode(const std::string& mode) {
  Metadata md;
  md.configuration["delta.columnMapping.mode"] = mode;
  return md;
}

TEST(ColumnMappingTest, Modes) {
  EXPECT_EQ(*ColumnMappingModeOf(Metadata{}), ColumnMappingMode::kNone);
  EXPECT_EQ(*ColumnMappingModeOf(WithMode("none")), ColumnMappingMode::kNone);
  EXPECT_EQ(*ColumnMappingModeOf(WithMode("Name")), ColumnMappingMode::kName);
  EXPECT_EQ(*ColumnMappingModeOf(WithMode("id")), ColumnMappingMode::kId);
  auto bad = ColumnMappingModeOf(WithMode("bogus"));
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.status().IsNotSupported());
  EXPECT_THAT(bad.status().message(), HasSubstr("'bogus'"));
  Protocol p;
  p.min_reader_version = 2;
  p.min_writer_version = 5;
  EXPECT_TRUE(CheckReadSupported(p, WithMode("name")).ok());
  EXPECT_TRUE(CheckReadSupported(p, WithMode("id")).ok());
  EXPECT_FALSE(CheckReadSupported(p, WithMode("bogus")).ok());
}

TEST(ColumnMappingTest, PhysicalSchemaRenamesEveryStructField) {
  DeltaSchema s = Parse(kMappedSchema);
  auto physical = PhysicalSchema(s, ColumnMappingMode::kName);
  ASSERT_TRUE(physical.ok()) << physical.status().ToString();
  ASSERT_EQ(physical->size(), 4u);
  EXPECT_EQ((*physical)[0].name, "col-1");
  EXPECT_EQ((*physical)[1].type.ToSql(), "STRUCT(\"col-3\" INTEGER)");
  EXPECT_EQ((*physical)[2].type.ToSql(), "STRUCT(\"col-5\" INTEGER)[]");
  EXPECT_EQ((*physical)[3].type.ToSql(), "MAP(VARCHAR, STRUCT(\"col-7\" INTEGER))");
  // Mode none: the logical schema, metadata or not.
  auto none = PhysicalSchema(s, ColumnMappingMode::kNone);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, s.fields);
  EXPECT_EQ(PhysicalColumnName(s.fields, *physical, "S"), "col-2");
  EXPECT_EQ(PhysicalColumnName(s.fields, *physical, "nope"), std::nullopt);
  EXPECT_EQ(FieldIdAt(s.metadata, "arr.element.a"), 5);
  EXPECT_EQ(PhysicalNameAt(s.metadata, "m.value.c"), "col-7");
}

TEST(ColumnMappingTest, AFieldWithoutAPhysicalNameIsCorruption) {
  DeltaSchema s = Parse(
      R"({"type":"struct","fields":[{"name":"a","type":"long","nullable":true,"metadata":{}}]})");
  auto physical = PhysicalSchema(s, ColumnMappingMode::kId);
  ASSERT_FALSE(physical.ok());
  EXPECT_TRUE(physical.status().IsCorruption());
  EXPECT_THAT(physical.status().message(), HasSubstr("field 'a'"));
}

TEST(ColumnMappingTest, PhysicalToLogicalSqlRuns) {
  DeltaSchema s = Parse(kMappedSchema);
  auto physical = PhysicalSchema(s, ColumnMappingMode::kName);
  ASSERT_TRUE(physical.ok());
  auto engine = engine::Engine::Open();
  ASSERT_TRUE(engine.ok());
  auto conn = (*engine)->Connect();
  ASSERT_TRUE(conn.ok());
  std::string select;
  for (size_t i = 1; i < s.fields.size(); ++i) {
    auto expr = PhysicalToLogicalSql("p." + QuoteIdentifier((*physical)[i].name),
                                     (*physical)[i].type, s.fields[i].type);
    ASSERT_TRUE(expr.ok()) << expr.status().ToString();
    select += std::string(select.empty() ? "" : ", ") + "to_json(" + *expr + ") AS " +
              QuoteIdentifier(s.fields[i].name);
  }
  auto b = (*conn)->Query(
      "SELECT " + select +
      " FROM (SELECT {'col-3': 7} AS \"col-2\", [{'col-5': 1}, NULL] AS \"col-4\", "
      "MAP {'k': {'col-7': 2}} AS \"col-6\" UNION ALL SELECT NULL, NULL, NULL) p ORDER BY 1");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(testing::Rows(*b), (std::vector<std::string>{
                                   "NULL|NULL|NULL", R"({"x":7}|[{"a":1},null]|{"k":{"c":2}})"}));
  // Shapes that differ are refused, not guessed.
  EXPECT_FALSE(PhysicalToLogicalSql("x", (*physical)[1].type, s.fields[2].type).ok());
}

TEST(ColumnMappingTest, RenameOrDropByPhysicalNames) {
  DeltaSchema s = Parse(kMappedSchema);
  EXPECT_EQ(RenameOrDrop(s, s), std::nullopt);
  std::string renamed = kMappedSchema;
  renamed.replace(renamed.find("\"name\":\"x\""), 10, "\"name\":\"y\"");
  EXPECT_EQ(RenameOrDrop(s, Parse(renamed)), "column 's.x' was renamed to 's.y'");
  // Dropping arr: the schema without its field.
  nlohmann::json j = nlohmann::json::parse(kMappedSchema);
  j["fields"].erase(2);
  EXPECT_EQ(RenameOrDrop(s, Parse(j.dump())), "column 'arr' was dropped");
  // Adding a field is no rename or drop.
  EXPECT_EQ(RenameOrDrop(Parse(j.dump()), s), std::nullopt);
  // No physical names on either side (no column mapping): nothing to say.
  DeltaSchema plain = Parse(R"({"type":"struct","fields":[{"name":"a","type":"long"}]})");
  DeltaSchema other = Parse(R"({"type":"struct","fields":[{"name":"b","type":"long"}]})");
  EXPECT_EQ(RenameOrDrop(plain, other), std::nullopt);
}

TEST(ColumnMappingTest, RenamesAndDropsListsEveryChange) {
  DeltaSchema s = Parse(kMappedSchema);
  EXPECT_TRUE(RenamesAndDrops(s, s).empty());
  // s -> s2 (its field x follows without being listed), id -> key, arr dropped (its element's
  // field a is not listed on its own).
  nlohmann::json j = nlohmann::json::parse(kMappedSchema);
  j["fields"][0]["name"] = "key";
  j["fields"][1]["name"] = "s2";
  j["fields"].erase(2);
  ColumnChanges c = RenamesAndDrops(s, Parse(j.dump()));
  EXPECT_EQ(c.renamed,
            (std::vector<std::pair<std::string, std::string>>{{"id", "key"}, {"s", "s2"}}));
  EXPECT_EQ(c.dropped, std::vector<std::string>{"arr"});
  // A nested rename is listed by its paths.
  std::string renamed = kMappedSchema;
  renamed.replace(renamed.find("\"name\":\"x\""), 10, "\"name\":\"y\"");
  EXPECT_EQ(RenamesAndDrops(s, Parse(renamed)).renamed,
            (std::vector<std::pair<std::string, std::string>>{{"s.x", "s.y"}}));
  // Adding fields is neither.
  EXPECT_TRUE(RenamesAndDrops(Parse(j.dump()), Parse(j.dump())).empty());
}

// ---------------- Spark's tables ----------------

class ColumnMappingFixtureTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto e = engine::Engine::Open();
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = e.MoveValueUnsafe().release();
  }
  static void TearDownTestSuite() {
    delete engine_;
    engine_ = nullptr;
  }

  static nlohmann::json Summary(const std::string& rel) {
    std::ifstream in(Fixture(rel) + ".summary.json");
    EXPECT_TRUE(in.good()) << rel;
    return in.good() ? nlohmann::json::parse(in) : nlohmann::json::object();
  }
  // Spark's rows (JSON objects) as parsed JSON, sorted by their text.
  static std::vector<nlohmann::json> SparkRows(const nlohmann::json& rows) {
    std::vector<nlohmann::json> out;
    for (const auto& r : rows) out.push_back(nlohmann::json::parse(r.get<std::string>()));
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return a.dump() < b.dump(); });
    return out;
  }
  // The scan's rows matching `where` as JSON objects (to_json of the whole row), sorted.
  static std::vector<nlohmann::json> SluiceRows(engine::Connection* conn, const std::string& sql,
                                                const std::string& where = "TRUE") {
    auto b = conn->Query("SELECT to_json(t) AS j FROM (" + sql + ") t WHERE " + where);
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    std::vector<nlohmann::json> out;
    if (!b.ok()) return out;
    for (int64_t r = 0; r < b->num_rows(); ++r) {
      out.push_back(nlohmann::json::parse(b->GetString(r, 0).value_or("null")));
    }
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return a.dump() < b.dump(); });
    return out;
  }
  // A summary query ("v = 1", "region = 'p2'", "v IS NULL", "s.xx = 40") as a pruning filter
  // (top-level columns only; a nested column gives no conjunct).
  static ScanFilter FilterOf(const std::string& q) {
    static const std::regex cmp(R"(^(\w+) (=|>=|>|<=|<) '?([^']*)'?$)");
    static const std::regex null(R"(^(\w+) IS NULL$)");
    std::smatch m;
    ScanFilter f;
    if (std::regex_match(q, m, cmp)) {
      const std::string op = m[2];
      CompareOp o = op == "="    ? CompareOp::kEq
                    : op == ">=" ? CompareOp::kGe
                    : op == ">"  ? CompareOp::kGt
                    : op == "<=" ? CompareOp::kLe
                                 : CompareOp::kLt;
      f.conjuncts.push_back({m[1], o, std::string(m[3])});
    } else if (std::regex_match(q, m, null)) {
      f.conjuncts.push_back({m[1], CompareOp::kIsNull, std::nullopt});
    }
    return f;
  }

  // Checks the table's rows and each summary query's rows (pruned by the query's filter)
  // against Spark's, nested columns included.
  void CheckAgainstSpark(const std::string& rel, bool with_queries = true) {
    SCOPED_TRACE(rel);
    nlohmann::json s = Summary(rel);
    auto t = DeltaTable::Open(fs::LocalFileSystem(), engine_, Fixture(rel));
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    auto snap = (*t)->Latest();
    ASSERT_TRUE(snap.ok()) << snap.status().ToString();
    auto conn = engine_->Connect();
    ASSERT_TRUE(conn.ok());
    auto sql = ScanSnapshotSql(conn->get(), fs::LocalFileSystem().get(), **snap);
    ASSERT_TRUE(sql.ok()) << sql.status().ToString();
    EXPECT_EQ(SluiceRows(conn->get(), *sql), SparkRows(s["rows"]));
    ASSERT_EQ(s.contains("queries"), with_queries);
    if (!with_queries) return;
    for (const auto& [q, rows] : s["queries"].items()) {
      SCOPED_TRACE(q);
      auto pruned = ScanSnapshotSql(conn->get(), fs::LocalFileSystem().get(), **snap, FilterOf(q));
      ASSERT_TRUE(pruned.ok()) << pruned.status().ToString();
      EXPECT_EQ(SluiceRows(conn->get(), *pruned, q), SparkRows(rows));
    }
  }

  size_t FilesFor(const std::string& rel, const std::string& q) {
    auto t = DeltaTable::Open(fs::LocalFileSystem(), engine_, Fixture(rel));
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    if (!t.ok()) return 0;
    auto snap = (*t)->Latest();
    EXPECT_TRUE(snap.ok());
    auto files = PlanScanFiles(**snap, FilterOf(q));
    EXPECT_TRUE(files.ok()) << files.status().ToString();
    return files.ok() ? files->size() : 0;
  }

  static engine::Engine* engine_;
};

engine::Engine* ColumnMappingFixtureTest::engine_ = nullptr;

TEST_F(ColumnMappingFixtureTest, NameMode) {
  CheckAgainstSpark("spark/column-mapping-name", /*with_queries=*/false);
}

TEST_F(ColumnMappingFixtureTest, NameModeRenamesAndDrops) {
  CheckAgainstSpark("spark/column-mapping-name-rename-drop");
}

TEST_F(ColumnMappingFixtureTest, IdModeRenamesAndDrops) {
  CheckAgainstSpark("spark/column-mapping-id-rename-drop");
}

TEST_F(ColumnMappingFixtureTest, UpgradedTable) {
  CheckAgainstSpark("spark/column-mapping-upgraded");
}

// delta-rs 1.6.6's column-mapped tables (no renames: it cannot rename, drop or add columns on
// them; scripts/fixtures/deltars_tables.py): its rows and filtered rows, read by its DataFusion.
TEST_F(ColumnMappingFixtureTest, DeltaRsNameMode) {
  CheckAgainstSpark("deltars/column-mapping-name");
}

TEST_F(ColumnMappingFixtureTest, DeltaRsIdMode) { CheckAgainstSpark("deltars/column-mapping-id"); }

// Data skipping reads the stats under physical names: drop_me (the first v, renamed twice)
// has bounds 1 and 3 in the two files of v1 and 4 and 5 in the later ones, so drop_me >= 4
// reads the two later files only; region (the renamed partition column part) prunes by the
// physical partition value key.
TEST_F(ColumnMappingFixtureTest, DataSkippingUsesPhysicalNames) {
  for (const char* rel :
       {"spark/column-mapping-name-rename-drop", "spark/column-mapping-id-rename-drop"}) {
    SCOPED_TRACE(rel);
    EXPECT_EQ(FilesFor(rel, ""), 4u);
    EXPECT_EQ(FilesFor(rel, "drop_me >= 4"), 2u);
    EXPECT_EQ(FilesFor(rel, "drop_me = 1"), 1u);
    EXPECT_EQ(FilesFor(rel, "region = 'p2'"), 2u);
    EXPECT_EQ(FilesFor(rel, "id > 3"), 2u);
  }
  // The upgraded table: c is the physical column a of the first files; the new a has no stats
  // there (the file lacks it), so those files are kept for a = 'new'.
  EXPECT_EQ(FilesFor("spark/column-mapping-upgraded", "c >= 3"), 1u);
  EXPECT_EQ(FilesFor("spark/column-mapping-upgraded", "a = 'new'"), 3u);
}

}  // namespace
}  // namespace sluice::delta
