// Writing tables with column mapping modes name and id (column_mapping_write.h): data files, stats
// and partition values under physical names, Parquet field ids on every struct field, new fields
// mapped, the upgrade of a table by SET TBLPROPERTIES, DML on Spark's tables with renamed columns.
#include "delta/column_mapping_write.h"

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "delta/column_mapping.h"
#include "delta/dml_delete.h"
#include "delta/dml_merge.h"
#include "delta/dml_test_util.h"
#include "delta/dml_update.h"
#include "delta/paths.h"
#include "delta/test_util.h"

namespace sluice::delta {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class ColumnMappingWriteTest : public testing::DmlTestBase {
 protected:
  std::shared_ptr<const Snapshot> Latest() {
    auto t = Reader();
    if (!t) return nullptr;
    auto s = t->Latest();
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? *s : nullptr;
  }
  // The top-level column names of a data file of the latest snapshot.
  std::vector<std::string> FileColumns(const AddFile& f) {
    auto path = ResolveLogPath(table_, f.path);
    EXPECT_TRUE(path.ok());
    auto b = Sql("SELECT name FROM parquet_schema('" + *path + "') WHERE name <> 'duckdb_schema'");
    std::vector<std::string> out;
    for (int64_t r = 0; r < b.num_rows(); ++r) out.push_back(b.GetString(r, 0).value_or(""));
    return out;
  }
  // Every Parquet field id of every live file that the schema knows sits on the field the schema
  // gives that id (by its physical name), and every physical ("col-") field of the file has an
  // id. Returns the ids seen (the ids of dropped fields, whose data old files keep, included).
  std::set<int64_t> ExpectFieldIdsMatchSchema() {
    std::set<int64_t> seen;
    auto snap = Latest();
    EXPECT_TRUE(snap);
    if (!snap) return seen;
    const std::map<int64_t, std::string> by_id = PhysicalNamesById(snap->schema);
    for (const AddFile& f : snap->files) {
      auto path = ResolveLogPath(table_, f.path);
      EXPECT_TRUE(path.ok());
      auto b = Sql("SELECT name, field_id FROM parquet_schema('" + *path +
                   "') WHERE name <> 'duckdb_schema'");
      for (int64_t r = 0; r < b.num_rows(); ++r) {
        const std::string name = b.GetString(r, 0).value_or("");
        std::optional<std::string> id = b.GetString(r, 1);
        if (name.rfind("col-", 0) == 0) {
          EXPECT_TRUE(id.has_value()) << name << " in " << f.path << " has no field id";
        }
        if (!id) continue;
        int64_t n = std::stoll(*id);
        seen.insert(n);
        auto it = by_id.find(n);
        if (it == by_id.end()) continue;  // a dropped field, whose data old files keep
        EXPECT_EQ(it->second, name) << "field id " << n << " in " << f.path;
      }
    }
    return seen;
  }
  void CreateMapped(const std::string& mode = "name") {
    CreateTableOptions options;
    options.partition_columns = {"p"};
    options.configuration = {{"delta.columnMapping.mode", mode}};
    auto v = writer_->CreateTable(
        Sql("SELECT 1::BIGINT AS id, 'a' AS p, {'x': 1, 'y': 'u'} AS s LIMIT 0").schema(), options);
    ASSERT_TRUE(v.ok()) << v.status().ToString();
  }
};

TEST_F(ColumnMappingWriteTest, NewTableGetsPhysicalNamesEverywhere) {
  CreateMapped();
  Append(
      "SELECT * FROM (VALUES (1::BIGINT, 'a', {'x': 10, 'y': 'one'}), "
      "(2, 'b', {'x': 20, 'y': 'two'}), (3, 'b', NULL)) v(id, p, s)");
  auto snap = Latest();
  ASSERT_TRUE(snap);
  EXPECT_EQ(snap->protocol.min_reader_version, 2);
  EXPECT_EQ(snap->protocol.min_writer_version, 5);
  EXPECT_EQ(snap->metadata.Config("delta.columnMapping.maxColumnId"), "5");
  auto physical = PhysicalSchemaOf(snap->schema, snap->metadata);
  ASSERT_TRUE(physical.ok()) << physical.status().ToString();
  for (const auto& f : *physical) EXPECT_THAT(f.name, StartsWith("col-"));
  EXPECT_THAT((*physical)[2].type.ToSql(), HasSubstr("\"col-"));
  const std::string pid = (*physical)[0].name, pp = (*physical)[1].name, ps = (*physical)[2].name;
  ASSERT_EQ(snap->files.size(), 2u);
  for (const AddFile& f : snap->files) {
    // The files hold the physical names (the partition column is not in them) ...
    EXPECT_EQ(FileColumns(f),
              (std::vector<std::string>{pid, ps, (*physical)[2].type.children[0].name,
                                        (*physical)[2].type.children[1].name}));
    // ... and so do the partition values and the stats.
    EXPECT_EQ(f.partition_values.count(pp), 1u);
    ASSERT_TRUE(f.stats);
    EXPECT_THAT(*f.stats, HasSubstr("\"" + pid + "\""));
    EXPECT_THAT(*f.stats, ::testing::Not(HasSubstr("\"id\"")));
  }
  EXPECT_EQ(
      ReadRows(-1, {"id", "p", "s"}),
      (std::vector<std::string>{"1|a|{'x': 10, 'y': one}", "2|b|{'x': 20, 'y': two}", "3|b|NULL"}));
  // Data skipping over the written stats.
  auto files = PlanScanFiles(*snap, ScanFilter{{{"id", CompareOp::kGe, "2"}}});
  ASSERT_TRUE(files.ok());
  EXPECT_EQ(files->size(), 1u);
}

TEST_F(ColumnMappingWriteTest, DmlAndNewColumns) {
  CreateMapped();
  Append(
      "SELECT * FROM (VALUES (1::BIGINT, 'a', {'x': 10, 'y': 'one'}), "
      "(2, 'b', {'x': 20, 'y': 'two'}), (3, 'b', NULL), (4, 'c', NULL)) v(id, p, s)");
  auto del = DeleteRows(Table(), std::string("p = 'c'"));  // whole files, by partition value
  ASSERT_TRUE(del.ok()) << del.status().ToString();
  auto del2 = DeleteRows(Table(), std::string("id = 1"));
  ASSERT_TRUE(del2.ok()) << del2.status().ToString();
  auto upd = UpdateRows(Table(), {{"s", "{'x': 30, 'y': 'upd'}"}}, std::string("id = 3"));
  ASSERT_TRUE(upd.ok()) << upd.status().ToString();
  auto added = writer_->AddColumns(Sql("SELECT 'x' AS extra LIMIT 0").schema());
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  MergeSpec merge;
  merge.source_sql = "SELECT * FROM (VALUES (2::BIGINT, 'm'), (9, 'n')) v(id, extra)";
  merge.source_alias = "src";  // not s: the table has a column s
  merge.on = "t.id = src.id";
  MergeClause matched;
  matched.kind = MergeClauseKind::kMatched;
  matched.assignments = {{"extra", "src.extra"}};
  MergeClause insert;
  insert.kind = MergeClauseKind::kNotMatched;
  insert.action = MergeActionKind::kInsert;
  insert.assignments = {{"id", "src.id"}, {"p", "'z'"}, {"extra", "src.extra"}};
  merge.clauses = {matched, insert};
  auto m = MergeInto(Table(), merge);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(ReadRows(-1, {"id", "p", "s", "extra"}),
            (std::vector<std::string>{"2|b|{'x': 20, 'y': two}|m", "3|b|{'x': 30, 'y': upd}|NULL",
                                      "9|z|NULL|n"}));
  auto snap = Latest();
  ASSERT_TRUE(snap);
  EXPECT_EQ(snap->metadata.Config("delta.columnMapping.maxColumnId"), "6");
  auto extra = PhysicalNameAt(snap->schema.metadata, "extra");
  ASSERT_TRUE(extra);
  EXPECT_THAT(*extra, StartsWith("col-"));
}

TEST_F(ColumnMappingWriteTest, UpgradeKeepsTheNamesAsPhysicalNames) {
  Append("SELECT * FROM (VALUES (1::BIGINT, 'a'), (2, 'b')) v(id, s)");
  auto v = writer_->SetProperties({{"delta.columnMapping.mode", "name"}});
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  auto snap = Latest();
  ASSERT_TRUE(snap);
  EXPECT_EQ(snap->protocol.min_reader_version, 2);
  EXPECT_EQ(snap->protocol.min_writer_version, 5);
  EXPECT_EQ(PhysicalNameAt(snap->schema.metadata, "id"), "id");
  EXPECT_EQ(PhysicalNameAt(snap->schema.metadata, "s"), "s");
  EXPECT_EQ(FieldIdAt(snap->schema.metadata, "s"), 2);
  Append("SELECT 3::BIGINT AS id, 'c' AS s");
  EXPECT_EQ(ReadRows(), (std::vector<std::string>{"1|a", "2|b", "3|c"}));
  // No other change of mode.
  auto back = writer_->SetProperties({{"delta.columnMapping.mode", "none"}});
  EXPECT_TRUE(back.status().IsNotSupported()) << back.status().ToString();
}

TEST_F(ColumnMappingWriteTest, RenameAndDropColumns) {
  CreateMapped();
  Append(
      "SELECT * FROM (VALUES (1::BIGINT, 'a', {'x': 10, 'y': 'one'}), (2, 'b', NULL)) "
      "v(id, p, s)");
  ASSERT_TRUE(writer_->RenameColumn({"S", "x"}, "xx").ok());
  ASSERT_TRUE(writer_->RenameColumn({"p"}, "part").ok());
  ASSERT_TRUE(writer_->RenameColumn({"id"}, "key").ok());
  auto drop = writer_->DropColumns({{"s", "y"}});
  ASSERT_TRUE(drop.ok()) << drop.status().ToString();
  // The renamed partition column stays the partition column; its files are not rewritten.
  auto snap = Latest();
  ASSERT_TRUE(snap);
  EXPECT_EQ(snap->metadata.partition_columns, (std::vector<std::string>{"part"}));
  EXPECT_EQ(snap->files.size(), 2u);
  EXPECT_EQ(ReadRows(-1, {"key", "part", "s"}),
            (std::vector<std::string>{"1|a|{'xx': 10}", "2|b|NULL"}));
  // A new column under a dropped or renamed name is a new physical column.
  ASSERT_TRUE(writer_->AddColumns(Sql("SELECT 1::BIGINT AS id LIMIT 0").schema()).ok());
  Append("SELECT 3::BIGINT AS key, 'a' AS part, {'xx': 30} AS s, 33::BIGINT AS id");
  EXPECT_EQ(
      ReadRows(-1, {"key", "part", "s", "id"}),
      (std::vector<std::string>{"1|a|{'xx': 10}|NULL", "2|b|NULL|NULL", "3|a|{'xx': 30}|33"}));
  auto pruned = PlanScanFiles(*Latest(), ScanFilter{{{"id", CompareOp::kEq, "1"}}});
  ASSERT_TRUE(pruned.ok());
  EXPECT_EQ(pruned->size(), 2u);  // the old files have no stats for the new id: kept
  EXPECT_EQ(ReadRows(0).size(), 0u);
  // Errors: a partition column, the last field, a name in use, an unknown path.
  EXPECT_FALSE(writer_->DropColumns({{"part"}}).ok());
  EXPECT_FALSE(writer_->DropColumns({{"s", "xx"}}).ok());
  EXPECT_FALSE(writer_->RenameColumn({"key"}, "ID").ok());
  auto unknown = writer_->RenameColumn({"nope"}, "x");
  EXPECT_THAT(unknown.status().message(), HasSubstr("'nope'"));
}

TEST_F(ColumnMappingWriteTest, RenameNeedsColumnMapping) {
  Append("SELECT 1::BIGINT AS id, 'a' AS s");
  auto r = writer_->RenameColumn({"s"}, "t");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsNotSupported());
  EXPECT_THAT(r.status().message(), HasSubstr("'delta.columnMapping.mode' = 'name'"));
  EXPECT_FALSE(writer_->DropColumns({{"s"}}).ok());
  EXPECT_EQ(ReadRows(), (std::vector<std::string>{"1|a"}));
}

// Mode id is written as mode name is, with field ids Spark matches columns by: a new table,
// appends, DML, RENAME / DROP COLUMN, ADD COLUMNS.
TEST_F(ColumnMappingWriteTest, IdModeWritesFieldIds) {
  CreateMapped("id");
  auto snap = Latest();
  ASSERT_TRUE(snap);
  EXPECT_EQ(snap->protocol.min_reader_version, 2);
  EXPECT_EQ(snap->protocol.min_writer_version, 5);
  Append(
      "SELECT * FROM (VALUES (1::BIGINT, 'a', {'x': 10, 'y': 'one'}), "
      "(2, 'b', {'x': 20, 'y': 'two'}), (3, 'b', NULL)) v(id, p, s)");
  // id 1, s 3, s.x 4, s.y 5 (p, 2, is a partition column: not in the files).
  EXPECT_EQ(ExpectFieldIdsMatchSchema(), (std::set<int64_t>{1, 3, 4, 5}));
  ASSERT_TRUE(writer_->RenameColumn({"s", "x"}, "xx").ok());
  ASSERT_TRUE(writer_->RenameColumn({"id"}, "key").ok());
  ASSERT_TRUE(writer_->DropColumns({{"s", "y"}}).ok());
  ASSERT_TRUE(writer_->AddColumns(Sql("SELECT 1::BIGINT AS id LIMIT 0").schema()).ok());
  Append("SELECT 4::BIGINT AS key, 'a' AS p, {'xx': 40} AS s, 44::BIGINT AS id");
  auto del = DeleteRows(Table(), std::string("key = 1"));
  ASSERT_TRUE(del.ok()) << del.status().ToString();
  auto upd = UpdateRows(Table(), {{"id", "key * 11"}}, std::string("key = 2"));
  ASSERT_TRUE(upd.ok()) << upd.status().ToString();
  EXPECT_EQ(ReadRows(-1, {"key", "p", "s", "id"}),
            (std::vector<std::string>{"2|b|{'xx': 20}|22", "3|b|NULL|NULL", "4|a|{'xx': 40}|44"}));
  // The rewritten files and the new column's carry ids; the dropped s.y (5) is gone.
  EXPECT_EQ(ExpectFieldIdsMatchSchema(), (std::set<int64_t>{1, 3, 4, 6}));
  EXPECT_EQ(Latest()->metadata.Config("delta.columnMapping.maxColumnId"), "6");
}

TEST_F(ColumnMappingWriteTest, NameModeWritesFieldIdsToo) {
  CreateMapped();
  Append("SELECT 1::BIGINT AS id, 'a' AS p, {'x': 10, 'y': 'one'} AS s");
  EXPECT_EQ(ExpectFieldIdsMatchSchema(), (std::set<int64_t>{1, 3, 4, 5}));
}

// Delta changes the mode of an existing table only from none to name: the files of a table
// without column mapping have no field ids for mode id.
TEST_F(ColumnMappingWriteTest, UpgradeToIdModeIsRefused) {
  Append("SELECT 1::BIGINT AS id, 'a' AS s");
  auto v = writer_->SetProperties({{"delta.columnMapping.mode", "id"}});
  ASSERT_FALSE(v.ok());
  EXPECT_TRUE(v.status().IsNotSupported()) << v.status().ToString();
  EXPECT_THAT(v.status().message(), HasSubstr("from 'none' to 'id'"));
  auto other = writer_->SetProperties({{"delta.columnMapping.mode", "ids"}});
  EXPECT_THAT(other.status().message(), HasSubstr("'ids'"));
}

// Spark's id-mode table with renamed, dropped and re-added columns: Sluice's appends and DML
// keep the rows, and every file it writes carries the schema's field ids.
TEST_F(ColumnMappingWriteTest, WritesIntoSparksIdModeTable) {
  table_ = testing::CopyFixture("spark/column-mapping-id-rename-drop", dir_);
  writer_ = Writer();
  ASSERT_TRUE(writer_);
  Append(
      "SELECT 6::BIGINT AS id, 'p2' AS region, {'xx': 60, 'y': 'y6'} AS s, "
      "NULL::STRUCT(a INT, b VARCHAR)[] AS arr, "
      "NULL::MAP(VARCHAR, STRUCT(c INT)) AS m, 6 AS drop_me, 6000 AS v");
  auto del = DeleteRows(Table(), std::string("region = 'p3'"));
  ASSERT_TRUE(del.ok()) << del.status().ToString();
  auto upd = UpdateRows(Table(), {{"v", "v + 1"}}, std::string("drop_me = 4"));
  ASSERT_TRUE(upd.ok()) << upd.status().ToString();
  EXPECT_EQ(ReadRows(-1, {"id", "region", "drop_me", "v"}),
            (std::vector<std::string>{"1|p1|1|NULL", "3|p2|3|NULL", "4|p2|4|1001", "6|p2|6|6000"}));
  ExpectFieldIdsMatchSchema();
}

// Spark's table with renamed, dropped and re-added columns and a renamed partition column:
// Sluice's appends and DML keep it readable with the same rows.
TEST_F(ColumnMappingWriteTest, WritesIntoSparksRenamedTable) {
  table_ = testing::CopyFixture("spark/column-mapping-name-rename-drop", dir_);
  writer_ = Writer();
  ASSERT_TRUE(writer_);
  Append(
      "SELECT 6::BIGINT AS id, 'p2' AS region, {'xx': 60, 'y': 'y6'} AS s, "
      "NULL::STRUCT(a INT, b VARCHAR)[] AS arr, "
      "NULL::MAP(VARCHAR, STRUCT(c INT)) AS m, 6 AS drop_me, 6000 AS v");
  auto del = DeleteRows(Table(), std::string("region = 'p3'"));
  ASSERT_TRUE(del.ok()) << del.status().ToString();
  auto upd = UpdateRows(Table(), {{"v", "v + 1"}}, std::string("drop_me = 4"));
  ASSERT_TRUE(upd.ok()) << upd.status().ToString();
  EXPECT_EQ(ReadRows(-1, {"id", "region", "drop_me", "v"}),
            (std::vector<std::string>{"1|p1|1|NULL", "3|p2|3|NULL", "4|p2|4|1001", "6|p2|6|6000"}));
  auto snap = Latest();
  ASSERT_TRUE(snap);
  auto physical = PhysicalSchemaOf(snap->schema, snap->metadata);
  ASSERT_TRUE(physical.ok());
  for (const AddFile& f : snap->files) {
    for (const auto& [k, v] : f.partition_values) EXPECT_THAT(k, StartsWith("col-"));
  }
}

}  // namespace
}  // namespace sluice::delta
