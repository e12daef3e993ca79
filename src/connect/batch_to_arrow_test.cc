#include "connect/batch_to_arrow.h"

#include <gtest/gtest.h>

#include <cmath>

#include "connect/arrow_ipc_reader.h"
#include "connect/arrow_test_reader.h"
#include "engine/engine.h"

namespace sluice::connect {
namespace {

using testing::FbTable;
using testing::IpcMessage;
using testing::Load;
using testing::ReadMessage;
using testing::Root;

// The rows of `sql` (run by the engine, not the Spark dialect) as Arrow, read back.
class BatchToArrowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto engine = engine::Engine::Open();
    ASSERT_TRUE(engine.ok());
    engine_ = std::move(*engine);
    auto conn = engine_->Connect();
    ASSERT_TRUE(conn.ok());
    conn_ = std::move(*conn);
  }

  Result<std::string> Stream(const std::string& sql, int64_t offset = 0, int64_t length = 100) {
    Result<engine::Batch> batch = conn_->Query(sql);
    if (!batch.ok()) return batch.status();
    int64_t n = 0;
    return BatchToArrowStream(*batch, offset, length, &n);
  }

  // One column `v` of `sql`, sent and read back.
  ArrowTableValues Column(const std::string& sql) {
    Result<std::string> stream = Stream(sql);
    EXPECT_TRUE(stream.ok()) << stream.status().ToString();
    if (!stream.ok()) return {};
    Result<ArrowTableValues> t = ReadArrowStream(*stream);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    if (!t.ok()) return {};
    EXPECT_EQ(t->fields.size(), 1u);
    return *t;
  }

  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<engine::Connection> conn_;
};

std::string Values(const std::string& type, const std::string& values) {
  return "SELECT CAST(v AS " + type + ") AS v FROM (VALUES " + values + ") AS t(v)";
}

TEST_F(BatchToArrowTest, Boolean) {
  ArrowTableValues t = Column(Values("BOOLEAN", "(true), (NULL), (false)"));
  EXPECT_EQ(t.fields[0].type.id, ArrowTypeId::kBool);
  EXPECT_EQ(t.columns[0].ints, (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(t.columns[0].valid, (std::vector<bool>{true, false, true}));
}

TEST_F(BatchToArrowTest, Integers) {
  struct Case {
    const char* type;
    ArrowTypeId id;
    int64_t min, max;
  };
  for (const Case& c : {Case{"TINYINT", ArrowTypeId::kInt8, -128, 127},
                        Case{"SMALLINT", ArrowTypeId::kInt16, -32768, 32767},
                        Case{"INTEGER", ArrowTypeId::kInt32, INT32_MIN, INT32_MAX},
                        Case{"BIGINT", ArrowTypeId::kInt64, INT64_MIN, INT64_MAX}}) {
    ArrowTableValues t = Column(
        Values(c.type, "(" + std::to_string(c.min) + "), (NULL), (" + std::to_string(c.max) + ")"));
    EXPECT_EQ(t.fields[0].type.id, c.id) << c.type;
    EXPECT_EQ(t.columns[0].ints, (std::vector<int64_t>{c.min, 0, c.max})) << c.type;
    EXPECT_FALSE(t.columns[0].valid[1]);
  }
}

TEST_F(BatchToArrowTest, FloatAndDouble) {
  ArrowTableValues f = Column(Values("FLOAT", "(1.5::FLOAT), ('-inf'::FLOAT), (NULL)"));
  EXPECT_EQ(f.fields[0].type.id, ArrowTypeId::kFloat);
  EXPECT_EQ(f.columns[0].doubles[0], 1.5);
  EXPECT_EQ(f.columns[0].doubles[1], -INFINITY);
  ArrowTableValues d = Column(Values("DOUBLE", "(0.1::DOUBLE), ('nan'::DOUBLE), (NULL)"));
  EXPECT_EQ(d.fields[0].type.id, ArrowTypeId::kDouble);
  EXPECT_EQ(d.columns[0].doubles[0], 0.1);  // exact: no text in between
  EXPECT_TRUE(std::isnan(d.columns[0].doubles[1]));
  EXPECT_FALSE(d.columns[0].valid[2]);
}

TEST_F(BatchToArrowTest, DecimalsOfEveryWidth) {
  // The engine holds DECIMAL(4,1) in 16 bits, (18,3) in 64 and (38,10) in 128.
  ArrowTableValues a = Column(Values("DECIMAL(4,1)", "(-123.4), (NULL)"));
  EXPECT_EQ(a.fields[0].type.precision, 4);
  EXPECT_EQ(static_cast<int64_t>(a.columns[0].decimals[0]), -1234);
  ArrowTableValues b = Column(Values("DECIMAL(18,3)", "(123456789012345.678)"));
  EXPECT_EQ(static_cast<int64_t>(b.columns[0].decimals[0]), 123456789012345678);
  ArrowTableValues c =
      Column(Values("DECIMAL(38,10)", "('-1234567890123456789012345678.0123456789')"));
  EXPECT_EQ(c.fields[0].type.scale, 10);
  // The unscaled value 12345678901234567890123456780123456789, negated.
  __int128 unscaled = 0;
  for (char ch : std::string("12345678901234567890123456780123456789")) {
    unscaled = unscaled * 10 + (ch - '0');
  }
  EXPECT_TRUE(c.columns[0].decimals[0] == -unscaled);
}

TEST_F(BatchToArrowTest, HugeIntIsDecimal38AndRefusedBeyondIt) {
  ArrowTableValues t = Column("SELECT CAST(-170141183460469231731687303715884105 AS HUGEINT) AS v");
  EXPECT_EQ(t.fields[0].type.id, ArrowTypeId::kDecimal128);
  EXPECT_EQ(t.fields[0].type.precision, 38);
  __int128 want = 0;
  for (char ch : std::string("170141183460469231731687303715884105")) want = want * 10 + (ch - '0');
  EXPECT_TRUE(t.columns[0].decimals[0] == -want);
  Result<std::string> big =
      Stream("SELECT CAST(170141183460469231731687303715884105727 AS HUGEINT) AS v");
  ASSERT_TRUE(big.status().IsInvalidArgument()) << big.status().ToString();
  EXPECT_NE(big.status().message().find("column 'v', row 0"), std::string::npos);
}

TEST_F(BatchToArrowTest, VarcharAndBlob) {
  ArrowTableValues s = Column(Values("VARCHAR", "('h\xc3\xa9llo'), (NULL), ('')"));
  EXPECT_EQ(s.fields[0].type.id, ArrowTypeId::kString);
  EXPECT_EQ(s.columns[0].bytes, (std::vector<std::string>{"h\xc3\xa9llo", "", ""}));
  EXPECT_FALSE(s.columns[0].valid[1]);
  ArrowTableValues b = Column("SELECT '\\x00\\xFFx'::BLOB AS v");
  EXPECT_EQ(b.fields[0].type.id, ArrowTypeId::kBinary);
  EXPECT_EQ(b.columns[0].bytes[0], std::string("\0\xff"
                                               "x",
                                               3));  // bytes, not their escapes
}

TEST_F(BatchToArrowTest, Dates) {
  ArrowTableValues t =
      Column(Values("DATE", "('1970-01-02'), ('1969-12-31'), ('0001-01-01 (BC)'), (NULL)"));
  EXPECT_EQ(t.fields[0].type.id, ArrowTypeId::kDate32);
  EXPECT_EQ(t.columns[0].ints[0], 1);
  EXPECT_EQ(t.columns[0].ints[1], -1);
  EXPECT_EQ(t.columns[0].ints[2], -719528);  // 1 BC, which the engine's text shows "(BC)"
  Result<std::string> inf = Stream("SELECT 'infinity'::DATE AS v");
  ASSERT_TRUE(inf.status().IsInvalidArgument());
  EXPECT_NE(inf.status().message().find("infinite"), std::string::npos);
}

TEST_F(BatchToArrowTest, TimestampsBothKindsAreInstantsInUtc) {
  ArrowTableValues tz = Column(
      Values("TIMESTAMPTZ", "('2024-01-02 03:04:05.25+00'), ('1969-12-31 23:59:59.999999+00')"));
  EXPECT_EQ(tz.fields[0].type.id, ArrowTypeId::kTimestampMicros);
  EXPECT_EQ(tz.fields[0].type.timezone, "UTC");
  EXPECT_EQ(tz.columns[0].ints, (std::vector<int64_t>{1704164645250000, -1}));
  ArrowTableValues ntz = Column(Values("TIMESTAMP", "('2024-01-02 03:04:05.25'), (NULL)"));
  EXPECT_EQ(ntz.fields[0].type.timezone, "UTC");  // spark_types.h says why
  EXPECT_EQ(ntz.columns[0].ints[0], 1704164645250000);
  EXPECT_FALSE(ntz.columns[0].valid[1]);
}

TEST_F(BatchToArrowTest, NullOnlyColumn) {
  // The engine types a bare NULL as INTEGER in its results.
  ArrowTableValues t = Column("SELECT NULL AS v");
  EXPECT_EQ(t.fields[0].type.id, ArrowTypeId::kInt32);
  EXPECT_EQ(t.columns[0].valid, (std::vector<bool>{false}));
}

TEST_F(BatchToArrowTest, SlicesAcrossChunks) {
  // 5000 rows: more than one of the engine's chunks (2048 rows); a slice starts inside one.
  Result<std::string> stream = Stream("SELECT range AS v FROM range(5000)", 2040, 100);
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  Result<ArrowTableValues> t = ReadArrowStream(*stream);
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->num_rows, 100);
  EXPECT_EQ(t->columns[0].ints.front(), 2040);
  EXPECT_EQ(t->columns[0].ints.back(), 2139);
}

TEST_F(BatchToArrowTest, BuffersFollowTheFormat) {
  Result<std::string> stream =
      Stream("SELECT * FROM (VALUES (1::BIGINT, 'x'), (NULL, NULL)) AS t(a, b)");
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  IpcMessage schema = ReadMessage(*stream, 0);
  FbTable fields = Root(schema.metadata).Child(2);
  ASSERT_EQ(fields.VectorSize(1), 2u);
  IpcMessage rb = ReadMessage(*stream, schema.end);
  FbTable record = Root(rb.metadata).Child(2);
  auto buffer = [&](uint32_t i) {
    size_t at = record.VectorStruct(2, i, 16);
    return rb.body.substr(static_cast<size_t>(Load<int64_t>(rb.metadata, at)),
                          static_cast<size_t>(Load<int64_t>(rb.metadata, at + 8)));
  };
  // Buffers: a (0 validity, 1 values), b (2 validity, 3 offsets, 4 bytes).
  EXPECT_EQ(Load<int64_t>(buffer(1), 0), 1);
  EXPECT_EQ(buffer(4), "x");
  EXPECT_EQ(buffer(0), std::string("\x01", 1));  // row 1 is NULL
}

TEST_F(BatchToArrowTest, TypesSparkConnectCannotTakeAreRefusedByColumn) {
  Result<std::string> stream = Stream("SELECT INTERVAL 1 DAY AS gap");
  ASSERT_TRUE(stream.status().IsNotSupported());
  EXPECT_NE(stream.status().message().find("'gap'"), std::string::npos);
}

}  // namespace
}  // namespace sluice::connect
