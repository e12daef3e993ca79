#include "cli/sql_logic_test.h"

#include <gtest/gtest.h>

namespace sluice::cli {
namespace {

constexpr const char* kFile = R"(# name: example
# group: [x]

statement ok
CREATE TABLE t (v INTEGER)

statement error
SELECT * FROM missing
----
does not exist

query IT rowsort
SELECT v, 'a'
FROM t
----
1	a
2	(empty)

query I
SELECT 1 WHERE false
----

restart

require kafka
)";

TEST(SqlLogicTestParserTest, ParsesEveryRecordKind) {
  auto records = ParseTestFile(kFile, "example.test");
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  ASSERT_EQ(records->size(), 6u);
  const auto& r = *records;
  EXPECT_EQ(r[0].kind, RecordKind::kStatementOk);
  EXPECT_EQ(r[0].line, 4);
  EXPECT_EQ(r[0].sql, "CREATE TABLE t (v INTEGER)");
  EXPECT_EQ(r[1].kind, RecordKind::kStatementError);
  EXPECT_TRUE(r[1].has_expected_error);
  EXPECT_EQ(r[1].expected_error, "does not exist");
  EXPECT_EQ(r[2].kind, RecordKind::kQuery);
  EXPECT_EQ(r[2].types, "IT");
  EXPECT_EQ(r[2].sort, SortMode::kRowSort);
  EXPECT_EQ(r[2].sql, "SELECT v, 'a'\nFROM t");
  EXPECT_EQ(r[2].expected_rows, (std::vector<std::string>{"1\ta", "2\t(empty)"}));
  EXPECT_EQ(r[3].kind, RecordKind::kQuery);
  EXPECT_TRUE(r[3].expected_rows.empty());
  EXPECT_EQ(r[4].kind, RecordKind::kRestart);
  EXPECT_EQ(r[5].kind, RecordKind::kRequire);
  EXPECT_EQ(r[5].name, "kafka");
}

TEST(SqlLogicTestParserTest, StatementErrorWithoutMessageAcceptsAnyError) {
  auto records = ParseTestFile("statement error\nSELEC 1\n", "f.test");
  ASSERT_TRUE(records.ok());
  EXPECT_FALSE((*records)[0].has_expected_error);
}

TEST(SqlLogicTestParserTest, ErrorsNameFileAndLine) {
  auto bad = ParseTestFile("\n\nstatment ok\nSELECT 1\n", "bad.test");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "bad.test:3: unknown record 'statment'");
  auto no_dashes = ParseTestFile("query I\nSELECT 1\n", "q.test");
  ASSERT_FALSE(no_dashes.ok());
  EXPECT_NE(no_dashes.status().message().find("q.test:1:"), std::string::npos);
  EXPECT_FALSE(ParseTestFile("query IX\nSELECT 1\n----\n1\n", "t.test").ok());
  EXPECT_FALSE(ParseTestFile("statement ok\nSELECT 1\n----\nx\n", "t.test").ok());
  EXPECT_FALSE(ParseTestFile("loop i 0\n", "t.test").ok());
}

TEST(SqlLogicTestParserTest, LoopsExpandWithSubstitution) {
  const char* text =
      "loop i 0 3\n\nstatement ok\nINSERT INTO t VALUES (${i})\n\nloop j 1 3\n\n"
      "query I\nSELECT ${i} * ${j}\n----\n${i}\n\nendloop\n\nendloop\n\nrestart\n";
  auto records = ParseTestFile(text, "loop.test");
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  auto expanded = ExpandLoops(*records, "loop.test");
  ASSERT_TRUE(expanded.ok()) << expanded.status().ToString();
  ASSERT_EQ(expanded->size(), 3u * 3u + 1u);
  EXPECT_EQ((*expanded)[0].sql, "INSERT INTO t VALUES (0)");
  EXPECT_EQ((*expanded)[1].sql, "SELECT 0 * 1");
  EXPECT_EQ((*expanded)[2].sql, "SELECT 0 * 2");
  EXPECT_EQ((*expanded)[6].sql, "INSERT INTO t VALUES (2)");
  EXPECT_EQ((*expanded)[8].sql, "SELECT 2 * 2");
  EXPECT_EQ((*expanded)[8].expected_rows[0], "2");
  EXPECT_EQ(expanded->back().kind, RecordKind::kRestart);
}

TEST(SqlLogicTestParserTest, UnbalancedLoopsAreErrors) {
  auto open = ParseTestFile("loop i 0 2\n\nrestart\n", "u.test");
  ASSERT_TRUE(open.ok());
  auto expanded = ExpandLoops(*open, "u.test");
  ASSERT_FALSE(expanded.ok());
  EXPECT_EQ(expanded.status().message(), "u.test:1: loop without endloop");
  auto stray = ParseTestFile("endloop\n", "s.test");
  ASSERT_TRUE(stray.ok());
  EXPECT_FALSE(ExpandLoops(*stray, "s.test").ok());
  auto empty_range = ParseTestFile("loop i 3 3\n\nrestart\n\nendloop\n", "e.test");
  ASSERT_TRUE(empty_range.ok());
  auto none = ExpandLoops(*empty_range, "e.test");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(SqlLogicTestCellTest, FormatAndCompare) {
  EXPECT_EQ(FormatCell(std::nullopt), "NULL");
  EXPECT_EQ(FormatCell(std::string()), "(empty)");
  EXPECT_EQ(FormatCell(std::string("x")), "x");
  EXPECT_TRUE(CellMatches('R', "0.1", "0.1"));
  EXPECT_TRUE(CellMatches('R', "0.3", "0.30000000000000004"));
  EXPECT_FALSE(CellMatches('R', "0.3", "0.3001"));
  EXPECT_TRUE(CellMatches('R', "1e20", "100000000000000000000.0"));
  EXPECT_FALSE(CellMatches('R', "NULL", "0"));
  EXPECT_FALSE(CellMatches('I', "3", "3.0"));
  EXPECT_FALSE(CellMatches('T', "a", "b"));
}

}  // namespace
}  // namespace sluice::cli
