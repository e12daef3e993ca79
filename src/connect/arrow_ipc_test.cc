#include "connect/arrow_ipc.h"

#include <gtest/gtest.h>

#include "connect/arrow_test_reader.h"

namespace sluice::connect {
namespace {

using testing::FbTable;
using testing::IpcMessage;
using testing::Load;
using testing::ReadMessage;
using testing::Root;

// Message.fbs slots: version 0, header_type 1, header 2, bodyLength 3.
// Schema: fields 1. Field: name 0, nullable 1, type_type 2, type 3, children 5.
// RecordBatch: length 0, nodes 1, buffers 2.

TEST(ArrowIpcTest, SchemaMessageFollowsTheFormat) {
  std::vector<ArrowField> fields = {{"id", {ArrowTypeId::kInt64}, false},
                                    {"ts", {ArrowTypeId::kTimestampMicros, 0, 0, "UTC"}},
                                    {"d", {ArrowTypeId::kDate32}},
                                    {"amount", {ArrowTypeId::kDecimal128, 10, 2}}};
  std::string msg = ArrowStreamWriter::SchemaMessage(fields);
  EXPECT_EQ(Load<uint32_t>(msg, 0), 0xFFFFFFFFu);  // continuation marker
  uint32_t meta = Load<uint32_t>(msg, 4);
  EXPECT_EQ((8 + meta) % 8, 0u);     // the body starts 8-aligned
  ASSERT_EQ(msg.size(), 8u + meta);  // a schema has no body
  IpcMessage m = ReadMessage(msg, 0);
  FbTable message = Root(m.metadata);
  EXPECT_EQ(message.Scalar<int16_t>(0), 4);  // MetadataVersion V5
  EXPECT_EQ(message.Scalar<uint8_t>(1), 1);  // MessageHeader Schema
  FbTable schema = message.Child(2);
  ASSERT_EQ(schema.VectorSize(1), 4u);
  FbTable id = schema.VectorTable(1, 0);
  EXPECT_EQ(id.String(0), "id");
  EXPECT_EQ(id.Scalar<uint8_t>(1), 0);  // not nullable
  EXPECT_EQ(id.Scalar<uint8_t>(2), 2);  // Type Int
  EXPECT_EQ(id.Child(3).Scalar<int32_t>(0), 64);
  EXPECT_EQ(id.Child(3).Scalar<uint8_t>(1), 1);  // signed
  EXPECT_NE(id.Field(5), 0u);                    // children present (empty)
  FbTable ts = schema.VectorTable(1, 1);
  EXPECT_EQ(ts.Scalar<uint8_t>(2), 10);          // Type Timestamp
  EXPECT_EQ(ts.Child(3).Scalar<int16_t>(0), 2);  // MICROSECOND
  EXPECT_EQ(ts.Child(3).String(1), "UTC");
  FbTable d = schema.VectorTable(1, 2);
  EXPECT_EQ(d.Scalar<uint8_t>(2), 8);  // Type Date
  ASSERT_NE(d.Child(3).Field(0), 0u);  // DAY written explicitly: the default is MILLISECOND
  EXPECT_EQ(d.Child(3).Scalar<int16_t>(0), 0);
  FbTable amount = schema.VectorTable(1, 3);
  EXPECT_EQ(amount.Scalar<uint8_t>(2), 7);  // Type Decimal
  EXPECT_EQ(amount.Child(3).Scalar<int32_t>(0), 10);
  EXPECT_EQ(amount.Child(3).Scalar<int32_t>(1), 2);
  EXPECT_EQ(amount.Child(3).Scalar<int32_t>(2), 128);
}

TEST(ArrowIpcTest, RecordBatchBuffersFollowTheFormat) {
  std::vector<ArrowField> fields = {{"n", {ArrowTypeId::kInt64}},
                                    {"s", {ArrowTypeId::kString}},
                                    {"b", {ArrowTypeId::kBool}},
                                    {"z", {ArrowTypeId::kNull}}};
  std::vector<ArrowColumnBuilder> cols;
  for (const ArrowField& f : fields) cols.emplace_back(f.type);
  cols[0].AppendInt(1);
  cols[0].AppendNull();
  cols[0].AppendInt(3);
  cols[1].AppendBytes("ab");
  cols[1].AppendBytes("");
  cols[1].AppendBytes("c");
  cols[2].AppendBool(true);
  cols[2].AppendBool(false);
  cols[2].AppendBool(true);
  for (int i = 0; i < 3; ++i) cols[3].AppendNull();
  Result<std::string> msg = ArrowStreamWriter::RecordBatchMessage(fields, cols, 3);
  ASSERT_TRUE(msg.ok()) << msg.status().ToString();
  IpcMessage m = ReadMessage(*msg, 0);
  EXPECT_EQ(m.end, msg->size());
  FbTable message = Root(m.metadata);
  EXPECT_EQ(message.Scalar<uint8_t>(1), 3);  // MessageHeader RecordBatch
  FbTable batch = message.Child(2);
  EXPECT_EQ(batch.Scalar<int64_t>(0), 3);
  ASSERT_EQ(batch.VectorSize(1), 4u);  // one node per column
  auto node = [&](uint32_t i, int k) {
    return Load<int64_t>(m.metadata, batch.VectorStruct(1, i, 16) + 8 * k);
  };
  EXPECT_EQ(node(0, 1), 1);  // null_count of n
  EXPECT_EQ(node(1, 1), 0);
  EXPECT_EQ(node(3, 0), 3);  // the null column: every row is null
  EXPECT_EQ(node(3, 1), 3);
  // Buffers: n (validity, values), s (validity, offsets, data), b (validity, values); none
  // for the null column.
  ASSERT_EQ(batch.VectorSize(2), 7u);
  auto buffer = [&](uint32_t i) {
    size_t at = batch.VectorStruct(2, i, 16);
    int64_t offset = Load<int64_t>(m.metadata, at);
    int64_t length = Load<int64_t>(m.metadata, at + 8);
    EXPECT_EQ(offset % 8, 0) << "buffer " << i;
    return m.body.substr(static_cast<size_t>(offset), static_cast<size_t>(length));
  };
  EXPECT_EQ(buffer(0), std::string("\x05", 1));  // rows 0 and 2 valid
  std::string values = buffer(1);
  ASSERT_EQ(values.size(), 24u);
  EXPECT_EQ(Load<int64_t>(values, 0), 1);
  EXPECT_EQ(Load<int64_t>(values, 16), 3);
  EXPECT_EQ(buffer(2), "");  // no NULL in s: the validity buffer is left out
  std::string offsets = buffer(3);
  ASSERT_EQ(offsets.size(), 16u);
  EXPECT_EQ(Load<int32_t>(offsets, 0), 0);
  EXPECT_EQ(Load<int32_t>(offsets, 4), 2);
  EXPECT_EQ(Load<int32_t>(offsets, 8), 2);
  EXPECT_EQ(Load<int32_t>(offsets, 12), 3);
  EXPECT_EQ(buffer(4), "abc");
  EXPECT_EQ(buffer(6), std::string("\x05", 1));  // true, false, true as bits
  EXPECT_EQ(m.body.size() % 8, 0u);
}

TEST(ArrowIpcTest, StreamEndsWithTheEndOfStreamMarker) {
  std::vector<ArrowField> fields = {{"x", {ArrowTypeId::kDouble}}};
  std::vector<ArrowColumnBuilder> cols = {ArrowColumnBuilder(fields[0].type)};
  cols[0].AppendDouble(1.5);
  Result<std::string> s = ArrowStreamWriter::Stream(fields, cols, 1);
  ASSERT_TRUE(s.ok());
  ASSERT_GE(s->size(), 8u);
  EXPECT_EQ(s->substr(s->size() - 8), std::string("\xFF\xFF\xFF\xFF\0\0\0\0", 8));
  IpcMessage schema = ReadMessage(*s, 0);
  IpcMessage batch = ReadMessage(*s, schema.end);
  EXPECT_EQ(batch.end + 8, s->size());
  EXPECT_EQ(Load<double>(batch.body, 0), 1.5);
}

TEST(ArrowIpcTest, DecimalsAreSixteenByteTwosComplement) {
  std::vector<ArrowField> fields = {{"d", {ArrowTypeId::kDecimal128, 5, 2}}};
  std::vector<ArrowColumnBuilder> cols = {ArrowColumnBuilder(fields[0].type)};
  cols[0].AppendDecimal(-12345);
  Result<std::string> msg = ArrowStreamWriter::RecordBatchMessage(fields, cols, 1);
  ASSERT_TRUE(msg.ok());
  IpcMessage m = ReadMessage(*msg, 0);
  // Buffers: validity (empty), values at offset 0.
  EXPECT_EQ(Load<int64_t>(m.body, 0), -12345);
  EXPECT_EQ(Load<int64_t>(m.body, 8), -1);  // the sign extends into the high word
}

TEST(ArrowIpcTest, MismatchedColumnsAreRefused) {
  std::vector<ArrowField> fields = {{"a", {ArrowTypeId::kInt32}}};
  std::vector<ArrowColumnBuilder> cols = {ArrowColumnBuilder({ArrowTypeId::kInt32})};
  cols[0].AppendInt(1);
  Result<std::string> wrong_rows = ArrowStreamWriter::RecordBatchMessage(fields, cols, 2);
  EXPECT_TRUE(wrong_rows.status().IsInvalidArgument());
  EXPECT_NE(wrong_rows.status().message().find("(a)"), std::string::npos);
  Result<std::string> wrong_count = ArrowStreamWriter::RecordBatchMessage({}, cols, 1);
  EXPECT_TRUE(wrong_count.status().IsInvalidArgument());
}

}  // namespace
}  // namespace sluice::connect
