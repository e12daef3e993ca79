// Optimistic commits: conflict rules, racing writers (threads and processes), fault injection.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <set>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "delta/append_race_util.h"
#include "delta/conflict_checker.h"
#include "delta/writer_test_util.h"
#include "fs/fault_injection_file_system.h"

namespace sluice::delta {
namespace {

using ::testing::HasSubstr;

AddFile Add(const std::string& path, PartitionValues pv = {}, bool data_change = true) {
  AddFile a;
  a.path = path;
  a.partition_values = std::move(pv);
  a.size = 1;
  a.data_change = data_change;
  return a;
}

RemoveFile Remove(const std::string& path) {
  RemoveFile r;
  r.path = path;
  r.data_change = true;
  return r;
}

CommitInfo Info(const std::string& op) {
  CommitInfo c;
  c.operation = op;
  return c;
}

TEST(ConflictCheckerTest, BlindAppendsDoNotConflict) {
  PendingTransaction ours;
  SummarizeActions({Add("mine.parquet")}, &ours);
  EXPECT_TRUE(ours.blind_append);
  EXPECT_TRUE(CheckConflict(ours, {Info("WRITE"), Add("theirs.parquet")}, Version(3), "/t").ok());
  // Compaction of other files (dataChange=false) does not matter either.
  EXPECT_TRUE(CheckConflict(ours, {Remove("x"), Add("y", {}, false)}, Version(3), "/t").ok());
}

TEST(ConflictCheckerTest, MetadataAndProtocolChangesConflict) {
  PendingTransaction ours;
  Status st = CheckConflict(ours, {Info("SET TBLPROPERTIES"), Metadata{}}, Version(7), "/t");
  EXPECT_TRUE(st.IsConflict());
  EXPECT_THAT(st.message(), HasSubstr("MetadataChanged"));
  EXPECT_THAT(st.message(), HasSubstr("commit 7 (SET TBLPROPERTIES)"));
  EXPECT_THAT(CheckConflict(ours, {Protocol{}}, Version(7), "/t").message(),
              HasSubstr("ProtocolChanged"));
}

TEST(ConflictCheckerTest, ConcurrentDeleteOfReadOrRemovedFile) {
  PendingTransaction ours;
  ours.read.files = {"f1.parquet"};
  SummarizeActions({Remove("f2.parquet"), Add("new.parquet")}, &ours);
  ours.blind_append = false;
  Status read = CheckConflict(ours, {Info("DELETE"), Remove("f1.parquet")}, Version(4), "/t");
  EXPECT_TRUE(read.IsConflict());
  EXPECT_THAT(read.message(), HasSubstr("ConcurrentDeleteRead"));
  EXPECT_THAT(read.message(), HasSubstr("'f1.parquet'"));
  Status del = CheckConflict(ours, {Remove("f2.parquet")}, Version(4), "/t");
  EXPECT_THAT(del.message(), HasSubstr("ConcurrentDeleteDelete"));
  EXPECT_TRUE(CheckConflict(ours, {Remove("other.parquet")}, Version(4), "/t").ok());
}

TEST(ConflictCheckerTest, AppendIntoReadPartition) {
  PendingTransaction ours;
  ours.read.partitions = {{{"p", "1"}}};
  ours.blind_append = false;
  Status st =
      CheckConflict(ours, {Info("WRITE"), Add("p=1/a.parquet", {{"p", "1"}})}, Version(2), "/t");
  EXPECT_TRUE(st.IsConflict());
  EXPECT_THAT(st.message(), HasSubstr("ConcurrentAppend"));
  EXPECT_THAT(st.message(), HasSubstr("{p=1}"));
  EXPECT_TRUE(CheckConflict(ours, {Add("p=2/a.parquet", {{"p", "2"}})}, Version(2), "/t").ok());
  // Null partitions compare equal to null.
  ours.read.partitions = {{{"p", std::nullopt}}};
  EXPECT_TRUE(
      CheckConflict(ours, {Add("x", {{"p", std::nullopt}})}, Version(2), "/t").IsConflict());
  // The same append into a partition we read is fine when we are a blind append.
  ours.blind_append = true;
  ours.read = {};
  EXPECT_TRUE(CheckConflict(ours, {Add("x", {{"p", std::nullopt}})}, Version(2), "/t").ok());
}

TEST(ConflictCheckerTest, SameAppIdConflicts) {
  PendingTransaction ours;
  SummarizeActions({SetTransaction{"q", 5, 0}}, &ours);
  EXPECT_THAT(CheckConflict(ours, {SetTransaction{"q", 5, 0}}, Version(1), "/t").message(),
              HasSubstr("ConcurrentTransaction"));
  EXPECT_TRUE(CheckConflict(ours, {SetTransaction{"other", 5, 0}}, Version(1), "/t").ok());
}

class CommitTest : public testing::WriterTestBase {
 protected:
  // A rewrite of every file of the table (an UPDATE/DELETE by copy-on-write): reads and removes
  // them, adds `rows` as new files.
  Result<std::unique_ptr<Transaction>> Rewrite(DeltaTableWriter* w, const std::string& rows_sql,
                                               const std::string& op) {
    SLUICE_ASSIGN_OR_RETURN(auto txn, w->StartTransaction());
    txn->ReadWholeTable();
    for (const AddFile& f : txn->read_snapshot()->files) {
      txn->ReadFile(f.path);
      RemoveFile r;
      r.path = f.path;
      r.deletion_timestamp = NowMillis();
      txn->Add(r);
    }
    SLUICE_ASSIGN_OR_RETURN(auto adds, w->WriteFiles(txn.get(), Sql(rows_sql)));
    for (auto& a : adds) txn->Add(a);
    txn->SetOperation(op);
    return txn;
  }
};

TEST_F(CommitTest, LostRaceIsRebasedForBlindAppends) {
  auto w1 = Writer();
  ASSERT_TRUE(w1->Write(Sql("SELECT 0 AS id")).ok());
  auto w2 = Writer();
  ASSERT_TRUE(w2->Latest().ok());  // w2 caches version 0
  // w1 commits version 1 behind w2's back; w2's transaction from version 0 must land on 2.
  auto t2 = w2->StartTransaction();
  ASSERT_TRUE(t2.ok());
  ASSERT_TRUE(w1->Write(Sql("SELECT 1 AS id")).ok());
  auto adds = w2->WriteFiles(t2->get(), Sql("SELECT 2 AS id"));
  ASSERT_TRUE(adds.ok());
  for (auto& a : *adds) (*t2)->Add(a);
  auto r = w2->Commit(t2->get());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->version, Version(2));
  EXPECT_EQ(r->attempts, 2);
  EXPECT_EQ(r->snapshot->files.size(), 3u);
  EXPECT_EQ(CommitLines(2)[0]["commitInfo"]["readVersion"], 0);
  EXPECT_EQ(ValidateLog(), 2);
  EXPECT_THAT(ReadRows(), ::testing::ElementsAre("0", "1", "2"));
}

TEST_F(CommitTest, ConcurrentRewritesOfTheSameFileOneFails) {
  auto setup = Writer();
  ASSERT_TRUE(setup->Write(Sql("SELECT range AS id FROM range(10)")).ok());
  auto wu = Writer();
  auto wd = Writer();
  auto update = Rewrite(wu.get(), "SELECT range * 100 AS id FROM range(10)", "UPDATE");
  auto del = Rewrite(wd.get(), "SELECT range AS id FROM range(5)", "DELETE");
  ASSERT_TRUE(update.ok() && del.ok());
  auto ru = wu->Commit(update->get());
  ASSERT_TRUE(ru.ok()) << ru.status().ToString();
  auto rd = wd->Commit(del->get());
  ASSERT_FALSE(rd.ok());
  EXPECT_TRUE(rd.status().IsConflict()) << rd.status().ToString();
  EXPECT_THAT(rd.status().message(), HasSubstr("commit 1 (UPDATE)"));
  EXPECT_THAT(rd.status().message(), HasSubstr("ConcurrentDeleteRead"));
  const std::string& removed = std::get<RemoveFile>((*del)->actions().front()).path;
  EXPECT_THAT(rd.status().message(), HasSubstr(removed));
  // The loser's data file was deleted; the table has the winner's rows.
  EXPECT_EQ(ReadRows().size(), 10u);
  EXPECT_EQ(ValidateLog(), 1);
  EXPECT_EQ(DataFiles().size(), 2u);
}

// On Conflict the writer deletes only the files the transaction wrote itself, never a file its
// add actions merely name (RESTORE re-adds files of older versions, which time travel and other
// snapshots still use).
TEST_F(CommitTest, ConflictDeletesOnlyFilesTheTransactionWrote) {
  auto setup = Writer();
  ASSERT_TRUE(setup->Write(Sql("SELECT range AS id FROM range(10)")).ok());  // v0: file A
  auto wr = Writer();
  auto wd = Writer();
  auto readd = wr->StartTransaction();
  ASSERT_TRUE(readd.ok());
  (*readd)->ReadWholeTable();
  const AddFile existing = (*readd)->read_snapshot()->files.front();
  (*readd)->Add(existing);  // names a file already in the table, as RESTORE does
  auto written = wr->WriteFiles(readd->get(), Sql("SELECT 99 AS id"));
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  ASSERT_EQ(written->size(), 1u);
  for (auto& a : *written) (*readd)->Add(a);
  EXPECT_EQ((*readd)->written_files().size(), 1u);
  auto del = Rewrite(wd.get(), "SELECT 1 AS id", "DELETE");  // v1 removes A
  ASSERT_TRUE(del.ok());
  ASSERT_TRUE(wd->Commit(del->get()).ok());
  auto r = wr->Commit(readd->get());
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsConflict()) << r.status().ToString();
  EXPECT_TRUE(std::filesystem::exists(table_ + "/" + existing.path));
  EXPECT_FALSE(std::filesystem::exists(table_ + "/" + written->front().path));
  EXPECT_EQ(ValidateLog(), 1);
}

TEST_F(CommitTest, RacingRewritesInThreadsExactlyOneWins) {
  for (int round = 0; round < 3; ++round) {
    table_ = dir_.path() + "/t" + std::to_string(round);
    auto setup = Writer();
    ASSERT_TRUE(setup->Write(Sql("SELECT range AS id FROM range(4)")).ok());
    auto wu = Writer();
    auto wd = Writer();
    auto update = Rewrite(wu.get(), "SELECT range + 10 AS id FROM range(4)", "UPDATE");
    auto del = Rewrite(wd.get(), "SELECT 1 AS id", "DELETE");
    ASSERT_TRUE(update.ok() && del.ok());
    Status su, sd;
    std::atomic<bool> go{false};
    std::thread a([&] {
      while (!go) {
      }
      su = wu->Commit(update->get()).status();
    });
    std::thread b([&] {
      while (!go) {
      }
      sd = wd->Commit(del->get()).status();
    });
    go = true;
    a.join();
    b.join();
    EXPECT_NE(su.ok(), sd.ok()) << su.ToString() << " / " << sd.ToString();
    EXPECT_TRUE(su.ok() || su.IsConflict()) << su.ToString();
    EXPECT_TRUE(sd.ok() || sd.IsConflict()) << sd.ToString();
    EXPECT_EQ(ValidateLog(), 1);
  }
}

TEST_F(CommitTest, OverwriteConflictsWithConcurrentAppend) {
  auto w = Writer();
  ASSERT_TRUE(w->Write(Sql("SELECT 1 AS id")).ok());
  auto wo = Writer();
  auto txn = wo->StartTransaction();
  ASSERT_TRUE(txn.ok());
  (*txn)->ReadWholeTable();
  ASSERT_TRUE(w->Write(Sql("SELECT 2 AS id")).ok());  // a concurrent append
  (*txn)->Add(Remove(std::string((*txn)->read_snapshot()->files[0].path)));
  auto r = wo->Commit(txn->get());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("ConcurrentAppend"));
}

TEST_F(CommitTest, GivesUpAfterMaxAttempts) {
  auto w = Writer();
  ASSERT_TRUE(w->Write(Sql("SELECT 1 AS id")).ok());
  auto snap = w->Latest();
  ASSERT_TRUE(snap.ok());
  // Commit 1 is taken by another writer; with one attempt allowed we give up at once.
  ASSERT_TRUE(w->Write(Sql("SELECT 2 AS id")).ok());
  CommitOptions one;
  one.max_attempts = 1;
  one.sync = false;
  Transaction txn(fs::LocalFileSystem(), table_, *snap, one);
  txn.Add(Add("ghost.parquet"));
  auto r = txn.Commit();
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsConflict());
  EXPECT_THAT(r.status().message(), HasSubstr("after 1 attempts"));
}

TEST_F(CommitTest, FourProcessesAppendConcurrentlyFast) {
  auto w = Writer();
  ASSERT_TRUE(w->CreateTable(Sql("SELECT 1::BIGINT AS id, 1 AS proc").schema()).ok());
  testing::RunAppendProcesses(table_, 4, 25);
  testing::CheckConcurrentAppends(table_, 4, 25, engine_);
  EXPECT_EQ(ValidateLog(), 100);
}

// The data file is written by the engine under its final name; an error on it afterwards (here
// the Stat that gives its size) deletes it: no file of the failed write is left behind.
TEST_F(CommitTest, ErrorAfterDataFileWriteLeavesPreviousVersionAndNoFile) {
  auto faulty = std::make_shared<fs::FaultInjectingFileSystem>(fs::LocalFileSystem());
  auto w = Writer(faulty);
  ASSERT_TRUE(w->Write(Sql("SELECT 1 AS id")).ok());
  fs::Fault f;
  f.ops = fs::OpBit(fs::FileOp::kStat);
  f.path_substring = ".parquet";
  f.error = EIO;
  ASSERT_TRUE(faulty->InjectFault(f).ok());
  auto r = w->Write(Sql("SELECT 2 AS id"));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("Input/output error"));
  EXPECT_THAT(ReadRows(), ::testing::ElementsAre("1"));
  EXPECT_EQ(ValidateLog(), 0);
  EXPECT_EQ(DataFiles().size(), 1u);  // no file of the failed write left behind
  // The disk has room again: the next write lands at version 1.
  auto ok = w->Write(Sql("SELECT 3 AS id"));
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->version, Version(1));
  EXPECT_THAT(ReadRows(), ::testing::ElementsAre("1", "3"));
}

TEST_F(CommitTest, NoSpaceDuringCommitWriteLeavesPreviousVersion) {
  auto faulty = std::make_shared<fs::FaultInjectingFileSystem>(fs::LocalFileSystem());
  auto w = Writer(faulty);
  ASSERT_TRUE(w->Write(Sql("SELECT 1 AS id")).ok());
  faulty->FailNthWrite(1, ENOSPC, "_delta_log/");
  auto r = w->Write(Sql("SELECT 2 AS id"));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("No space left on device"));
  EXPECT_THAT(r.status().message(), HasSubstr("00000000000000000001.json"));
  EXPECT_THAT(ReadRows(), ::testing::ElementsAre("1"));
  EXPECT_EQ(ValidateLog(), 0);
  auto ok = w->Write(Sql("SELECT 3 AS id"));
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->version, Version(1));
  EXPECT_THAT(ReadRows(), ::testing::ElementsAre("1", "3"));
}

TEST_F(CommitTest, CrashBeforeCommitLeavesPreviousVersion) {
  auto faulty = std::make_shared<fs::FaultInjectingFileSystem>(fs::LocalFileSystem());
  auto w = Writer(faulty);
  ASSERT_TRUE(w->Write(Sql("SELECT 1 AS id")).ok());
  faulty->SetCrashPoint("delta.before_commit");
  auto r = w->Write(Sql("SELECT 2 AS id"));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsCancelled()) << r.status().ToString();
  faulty->Restart();
  EXPECT_THAT(ReadRows(), ::testing::ElementsAre("1"));
  auto w2 = Writer(faulty);
  auto ok = w2->Write(Sql("SELECT 3 AS id"));
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_THAT(ReadRows(), ::testing::ElementsAre("1", "3"));
}

}  // namespace
}  // namespace sluice::delta
