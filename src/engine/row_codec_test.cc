#include "engine/row_codec.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/test_util.h"

namespace sluice::engine {
namespace {

using RowCodecTest = testing::EngineTest;

std::vector<size_t> AllColumns(const Batch& b) {
  std::vector<size_t> cols;
  for (size_t i = 0; i < b.num_columns(); ++i) cols.push_back(i);
  return cols;
}

std::vector<std::string_view> Views(const std::vector<std::string>& rows) {
  return std::vector<std::string_view>(rows.begin(), rows.end());
}

// Every cell as text (CAST AS VARCHAR), "NULL" for NULL.
std::vector<std::vector<std::string>> Cells(const Batch& b) {
  std::vector<std::vector<std::string>> out;
  for (int64_t r = 0; r < b.num_rows(); ++r) {
    std::vector<std::string> row;
    for (size_t c = 0; c < b.num_columns(); ++c) row.push_back(b.GetString(r, c).value_or("NULL"));
    out.push_back(row);
  }
  return out;
}

// Encodes all columns of `b`, decodes them, and checks the result equals `b` (schema and
// values) and re-encodes to the same bytes.
void ExpectRoundTrip(const Batch& b) {
  auto enc = EncodeRows(b, AllColumns(b));
  ASSERT_TRUE(enc.ok()) << enc.status().ToString();
  ASSERT_EQ(static_cast<int64_t>(enc->size()), b.num_rows());
  auto dec = DecodeRows(b.schema(), Views(*enc));
  ASSERT_TRUE(dec.ok()) << dec.status().ToString();
  EXPECT_EQ(dec->schema(), b.schema());
  EXPECT_EQ(dec->num_rows(), b.num_rows());
  EXPECT_EQ(Cells(*dec), Cells(b));
  auto again = EncodeRows(*dec, AllColumns(*dec));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, *enc);
}

TEST_F(RowCodecTest, RoundTripsFlatTypesWithNulls) {
  const std::vector<std::string> exprs = {
      "true",
      "(-128)::TINYINT",
      "(-32768)::SMALLINT",
      "(-2147483648)::INTEGER",
      "(-9223372036854775808)::BIGINT",
      "(-170141183460469231731687303715884105727)::HUGEINT",
      "255::UTINYINT",
      "65535::USMALLINT",
      "4294967295::UINTEGER",
      "18446744073709551615::UBIGINT",
      "340282366920938463463374607431768211455::UHUGEINT",
      "(-1.5)::FLOAT",
      "'inf'::DOUBLE",
      "12.34::DECIMAL(4,2)",
      "(-123.45)::DECIMAL(9,2)",
      "12345678901.5::DECIMAL(18,1)",
      "(-12345678901234567890.1234567890)::DECIMAL(38,10)",
      "'héllo wörld, a string longer than twelve bytes'::VARCHAR",
      "''::VARCHAR",
      "'\\x00\\xFF\\x80'::BLOB",
      "DATE '2024-02-29'",
      "TIME '23:59:59.999999'",
      "TIMESTAMP '2024-01-02 03:04:05.678901'",
      "TIMESTAMPTZ '2024-01-02 03:04:05.678901+00'",
      "TIMESTAMP_S '2024-01-02 03:04:05'",
      "TIMESTAMP_MS '2024-01-02 03:04:05.123'",
      "TIMESTAMP_NS '2024-01-02 03:04:05.123456789'",
      "TIMETZ '12:34:56+05:30'",
      "INTERVAL '1 year 2 months 3 days 04:05:06.000007'",
      "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::UUID",
      "'ffffffff-ffff-ffff-ffff-ffffffffffff'::UUID",
      "'00000000-0000-0000-0000-000000000000'::UUID",
      "'101'::BIT",
  };
  for (const auto& e : exprs) {
    SCOPED_TRACE(e);
    // One row with the value, one NULL of the same type, one more value.
    Batch b = Q("SELECT x FROM (VALUES (" + e + "), (NULL), (" + e + ")) t(x)");
    ASSERT_EQ(b.num_rows(), 3);
    ExpectRoundTrip(b);
  }
}

TEST_F(RowCodecTest, RoundTripsNestedTypes) {
  const std::vector<std::string> exprs = {
      "{'a': 1, 'b': 'x', 'c': NULL}",
      "{'a': {'b': [1, NULL, 3]}, 'c': [{'d': 'e'}, NULL]}",
      "[1, 2, NULL]",
      "[]::INTEGER[]",
      "[[1], [], NULL, [NULL, 4]]",
      "['a', NULL, 'a much longer string than the inline size']",
      "MAP {'k1': 1, 'k2': NULL}",
      "MAP {1: [1.5, 2.5], 2: []}",
      "[MAP {'a': {'x': 1}}]",
      "[1, 2, 3]::INTEGER[3]",
      "[[1, NULL], [3, 4]]::INTEGER[2][2]",
      "[{'a': 1}, {'a': NULL}]::STRUCT(a INTEGER)[2]",
      "{'t': TIMESTAMPTZ '2024-01-02 03:04:05+00', 'i': INTERVAL 1 DAY, 'd': 1.5::DECIMAL(3,1)}",
  };
  for (const auto& e : exprs) {
    SCOPED_TRACE(e);
    Batch b = Q("SELECT x, 7 AS y FROM (VALUES (" + e + "), (NULL), (" + e + ")) t(x)");
    ASSERT_EQ(b.num_rows(), 3);
    ExpectRoundTrip(b);
  }
}

TEST_F(RowCodecTest, RoundTripsEnumAsItsText) {
  ASSERT_TRUE(conn_->Execute("CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')").ok());
  Batch b = Q("SELECT x::mood AS x FROM (VALUES ('happy'), (NULL), ('sad')) t(x)");
  auto enc = EncodeRows(b, {0});
  ASSERT_TRUE(enc.ok()) << enc.status().ToString();
  // The enum's text, not its index: "happy" is in the bytes.
  EXPECT_NE((*enc)[0].find("happy"), std::string::npos);
  // Same bytes as a VARCHAR of the same text.
  auto as_text = EncodeRows(Q("SELECT 'happy' AS x"), {0});
  ASSERT_TRUE(as_text.ok());
  EXPECT_EQ((*enc)[0], (*as_text)[0]);
}

TEST_F(RowCodecTest, FloatCanonicalization) {
  // NaN and -0.0 encode like the canonical NaN and +0.0 (SQL-equal values give equal keys).
  Batch b = Q(
      "SELECT x FROM (VALUES ('nan'::DOUBLE), (-('nan'::DOUBLE)), (0.0::DOUBLE), ((-0.0)::DOUBLE), "
      "(1.0::DOUBLE)) t(x)");
  auto enc = EncodeRows(b, {0});
  ASSERT_TRUE(enc.ok()) << enc.status().ToString();
  EXPECT_EQ((*enc)[0], (*enc)[1]);
  EXPECT_EQ((*enc)[2], (*enc)[3]);
  EXPECT_NE((*enc)[2], (*enc)[4]);
  auto dec = DecodeRows(b.schema(), Views(*enc));
  ASSERT_TRUE(dec.ok()) << dec.status().ToString();
  EXPECT_EQ(dec->GetString(0, 0), "nan");
  EXPECT_EQ(dec->GetString(3, 0), "0.0");
}

TEST_F(RowCodecTest, SelectedColumnsInGivenOrder) {
  Batch b = Q("SELECT 1 AS a, 'x' AS b, 2.5::DOUBLE AS c");
  auto enc = EncodeRows(b, {2, 0});
  ASSERT_TRUE(enc.ok()) << enc.status().ToString();
  Schema schema = SelectSchema(b.schema(), {2, 0});
  ASSERT_EQ(schema.size(), 2u);
  EXPECT_EQ(schema[0].name, "c");
  EXPECT_EQ(schema[1].name, "a");
  auto dec = DecodeRows(schema, Views(*enc));
  ASSERT_TRUE(dec.ok()) << dec.status().ToString();
  EXPECT_EQ(Cells(*dec), (std::vector<std::vector<std::string>>{{"2.5", "1"}}));

  auto bad = EncodeRows(b, {3});
  EXPECT_TRUE(bad.status().IsInvalidArgument()) << bad.status().ToString();
}

TEST_F(RowCodecTest, WholeColumnReaders) {
  Batch b =
      Q("SELECT * FROM (VALUES (-5::BIGINT, 7::INTEGER, true), (NULL, NULL, NULL), "
        "(9223372036854775807, -1, false)) t(big, small, flag)");
  auto big = Int64ColumnValues(b, 0);
  ASSERT_TRUE(big.ok()) << big.status().ToString();
  EXPECT_EQ(*big,
            (std::vector<std::optional<int64_t>>{-5, std::nullopt, int64_t{9223372036854775807}}));
  auto small = Int64ColumnValues(b, 1);
  ASSERT_TRUE(small.ok()) << small.status().ToString();
  EXPECT_EQ(*small, (std::vector<std::optional<int64_t>>{7, std::nullopt, -1}));
  auto flag = BoolColumnValues(b, 2);
  ASSERT_TRUE(flag.ok()) << flag.status().ToString();
  EXPECT_EQ(*flag, (std::vector<std::optional<bool>>{true, std::nullopt, false}));
  auto nulls = ColumnNulls(b, 1);
  ASSERT_TRUE(nulls.ok()) << nulls.status().ToString();
  EXPECT_EQ(*nulls, (std::vector<bool>{false, true, false}));
  EXPECT_FALSE(Int64ColumnValues(b, 3).ok());
}

TEST_F(RowCodecTest, EmptyBatchesAndNoColumns) {
  Batch empty = Q("SELECT 1::BIGINT AS a, 'x' AS b WHERE false");
  auto enc = EncodeRows(empty, {0, 1});
  ASSERT_TRUE(enc.ok()) << enc.status().ToString();
  EXPECT_TRUE(enc->empty());
  auto dec = DecodeRows(empty.schema(), {});
  ASSERT_TRUE(dec.ok()) << dec.status().ToString();
  EXPECT_EQ(dec->num_rows(), 0);
  EXPECT_EQ(dec->schema(), empty.schema());

  auto none = EncodeRows(Batch(), {});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());

  // Zero columns: every row is just the version byte.
  Batch three = Q("SELECT * FROM range(3)");
  auto zero = EncodeRows(three, {});
  ASSERT_TRUE(zero.ok());
  ASSERT_EQ(zero->size(), 3u);
  EXPECT_EQ((*zero)[0], std::string(1, '\x01'));
  auto zdec = DecodeRows({}, Views(*zero));
  ASSERT_TRUE(zdec.ok());
  EXPECT_EQ(zdec->num_columns(), 0u);
}

TEST_F(RowCodecTest, DeterministicAcrossBatchesAndChunks) {
  // The same values, produced by different queries (constant vs flat vectors, different chunk
  // positions, dictionary-encoded strings), give the same bytes.
  Batch a = Q("SELECT 42::BIGINT AS k, 'key-' || 42 AS s, [1, 2] AS l, {'x': 1.5} AS st");
  Batch b =
      Q("SELECT i::BIGINT AS k, 'key-' || i AS s, [1, 2] AS l, {'x': 1.5} AS st "
        "FROM range(5000) r(i) WHERE i % 1000 = 42 ORDER BY i DESC");
  ASSERT_EQ(b.num_rows(), 5);
  auto ea = EncodeRows(a, {0, 1, 2, 3});
  auto eb = EncodeRows(b, {0, 1, 2, 3});
  ASSERT_TRUE(ea.ok() && eb.ok());
  EXPECT_EQ((*ea)[0], (*eb)[4]);  // i = 42 is the last row
  // Different values give different bytes.
  EXPECT_NE((*eb)[0], (*eb)[4]);

  // Integer encodings sort like the values (fixed-width types are order-preserving).
  Batch ints = Q("SELECT x FROM (VALUES (-5::BIGINT), (-1), (0), (1), (300)) t(x)");
  auto ei = EncodeRows(ints, {0});
  ASSERT_TRUE(ei.ok());
  for (size_t i = 1; i < ei->size(); ++i) EXPECT_LT((*ei)[i - 1], (*ei)[i]);
}

TEST_F(RowCodecTest, ManyRowsAcrossChunkBoundaries) {
  Batch b =
      Q("SELECT i::BIGINT AS a, CASE WHEN i % 7 = 0 THEN NULL ELSE 'v' || i END AS s, "
        "CASE WHEN i % 5 = 0 THEN NULL ELSE [i, i + 1] END AS l, "
        "CASE WHEN i % 3 = 0 THEN NULL ELSE {'p': i, 'q': NULL} END AS st, "
        "CASE WHEN i % 11 = 0 THEN NULL ELSE MAP {'k': i} END AS m "
        "FROM range(5000) r(i)");
  ASSERT_EQ(b.num_rows(), 5000);
  ExpectRoundTrip(b);
  // Decoded batches are usable by SQL on an engine's connection.
  auto enc = EncodeRows(b, AllColumns(b));
  ASSERT_TRUE(enc.ok());
  auto dec = DecodeRows(b.schema(), Views(*enc));
  ASSERT_TRUE(dec.ok());
  ASSERT_TRUE(conn_->RegisterBatch("decoded", *dec).ok());
  EXPECT_EQ(Scalar("SELECT count(*) FILTER (s IS NULL) || ',' || sum(a) || ',' || "
                   "sum(len(l)) || ',' || count(st) || ',' || sum(cardinality(m)) FROM decoded"),
            "715,12497500,8000,3333,4545");
}

TEST_F(RowCodecTest, CorruptionNamesTheRow) {
  Batch b = Q("SELECT x, s FROM (VALUES (1::BIGINT, 'abc'), (2, 'de')) t(x, s)");
  auto enc = EncodeRows(b, {0, 1});
  ASSERT_TRUE(enc.ok());
  std::vector<std::string> rows = *enc;

  auto expect_corrupt = [&](std::vector<std::string> bad, const std::string& needle) {
    auto dec = DecodeRows(b.schema(), Views(bad));
    ASSERT_TRUE(dec.status().IsCorruption()) << dec.status().ToString();
    EXPECT_NE(dec.status().ToString().find(needle), std::string::npos) << dec.status().ToString();
  };
  // Truncated.
  expect_corrupt({rows[0], rows[1].substr(0, rows[1].size() - 1)}, "row 1");
  expect_corrupt({rows[0], rows[1].substr(0, 5)}, "truncated");
  // Trailing bytes.
  expect_corrupt({rows[0] + "x", rows[1]}, "row 0: 1 trailing bytes");
  // Wrong tag.
  std::string wrong = rows[1];
  wrong[1] = 7;
  expect_corrupt({rows[0], wrong}, "row 1, column 0 (x, BIGINT): wrong tag");
  // Wrong version, empty row.
  std::string version = rows[0];
  version[0] = 9;
  expect_corrupt({version}, "row 0: unknown row codec version 9");
  expect_corrupt({rows[0], rows[1], ""}, "row 2: empty");
  // A string length beyond the end.
  std::string len = rows[0];
  len[11] = 100;
  expect_corrupt({len}, "row 0, column 1");
  // Invalid UTF-8 in a VARCHAR.
  std::string utf = rows[0];
  utf[utf.size() - 1] = '\xFF';
  expect_corrupt({utf}, "UTF-8");
  // Bytes of other types (decoding with a schema they were not encoded with).
  Schema other = {{"x", DataType{TypeId::kVarchar}}};
  auto dec = DecodeRows(other, Views(rows));
  EXPECT_TRUE(dec.status().IsCorruption()) << dec.status().ToString();
}

TEST_F(RowCodecTest, CorruptNestedValues) {
  Batch b = Q("SELECT [true, false] AS l");
  auto enc = EncodeRows(b, {0});
  ASSERT_TRUE(enc.ok());
  std::string bad = (*enc)[0];
  bad[bad.size() - 1] = 2;  // a boolean byte that is neither 0 nor 1
  auto dec = DecodeRows(b.schema(), {bad});
  ASSERT_TRUE(dec.status().IsCorruption()) << dec.status().ToString();
  std::string huge = (*enc)[0];
  huge[2] = 0x7F;  // list count far beyond the bytes left
  dec = DecodeRows(b.schema(), {huge});
  ASSERT_TRUE(dec.status().IsCorruption()) << dec.status().ToString();
}

TEST_F(RowCodecTest, KnownBytesOfVersion1) {
  // Pins the format (docs/formats/row-codec.md): a change here is a format change.
  Batch b =
      Q("SELECT 1::INTEGER AS i, 'ab' AS s, NULL::BIGINT AS n, [true] AS l, -1::SMALLINT AS h");
  auto enc = EncodeRows(b, {0, 1, 2, 3, 4});
  ASSERT_TRUE(enc.ok());
  const std::string expected(
      "\x01"                  // version
      "\x01\x80\x00\x00\x01"  // INTEGER 1
      "\x01\x02"
      "ab"                // VARCHAR 'ab'
      "\x00"              // NULL
      "\x01\x01\x01\x01"  // [true]: count 1, element tag, 1
      "\x01\x7F\xFF",     // SMALLINT -1
      18);
  EXPECT_EQ((*enc)[0], expected);
}

}  // namespace
}  // namespace sluice::engine
