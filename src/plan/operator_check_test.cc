#include "plan/operator_check.h"

#include <gtest/gtest.h>

#include "fs/test_util.h"
#include "state/operator_metadata.h"

namespace sluice::plan {
namespace {

class OperatorCheckTest : public ::testing::Test {
 protected:
  void Write(int64_t id, const std::string& name) {
    state::OperatorMetadata m;
    m.operator_id = id;
    m.operator_name = name;
    m.stores = {{"default", 0, 2}};
    ASSERT_TRUE(state::WriteOrCheckOperatorMetadata(*fs_, dir_.path(), m).ok());
  }
  Status Check(const std::vector<std::string>& ops) {
    return CheckStatefulOperatorsMatch(*fs_, dir_.path(), ops);
  }
  fs::ScopedTempDir dir_;
  std::shared_ptr<fs::FileSystem> fs_ = fs::LocalFileSystem();
};

TEST_F(OperatorCheckTest, FreshCheckpointAndSameOperatorsPass) {
  EXPECT_TRUE(Check({"stateStoreSave", "dedupe"}).ok());
  Write(0, "stateStoreSave");
  Write(1, "dedupe");
  EXPECT_TRUE(Check({"stateStoreSave", "dedupe"}).ok());
}

TEST_F(OperatorCheckTest, ReplacedRemovedAndAddedOperatorsAreRefused) {
  Write(0, "stateStoreSave");
  Write(1, "dedupe");
  Status st = Check({"dedupe", "stateStoreSave"});
  EXPECT_TRUE(st.IsInvalidArgument());
  EXPECT_NE(st.message().find("stateful operator 0 is 'dedupe' in this query but "
                              "'stateStoreSave' in the checkpoint"),
            std::string::npos)
      << st.message();
  st = Check({"stateStoreSave"});
  EXPECT_NE(st.message().find("has state of stateful operator 1 ('dedupe') that this query does "
                              "not have"),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("[0 stateStoreSave]; the checkpoint's: [0 stateStoreSave, 1 dedupe]"),
            std::string::npos)
      << st.message();
  // Added: refused once a batch committed; before that the first batch may have died between
  // two operators writing their metadata.
  EXPECT_TRUE(Check({"stateStoreSave", "dedupe", "symmetricHashJoin"}).ok());
  ASSERT_TRUE(fs_->CreateIfAbsent(fs::JoinPath(dir_.path(), "commits/0"), "v1\n{}").ok());
  st = Check({"stateStoreSave", "dedupe", "symmetricHashJoin"});
  EXPECT_NE(st.message().find("stateful operator 2 ('symmetricHashJoin') is new"),
            std::string::npos)
      << st.message();
}

}  // namespace
}  // namespace sluice::plan
