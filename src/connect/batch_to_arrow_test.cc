#include "connect/batch_to_arrow.h"

#include <gtest/gtest.h>

#include "connect/arrow_test_reader.h"
#include "engine/engine.h"

namespace sluice::connect {
namespace {

using testing::FbTable;
using testing::IpcMessage;
using testing::Load;
using testing::ReadMessage;
using testing::Root;

TEST(BatchToArrowTest, ParsesTheEnginesText) {
  EXPECT_EQ(*ParseDateDays("1970-01-02"), 1);
  EXPECT_EQ(*ParseDateDays("2024-03-01"), 19783);
  EXPECT_EQ(*ParseDateDays("1969-12-31"), -1);
  EXPECT_EQ(*ParseDateDays("0001-01-01 (BC)"), -719528);  // year 0, a leap year
  EXPECT_TRUE(ParseDateDays("2024-13-01").status().IsInternal());
  EXPECT_EQ(*ParseTimestampMicros("1970-01-01 00:00:01.5+00"), 1500000);
  EXPECT_EQ(*ParseTimestampMicros("1969-12-31 23:59:59.999999"), -1);
  EXPECT_EQ(*ParseTimestampMicros("2024-01-01 10:00:00+00"), 1704103200000000);
  EXPECT_TRUE(ParseTimestampMicros("2024-01-01 10:00:00+02").status().IsInternal());
  EXPECT_EQ(static_cast<int64_t>(*ParseDecimalUnscaled("-123.45", 2)), -12345);
  EXPECT_EQ(static_cast<int64_t>(*ParseDecimalUnscaled("1.5", 3)), 1500);
  EXPECT_EQ(static_cast<int64_t>(*ParseDecimalUnscaled("7", 0)), 7);
  EXPECT_TRUE(ParseDecimalUnscaled("1.234", 2).status().IsInternal());
  EXPECT_EQ(*ParseBlobText("a\\x00\\xFFb"), std::string("a\0\xFF"
                                                        "b",
                                                        4));
  EXPECT_TRUE(ParseBlobText("\\x0").status().IsInternal());
}

TEST(BatchToArrowTest, EngineRowsBecomeArrowBuffers) {
  auto engine = engine::Engine::Open();
  ASSERT_TRUE(engine.ok());
  auto conn = (*engine)->Connect();
  ASSERT_TRUE(conn.ok());
  Result<engine::Batch> batch = (*conn)->Query(
      "SELECT * FROM (VALUES (1::BIGINT, 'x', DATE '2024-01-02', "
      "TIMESTAMPTZ '2024-01-02 03:04:05.25+00', 1.50::DECIMAL(10,2), '\\x00A'::BLOB), "
      "(NULL, NULL, NULL, NULL, NULL, NULL)) AS t(a, b, d, ts, m, bin)");
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  int64_t n = 0;
  Result<std::string> stream = BatchToArrowStream(*batch, 0, 100, &n);
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  EXPECT_EQ(n, 2);
  IpcMessage schema = ReadMessage(*stream, 0);
  FbTable fields = Root(schema.metadata).Child(2);
  ASSERT_EQ(fields.VectorSize(1), 6u);
  EXPECT_EQ(fields.VectorTable(1, 3).Child(3).String(1), "UTC");  // TIMESTAMPTZ: an instant
  IpcMessage rb = ReadMessage(*stream, schema.end);
  FbTable record = Root(rb.metadata).Child(2);
  auto buffer = [&](uint32_t i) {
    size_t at = record.VectorStruct(2, i, 16);
    return rb.body.substr(static_cast<size_t>(Load<int64_t>(rb.metadata, at)),
                          static_cast<size_t>(Load<int64_t>(rb.metadata, at + 8)));
  };
  // Buffers: a (0, 1), b (2, 3, 4), d (5, 6), ts (7, 8), m (9, 10), bin (11, 12, 13).
  EXPECT_EQ(Load<int64_t>(buffer(1), 0), 1);
  EXPECT_EQ(buffer(4), "x");
  EXPECT_EQ(Load<int32_t>(buffer(6), 0), 19724);
  EXPECT_EQ(Load<int64_t>(buffer(8), 0), 1704164645250000);
  EXPECT_EQ(Load<int64_t>(buffer(10), 0), 150);
  EXPECT_EQ(buffer(13), std::string("\0A", 2));
  EXPECT_EQ(buffer(0), std::string("\x01", 1));  // row 1 is NULL
}

TEST(BatchToArrowTest, TypesSparkConnectCannotTakeAreRefusedByColumn) {
  auto engine = engine::Engine::Open();
  ASSERT_TRUE(engine.ok());
  auto conn = (*engine)->Connect();
  ASSERT_TRUE(conn.ok());
  Result<engine::Batch> batch = (*conn)->Query("SELECT INTERVAL 1 DAY AS gap");
  ASSERT_TRUE(batch.ok());
  int64_t n = 0;
  Result<std::string> stream = BatchToArrowStream(*batch, 0, 10, &n);
  ASSERT_TRUE(stream.status().IsNotSupported());
  EXPECT_NE(stream.status().message().find("'gap'"), std::string::npos);
}

}  // namespace
}  // namespace sluice::connect
