#include "cli/result_printer.h"

#include <sstream>

#include <gtest/gtest.h>

namespace sluice::cli {
namespace {

engine::Batch Rows(const std::string& sql) {
  static auto engine = std::move(engine::Engine::Open()).ValueOrDie();
  auto conn = std::move(engine->Connect()).ValueOrDie();
  auto batch = conn->Query(sql);
  EXPECT_TRUE(batch.ok()) << batch.status().ToString();
  return batch.ok() ? *batch : engine::Batch();
}

std::string Print(const engine::Batch& b, OutputFormat f) {
  std::ostringstream out;
  PrintBatch(b, f, out);
  return out.str();
}

TEST(ResultPrinterTest, Table) {
  auto b = Rows("SELECT * FROM (VALUES (1, 'one'), (22, NULL)) t(n, name)");
  EXPECT_EQ(Print(b, OutputFormat::kTable),
            " n | name\n"
            "---+-----\n"
            " 1 | one\n"
            "22 | NULL\n"
            "(2 rows)\n");
}

TEST(ResultPrinterTest, Csv) {
  auto b = Rows("SELECT * FROM (VALUES (1, 'a,b'), (2, NULL), (3, ''), (4, 'say \"hi\"')) t(n, s)");
  EXPECT_EQ(Print(b, OutputFormat::kCsv),
            "n,s\r\n1,\"a,b\"\r\n2,\r\n3,\"\"\r\n4,\"say \"\"hi\"\"\"\r\n");
}

TEST(ResultPrinterTest, JsonLines) {
  auto b = Rows(
      "SELECT 1 AS n, 2.5::DOUBLE AS d, true AS b, 'x' AS s, NULL::INTEGER AS z, "
      "'inf'::DOUBLE AS i");
  EXPECT_EQ(Print(b, OutputFormat::kJson),
            "{\"n\":1,\"d\":2.5,\"b\":true,\"s\":\"x\",\"z\":null,\"i\":\"inf\"}\n");
}

TEST(ResultPrinterTest, StatementWithoutColumnsPrintsNothing) {
  engine::Batch empty;
  EXPECT_EQ(Print(empty, OutputFormat::kTable), "");
  EXPECT_EQ(Print(empty, OutputFormat::kJson), "");
}

TEST(ResultPrinterTest, ParseFormat) {
  EXPECT_EQ(*ParseOutputFormat("csv"), OutputFormat::kCsv);
  EXPECT_FALSE(ParseOutputFormat("xml").ok());
}

}  // namespace
}  // namespace sluice::cli
