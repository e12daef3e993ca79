#include "state/operator_metadata.h"

#include <gtest/gtest.h>

#include "state/test_util.h"

namespace sluice::state {
namespace {

OperatorMetadata Meta(std::string name = "stateStoreSave", int32_t partitions = 200) {
  OperatorMetadata m;
  m.operator_id = 0;
  m.operator_name = std::move(name);
  m.stores.push_back({"default", 0, partitions});
  return m;
}

StateSchema Schema() {
  StateSchema s;
  s.key = {{"window", "STRUCT(start TIMESTAMP, \"end\" TIMESTAMP)", false},
           {"user", "VARCHAR", true}};
  s.value = {{"count", "BIGINT", false}};
  return s;
}

TEST(OperatorMetadataTest, SparkV1Bytes) {
  EXPECT_EQ(EncodeOperatorMetadata(Meta()),
            "v1\n{\"operatorInfo\":{\"operatorId\":0,\"operatorName\":\"stateStoreSave\"},"
            "\"stateStoreInfo\":[{\"storeName\":\"default\",\"numColsPrefixKey\":0,"
            "\"numPartitions\":200}]}");
  EXPECT_EQ(OperatorMetadataPath("/cp", 3), "/cp/state/3/_metadata/metadata");
  EXPECT_EQ(StateSchemaPath("/cp", 3), "/cp/state/3/0/_metadata/schema");
  EXPECT_EQ(StateSchemaPath("/cp", 3, "left-keyToNumValues"),
            "/cp/state/3/0/left-keyToNumValues/_metadata/schema");
}

TEST(OperatorMetadataTest, RoundTripsAndRejectsDamage) {
  auto m = DecodeOperatorMetadata(EncodeOperatorMetadata(Meta("dedupe", 8)), "p");
  ASSERT_OK(m.status());
  EXPECT_EQ(m->operator_name, "dedupe");
  ASSERT_EQ(m->stores.size(), 1u);
  EXPECT_EQ(m->stores[0].num_partitions, 8);
  const std::string bytes = EncodeOperatorMetadata(Meta());
  auto torn = DecodeOperatorMetadata(bytes.substr(0, bytes.size() - 4), "/cp/m");
  EXPECT_TRUE(torn.status().IsCorruption());
  EXPECT_NE(torn.status().message().find("/cp/m"), std::string::npos);
  EXPECT_TRUE(DecodeOperatorMetadata("v2\n{}", "p").status().IsNotSupported());
  EXPECT_TRUE(DecodeOperatorMetadata("v1\n{\"operatorInfo\":1}", "p").status().IsCorruption());
  // Numbers that are not integers in range are damage, never cast.
  for (const char* bad : {"1e300", "1.5", "-3", "0", "4294967296", "\"7\""}) {
    std::string text = EncodeOperatorMetadata(Meta());
    text.replace(text.find("200"), 3, bad);
    auto r = DecodeOperatorMetadata(text, "/cp/m");
    EXPECT_TRUE(r.status().IsCorruption()) << bad << ": " << r.status().ToString();
  }
  auto s = DecodeStateSchema(EncodeStateSchema("agg", "default", Schema()), "p");
  ASSERT_OK(s.status());
  EXPECT_EQ(s->key.size(), 2u);
  EXPECT_EQ(s->key[0].type, "STRUCT(start TIMESTAMP, \"end\" TIMESTAMP)");
  EXPECT_FALSE(s->key[0].nullable);
  EXPECT_EQ(s->value[0].name, "count");
}

TEST(OperatorMetadataTest, WriteOnceThenCheck) {
  testing::StateDirs dirs;
  auto& fs = *fs::LocalFileSystem();
  ASSERT_OK(WriteOrCheckOperatorMetadata(fs, dirs.checkpoint(), Meta()).status());
  ASSERT_OK_AND_ASSIGN(auto again, WriteOrCheckOperatorMetadata(fs, dirs.checkpoint(), Meta()));
  EXPECT_EQ(again.operator_name, "stateStoreSave");
  auto renamed = WriteOrCheckOperatorMetadata(fs, dirs.checkpoint(), Meta("dedupeWithinWatermark"));
  ASSERT_TRUE(renamed.status().IsInvalidArgument());
  const std::string msg = renamed.status().message();
  EXPECT_NE(msg.find("stateful operator 0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'dedupeWithinWatermark' in this query"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'stateStoreSave' in the checkpoint"), std::string::npos) << msg;
  auto repartitioned =
      WriteOrCheckOperatorMetadata(fs, dirs.checkpoint(), Meta("stateStoreSave", 4));
  ASSERT_TRUE(repartitioned.status().IsInvalidArgument());
  EXPECT_NE(repartitioned.status().message().find("200 partitions in the checkpoint"),
            std::string::npos)
      << repartitioned.status().message();
}

TEST(OperatorMetadataTest, SchemaChangesAreNamed) {
  testing::StateDirs dirs;
  auto& fs = *fs::LocalFileSystem();
  ASSERT_OK(
      WriteOrCheckStateSchema(fs, dirs.checkpoint(), 1, "stateStoreSave", "default", Schema()));
  ASSERT_OK(
      WriteOrCheckStateSchema(fs, dirs.checkpoint(), 1, "stateStoreSave", "default", Schema()));
  // A stored NOT NULL field may become nullable.
  StateSchema relaxed = Schema();
  relaxed.value[0].nullable = true;
  ASSERT_OK(
      WriteOrCheckStateSchema(fs, dirs.checkpoint(), 1, "stateStoreSave", "default", relaxed));

  StateSchema key_changed = Schema();
  key_changed.key[1] = {"country", "VARCHAR", true};
  Status st =
      WriteOrCheckStateSchema(fs, dirs.checkpoint(), 1, "stateStoreSave", "default", key_changed);
  ASSERT_TRUE(st.IsInvalidArgument());
  EXPECT_NE(st.message().find("operator 1 ('stateStoreSave'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE"), std::string::npos);
  EXPECT_NE(st.message().find("field 2 was `user` VARCHAR, now `country` VARCHAR"),
            std::string::npos)
      << st.message();
  EXPECT_EQ(st.message().find("VALUE_SCHEMA"), std::string::npos);

  StateSchema value_changed = Schema();
  value_changed.value.push_back({"sum", "DOUBLE", true});
  value_changed.value[0].type = "INTEGER";
  st =
      WriteOrCheckStateSchema(fs, dirs.checkpoint(), 1, "stateStoreSave", "default", value_changed);
  ASSERT_TRUE(st.IsInvalidArgument());
  EXPECT_NE(st.message().find("STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE"), std::string::npos);
  EXPECT_NE(st.message().find("it had 1 field(s), now 2"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("was `count` BIGINT NOT NULL, now `count` INTEGER NOT NULL"),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("field 2 `sum` DOUBLE is new"), std::string::npos) << st.message();

  StateSchema tightened = Schema();
  tightened.key[1].nullable = false;
  EXPECT_TRUE(CheckStateSchemaCompatible("op", Schema(), tightened).IsInvalidArgument());
  EXPECT_TRUE(CheckStateSchemaCompatible("op", Schema(), Schema()).ok());
}

}  // namespace
}  // namespace sluice::state
