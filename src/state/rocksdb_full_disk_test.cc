// The RocksDB state store on a full disk (docs/reliability.md, finding 15).
//
// Run only under test/faults/enospc_preload.cc (LD_PRELOAD, set by the ctest entry
// state/rocksdb_full_disk): the test fails, not skips, without it. For each of many byte limits it
// opens a RocksDB provider, commits versions of 1 KiB values until the disk is "full" (every
// write to a regular file fails with ENOSPC past the limit, as the kernel does), and requires:
// every failure is a Status (not an abort: RocksDB 7.8's info-log writer asserted on its second
// write after a failed one), an IOError that says "No space left on device" and names a path of
// the store; a failed commit commits nothing; and with space restored, a provider on a new
// working directory loads the last committed version exactly.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "state/state_store.h"
#include "state/test_util.h"

namespace sluice::state {
namespace {

using testing::Dump;
using testing::Model;
using testing::StateDirs;

using ResetFn = void (*)(long long);

ResetFn FindReset() {
  return reinterpret_cast<ResetFn>(dlsym(RTLD_DEFAULT, "sluice_enospc_reset"));
}

constexpr int kVersions = 4;
constexpr int kKeysPerVersion = 200;

std::string Key(int version, int i) {
  return "k" + std::to_string((i * 7919 + version * 13) % 1000);
}
std::string Value(int version, int i) {
  return std::string(1024, static_cast<char>('a' + (version + i) % 26));
}

StateStoreOptions Options(std::string local_dir) {
  StateStoreOptions o;
  o.kind = StateStoreProviderKind::kRocksDb;
  o.local_dir = std::move(local_dir);
  o.sync = false;
  o.snapshot_interval = 2;                           // snapshots as well as changelogs
  o.rocksdb.write_buffer_bytes = int64_t{64} << 10;  // memtable flushes (SST writes) too
  return o;
}

// An error the full disk may cause: an IOError naming the disk's condition and a path under
// `root` (the checkpoint's or the working directory's).
void ExpectFullDiskError(const Status& st, const std::string& root, long long limit) {
  EXPECT_TRUE(st.IsIOError()) << "limit " << limit << ": " << st.ToString();
  EXPECT_NE(st.message().find("No space left on device"), std::string::npos)
      << "limit " << limit << ": " << st.ToString();
  EXPECT_NE(st.message().find(root), std::string::npos)
      << "limit " << limit << ": the error names no path of the store: " << st.ToString();
}

TEST(RocksDbFullDiskTest, EveryWriteErrorIsAStatusAndRestoredSpaceLoadsTheLastCommit) {
  ResetFn reset = FindReset();
  ASSERT_NE(reset, nullptr) << "run this test with LD_PRELOAD=libsluice_enospc_preload.so "
                               "(ctest -R state/rocksdb_full_disk)";
  int runs = 0;
  int failed_runs = 0;
  int committed_total = 0;
  // From no space at all to more than the whole run writes (about 1.6 MB), in uneven steps.
  for (long long limit = 0; limit < 2'000'000; limit += 4999 + limit / 16) {
    SCOPED_TRACE("limit " + std::to_string(limit));
    ++runs;
    StateDirs dirs;
    const std::string root = dirs.tmp().path();
    Model committed;
    int64_t committed_version = 0;
    Status failure;
    reset(limit);
    {
      auto opened = StateStoreProvider::Open({dirs.checkpoint(), 0, 0, "default"},
                                             Options(dirs.NewLocalDir()));
      if (!opened.ok()) {
        failure = opened.status();
      } else {
        auto provider = opened.MoveValueUnsafe();
        for (int v = 0; v < kVersions && failure.ok(); ++v) {
          auto got = provider->GetStore(v);
          if (!got.ok()) {
            failure = got.status();
            break;
          }
          auto store = got.MoveValueUnsafe();
          Model next = committed;
          for (int i = 0; i < kKeysPerVersion && failure.ok(); ++i) {
            failure = store->Put(Key(v, i), Value(v, i));
            next[Key(v, i)] = Value(v, i);
            if (failure.ok() && i % 5 == 4) {
              failure = store->Remove(Key(v, i - 2));
              next.erase(Key(v, i - 2));
            }
          }
          if (!failure.ok()) break;
          auto version = store->Commit();
          if (!version.ok()) {
            failure = version.status();
            break;
          }
          committed = std::move(next);
          committed_version = *version;
        }
      }
    }  // the provider and its database are closed on the full disk too
    reset(-1);
    if (!failure.ok()) {
      ++failed_runs;
      ExpectFullDiskError(failure, root, limit);
    }
    committed_total += static_cast<int>(committed_version);
    // Space restored: a new machine (working directory) loads the last committed version.
    ASSERT_OK_AND_ASSIGN(auto provider,
                         StateStoreProvider::Open({dirs.checkpoint(), 0, 0, "default"},
                                                  Options(dirs.NewLocalDir())));
    ASSERT_OK_AND_ASSIGN(int64_t latest, provider->LatestVersion());
    EXPECT_EQ(latest, committed_version);
    ASSERT_OK_AND_ASSIGN(auto store, provider->GetStore(latest));
    ASSERT_OK_AND_ASSIGN(Model loaded, Dump(*store));
    EXPECT_EQ(loaded.size(), committed.size());
    EXPECT_TRUE(loaded == committed) << "version " << latest << " loaded other contents";
  }
  std::printf("limits tried: %d, runs that met the full disk: %d, versions committed: %d\n", runs,
              failed_runs, committed_total);
  // The sweep met the full disk at every stage and also ran to the end.
  EXPECT_GT(failed_runs, 20);
  EXPECT_GT(committed_total, 20);
}

}  // namespace
}  // namespace sluice::state
