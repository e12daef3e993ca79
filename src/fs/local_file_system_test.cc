#include "fs/local_file_system.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "fs/test_util.h"

namespace sluice::fs {
namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::vector<std::string> Names(const std::vector<FileInfo>& infos) {
  std::vector<std::string> out;
  for (const FileInfo& i : infos) out.push_back(BaseName(i.path));
  return out;
}

// Names in `dir` that have the temporary-file form.
std::vector<std::string> TempNames(FileSystem& fs, const std::string& dir) {
  std::vector<std::string> out;
  auto list = fs.List(dir);
  EXPECT_TRUE(list.ok()) << list.status().ToString();
  if (!list.ok()) return out;
  for (const std::string& n : Names(*list)) {
    if (IsTempFileName(n)) out.push_back(n);
  }
  return out;
}

class LocalFileSystemTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(tmp_.path().empty()) << "mkdtemp failed"; }
  std::string P(std::string_view name) const { return tmp_.Join(name); }
  void RunThreadRace();

  std::shared_ptr<FileSystem> fs_ = LocalFileSystem();
  ScopedTempDir tmp_{"sluice-fs"};
};

TEST_F(LocalFileSystemTest, SingletonIsStable) {
  EXPECT_EQ(LocalFileSystem().get(), LocalFileSystem().get());
  EXPECT_NE(LocalFileSystem(), nullptr);
}

TEST_F(LocalFileSystemTest, CreateIfAbsentWritesOnceAndNeverOverwrites) {
  std::string path = P("a/b/00000000000000000000.json");  // parents do not exist yet
  ASSERT_TRUE(fs_->CreateIfAbsent(path, "hello").ok());
  auto data = fs_->ReadFile(path);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ(*data, "hello");

  Status again = fs_->CreateIfAbsent(path, "other");
  EXPECT_TRUE(again.IsAlreadyExists()) << again.ToString();
  EXPECT_EQ(again.message(), "creating " + path + ": File exists");
  EXPECT_EQ(*fs_->ReadFile(path), "hello");

  auto list = fs_->List(P("a/b"));
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(Names(*list), std::vector<std::string>{"00000000000000000000.json"});
}

// owner_only files are 0600 whatever the umask (definitions that may hold secrets), others
// follow the umask.
TEST_F(LocalFileSystemTest, OwnerOnlyFilesAreMode0600) {
  const mode_t old = ::umask(022);
  WriteOptions owner_only;
  owner_only.owner_only = true;
  ASSERT_TRUE(fs_->AtomicReplace(P("secret.json"), "x", owner_only).ok());
  ASSERT_TRUE(fs_->AtomicReplace(P("secret.json"), "y", owner_only).ok());
  ASSERT_TRUE(fs_->CreateIfAbsent(P("created.json"), "x", owner_only).ok());
  ASSERT_TRUE(fs_->AtomicReplace(P("plain.json"), "x").ok());
  ::umask(old);
  struct stat st;
  ASSERT_EQ(::stat(P("secret.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(P("created.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(P("plain.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

// Two-phase create: nothing but a temporary file until PublishCreate; then exactly
// CreateIfAbsent's result (AlreadyExists when taken, leaving nothing behind); AbandonCreate
// removes the temporary file.
TEST_F(LocalFileSystemTest, PrepareThenPublishOrAbandon) {
  std::string path = P("log/00000000000000000001.json");  // the parent does not exist yet
  auto prepared = fs_->PrepareCreate(path, "one");
  ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
  EXPECT_FALSE(*fs_->Exists(path));
  EXPECT_EQ(TempNames(*fs_, P("log")).size(), 1u);
  ASSERT_TRUE(fs_->PublishCreate(*prepared).ok());
  EXPECT_EQ(*fs_->ReadFile(path), "one");
  EXPECT_TRUE(TempNames(*fs_, P("log")).empty());

  // Prepared before someone else created the name: the publish loses and cleans up.
  std::string other = P("log/00000000000000000002.json");
  auto late = fs_->PrepareCreate(other, "late", {.sync = false});
  ASSERT_TRUE(late.ok());
  ASSERT_TRUE(fs_->CreateIfAbsent(other, "first").ok());
  Status lost = fs_->PublishCreate(*late, {.sync = false});
  EXPECT_TRUE(lost.IsAlreadyExists()) << lost.ToString();
  EXPECT_EQ(*fs_->ReadFile(other), "first");
  EXPECT_TRUE(TempNames(*fs_, P("log")).empty());
  // An existing name is refused already at prepare time.
  EXPECT_TRUE(fs_->PrepareCreate(other, "x").status().IsAlreadyExists());

  auto dropped = fs_->PrepareCreate(P("log/3"), "never");
  ASSERT_TRUE(dropped.ok());
  fs_->AbandonCreate(*dropped);
  EXPECT_FALSE(*fs_->Exists(P("log/3")));
  EXPECT_TRUE(TempNames(*fs_, P("log")).empty());

  EXPECT_TRUE(fs_->SyncDirectory(P("log")).ok());
  EXPECT_TRUE(fs_->SyncDirectory(P("absent")).IsNotFound());
}

TEST_F(LocalFileSystemTest, CreateIfAbsentEmptyLargeAndUnsynced) {
  ASSERT_TRUE(fs_->CreateIfAbsent(P("empty"), "").ok());
  EXPECT_EQ(fs_->Stat(P("empty"))->size, 0);
  EXPECT_EQ(*fs_->ReadFile(P("empty")), "");

  std::string big(3 * 1024 * 1024 + 17, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 31 + 7);
  WriteOptions nosync;
  nosync.sync = false;
  ASSERT_TRUE(fs_->CreateIfAbsent(P("big"), big, nosync).ok());
  auto back = fs_->ReadFile(P("big"));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->size(), big.size());
  EXPECT_TRUE(*back == big);
  EXPECT_TRUE(fs_->CreateIfAbsent(P("big"), "x", nosync).IsAlreadyExists());
  EXPECT_TRUE(TempNames(*fs_, tmp_.path()).empty());
}

class ForceLinkFallback {
 public:
  ForceLinkFallback() { internal::ForceLinkFallbackForTesting(true); }
  ~ForceLinkFallback() { internal::ForceLinkFallbackForTesting(false); }
};

TEST_F(LocalFileSystemTest, LinkFallbackCreatesOnceAndRenamesWithoutReplacing) {
  ForceLinkFallback fallback;
  ASSERT_TRUE(fs_->CreateIfAbsent(P("d/a"), "A").ok());
  EXPECT_TRUE(fs_->CreateIfAbsent(P("d/a"), "B").IsAlreadyExists());
  EXPECT_EQ(*fs_->ReadFile(P("d/a")), "A");
  ASSERT_TRUE(fs_->CreateIfAbsent(P("d/c"), "C").ok());
  EXPECT_TRUE(fs_->RenameNoReplace(P("d/c"), P("d/a")).IsAlreadyExists());
  ASSERT_TRUE(fs_->RenameNoReplace(P("d/c"), P("d/b")).ok());
  EXPECT_EQ(*fs_->ReadFile(P("d/b")), "C");
  EXPECT_FALSE(*fs_->Exists(P("d/c")));
  EXPECT_TRUE(TempNames(*fs_, P("d")).empty());
}

TEST_F(LocalFileSystemTest, ThreadsRacingToCreateHaveExactlyOneWinnerWithLinkFallback) {
  ForceLinkFallback fallback;
  RunThreadRace();
}

TEST_F(LocalFileSystemTest, ThreadsRacingToCreateHaveExactlyOneWinner) { RunThreadRace(); }

void LocalFileSystemTest::RunThreadRace() {
  constexpr int kRounds = 200;
  constexpr int kThreads = 2;
  std::vector<std::vector<Status>> results(kThreads, std::vector<Status>(kRounds));
  std::barrier sync_point(kThreads);
  WriteOptions nosync;
  nosync.sync = false;  // same publish path, faster rounds
  auto content = [](int t, int r) {
    return "thread-" + std::to_string(t) + "-round-" + std::to_string(r) + std::string(4096, 'x');
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        sync_point.arrive_and_wait();
        results[t][r] = fs_->CreateIfAbsent(P("race/" + std::to_string(r)), content(t, r), nosync);
      }
    });
  }
  for (auto& th : threads) th.join();

  int wins[kThreads] = {0, 0};
  for (int r = 0; r < kRounds; ++r) {
    int winner = -1;
    for (int t = 0; t < kThreads; ++t) {
      if (results[t][r].ok()) {
        EXPECT_EQ(winner, -1) << "two winners in round " << r;
        winner = t;
      } else {
        EXPECT_TRUE(results[t][r].IsAlreadyExists()) << results[t][r].ToString();
      }
    }
    ASSERT_NE(winner, -1) << "no winner in round " << r;
    ++wins[winner];
    EXPECT_EQ(*fs_->ReadFile(P("race/" + std::to_string(r))), content(winner, r));
  }
  EXPECT_EQ(wins[0] + wins[1], kRounds);
  EXPECT_EQ(fs_->List(P("race"))->size(), static_cast<size_t>(kRounds));  // no temp files left
}

TEST_F(LocalFileSystemTest, ProcessesRacingToCreateHaveExactlyOneWinner) {
  constexpr int kProcs = 4;
  constexpr int kRounds = 100;
  struct Shared {
    pthread_barrier_t barrier;
    // 1 = created, 2 = AlreadyExists, 3 = any other outcome.
    std::atomic<int> outcome[kProcs][kRounds];
  };
  void* mem =
      mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  auto* shared = new (mem) Shared;
  for (auto& row : shared->outcome)
    for (auto& o : row) o.store(0);
  pthread_barrierattr_t attr;
  pthread_barrierattr_init(&attr);
  pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  ASSERT_EQ(pthread_barrier_init(&shared->barrier, &attr, kProcs), 0);

  const std::string dir = P("procs");
  std::vector<pid_t> pids;
  for (int k = 0; k < kProcs; ++k) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      alarm(120);  // never hang the test run if a sibling dies
      WriteOptions nosync;
      nosync.sync = false;
      for (int r = 0; r < kRounds; ++r) {
        pthread_barrier_wait(&shared->barrier);
        Status st = LocalFileSystem()->CreateIfAbsent(JoinPath(dir, std::to_string(r)),
                                                      "proc-" + std::to_string(k), nosync);
        shared->outcome[k][r].store(st.ok() ? 1 : st.IsAlreadyExists() ? 2 : 3);
      }
      _exit(0);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int wstatus = 0;
    ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
    EXPECT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) << "child status " << wstatus;
  }
  for (int r = 0; r < kRounds; ++r) {
    int winner = -1;
    for (int k = 0; k < kProcs; ++k) {
      int o = shared->outcome[k][r].load();
      if (o == 1) {
        EXPECT_EQ(winner, -1) << "two winners in round " << r;
        winner = k;
      } else {
        EXPECT_EQ(o, 2) << "process " << k << " round " << r;
      }
    }
    ASSERT_NE(winner, -1) << "no winner in round " << r;
    EXPECT_EQ(*fs_->ReadFile(JoinPath(dir, std::to_string(r))), "proc-" + std::to_string(winner));
  }
  EXPECT_EQ(fs_->List(dir)->size(), static_cast<size_t>(kRounds));
  pthread_barrier_destroy(&shared->barrier);
  pthread_barrierattr_destroy(&attr);
  munmap(mem, sizeof(Shared));
}

TEST_F(LocalFileSystemTest, AtomicReplaceCreatesAndReplaces) {
  std::string path = P("x/_last_checkpoint");
  ASSERT_TRUE(fs_->AtomicReplace(path, "v1").ok());
  EXPECT_EQ(*fs_->ReadFile(path), "v1");
  ASSERT_TRUE(fs_->AtomicReplace(path, "version two").ok());
  EXPECT_EQ(*fs_->ReadFile(path), "version two");
  EXPECT_EQ(fs_->Stat(path)->size, 11);
  EXPECT_EQ(Names(*fs_->List(P("x"))), std::vector<std::string>{"_last_checkpoint"});
}

TEST_F(LocalFileSystemTest, AtomicReplaceReadersSeeOldOrNewNeverPartial) {
  const std::string path = P("swap");
  constexpr size_t kSize = 64 * 1024;
  WriteOptions nosync;
  nosync.sync = false;
  ASSERT_TRUE(fs_->AtomicReplace(path, std::string(kSize, 'A'), nosync).ok());
  std::atomic<bool> done{false};
  std::atomic<int> reads{0}, bad{0};
  std::thread reader([&] {
    while (!done.load()) {
      auto data = fs_->ReadFile(path);
      if (!data.ok() || data->size() != kSize ||
          data->find_first_not_of((*data)[0]) != std::string::npos) {
        bad.fetch_add(1);
      }
      reads.fetch_add(1);
    }
  });
  for (int i = 0; i < 300; ++i) {
    ASSERT_TRUE(fs_->AtomicReplace(path, std::string(kSize, i % 2 ? 'B' : 'A'), nosync).ok());
  }
  done.store(true);
  reader.join();
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(bad.load(), 0);
  EXPECT_TRUE(TempNames(*fs_, tmp_.path()).empty());
}

TEST_F(LocalFileSystemTest, TempFilesAreNeverVisibleUnderTheFinalName) {
  const std::string dir = P("log");
  ASSERT_TRUE(fs_->CreateDirectories(dir).ok());
  constexpr int kFiles = 300;
  constexpr size_t kSize = 32 * 1024;
  auto name = [](int i) { return "f" + std::to_string(i); };
  auto fill = [](int i) { return static_cast<char>('a' + i % 26); };
  std::atomic<bool> done{false};
  std::atomic<int> partial{0}, strange{0}, listings{0}, temp_seen{0};
  std::thread lister([&] {
    while (!done.load()) {
      auto list = fs_->List(dir);
      if (!list.ok()) {
        strange.fetch_add(1);
        continue;
      }
      listings.fetch_add(1);
      for (const FileInfo& info : *list) {
        std::string n = BaseName(info.path);
        if (IsTempFileName(n)) {
          temp_seen.fetch_add(1);
          continue;
        }
        if (n.size() < 2 || n[0] != 'f') {
          strange.fetch_add(1);
          continue;
        }
        int i = std::stoi(n.substr(1));
        auto data = fs_->ReadFile(info.path);
        if (info.size != static_cast<int64_t>(kSize) || !data.ok() ||
            *data != std::string(kSize, fill(i))) {
          partial.fetch_add(1);
        }
      }
    }
  });
  WriteOptions nosync;
  nosync.sync = false;
  for (int i = 0; i < kFiles; ++i) {
    ASSERT_TRUE(
        fs_->CreateIfAbsent(JoinPath(dir, name(i)), std::string(kSize, fill(i)), nosync).ok());
  }
  done.store(true);
  lister.join();
  EXPECT_GT(listings.load(), 0);
  EXPECT_EQ(partial.load(), 0);
  EXPECT_EQ(strange.load(), 0);
  EXPECT_EQ(fs_->List(dir)->size(), static_cast<size_t>(kFiles));
  EXPECT_TRUE(TempNames(*fs_, dir).empty());
  // temp_seen is timing-dependent, so it is only reported.
  RecordProperty("temp_files_seen", temp_seen.load());
}

TEST_F(LocalFileSystemTest, ListFiltersByPrefixAndSortsByName) {
  int64_t before = NowMs();
  ASSERT_TRUE(fs_->CreateIfAbsent(P("00010.json"), "0123456789").ok());
  ASSERT_TRUE(fs_->CreateIfAbsent(P("00002.json"), "22").ok());
  ASSERT_TRUE(fs_->CreateIfAbsent(P("00001.json"), "1").ok());
  ASSERT_TRUE(fs_->CreateIfAbsent(P("_last_checkpoint"), "{}").ok());
  ASSERT_TRUE(fs_->CreateDirectories(P("00003.dir")).ok());
  int64_t after = NowMs();

  auto list = fs_->List(tmp_.path(), "000");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ(Names(*list),
            (std::vector<std::string>{"00001.json", "00002.json", "00003.dir", "00010.json"}));
  ASSERT_EQ(list->size(), 4u);
  EXPECT_EQ((*list)[0].path, P("00001.json"));
  EXPECT_EQ((*list)[0].size, 1);
  EXPECT_FALSE((*list)[0].is_directory);
  EXPECT_EQ((*list)[1].size, 2);
  EXPECT_TRUE((*list)[2].is_directory);
  EXPECT_EQ((*list)[2].size, 0);
  EXPECT_EQ((*list)[3].size, 10);
  for (const FileInfo& f : *list) {
    EXPECT_GE(f.mtime_ms, before - 2000) << f.path;
    EXPECT_LE(f.mtime_ms, after + 2000) << f.path;
  }

  auto all = fs_->List(tmp_.path() + "/");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 5u);
  EXPECT_EQ(all->back().path, P("_last_checkpoint"));  // '_' sorts after digits
  EXPECT_TRUE(fs_->List(tmp_.path(), "zzz")->empty());
}

TEST_F(LocalFileSystemTest, ListRecursiveReturnsFilesSortedByPath) {
  ASSERT_TRUE(fs_->CreateIfAbsent(P("t/a/x"), "xx").ok());
  ASSERT_TRUE(fs_->CreateIfAbsent(P("t/a/b/y"), "yyy").ok());
  ASSERT_TRUE(fs_->CreateIfAbsent(P("t/c"), "").ok());
  ASSERT_TRUE(fs_->CreateIfAbsent(P("t/a.txt"), "a").ok());
  ASSERT_TRUE(fs_->CreateDirectories(P("t/empty/deeper")).ok());
  auto list = fs_->ListRecursive(P("t"));
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  std::vector<std::string> paths;
  for (const FileInfo& f : *list) {
    paths.push_back(f.path);
    EXPECT_FALSE(f.is_directory);
  }
  EXPECT_EQ(paths, (std::vector<std::string>{P("t/a.txt"), P("t/a/b/y"), P("t/a/x"), P("t/c")}));
  EXPECT_EQ((*list)[1].size, 3);
  EXPECT_TRUE(fs_->ListRecursive(P("nope")).status().IsNotFound());
}

TEST_F(LocalFileSystemTest, StatAndExists) {
  ASSERT_TRUE(fs_->CreateIfAbsent(P("f"), "abc").ok());
  auto st = fs_->Stat(P("f"));
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->path, P("f"));
  EXPECT_EQ(st->size, 3);
  EXPECT_FALSE(st->is_directory);
  EXPECT_TRUE(fs_->Stat(tmp_.path())->is_directory);
  EXPECT_TRUE(*fs_->Exists(P("f")));
  EXPECT_TRUE(*fs_->Exists(tmp_.path()));
  EXPECT_FALSE(*fs_->Exists(P("g")));
  EXPECT_FALSE(*fs_->Exists(P("f/under-a-file")));
}

TEST_F(LocalFileSystemTest, DeleteFileAndDeleteRecursive) {
  ASSERT_TRUE(fs_->CreateIfAbsent(P("f"), "abc").ok());
  ASSERT_TRUE(fs_->DeleteFile(P("f")).ok());
  EXPECT_FALSE(*fs_->Exists(P("f")));
  EXPECT_TRUE(fs_->DeleteFile(P("f")).IsNotFound());

  ASSERT_TRUE(fs_->CreateIfAbsent(P("tree/a/b/c"), "1").ok());
  ASSERT_TRUE(fs_->CreateIfAbsent(P("tree/d"), "2").ok());
  Status not_a_file = fs_->DeleteFile(P("tree"));
  EXPECT_TRUE(not_a_file.IsIOError()) << not_a_file.ToString();
  EXPECT_TRUE(*fs_->Exists(P("tree/d")));
  ASSERT_TRUE(fs_->DeleteRecursive(P("tree")).ok());
  EXPECT_FALSE(*fs_->Exists(P("tree")));
  EXPECT_TRUE(fs_->DeleteRecursive(P("tree")).ok());  // OK when absent

  ASSERT_TRUE(fs_->CreateIfAbsent(P("plain"), "x").ok());
  EXPECT_TRUE(fs_->DeleteRecursive(P("plain")).ok());
  EXPECT_FALSE(*fs_->Exists(P("plain")));
}

TEST_F(LocalFileSystemTest, CreateDirectories) {
  ASSERT_TRUE(fs_->CreateDirectories(P("a/b/c")).ok());
  EXPECT_TRUE(fs_->Stat(P("a/b/c"))->is_directory);
  EXPECT_TRUE(fs_->CreateDirectories(P("a/b/c")).ok());  // OK when present
  EXPECT_TRUE(fs_->CreateDirectories(P("a/b/c/")).ok());
  ASSERT_TRUE(fs_->CreateIfAbsent(P("file"), "x").ok());
  Status st = fs_->CreateDirectories(P("file/sub"));
  EXPECT_TRUE(st.IsIOError()) << st.ToString();
  EXPECT_EQ(st.message(), "creating directory " + P("file/sub") + ": Not a directory");
  st = fs_->CreateDirectories(P("file"));
  EXPECT_TRUE(st.IsIOError()) << st.ToString();
}

TEST_F(LocalFileSystemTest, RenameNoReplace) {
  ASSERT_TRUE(fs_->CreateIfAbsent(P("a"), "A").ok());
  ASSERT_TRUE(fs_->CreateIfAbsent(P("c"), "C").ok());
  ASSERT_TRUE(fs_->RenameNoReplace(P("a"), P("b")).ok());
  EXPECT_FALSE(*fs_->Exists(P("a")));
  EXPECT_EQ(*fs_->ReadFile(P("b")), "A");
  Status st = fs_->RenameNoReplace(P("c"), P("b"));
  EXPECT_TRUE(st.IsAlreadyExists()) << st.ToString();
  EXPECT_EQ(*fs_->ReadFile(P("b")), "A");
  EXPECT_EQ(*fs_->ReadFile(P("c")), "C");
  st = fs_->RenameNoReplace(P("missing"), P("z"));
  EXPECT_TRUE(st.IsNotFound()) << st.ToString();
  EXPECT_NE(st.message().find(P("missing")), std::string::npos);
}

TEST_F(LocalFileSystemTest, SetModificationTime) {
  ASSERT_TRUE(fs_->CreateIfAbsent(P("f"), "x").ok());
  ASSERT_TRUE(fs_->SetModificationTime(P("f"), 1600000000123).ok());
  EXPECT_EQ(fs_->Stat(P("f"))->mtime_ms, 1600000000123);
  EXPECT_EQ(fs_->List(tmp_.path())->at(0).mtime_ms, 1600000000123);
  ASSERT_TRUE(fs_->SetModificationTime(P("f"), -1500).ok());
  EXPECT_EQ(fs_->Stat(P("f"))->mtime_ms, -1500);
  EXPECT_TRUE(fs_->SetModificationTime(P("g"), 0).IsNotFound());
}

TEST_F(LocalFileSystemTest, NotFoundCasesNameOperationAndPath) {
  const std::string missing = P("no/such/file");
  auto expect_not_found = [&](const Status& st, std::string_view verb, const std::string& path) {
    EXPECT_TRUE(st.IsNotFound()) << st.ToString();
    EXPECT_EQ(st.message(), std::string(verb) + " " + path + ": No such file or directory");
  };
  expect_not_found(fs_->ReadFile(missing).status(), "reading", missing);
  expect_not_found(fs_->Stat(missing).status(), "getting status of", missing);
  expect_not_found(fs_->DeleteFile(missing), "deleting", missing);
  expect_not_found(fs_->List(P("no")).status(), "listing", P("no"));
  expect_not_found(fs_->ListRecursive(P("no")).status(), "listing recursively", P("no"));
  expect_not_found(fs_->SetModificationTime(missing, 1), "setting modification time of", missing);
  auto exists = fs_->Exists(missing);
  ASSERT_TRUE(exists.ok());
  EXPECT_FALSE(*exists);
}

TEST_F(LocalFileSystemTest, ErrorsNameOperationAndPath) {
  ASSERT_TRUE(fs_->CreateIfAbsent(P("file"), "x").ok());
  Status st = fs_->CreateIfAbsent(P("file/x"), "data");
  EXPECT_TRUE(st.IsIOError()) << st.ToString();
  EXPECT_EQ(st.message(), "creating " + P("file/x") + ": Not a directory");
  st = fs_->AtomicReplace(P("file/x"), "data");
  EXPECT_EQ(st.message(), "replacing " + P("file/x") + ": Not a directory");
  st = fs_->ReadFile(tmp_.path()).status();
  EXPECT_TRUE(st.IsIOError());
  EXPECT_EQ(st.message(), "reading " + tmp_.path() + ": Is a directory");

  // Replacing a directory fails after the temp file was written: the temp must be removed.
  ASSERT_TRUE(fs_->CreateDirectories(P("d/sub")).ok());
  st = fs_->AtomicReplace(P("d/sub"), "data");
  EXPECT_TRUE(st.IsIOError()) << st.ToString();
  EXPECT_EQ(st.message(), "replacing " + P("d/sub") + ": Is a directory");
  EXPECT_EQ(Names(*fs_->List(P("d"))), std::vector<std::string>{"sub"});
  EXPECT_TRUE(fs_->CreateIfAbsent("", "x").IsInvalidArgument());
}

TEST_F(LocalFileSystemTest, PermissionErrorsNameOperationAndPath) {
  if (geteuid() == 0) GTEST_SKIP() << "root ignores directory permissions";
  ASSERT_TRUE(fs_->CreateDirectories(P("ro")).ok());
  ASSERT_EQ(chmod(P("ro").c_str(), 0555), 0);
  Status st = fs_->CreateIfAbsent(P("ro/x"), "data");
  ASSERT_EQ(chmod(P("ro").c_str(), 0755), 0);
  EXPECT_TRUE(st.IsIOError()) << st.ToString();
  EXPECT_EQ(st.message(), "creating " + P("ro/x") + ": Permission denied");
}

}  // namespace
}  // namespace sluice::fs
