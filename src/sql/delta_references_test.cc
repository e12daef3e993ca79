#include "sql/delta_references.h"

#include <gtest/gtest.h>

namespace sluice::sql {
namespace {

bool IsTable(const std::string& name) { return name == "t" || name == "events"; }

RewrittenQuery Rewrite(std::string_view sql) {
  auto r = RewriteDeltaReferences(sql, IsTable);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : RewrittenQuery{};
}

TEST(DeltaReferencesTest, PlainNamesStayAndAreReported) {
  auto q =
      Rewrite("SELECT t.a, x FROM t JOIN other o ON t.a = o.a WHERE t.b IN (SELECT b FROM events)");
  EXPECT_EQ(q.sql,
            "SELECT t.a, x FROM t JOIN other o ON t.a = o.a WHERE t.b IN (SELECT b FROM events)");
  ASSERT_EQ(q.references.size(), 2u);
  EXPECT_EQ(q.references[0].view_name, "t");
  EXPECT_EQ(q.references[1].view_name, "events");
}

TEST(DeltaReferencesTest, FunctionCallsAndQualifiedNamesAreNotTables) {
  auto q = Rewrite("SELECT t(1), s.t, 'events' FROM other");
  EXPECT_TRUE(q.references.empty());
}

TEST(DeltaReferencesTest, TheTargetOfUpdateDeleteAndMergeIsNotAReference) {
  auto u = Rewrite("UPDATE t SET a = 1 WHERE b IN (SELECT b FROM events)");
  EXPECT_EQ(u.sql, "UPDATE t SET a = 1 WHERE b IN (SELECT b FROM events)");
  ASSERT_EQ(u.references.size(), 1u);
  EXPECT_EQ(u.references[0].view_name, "events");
  auto d = Rewrite("delete from delta.`/data/t` where a = 1");
  EXPECT_EQ(d.sql, "delete from delta.`/data/t` where a = 1");
  EXPECT_TRUE(d.references.empty());
  auto m = Rewrite("MERGE INTO t AS x USING events AS e ON x.a = e.a WHEN MATCHED THEN DELETE");
  ASSERT_EQ(m.references.size(), 1u);
  EXPECT_EQ(m.references[0].view_name, "events");
  // The target read again inside the statement is a reference.
  auto self = Rewrite("DELETE FROM t WHERE a < (SELECT max(a) FROM t)");
  ASSERT_EQ(self.references.size(), 1u);
  EXPECT_EQ(self.references[0].view_name, "t");
  // A SELECT is unchanged by this rule.
  auto q = Rewrite("SELECT * FROM t");
  ASSERT_EQ(q.references.size(), 1u);
}

// The table a table statement acts on is named as written, for its executor to open: a view
// in its place made `DESCRIBE HISTORY delta.`/p`` a syntax error and `DESCRIBE delta.`/p``
// abort the process.
TEST(DeltaReferencesTest, TheTableATableStatementActsOnIsNotAReference) {
  for (const char* sql : {
           "DESCRIBE HISTORY delta.`/data/t`",
           "DESCRIBE HISTORY delta.`/data/t` LIMIT 2",
           "DESCRIBE DETAIL delta.`/data/t`",
           "DESCRIBE delta.`/data/t`",
           "DESCRIBE TABLE EXTENDED delta.`/data/t`",
           "VACUUM delta.`/data/t` RETAIN 0 HOURS",
           "OPTIMIZE delta.`/data/t`",
           "ALTER TABLE delta.`/data/t` ADD COLUMNS (c INT)",
           "SHOW TBLPROPERTIES delta.`/data/t`",
           "RESTORE TABLE delta.`/data/t` TO VERSION AS OF 1",
           "DROP TABLE IF EXISTS delta.`/data/t`",
       }) {
    auto r = Rewrite(sql);
    EXPECT_EQ(r.sql, sql);
    EXPECT_TRUE(r.references.empty()) << sql;
  }
  // What a statement's query reads still is one.
  auto c = Rewrite("CREATE TABLE delta.`/data/u` AS SELECT * FROM delta.`/data/t`");
  EXPECT_EQ(c.sql, "CREATE TABLE delta.`/data/u` AS SELECT * FROM \"delta:/data/t\" AS \"t\"");
  ASSERT_EQ(c.references.size(), 1u);
  EXPECT_EQ(c.references[0].table.name, "/data/t");
  auto v = Rewrite("CREATE VIEW v AS SELECT * FROM delta.`/data/t`");
  ASSERT_EQ(v.references.size(), 1u);
}

TEST(DeltaReferencesTest, TimeTravel) {
  auto q = Rewrite("SELECT * FROM t VERSION AS OF 3 WHERE a > 1");
  EXPECT_EQ(q.sql, "SELECT * FROM \"t@v3\" AS \"t\" WHERE a > 1");
  ASSERT_EQ(q.references.size(), 1u);
  EXPECT_EQ(q.references[0].kind, DeltaReference::Kind::kVersion);
  EXPECT_EQ(q.references[0].version, 3);
  auto aliased = Rewrite("SELECT * FROM t TIMESTAMP AS OF '2026-01-01' x");
  EXPECT_EQ(aliased.sql, "SELECT * FROM \"t@2026-01-01\" x");
  EXPECT_EQ(aliased.references[0].timestamp, "2026-01-01");
  EXPECT_FALSE(RewriteDeltaReferences("SELECT * FROM t VERSION AS OF 'x'", IsTable).ok());
}

TEST(DeltaReferencesTest, PathsChangesAndDescribe) {
  auto q = Rewrite(
      "SELECT * FROM delta.`/data/silver` VERSION AS OF 2 JOIN table_changes('t', 0, 5) c ON true");
  EXPECT_EQ(
      q.sql,
      "SELECT * FROM \"delta:/data/silver@v2\" AS \"silver\" JOIN \"changes:t:0:5\" c ON true");
  ASSERT_EQ(q.references.size(), 2u);
  EXPECT_TRUE(q.references[0].table.is_path);
  EXPECT_EQ(q.references[1].kind, DeltaReference::Kind::kChanges);
  EXPECT_EQ(q.references[1].changes_start, "0");
  EXPECT_EQ(q.references[1].changes_end, "5");
  auto ts = Rewrite("SELECT * FROM table_changes('t', '2026-01-01 00:00:00')");
  EXPECT_TRUE(ts.references[0].changes_by_timestamp);
  EXPECT_FALSE(
      RewriteDeltaReferences("SELECT * FROM table_changes('t', 0, '2026-01-01')", IsTable).ok());
  EXPECT_FALSE(RewriteDeltaReferences("SELECT * FROM table_changes(t, 0)", IsTable).ok());
  auto d = Rewrite("SELECT version FROM (DESCRIBE HISTORY t) ORDER BY 1");
  EXPECT_EQ(d.sql, "SELECT version FROM \"history:t\" ORDER BY 1");
  EXPECT_EQ(d.references[0].kind, DeltaReference::Kind::kHistory);
}

}  // namespace
}  // namespace sluice::sql
