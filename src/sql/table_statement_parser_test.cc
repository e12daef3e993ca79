#include "sql/table_statement_parser.h"

#include <gtest/gtest.h>

namespace sluice::sql {
namespace {

template <typename T>
T Parse(std::string_view sql) {
  auto r = ParseTableStatement(sql);
  EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
  if (!r.ok() || !r->has_value()) {
    ADD_FAILURE() << "not a table statement: " << sql;
    return T{};
  }
  const T* s = std::get_if<T>(&**r);
  if (s == nullptr) {
    ADD_FAILURE() << "parsed as another statement: " << sql;
    return T{};
  }
  return *s;
}

std::string ErrorOf(std::string_view sql) {
  auto r = ParseTableStatement(sql);
  EXPECT_FALSE(r.ok()) << sql;
  return r.ok() ? "" : r.status().message();
}

TEST(TableStatementParserTest, NotOursIsNullopt) {
  for (const char* sql :
       {"SELECT 1", "SET threads = 1", "CREATE VIEW v AS SELECT 1", "CREATE TEMP TABLE x (a INT)",
        "COPY t TO 'x.csv'", "DESCRIBE SELECT 1", "WITH x AS (SELECT 1) SELECT * FROM x"}) {
    auto r = ParseTableStatement(sql);
    ASSERT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    EXPECT_FALSE(r->has_value()) << sql;
  }
}

TEST(TableStatementParserTest, CreateTable) {
  auto s = Parse<CreateTableStatement>(
      "CREATE TABLE IF NOT EXISTS events (id BIGINT NOT NULL, ts TIMESTAMP, "
      "amount DECIMAL(10, 2) COMMENT 'cents', tags STRUCT(a INT, b VARCHAR)) "
      "PARTITIONED BY (ts) LOCATION '/data/events' "
      "TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true', delta.checkpointInterval = 10);");
  EXPECT_TRUE(s.if_not_exists);
  EXPECT_EQ(s.table, (TableName{"events", false}));
  ASSERT_EQ(s.columns.size(), 4u);
  EXPECT_EQ(s.columns[0].name, "id");
  EXPECT_EQ(s.columns[0].type_sql, "BIGINT");
  EXPECT_TRUE(s.columns[0].not_null);
  EXPECT_EQ(s.columns[2].type_sql, "DECIMAL(10, 2)");
  EXPECT_EQ(s.columns[2].comment, "cents");
  EXPECT_EQ(s.columns[3].type_sql, "STRUCT(a INT, b VARCHAR)");
  EXPECT_EQ(s.partitioned_by, (std::vector<std::string>{"ts"}));
  EXPECT_EQ(s.location, "/data/events");
  EXPECT_EQ(s.properties.at("delta.enableChangeDataFeed"), "true");
  EXPECT_EQ(s.properties.at("delta.checkpointInterval"), "10");
}

TEST(TableStatementParserTest, CreateTableAsSelectAndPathTables) {
  auto s = Parse<CreateTableStatement>("CREATE OR REPLACE TABLE delta.`/tmp/t` AS SELECT 1 AS x");
  EXPECT_TRUE(s.or_replace);
  EXPECT_EQ(s.table, (TableName{"/tmp/t", true}));
  EXPECT_EQ(s.as_query, "SELECT 1 AS x");
  EXPECT_NE(ErrorOf("CREATE TABLE t USING parquet AS SELECT 1").find("Delta"), std::string::npos);
  EXPECT_EQ(ErrorOf("CREATE TABLE t"),
            "syntax error at line 1, column 15: expected a column list or AS <query>, found the "
            "end of the statement");
}

TEST(TableStatementParserTest, ReplaceTable) {
  auto s = Parse<CreateTableStatement>("REPLACE TABLE t (a INT) PARTITIONED BY (a)");
  EXPECT_TRUE(s.or_replace);
  EXPECT_TRUE(s.replace_only);
  EXPECT_FALSE(s.if_not_exists);
  EXPECT_EQ(s.columns.size(), 1u);
  auto ctas = Parse<CreateTableStatement>("REPLACE TABLE t AS SELECT 1 AS a;");
  EXPECT_TRUE(ctas.replace_only);
  EXPECT_EQ(ctas.as_query, "SELECT 1 AS a");
  auto create = Parse<CreateTableStatement>("CREATE OR REPLACE TABLE t (a INT)");
  EXPECT_TRUE(create.or_replace);
  EXPECT_FALSE(create.replace_only);
  EXPECT_NE(ErrorOf("CREATE OR REPLACE TABLE IF NOT EXISTS t (a INT)")
                .find("OR REPLACE cannot be used with IF NOT EXISTS"),
            std::string::npos);
  EXPECT_NE(ErrorOf("REPLACE TABLE IF NOT EXISTS t (a INT)").find("syntax error"),
            std::string::npos);
  auto plain = Parse<CreateTableStatement>("CREATE TABLE IF NOT EXISTS t (a INT)");
  EXPECT_TRUE(plain.if_not_exists);
  EXPECT_FALSE(plain.or_replace);
}

TEST(TableStatementParserTest, Insert) {
  auto a = Parse<InsertStatement>("INSERT INTO t VALUES (1, 'a'), (2, 'b')");
  EXPECT_FALSE(a.overwrite);
  EXPECT_EQ(a.query, "VALUES (1, 'a'), (2, 'b')");
  auto b = Parse<InsertStatement>("INSERT INTO t BY NAME SELECT 2 AS b, 1 AS a");
  EXPECT_TRUE(b.by_name);
  EXPECT_EQ(b.query, "SELECT 2 AS b, 1 AS a");
  auto c = Parse<InsertStatement>("INSERT OVERWRITE TABLE t (a, b) SELECT * FROM s;");
  EXPECT_TRUE(c.overwrite);
  EXPECT_EQ(c.columns, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(c.query, "SELECT * FROM s");
  auto d = Parse<InsertStatement>("INSERT INTO t (SELECT 1)");
  EXPECT_TRUE(d.columns.empty());
  EXPECT_EQ(d.query, "(SELECT 1)");
  EXPECT_NE(ErrorOf("INSERT INTO t").find("expected VALUES or a query"), std::string::npos);
}

TEST(TableStatementParserTest, UpdateAndDelete) {
  auto u = Parse<UpdateStatement>(
      "UPDATE t AS x SET v = v + 1, s = CASE WHEN v > 1 THEN 'a' ELSE 'b' END WHERE id IN (1, 2)");
  EXPECT_EQ(u.alias, "x");
  ASSERT_EQ(u.assignments.size(), 2u);
  EXPECT_EQ(u.assignments[0].column, "v");
  EXPECT_EQ(u.assignments[0].expression, "v + 1");
  EXPECT_EQ(u.assignments[1].expression, "CASE WHEN v > 1 THEN 'a' ELSE 'b' END");
  EXPECT_EQ(u.where, "id IN (1, 2)");
  auto d = Parse<DeleteStatement>("DELETE FROM t WHERE ts < '2026-01-01'");
  EXPECT_EQ(d.where, "ts < '2026-01-01'");
  EXPECT_FALSE(Parse<DeleteStatement>("DELETE FROM t").where.has_value());
  EXPECT_NE(ErrorOf("UPDATE t WHERE x = 1").find("expected SET, found 'WHERE'"), std::string::npos);
}

TEST(TableStatementParserTest, MergeWithEveryClause) {
  auto m = Parse<MergeStatement>(
      "MERGE INTO target t USING (SELECT * FROM updates WHERE x > 0) AS s ON t.id = s.id "
      "WHEN MATCHED AND s.op = 'D' THEN DELETE "
      "WHEN MATCHED THEN UPDATE SET t.v = CASE WHEN s.v IS NULL THEN t.v ELSE s.v END, n = 1 "
      "WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, coalesce(s.v, 0)) "
      "WHEN NOT MATCHED BY SOURCE AND t.v < 0 THEN DELETE");
  EXPECT_EQ(m.target, (TableName{"target", false}));
  EXPECT_EQ(m.target_alias, "t");
  EXPECT_EQ(m.source, "(SELECT * FROM updates WHERE x > 0)");
  EXPECT_EQ(m.source_alias, "s");
  EXPECT_EQ(m.on, "t.id = s.id");
  ASSERT_EQ(m.clauses.size(), 4u);
  EXPECT_EQ(m.clauses[0].match, MergeMatch::kMatched);
  EXPECT_EQ(m.clauses[0].condition, "s.op = 'D'");
  EXPECT_EQ(m.clauses[0].action, MergeAction::kDelete);
  EXPECT_EQ(m.clauses[1].action, MergeAction::kUpdate);
  ASSERT_EQ(m.clauses[1].assignments.size(), 2u);
  EXPECT_EQ(m.clauses[1].assignments[0].column, "v");
  EXPECT_EQ(m.clauses[1].assignments[0].expression, "CASE WHEN s.v IS NULL THEN t.v ELSE s.v END");
  EXPECT_EQ(m.clauses[2].match, MergeMatch::kNotMatchedByTarget);
  EXPECT_EQ(m.clauses[2].insert_columns, (std::vector<std::string>{"id", "v"}));
  EXPECT_EQ(m.clauses[2].insert_values, (std::vector<std::string>{"s.id", "coalesce(s.v, 0)"}));
  EXPECT_EQ(m.clauses[3].match, MergeMatch::kNotMatchedBySource);
  EXPECT_EQ(m.clauses[3].condition, "t.v < 0");
}

TEST(TableStatementParserTest, MergeStarsAndTableSource) {
  auto m = Parse<MergeStatement>(
      "MERGE INTO t USING delta.`/x` s ON t.k = s.k WHEN MATCHED THEN UPDATE SET * "
      "WHEN NOT MATCHED BY TARGET THEN INSERT *");
  EXPECT_EQ(m.source, "delta.`/x`");
  EXPECT_EQ(m.clauses[0].action, MergeAction::kUpdateStar);
  EXPECT_EQ(m.clauses[1].action, MergeAction::kInsertStar);
}

TEST(TableStatementParserTest, MergeErrors) {
  EXPECT_NE(ErrorOf("MERGE INTO t USING s ON t.k = s.k").find("expected WHEN"), std::string::npos);
  EXPECT_NE(ErrorOf("MERGE INTO t USING s ON t.k = s.k WHEN MATCHED THEN INSERT *")
                .find("only allowed in WHEN NOT MATCHED"),
            std::string::npos);
  EXPECT_NE(ErrorOf("MERGE INTO t USING s ON t.k = s.k WHEN NOT MATCHED THEN DELETE")
                .find("can only INSERT"),
            std::string::npos);
  EXPECT_NE(ErrorOf("MERGE INTO t USING s ON k WHEN NOT MATCHED THEN INSERT (a, b) VALUES (1)")
                .find("names 2 columns but gives 1 values"),
            std::string::npos);
}

TEST(TableStatementParserTest, AlterDescribeMaintenance) {
  auto add = Parse<AlterTableAddColumnsStatement>("ALTER TABLE t ADD COLUMNS (c INT, d VARCHAR)");
  ASSERT_EQ(add.columns.size(), 2u);
  EXPECT_EQ(add.columns[1].type_sql, "VARCHAR");
  auto one = Parse<AlterTableAddColumnsStatement>("ALTER TABLE t ADD COLUMN c DOUBLE");
  EXPECT_EQ(one.columns[0].type_sql, "DOUBLE");
  auto props = Parse<AlterTableSetPropertiesStatement>(
      "ALTER TABLE t SET TBLPROPERTIES ('delta.logRetentionDuration' = 'interval 1 days')");
  EXPECT_EQ(props.properties.at("delta.logRetentionDuration"), "interval 1 days");
  // RENAME COLUMN / DROP COLUMN (column mapping, docs/delta.md); other changes are refused.
  auto rename = Parse<AlterTableRenameColumnStatement>("ALTER TABLE t RENAME COLUMN s.x TO y");
  EXPECT_EQ(rename.column, (std::vector<std::string>{"s", "x"}));
  EXPECT_EQ(rename.new_name, "y");
  auto drop =
      Parse<AlterTableDropColumnsStatement>("ALTER TABLE t DROP COLUMNS IF EXISTS (a, s.b)");
  EXPECT_TRUE(drop.if_exists);
  EXPECT_EQ(drop.columns, (std::vector<std::vector<std::string>>{{"a"}, {"s", "b"}}));
  EXPECT_EQ(Parse<AlterTableDropColumnsStatement>("ALTER TABLE t DROP COLUMN c").columns.size(),
            1u);
  EXPECT_NE(ErrorOf("ALTER TABLE t ALTER COLUMN c TYPE BIGINT").find("not supported"),
            std::string::npos);

  auto h = Parse<DescribeStatement>("DESCRIBE HISTORY t LIMIT 5");
  EXPECT_EQ(h.kind, DescribeStatement::Kind::kHistory);
  EXPECT_EQ(h.limit, 5);
  EXPECT_EQ(Parse<DescribeStatement>("DESCRIBE DETAIL delta.`/p`").table, (TableName{"/p", true}));
  EXPECT_EQ(Parse<DescribeStatement>("DESCRIBE t").kind, DescribeStatement::Kind::kTable);

  auto v = Parse<VacuumStatement>("VACUUM t RETAIN 168 HOURS DRY RUN");
  EXPECT_EQ(v.retain_hours, 168);
  EXPECT_TRUE(v.dry_run);
  EXPECT_FALSE(Parse<VacuumStatement>("VACUUM t").retain_hours.has_value());
  EXPECT_EQ(Parse<OptimizeStatement>("OPTIMIZE t WHERE day = '2026-01-01'").where,
            "day = '2026-01-01'");
  EXPECT_NE(ErrorOf("OPTIMIZE t ZORDER BY (a)").find("ZORDER"), std::string::npos);
  EXPECT_FALSE(Parse<OptimizeStatement>("OPTIMIZE t").purge);
  auto reorg = Parse<OptimizeStatement>("REORG TABLE t WHERE day = '2026-01-01' APPLY (PURGE)");
  EXPECT_TRUE(reorg.purge);
  EXPECT_EQ(reorg.where, "day = '2026-01-01'");
  EXPECT_EQ(Parse<OptimizeStatement>("reorg table delta.`/p` apply (purge)").table,
            (TableName{"/p", true}));
  EXPECT_NE(ErrorOf("REORG TABLE t APPLY (UPGRADE UNIFORM (ICEBERG_COMPAT_VERSION = 2))")
                .find("only (PURGE)"),
            std::string::npos);
  EXPECT_NE(ErrorOf("REORG TABLE t PURGE").find("APPLY"), std::string::npos);
  EXPECT_EQ(Parse<RestoreStatement>("RESTORE TABLE t TO VERSION AS OF 3").version, 3);
  EXPECT_EQ(Parse<RestoreStatement>("RESTORE t TIMESTAMP AS OF '2026-01-01'").timestamp,
            "2026-01-01");
  EXPECT_TRUE(Parse<DropTableStatement>("DROP TABLE IF EXISTS t").if_exists);
  EXPECT_NE(ErrorOf("VACUUM t RETAIN HOURS").find("a number of hours"), std::string::npos);
  EXPECT_NE(ErrorOf("DROP TABLE t extra").find("expected the end of the statement"),
            std::string::npos);
}

}  // namespace
}  // namespace sluice::sql
