#include "sql/settings.h"

#include <gtest/gtest.h>

namespace sluice::sql {
namespace {

TEST(SettingsTest, DefaultsAndOverrides) {
  Settings s;
  EXPECT_EQ(*s.Get("sluice.multipleWatermarkPolicy"), "min");
  EXPECT_TRUE(s.GetBoolean("noDataBatches"));
  ASSERT_TRUE(s.Set("sluice.multipleWatermarkPolicy", "max").ok());
  EXPECT_EQ(*s.Get("multipleWatermarkPolicy"), "max");
  ASSERT_TRUE(s.Set("sluice.noDataBatches", "FALSE").ok());
  EXPECT_FALSE(s.GetBoolean("noDataBatches"));
  ASSERT_TRUE(s.Set("shufflePartitions", "8").ok());
  EXPECT_EQ(s.GetInteger("shufflePartitions"), 8);
  EXPECT_EQ(s.overrides().size(), 3u);
  ASSERT_TRUE(s.Reset("sluice.shufflePartitions").ok());
  EXPECT_EQ(s.GetInteger("shufflePartitions"), 4);
}

TEST(SettingsTest, UnknownNameIsRefusedWithTheName) {
  Settings s;
  Status st = s.Set("sluice.noSuchThing", "1");
  EXPECT_TRUE(st.IsInvalidArgument());
  EXPECT_NE(st.message().find("unknown setting 'sluice.noSuchThing'"), std::string::npos);
  EXPECT_NE(st.message().find("sluice.warehouse"), std::string::npos);  // lists known ones
  EXPECT_FALSE(s.Get("nope").ok());
}

TEST(SettingsTest, WrongKindIsRefused) {
  Settings s;
  EXPECT_TRUE(s.Set("noDataBatches", "yes").IsInvalidArgument());
  EXPECT_TRUE(s.Set("shufflePartitions", "four").IsInvalidArgument());
  EXPECT_TRUE(s.Set("shufflePartitions", "").IsInvalidArgument());
  EXPECT_TRUE(s.Set("shufflePartitions", "-").IsInvalidArgument());
  EXPECT_EQ(s.GetInteger("shufflePartitions"), 4);
}

}  // namespace
}  // namespace sluice::sql
