#include "sql/streaming_table_catalog.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include "fs/local_file_system.h"
#include "fs/test_util.h"

namespace sluice::sql {
namespace {

StreamingDefinition Sample() {
  StreamingDefinition d;
  d.name = "q";
  d.target = "q";
  d.query = "SELECT * FROM STREAM t";
  d.output_mode = sinks::OutputMode::kComplete;
  d.trigger = stream::Trigger::Once();
  d.columns = {{"a", "INT", true, std::nullopt}};
  d.partitioned_by = {"a"};
  d.properties = {{"delta.enableChangeDataFeed", "false"}};
  d.sources = {{"delta", {{"path", "/wh/t"}}}};
  return d;
}

TEST(StreamingTableCatalogTest, JsonRoundTrip) {
  StreamingDefinition d = Sample();
  auto back = DefinitionFromJson(DefinitionToJson(d), "x");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->SameAs(d));
  StreamingDefinition other = d;
  other.query = "SELECT 1 FROM STREAM t";
  EXPECT_FALSE(other.SameAs(d));
  EXPECT_TRUE(DefinitionFromJson("{\"version\":1}", "x").status().IsCorruption());
  EXPECT_TRUE(DefinitionFromJson("not json", "x").status().IsCorruption());
}

// A secret option's value is stored once (in the query text), a secret() reference as it is,
// and the file is the owner's only (issue 24 #1).
TEST(StreamingTableCatalogTest, SecretOptionValuesAreStoredOnceInAnOwnerOnlyFile) {
  StreamingDefinition d = Sample();
  d.query =
      "SELECT * FROM STREAM read_kafka(bootstrapServers => 'b:1', subscribe => 't') WITH "
      "('kafka.sasl.jaas.config' = 'x password=\"HUNTER2\";', "
      "'kafka.ssl.key.password' = secret('kafka', 'kp'))";
  d.sources = {{"kafka",
                {{"bootstrapservers", "b:1"},
                 {"subscribe", "t"},
                 {"kafka.sasl.jaas.config", "x password=\"HUNTER2\";"},
                 {"kafka.ssl.key.password", "secret('kafka', 'kp')"}}}};
  const std::string json = DefinitionToJson(d);
  size_t first = json.find("HUNTER2");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(json.find("HUNTER2", first + 1), std::string::npos) << json;
  EXPECT_NE(json.find("\"kafka.ssl.key.password\":\"secret('kafka', 'kp')\""), std::string::npos)
      << json;
  auto back = DefinitionFromJson(json, "x");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->sources, d.sources);
  EXPECT_TRUE(back->SameAs(d));

  fs::ScopedTempDir tmp("sluice-catalog");
  StreamingTableCatalog catalog(fs::LocalFileSystem(), tmp.path());
  ASSERT_TRUE(catalog.Save(d).ok());
  struct stat st;
  ASSERT_EQ(::stat((tmp.path() + "/_sluice/streaming_tables/q.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto found = catalog.Find(StreamingDefinition::Kind::kTable, "q");
  ASSERT_TRUE(found.ok() && found->has_value()) << found.status().ToString();
  EXPECT_EQ((*found)->sources, d.sources);
}

TEST(StreamingTableCatalogTest, AutoCdcJsonRoundTrip) {
  StreamingDefinition d = Sample();
  d.kind = StreamingDefinition::Kind::kFlow;
  AutoCdcSpec spec;
  spec.keys = {"id", "region"};
  spec.sequence_by = "ts";
  spec.delete_when = "op = 'DELETE'";
  spec.columns_mode = AutoCdcSpec::Columns::kExcept;
  spec.columns = {"op"};
  spec.scd_type = 2;
  d.auto_cdc = spec;
  auto back = DefinitionFromJson(DefinitionToJson(d), "x");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_TRUE(back->auto_cdc.has_value());
  EXPECT_EQ(*back->auto_cdc, spec);
  EXPECT_TRUE(back->SameAs(d));
  StreamingDefinition type1 = d;
  type1.auto_cdc->scd_type = 1;
  EXPECT_FALSE(type1.SameAs(d));
  // An append flow's definition has no auto_cdc member (and older definitions still load).
  EXPECT_FALSE(DefinitionFromJson(DefinitionToJson(Sample()), "x")->auto_cdc.has_value());
  std::string bad = DefinitionToJson(d);
  bad.replace(bad.find("\"except\""), 8, "\"sorted\"");
  auto r = DefinitionFromJson(bad, "x");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("unknown columns_mode 'sorted'"), std::string::npos)
      << r.status().ToString();
}

TEST(StreamingTableCatalogTest, SaveFindListRemoveAndCheckpoints) {
  fs::ScopedTempDir dir;
  StreamingTableCatalog catalog(fs::LocalFileSystem(), dir.path());
  auto none = catalog.Find(StreamingDefinition::Kind::kTable, "q");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  ASSERT_TRUE(catalog.Save(Sample()).ok());
  StreamingDefinition flow = Sample();
  flow.kind = StreamingDefinition::Kind::kFlow;
  flow.name = "f";
  ASSERT_TRUE(catalog.Save(flow).ok());
  auto found = catalog.Find(StreamingDefinition::Kind::kTable, "Q");
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->query, Sample().query);
  auto tables = catalog.List(StreamingDefinition::Kind::kTable);
  ASSERT_TRUE(tables.ok());
  ASSERT_EQ(tables->size(), 1u);
  EXPECT_EQ(catalog.CheckpointOf(Sample()), dir.path() + "/_checkpoints/q");
  EXPECT_EQ(catalog.CheckpointOf(flow), dir.path() + "/_checkpoints/q/flows/f");
  ASSERT_TRUE(catalog.Remove(StreamingDefinition::Kind::kTable, "q").ok());
  ASSERT_TRUE(catalog.Remove(StreamingDefinition::Kind::kTable, "q").ok());
  auto after = catalog.List(StreamingDefinition::Kind::kTable);
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->empty());
}

}  // namespace
}  // namespace sluice::sql
