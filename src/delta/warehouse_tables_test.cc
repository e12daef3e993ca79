#include "delta/warehouse_tables.h"

#include <gtest/gtest.h>

#include "fs/test_util.h"

namespace sluice::delta {
namespace {

class WarehouseTablesTest : public ::testing::Test {
 protected:
  std::shared_ptr<fs::FileSystem> fs_ = fs::LocalFileSystem();
  fs::ScopedTempDir dir_{"sluice-warehouse"};
  const std::string& wh() const { return dir_.path(); }
};

TEST_F(WarehouseTablesTest, NamesThatCannotBeDirectoriesAreRefused) {
  for (const char* bad : {"", ".", "..", "a/b", "_sluice", ".hidden"}) {
    Status st = CheckWarehouseTableName(bad);
    EXPECT_TRUE(st.IsInvalidArgument()) << bad;
    EXPECT_NE(st.ToString().find(std::string("'") + bad + "'"), std::string::npos) << st.ToString();
    EXPECT_TRUE(ResolveWarehouseTable(fs_.get(), wh(), bad).status().IsInvalidArgument()) << bad;
  }
  EXPECT_TRUE(CheckWarehouseTableName("events_1").ok());
}

TEST_F(WarehouseTablesTest, ANameIsItsLowerCasedDirectoryUnlessARecordSaysOtherwise) {
  EXPECT_EQ(LocationRecordPath(wh(), "t"), wh() + "/_sluice/tables/t.json");
  ASSERT_EQ(*ResolveWarehouseTable(fs_.get(), wh(), "Events"), wh() + "/events");
  ASSERT_TRUE(WriteLocationRecord(fs_.get(), wh(), "Silver", "/data/silver").ok());
  EXPECT_EQ(*fs_->ReadFile(wh() + "/_sluice/tables/silver.json"),
            "{\"location\":\"/data/silver\",\"name\":\"silver\"}");
  EXPECT_EQ(*ResolveWarehouseTable(fs_.get(), wh(), "SILVER"), "/data/silver");
  ASSERT_TRUE(DeleteLocationRecord(fs_.get(), wh(), "silver").ok());
  EXPECT_EQ(*ResolveWarehouseTable(fs_.get(), wh(), "silver"), wh() + "/silver");
  EXPECT_TRUE(DeleteLocationRecord(fs_.get(), wh(), "silver").ok());  // none: still OK
}

TEST_F(WarehouseTablesTest, ABadRecordIsCorruptionNamingIt) {
  for (const char* text : {"{\"location\":", "[]", "{\"name\":\"t\"}", "{\"location\":1}"}) {
    ASSERT_TRUE(fs_->AtomicReplace(LocationRecordPath(wh(), "t"), text).ok());
    Status st = ResolveWarehouseTable(fs_.get(), wh(), "t").status();
    EXPECT_TRUE(st.IsCorruption()) << text;
    EXPECT_NE(st.ToString().find(LocationRecordPath(wh(), "t")), std::string::npos) << text;
  }
}

TEST_F(WarehouseTablesTest, ListsDeltaDirectoriesAndRecordsSorted) {
  EXPECT_TRUE(ListWarehouseTables(fs_.get(), wh() + "/missing")->empty());
  ASSERT_TRUE(fs_->AtomicReplace(dir_.Join("b/_delta_log/00000000000000000000.json"), "{}").ok());
  ASSERT_TRUE(fs_->AtomicReplace(dir_.Join("a/_delta_log/00000000000000000000.json"), "{}").ok());
  ASSERT_TRUE(fs_->AtomicReplace(dir_.Join("not_delta/x.parquet"), "").ok());
  ASSERT_TRUE(fs_->AtomicReplace(dir_.Join("_checkpoints/_delta_log/x"), "").ok());
  ASSERT_TRUE(WriteLocationRecord(fs_.get(), wh(), "c", "/elsewhere/c").ok());
  ASSERT_TRUE(WriteLocationRecord(fs_.get(), wh(), "a", "/elsewhere/a").ok());
  auto names = ListWarehouseTables(fs_.get(), wh());
  ASSERT_TRUE(names.ok()) << names.status().ToString();
  EXPECT_EQ(*names, (std::vector<std::string>{"a", "b", "c"}));
}

}  // namespace
}  // namespace sluice::delta
