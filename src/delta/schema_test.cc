#include "delta/schema.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sluice::delta {
namespace {

using engine::TypeId;
using ::testing::HasSubstr;

TEST(SchemaTest, ParsesAllPrimitiveTypes) {
  const std::pair<const char*, TypeId> cases[] = {
      {"string", TypeId::kVarchar},        {"long", TypeId::kBigInt},
      {"integer", TypeId::kInteger},       {"short", TypeId::kSmallInt},
      {"byte", TypeId::kTinyInt},          {"float", TypeId::kFloat},
      {"double", TypeId::kDouble},         {"boolean", TypeId::kBoolean},
      {"binary", TypeId::kBlob},           {"date", TypeId::kDate},
      {"timestamp", TypeId::kTimestampTz}, {"timestamp_ntz", TypeId::kTimestamp},
      {"decimal(10,2)", TypeId::kDecimal}, {"void", TypeId::kNull}};
  for (const auto& [name, id] : cases) {
    auto t = ParseDeltaPrimitive(name);
    ASSERT_TRUE(t.ok()) << name;
    EXPECT_EQ(t->id, id) << name;
    auto back = DeltaPrimitiveName(*t);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, name);
  }
  auto dec = *ParseDeltaPrimitive("decimal( 38 , 18 )");
  EXPECT_EQ(dec.precision, 38);
  EXPECT_EQ(dec.scale, 18);
  EXPECT_TRUE(ParseDeltaPrimitive("decimal(39,1)").status().IsCorruption());
  auto variant = ParseDeltaPrimitive("variant");
  EXPECT_TRUE(variant.status().IsNotSupported());
  EXPECT_THAT(variant.status().message(), HasSubstr("variant"));
}

TEST(SchemaTest, NestedTypesAndMetadataRoundTrip) {
  const std::string json =
      R"j({"type":"struct","fields":[)j"
      R"j({"name":"id","type":"long","nullable":false,"metadata":{"comment":"the key"}},)j"
      R"j({"name":"tags","type":{"type":"array","elementType":"string","containsNull":false},"nullable":true,"metadata":{}},)j"
      R"j({"name":"attrs","type":{"type":"map","keyType":"string","valueType":{"type":"struct","fields":[{"name":"v","type":"decimal(5,1)","nullable":true,"metadata":{}}]},"valueContainsNull":true},"nullable":true,"metadata":{}},)j"
      R"j({"name":"s","type":{"type":"struct","fields":[{"name":"ts","type":"timestamp","nullable":true,"metadata":{"delta.generationExpression":"now()"}}]},"nullable":true,"metadata":{}}]})j";
  auto schema = ParseSchemaString(json);
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  ASSERT_EQ(schema->fields.size(), 4u);
  EXPECT_FALSE(schema->fields[0].nullable);
  EXPECT_EQ(schema->fields[1].type.id, TypeId::kList);
  EXPECT_FALSE(schema->fields[1].type.children[0].nullable);  // containsNull=false
  EXPECT_EQ(schema->fields[2].type.id, TypeId::kMap);
  EXPECT_TRUE(schema->fields[2].type.children[1].nullable);  // valueContainsNull
  EXPECT_EQ(schema->fields[2].type.children[1].type.children[0].type.id, TypeId::kDecimal);
  EXPECT_EQ(schema->fields[3].type.children[0].type.id, TypeId::kTimestampTz);
  EXPECT_EQ(schema->metadata.at("id"), R"j({"comment":"the key"})j");
  EXPECT_EQ(schema->metadata.at("s.ts"), R"j({"delta.generationExpression":"now()"})j");
  auto back = SchemaToJson(schema->fields, schema->metadata);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, json);  // byte-identical to Spark's layout
}

TEST(SchemaTest, Errors) {
  EXPECT_TRUE(ParseSchemaString("not json").status().IsCorruption());
  EXPECT_TRUE(ParseSchemaString(R"j({"type":"array"})j").status().IsCorruption());
  auto bad = ParseSchemaString(
      R"j({"type":"struct","fields":[{"name":"v","type":"variant","nullable":true}]})j");
  EXPECT_TRUE(bad.status().IsNotSupported());
  EXPECT_THAT(bad.status().message(), HasSubstr("'v'"));
  engine::Schema s = {engine::Field{"h", engine::DataType{TypeId::kHugeInt}, true}};
  EXPECT_TRUE(SchemaToJson(s).status().IsInvalidArgument());
}

TEST(SchemaTest, FindFieldIsCaseInsensitive) {
  auto schema = *ParseSchemaString(
      R"j({"type":"struct","fields":[{"name":"Year","type":"integer","nullable":true,"metadata":{}}]})j");
  ASSERT_NE(FindField(schema.fields, "year"), nullptr);
  EXPECT_EQ(FindField(schema.fields, "year")->name, "Year");
  EXPECT_EQ(FindField(schema.fields, "month"), nullptr);
}

}  // namespace
}  // namespace sluice::delta
