#include "state/partitions.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "state/test_util.h"

namespace sluice::state {
namespace {

using testing::Dump;
using testing::Model;

TEST(PartitionsTest, Murmur3KnownValues) {
  // Reference values of MurmurHash3_x86_32.
  EXPECT_EQ(static_cast<uint32_t>(Murmur3Hash32("", 0)), 0u);
  EXPECT_EQ(static_cast<uint32_t>(Murmur3Hash32("", 1)), 0x514E28B7u);
  EXPECT_EQ(static_cast<uint32_t>(Murmur3Hash32("hello", 0)), 0x248BFA47u);
  EXPECT_EQ(static_cast<uint32_t>(Murmur3Hash32("The quick brown fox jumps over the lazy dog", 0)),
            0x2E4FF723u);
}

TEST(PartitionsTest, PmodAndSpread) {
  EXPECT_EQ(PartitionForHash(-1, 4), 3);
  EXPECT_EQ(PartitionForHash(-8, 4), 0);
  EXPECT_EQ(PartitionForHash(7, 4), 3);
  EXPECT_EQ(PartitionForHash(INT32_MIN, 7), ((INT32_MIN % 7) + 7) % 7);
  std::vector<int> counts(8);
  for (int i = 0; i < 8000; ++i) {
    int32_t p = PartitionForKey("user" + std::to_string(i), 8);
    ASSERT_GE(p, 0);
    ASSERT_LT(p, 8);
    ++counts[static_cast<size_t>(p)];
  }
  for (int c : counts) EXPECT_GT(c, 800);  // 1000 expected each
}

class OperatorStateStoresTest : public ::testing::TestWithParam<StateStoreProviderKind> {
 protected:
  OperatorStateOptions Options(int32_t partitions = 4) {
    OperatorStateOptions o;
    o.checkpoint_root = dirs_.checkpoint();
    o.operator_id = 0;
    o.operator_name = "stateStoreSave";
    o.num_partitions = partitions;
    o.schema.key = {{"k", "VARCHAR", true}};
    o.schema.value = {{"count", "BIGINT", false}};
    o.local_root = dirs_.NewLocalDir();
    o.store.kind = GetParam();
    o.store.sync = false;
    o.store.snapshot_interval = 3;
    o.memory_budget_bytes = 16 << 20;
    return o;
  }
  // One batch: keys "key<i>" for i in [first, first + n) get count + 1, each in its partition.
  static Status CountBatch(int32_t p, StateStore& store, int32_t partitions, int first, int n) {
    for (int i = first; i < first + n; ++i) {
      const std::string key = "key" + std::to_string(i);
      if (PartitionForKey(key, partitions) != p) continue;
      SLUICE_ASSIGN_OR_RETURN(auto old, store.Get(key));
      const int64_t c = old ? std::stoll(*old) + 1 : 1;
      SLUICE_RETURN_NOT_OK(store.Put(key, std::to_string(c)));
    }
    return Status::OK();
  }
  testing::StateDirs dirs_;
};

TEST_P(OperatorStateStoresTest, ParallelBatchesRecoverOnANewMachine) {
  ASSERT_OK_AND_ASSIGN(auto op, OperatorStateStores::Open(Options()));
  ASSERT_EQ(op->num_partitions(), 4);
  // Partitions run on at least two threads at once: each partition function waits (up to 10 s)
  // until a second thread has entered one, so the check does not depend on timing; a serial
  // RunBatch would time out and fail it.
  std::mutex mu;
  std::condition_variable two_threads;
  std::set<std::thread::id> threads;
  int64_t version = 0;
  for (int b = 0; b < 7; ++b) {
    ASSERT_OK_AND_ASSIGN(version, op->RunBatch(
                                      version,
                                      [&](int32_t p, StateStore& s) {
                                        {
                                          std::unique_lock<std::mutex> lock(mu);
                                          threads.insert(std::this_thread::get_id());
                                          two_threads.notify_all();
                                          two_threads.wait_for(lock, std::chrono::seconds(10),
                                                               [&] { return threads.size() >= 2; });
                                        }
                                        return CountBatch(p, s, 4, b * 100, 300);
                                      },
                                      /*parallelism=*/4));
  }
  EXPECT_EQ(version, 7);
  EXPECT_GE(threads.size(), 2u);
  StateStoreMetrics m = op->LastMetrics();
  EXPECT_EQ(m.num_keys, 900);
  EXPECT_EQ(m.num_updated, 300);
  ASSERT_OK(op->Maintenance());
  op.reset();

  // A new machine: the same checkpoint, empty local directories.
  ASSERT_OK_AND_ASSIGN(auto again, OperatorStateStores::Open(Options()));
  Model all;
  std::mutex all_mu;
  ASSERT_OK_AND_ASSIGN(int64_t v2, again->RunBatch(
                                       7,
                                       [&](int32_t p, StateStore& s) -> Status {
                                         SLUICE_ASSIGN_OR_RETURN(Model m, Dump(s));
                                         for (const auto& [k, v] : m) {
                                           if (PartitionForKey(k, 4) != p)
                                             return Status::Internal(k + " in the wrong partition");
                                         }
                                         std::lock_guard<std::mutex> lock(all_mu);
                                         all.insert(m.begin(), m.end());
                                         return Status::OK();
                                       },
                                       2));
  EXPECT_EQ(v2, 8);
  ASSERT_EQ(all.size(), 900u);
  // key<i> was counted once per batch b with b*100 <= i < b*100+300.
  for (int i = 0; i < 900; ++i) {
    int expected = 0;
    for (int b = 0; b < 7; ++b) expected += (i >= b * 100 && i < b * 100 + 300) ? 1 : 0;
    EXPECT_EQ(all["key" + std::to_string(i)], std::to_string(expected)) << i;
  }
}

TEST_P(OperatorStateStoresTest, AFailedPartitionIsNamedAndTheRerunWorks) {
  ASSERT_OK_AND_ASSIGN(auto op, OperatorStateStores::Open(Options()));
  ASSERT_OK(op->RunBatch(
                  0, [](int32_t p, StateStore& s) { return CountBatch(p, s, 4, 0, 100); }, 4)
                .status());
  auto failed = op->RunBatch(
      1,
      [](int32_t p, StateStore& s) -> Status {
        SLUICE_RETURN_NOT_OK(CountBatch(p, s, 4, 0, 100));
        if (p == 2) return Status::IOError("sink exploded");
        return Status::OK();
      },
      4);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("state partition 2"), std::string::npos)
      << failed.status().ToString();
  // Re-run batch 1: every partition loads version 1 again (1 and 3 rebuild) and writes 2.
  ASSERT_OK_AND_ASSIGN(
      int64_t v, op->RunBatch(
                     1, [](int32_t p, StateStore& s) { return CountBatch(p, s, 4, 0, 100); }, 4));
  EXPECT_EQ(v, 2);
  Model all;
  std::mutex mu;
  ASSERT_OK(op->RunBatch(
                  2,
                  [&](int32_t, StateStore& s) -> Status {
                    SLUICE_ASSIGN_OR_RETURN(Model m, Dump(s));
                    std::lock_guard<std::mutex> lock(mu);
                    all.insert(m.begin(), m.end());
                    return Status::OK();
                  },
                  4)
                .status());
  ASSERT_EQ(all.size(), 100u);
  for (const auto& [k, c] : all) EXPECT_EQ(c, "2") << k;
}

TEST_P(OperatorStateStoresTest, RestartWithADifferentQueryFails) {
  ASSERT_OK(OperatorStateStores::Open(Options()).status());
  auto parts = OperatorStateStores::Open(Options(8));
  EXPECT_TRUE(parts.status().IsInvalidArgument());
  EXPECT_NE(parts.status().message().find("4 partitions in the checkpoint"), std::string::npos)
      << parts.status().message();
  OperatorStateOptions renamed = Options();
  renamed.operator_name = "dedupe";
  EXPECT_TRUE(OperatorStateStores::Open(renamed).status().IsInvalidArgument());
  OperatorStateOptions new_key = Options();
  new_key.schema.key.push_back({"country", "VARCHAR", true});
  auto schema = OperatorStateStores::Open(new_key);
  EXPECT_TRUE(schema.status().IsInvalidArgument());
  EXPECT_NE(schema.status().message().find("`country` VARCHAR is new"), std::string::npos)
      << schema.status().message();
}

INSTANTIATE_TEST_SUITE_P(Providers, OperatorStateStoresTest,
                         ::testing::Values(StateStoreProviderKind::kRocksDb,
                                           StateStoreProviderKind::kInMemory),
                         [](const auto& info) { return testing::KindName(info.param); });

}  // namespace
}  // namespace sluice::state

namespace sluice::state {
namespace {

// 40 MB of state through an operator with an 8 MiB budget: the shared cache (blocks + memtable
// reservations) and the memtables stay near the budget instead of growing with the state.
TEST(OperatorMemoryTest, SharedBudgetBoundsRocksDbMemory) {
  testing::StateDirs dirs;
  OperatorStateOptions o;
  o.checkpoint_root = dirs.checkpoint();
  o.operator_name = "stateStoreSave";
  o.num_partitions = 2;
  o.local_root = dirs.NewLocalDir();
  o.store.sync = false;
  o.store.snapshot_interval = 1000;
  o.memory_budget_bytes = 8 << 20;
  ASSERT_OK_AND_ASSIGN(auto op, OperatorStateStores::Open(o));
  const std::string value(1000, 'v');
  int64_t version = 0;
  int64_t max_memtables = 0;
  for (int b = 0; b < 8; ++b) {
    ASSERT_OK_AND_ASSIGN(version, op->RunBatch(
                                      version,
                                      [&](int32_t p, StateStore& s) -> Status {
                                        for (int i = 0; i < 5000; ++i) {
                                          const std::string key =
                                              "b" + std::to_string(b) + "k" + std::to_string(i);
                                          if (PartitionForKey(key, 2) != p) continue;
                                          SLUICE_RETURN_NOT_OK(s.Put(key, value));
                                        }
                                        return Status::OK();
                                      },
                                      2));
    max_memtables = std::max(max_memtables, op->LastMetrics().custom["rocksdbMemtableBytes"]);
  }
  EXPECT_EQ(op->LastMetrics().num_keys, 40000);
  ASSERT_NE(op->memory_budget(), nullptr);
  EXPECT_LE(op->memory_budget()->usage_bytes(), 2 * o.memory_budget_bytes);
  EXPECT_LE(max_memtables, o.memory_budget_bytes);
}

}  // namespace
}  // namespace sluice::state
