#include "ops/operator_conf.h"

#include <gtest/gtest.h>

namespace sluice::ops {
namespace {

using Conf = std::map<std::string, std::string>;

TEST(OperatorConfTest, StateProviderIsRocksDbUnlessMemoryOrHdfsIsNamed) {
  using Kind = state::StateStoreProviderKind;
  EXPECT_EQ(StateProviderFromConf({}), Kind::kRocksDb);
  for (const char* rocksdb :
       {"rocksdb", "RocksDB",
        "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"}) {
    EXPECT_EQ(StateProviderFromConf(Conf{{kStateProviderClassConf, rocksdb}}), Kind::kRocksDb)
        << rocksdb;
  }
  for (const char* memory :
       {"memory", "InMemory",
        "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"}) {
    EXPECT_EQ(StateProviderFromConf(Conf{{kStateProviderClassConf, memory}}), Kind::kInMemory)
        << memory;
  }
}

TEST(OperatorConfTest, ByteCounts) {
  const std::string key = kDedupMirrorMaxBytesConf;
  auto absent = ByteCountConf({}, key);
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->has_value());
  for (const auto& [text, value] : std::map<std::string, int64_t>{
           {"0", 0}, {"268435456", 268435456}, {"9223372036854775807", INT64_MAX}}) {
    auto got = ByteCountConf(Conf{{key, text}}, key);
    ASSERT_TRUE(got.ok()) << text;
    EXPECT_EQ(got->value_or(-1), value) << text;
  }
  for (const char* bad : {"", "-1", "1e6", "12 ", " 12", "256MiB", "9223372036854775808"}) {
    auto got = ByteCountConf(Conf{{key, bad}}, key);
    ASSERT_FALSE(got.ok()) << bad;
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(got.status().message().find(key), std::string::npos) << got.status().ToString();
    EXPECT_NE(got.status().message().find("'" + std::string(bad) + "'"), std::string::npos)
        << got.status().ToString();
  }
}

}  // namespace
}  // namespace sluice::ops
