#include "ops/operator_state.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "fs/file_system.h"
#include "fs/test_util.h"
#include "ops/operator_conf.h"
#include "ops/state_work_dir.h"

namespace sluice::ops {
namespace {

class OperatorStateTest : public ::testing::Test {
 protected:
  OperatorContext Context(const std::string& provider = "") {
    OperatorContext c;
    c.fs = fs::LocalFileSystem();
    c.checkpoint_root = dir_.path();
    c.operator_id = 0;
    c.num_partitions = 3;
    if (!provider.empty()) c.conf[kStateProviderClassConf] = provider;
    return c;
  }
  static OperatorStateSpec Spec() {
    OperatorStateSpec s;
    s.operator_name = "dedupe";
    s.schema.key.push_back({"id", "BIGINT", true});
    s.work_dir_kind = "test-state";
    return s;
  }
  size_t WorkDirEntries() const {
    const std::string work = CheckpointWorkDir(dir_.path());
    if (!std::filesystem::exists(work)) return 0;
    size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(work)) {
      (void)e;
      ++n;
    }
    return n;
  }
  fs::ScopedTempDir dir_{"sluice-opstate"};
};

TEST_F(OperatorStateTest, RocksDbMakesOneWorkDirAndRemovesItWhenDestroyed) {
  auto state = OperatorState::Open(Context(), Spec());
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_FALSE((*state)->in_memory());
  EXPECT_EQ((*state)->num_partitions(), 3);
  EXPECT_EQ(WorkDirEntries(), 1u);
  state = Status::Cancelled("closed");  // destroys the OperatorState
  EXPECT_EQ(WorkDirEntries(), 0u);
}

TEST_F(OperatorStateTest, TheConfChoosesTheInMemoryProviderWithoutAWorkDir) {
  auto state = OperatorState::Open(Context("memory"), Spec());
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_TRUE((*state)->in_memory());
  EXPECT_EQ(WorkDirEntries(), 0u);
  OperatorStateSpec forced = Spec();
  forced.force_in_memory = true;
  fs::ScopedTempDir other{"sluice-opstate"};
  OperatorContext c = Context();
  c.checkpoint_root = other.path();
  auto in_memory = OperatorState::Open(c, forced);
  ASSERT_TRUE(in_memory.ok()) << in_memory.status().ToString();
  EXPECT_TRUE((*in_memory)->in_memory());
}

TEST_F(OperatorStateTest, RunBatchOverAllCommitsEveryPartitionAfterTheWork) {
  auto opened = OperatorState::Open(Context("memory"), Spec());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  OperatorState& state = **opened;
  auto metrics = state.RunBatchOverAll(
      0,
      [](const std::vector<state::StateStore*>& stores) -> Status {
        for (size_t p = 0; p < stores.size(); ++p) {
          SLUICE_RETURN_NOT_OK(stores[p]->Put("k" + std::to_string(p), "v"));
        }
        return Status::OK();
      },
      2);
  ASSERT_TRUE(metrics.ok()) << metrics.status().ToString();
  ASSERT_EQ(metrics->size(), 3u);
  for (const auto& m : *metrics) EXPECT_EQ(m.num_keys, 1);
  // Version 1 holds the writes; a failing work commits nothing (version 2 is not written).
  Status failed = state
                      .RunBatchOverAll(
                          1,
                          [](const std::vector<state::StateStore*>& stores) -> Status {
                            EXPECT_TRUE(stores[0]->Get("k0")->has_value());
                            SLUICE_RETURN_NOT_OK(stores[0]->Put("k9", "v"));
                            return Status::IOError("work failed");
                          },
                          2)
                      .status();
  EXPECT_TRUE(failed.IsIOError()) << failed.ToString();
  auto again = state.RunBatch(
      1,
      [](int32_t, state::StateStore& store) -> Status {
        auto got = store.Get("k9");
        SLUICE_RETURN_NOT_OK(got.status());
        return got->has_value() ? Status::Internal("k9 leaked from a failed batch") : Status::OK();
      },
      3);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, 2);
}

TEST_F(OperatorStateTest, ASchemaThatDoesNotMatchTheCheckpointIsRefused) {
  {
    auto state = OperatorState::Open(Context("memory"), Spec());
    ASSERT_TRUE(state.ok()) << state.status().ToString();
  }
  OperatorStateSpec other = Spec();
  other.schema.key[0].type = "VARCHAR";
  auto state = OperatorState::Open(Context("memory"), other);
  EXPECT_TRUE(state.status().IsInvalidArgument()) << state.status().ToString();
}

TEST(ParallelForPartitionsTest, RunsEveryIndexAndReturnsTheFirstErrorByIndex) {
  std::vector<int> seen(5, 0);
  EXPECT_TRUE(ParallelForPartitions(5, 3, [&](int32_t i) {
                seen[static_cast<size_t>(i)] = 1;
                return Status::OK();
              }).ok());
  EXPECT_EQ(seen, std::vector<int>(5, 1));
  Status st = ParallelForPartitions(5, 2, [](int32_t i) {
    return i >= 3 ? Status::IOError("bad " + std::to_string(i)) : Status::OK();
  });
  EXPECT_EQ(st.message(), "partition 3: bad 3");
}

}  // namespace
}  // namespace sluice::ops
