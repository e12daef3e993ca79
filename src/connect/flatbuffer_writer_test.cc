#include "connect/flatbuffer_writer.h"

#include <gtest/gtest.h>

#include "connect/arrow_test_reader.h"

namespace sluice::connect::fb {
namespace {

using sluice::connect::testing::FbTable;
using sluice::connect::testing::Load;
using sluice::connect::testing::Root;

TEST(FlatBufferWriterTest, ScalarsStringsAndChildrenReadBack) {
  Table child;
  child.Int32(0, 7);
  Table root;
  root.Int16(0, -3).Bool(1, true).Int64(2, 1LL << 40).String(3, "hello").Child(5, child);
  std::string buf = Finish(root);
  ASSERT_EQ(buf.size() % 8, 0u);
  FbTable t = Root(buf);
  EXPECT_EQ(t.Scalar<int16_t>(0), -3);
  EXPECT_EQ(t.Scalar<uint8_t>(1), 1);
  EXPECT_EQ(t.Scalar<int64_t>(2), 1LL << 40);
  EXPECT_EQ(t.String(3), "hello");
  EXPECT_EQ(t.Field(4), 0u);  // absent: the reader's default
  EXPECT_EQ(t.Child(5).Scalar<int32_t>(0), 7);
  // Every scalar sits at a multiple of its size; a string ends with a NUL.
  EXPECT_EQ(t.Field(2) % 8, 0u);
  EXPECT_EQ(t.Field(0) % 2, 0u);
  size_t s = t.Deref(3);
  EXPECT_EQ(s % 4, 0u);
  EXPECT_EQ(buf[s + 4 + 5], '\0');
}

TEST(FlatBufferWriterTest, OffsetsPointForward) {
  Table a, b;
  a.String(0, "x");
  b.String(0, "y");
  Table root;
  root.Tables(0, {a, b});
  std::string buf = Finish(root);
  FbTable t = Root(buf);
  ASSERT_EQ(t.VectorSize(0), 2u);
  EXPECT_GT(t.Deref(0), t.Field(0));
  EXPECT_EQ(t.VectorTable(0, 0).String(0), "x");
  EXPECT_EQ(t.VectorTable(0, 1).String(0), "y");
}

TEST(FlatBufferWriterTest, StructVectorsAreAlignedToTheStruct) {
  std::string bytes(32, '\0');
  bytes[0] = 1;
  bytes[16] = 2;
  Table root;
  root.Bool(0, false).Structs(1, bytes, 2, 8);
  std::string buf = Finish(root);
  FbTable t = Root(buf);
  ASSERT_EQ(t.VectorSize(1), 2u);
  size_t first = t.VectorStruct(1, 0, 16);
  EXPECT_EQ(first % 8, 0u);
  EXPECT_EQ(Load<int64_t>(buf, first), 1);
  EXPECT_EQ(Load<int64_t>(buf, t.VectorStruct(1, 1, 16)), 2);
}

TEST(FlatBufferWriterTest, EmptyTableAndEmptyVector) {
  Table root;
  root.Tables(0, {});
  std::string buf = Finish(root);
  FbTable t = Root(buf);
  EXPECT_NE(t.Field(0), 0u);  // present, so readers that require the vector find it
  EXPECT_EQ(t.VectorSize(0), 0u);
  std::string empty = Finish(Table{});
  EXPECT_EQ(Load<uint16_t>(empty, Root(empty).VTable()), 4);  // vtable: sizes only
}

}  // namespace
}  // namespace sluice::connect::fb
