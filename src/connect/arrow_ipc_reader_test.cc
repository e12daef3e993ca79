#include "connect/arrow_ipc_reader.h"

#include <gtest/gtest.h>

#include "connect/local_relation.h"
#include "spark/connect/relations.pb.h"

namespace sluice::connect {
namespace {

std::string Unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

// Written by pyarrow 4.x's ipc.new_stream (as PySpark's createDataFrame sends rows), two record
// batches of 2 and 1 rows:
//   pa.table({"id": int64 [1, None, -3], "s": string ["a", None, "héllo"],
//             "b": bool [True, False, None], "d": date32 [2024-01-02, None, 1969-12-31],
//             "ts": timestamp("us", tz="UTC") [2024-01-02 03:04:05.5, None, None],
//             "m": decimal128(10, 2) [12.34, None, -0.05], "f": float64 [1.5, None, inf],
//             "bin": binary [00ff, None, ""], "n": null [None] * 3})
const std::string& PyArrowStream() {
  static const std::string kStream = Unhex(
      "fffffffff00100001000000000000a000c000600050008000a000000000104000c00000008000800000004000800"
      "0000"
      "04000000090000008c0100005001000028010000f8000000b800000080000000540000002c00000004000000a8fe"
      "ffff"
      "0000010110000000140000000400000000000000010000006e000000d0feffffccfeffff00000104100000001400"
      "0000"
      "04000000000000000300000062696e00f4fefffff0feffff00000103100000001400000004000000000000000100"
      "0000"
      "660000006affffff0000020018ffffff00000107100000001c0000000400000000000000010000006d0000000800"
      "0c00"
      "04000800080000000a000000020000004cffffff0000010a100000001c0000000400000000000000020000007473"
      "0000"
      "08000c0006000800080000000000020004000000030000005554430088ffffff0000010810000000180000000400"
      "0000"
      "000000000100000064000600080006000600000000000000b4ffffff000001061000000014000000040000000000"
      "0000"
      "0100000062000000dcffffffd8ffffff000001051000000018000000040000000000000001000000730000000400"
      "0400"
      "04000000100014000800060007000c00000010001000000000000102100000001c00000004000000000000000200"
      "0000"
      "6964000008000c0008000700080000000000000140000000ffffffff0802000014000000000000000c0016000600"
      "0500"
      "08000c000c0000000003040018000000f80000000000000000000a0018000c00040008000a0000003c0100001000"
      "0000"
      "02000000000000000000000012000000000000000000000001000000000000000800000000000000180000000000"
      "0000"
      "2000000000000000010000000000000028000000000000000c000000000000003800000000000000070000000000"
      "0000"
      "40000000000000000000000000000000400000000000000001000000000000004800000000000000010000000000"
      "0000"
      "50000000000000000c00000000000000600000000000000001000000000000006800000000000000180000000000"
      "0000"
      "8000000000000000010000000000000088000000000000003000000000000000b800000000000000010000000000"
      "0000"
      "c0000000000000001800000000000000d8000000000000000100000000000000e0000000000000000c0000000000"
      "0000"
      "f0000000000000000200000000000000000000000900000002000000000000000100000000000000020000000000"
      "0000"
      "01000000000000000200000000000000000000000000000002000000000000000100000000000000020000000000"
      "0000"
      "01000000000000000200000000000000010000000000000002000000000000000100000000000000020000000000"
      "0000"
      "01000000000000000200000000000000020000000000000005000000000000000100000000000000000000000000"
      "0000"
      "fdffffffffffffff0500000000000000000000000100000001000000000000006168c3a96c6c6f00010000000000"
      "0000"
      "05000000000000000c4d000000000000ffffffff000000000100000000000000607455c0ed0d0600000000000000"
      "0000"
      "00000000000000000500000000000000d20400000000000000000000000000000000000000000000000000000000"
      "0000"
      "fbffffffffffffffffffffffffffffff0500000000000000000000000000f83f0000000000000000000000000000"
      "f07f"
      "05000000000000000000000002000000020000000000000000ff000000000000ffffffff08020000140000000000"
      "0000"
      "0c0016000600050008000c000c0000000003040018000000600000000000000000000a0018000c00040008000a00"
      "0000"
      "3c010000100000000100000000000000000000001200000000000000000000000000000000000000000000000000"
      "0000"
      "08000000000000000800000000000000000000000000000008000000000000000800000000000000100000000000"
      "0000"
      "06000000000000001800000000000000010000000000000020000000000000000100000000000000280000000000"
      "0000"
      "00000000000000002800000000000000040000000000000030000000000000000100000000000000380000000000"
      "0000"
      "08000000000000004000000000000000000000000000000040000000000000001000000000000000500000000000"
      "0000"
      "00000000000000005000000000000000080000000000000058000000000000000000000000000000580000000000"
      "0000"
      "08000000000000006000000000000000000000000000000000000000090000000100000000000000000000000000"
      "0000"
      "01000000000000000000000000000000010000000000000001000000000000000100000000000000000000000000"
      "0000"
      "01000000000000000100000000000000010000000000000000000000000000000100000000000000000000000000"
      "0000"
      "0100000000000000000000000000000001000000000000000100000000000000fdffffffffffffff000000000600"
      "0000"
      "68c3a96c6c6f000000000000000000000000000000000000ffffffff000000000000000000000000000000000000"
      "0000"
      "fbffffffffffffffffffffffffffffff000000000000f07f0000000000000000ffffffff00000000");
  return kStream;
}

TEST(ArrowIpcReaderTest, ReadsWhatPyArrowWrites) {
  Result<ArrowTableValues> t = ReadArrowStream(PyArrowStream());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->fields.size(), 9u);
  EXPECT_EQ(t->num_rows, 3);
  EXPECT_EQ(t->fields[0].name, "id");
  EXPECT_EQ(t->fields[0].type.id, ArrowTypeId::kInt64);
  EXPECT_EQ(t->columns[0].ints, (std::vector<int64_t>{1, 0, -3}));
  EXPECT_EQ(t->columns[0].valid, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(t->columns[1].bytes[2], "h\xc3\xa9llo");
  EXPECT_EQ(t->columns[2].ints[0], 1);
  EXPECT_EQ(t->columns[2].ints[1], 0);
  EXPECT_FALSE(t->columns[2].valid[2]);
  EXPECT_EQ(t->columns[3].ints[0], 19724);
  EXPECT_EQ(t->columns[3].ints[2], -1);
  EXPECT_EQ(t->fields[4].type.timezone, "UTC");
  EXPECT_EQ(t->columns[4].ints[0], 1704164645500000);
  EXPECT_EQ(t->fields[5].type.precision, 10);
  EXPECT_EQ(t->fields[5].type.scale, 2);
  EXPECT_EQ(static_cast<int64_t>(t->columns[5].decimals[0]), 1234);
  EXPECT_EQ(static_cast<int64_t>(t->columns[5].decimals[2]), -5);
  EXPECT_EQ(t->columns[6].doubles[0], 1.5);
  EXPECT_EQ(t->columns[7].bytes[0], std::string("\0\xff", 2));
  EXPECT_EQ(t->columns[7].bytes[2], "");
  EXPECT_EQ(t->fields[8].type.id, ArrowTypeId::kNull);
  EXPECT_EQ(t->columns[8].valid, (std::vector<bool>{false, false, false}));
}

TEST(ArrowIpcReaderTest, ReadsWhatTheWriterWrites) {
  std::vector<ArrowField> fields = {{"a", {ArrowTypeId::kInt32}, true},
                                    {"s", {ArrowTypeId::kString}, true}};
  std::vector<ArrowColumnBuilder> cols;
  cols.emplace_back(fields[0].type);
  cols.emplace_back(fields[1].type);
  cols[0].AppendInt(7);
  cols[0].AppendNull();
  cols[1].AppendBytes("x");
  cols[1].AppendBytes("yz");
  Result<std::string> stream = ArrowStreamWriter::Stream(fields, cols, 2);
  ASSERT_TRUE(stream.ok());
  Result<ArrowTableValues> t = ReadArrowStream(*stream);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->columns[0].ints[0], 7);
  EXPECT_FALSE(t->columns[0].valid[1]);
  EXPECT_EQ(t->columns[1].bytes, (std::vector<std::string>{"x", "yz"}));
}

TEST(ArrowIpcReaderTest, DamagedStreamsAreRefusedSayingWhere) {
  const std::string& full = PyArrowStream();
  // Cut inside every message: never a value made up.
  for (size_t cut : {size_t{3}, size_t{100}, full.size() / 2, full.size() - 20}) {
    Result<ArrowTableValues> t = ReadArrowStream(std::string_view(full).substr(0, cut));
    EXPECT_TRUE(t.status().IsInvalidArgument()) << cut << ": " << t.status().ToString();
  }
  EXPECT_TRUE(ReadArrowStream("").status().IsInvalidArgument());
}

TEST(LocalRelationTest, RowsBecomeTypedLiteralRows) {
  spark::connect::LocalRelation local;
  local.set_data(PyArrowStream());
  Result<std::string> sql = LocalRelationSql(local);
  ASSERT_TRUE(sql.ok()) << sql.status().ToString();
  EXPECT_EQ(sql->rfind("SELECT CAST(_c0 AS BIGINT) AS id, CAST(_c1 AS STRING) AS s, "
                       "CAST(_c2 AS BOOLEAN) AS b, CAST(_c3 AS DATE) AS d, CAST(_c4 AS TIMESTAMP)",
                       0),
            0u)
      << *sql;
  EXPECT_NE(sql->find("(CAST(1 AS BIGINT), 'a', TRUE, DATE '2024-01-02', "
                      "TIMESTAMP '2024-01-02 03:04:05.500000', CAST('12.34' AS DECIMAL(10,2)), "
                      "CAST('1.5' AS DOUBLE), X'00FF', NULL)"),
            std::string::npos)
      << *sql;
  EXPECT_NE(sql->find("CAST('-0.05' AS DECIMAL(10,2)), CAST('Infinity' AS DOUBLE), X'', NULL)"),
            std::string::npos)
      << *sql;
  EXPECT_NE(sql->find(", _c8 AS n FROM (VALUES "), std::string::npos) << *sql;
}

TEST(LocalRelationTest, TheClientsSchemaNamesAndTypesTheColumns) {
  spark::connect::LocalRelation local;
  local.set_schema(
      R"j({"type":"struct","fields":[{"name":"at","type":"timestamp_ntz","nullable":true,)j"
      R"j("metadata":{}},{"name":"amount","type":"decimal(12,3)","nullable":false,)j"
      R"j("metadata":{}}]})j");
  Result<std::string> sql = LocalRelationSql(local);
  ASSERT_TRUE(sql.ok()) << sql.status().ToString();
  EXPECT_EQ(*sql,
            "SELECT CAST(NULL AS TIMESTAMP_NTZ) AS at, CAST(NULL AS DECIMAL(12,3)) AS amount "
            "LIMIT 0");
  local.set_schema(R"j({"type":"struct","fields":[{"name":"xs","type":{"type":"array",)j"
                   R"j("elementType":"long","containsNull":true},"nullable":true,)j"
                   R"j("metadata":{}}]})j");
  Result<std::string> nested = LocalRelationSql(local);
  ASSERT_TRUE(nested.status().IsNotSupported());
  EXPECT_NE(nested.status().message().find("array"), std::string::npos);
  local.set_schema("id BIGINT");
  EXPECT_TRUE(LocalRelationSql(local).status().IsNotSupported());
  EXPECT_EQ(*SparkJsonTypeToSql(R"j("decimal(38,18)")j"), "DECIMAL(38,18)");
  EXPECT_EQ(*SparkJsonTypeToSql(R"j("integer")j"), "INT");
}

}  // namespace
}  // namespace sluice::connect
