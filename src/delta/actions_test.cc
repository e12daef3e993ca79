#include "delta/actions.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sluice::delta {
namespace {

using ::testing::HasSubstr;

TEST(ActionsTest, ParsesAllActionKinds) {
  std::string commit =
      R"({"commitInfo":{"timestamp":1515491537026,"operation":"WRITE","operationParameters":{"auto":false},"inCommitTimestamp":1515491537027}})"
      "\n"
      R"({"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors"],"writerFeatures":["deletionVectors","appendOnly"]}})"
      "\n"
      R"({"metaData":{"id":"abc","name":null,"description":"d","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[]}","partitionColumns":["date"],"createdTime":1512909768000,"configuration":{"delta.enableChangeDataFeed":"true"}}})"
      "\n"
      R"({"add":{"path":"date=2017-12-10/part-000.parquet","partitionValues":{"date":"2017-12-10","n":null},"size":841454,"modificationTime":1512909768000,"dataChange":true,"stats":"{\"numRecords\":1}","tags":{"k":"v"},"deletionVector":{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":4,"sizeInBytes":40,"cardinality":6},"baseRowId":4071,"defaultRowCommitVersion":41,"clusteringProvider":"liquid"}})"
      "\n"
      R"({"remove":{"path":"part-00001.parquet","deletionTimestamp":1515488792485,"dataChange":true,"extendedFileMetadata":true,"partitionValues":{},"size":793}})"
      "\n"
      R"({"cdc":{"path":"_change_data/cdc-00001.parquet","partitionValues":{},"size":1213,"dataChange":false}})"
      "\n"
      R"({"txn":{"appId":"3ba13872","version":364475,"lastUpdated":1564524299648}})"
      "\n"
      R"({"domainMetadata":{"domain":"delta.rowTracking","configuration":"{\"x\":1}","removed":false}})"
      "\n";
  auto actions = ParseCommitFile(commit, "00000000000000000001.json");
  ASSERT_TRUE(actions.ok()) << actions.status().ToString();
  ASSERT_EQ(actions->size(), 8u);

  const auto& ci = std::get<CommitInfo>((*actions)[0]);
  EXPECT_EQ(ci.timestamp, 1515491537026);
  EXPECT_EQ(ci.operation, "WRITE");
  EXPECT_EQ(ci.in_commit_timestamp, 1515491537027);
  EXPECT_THAT(ci.raw_json, HasSubstr("\"auto\":false"));

  const auto& p = std::get<Protocol>((*actions)[1]);
  EXPECT_EQ(p.min_reader_version, 3);
  EXPECT_EQ(p.reader_features, std::vector<std::string>{"deletionVectors"});

  const auto& m = std::get<Metadata>((*actions)[2]);
  EXPECT_EQ(m.id, "abc");
  EXPECT_FALSE(m.name.has_value());
  EXPECT_EQ(m.description, "d");
  EXPECT_EQ(m.partition_columns, std::vector<std::string>{"date"});
  EXPECT_TRUE(m.ConfigIsTrue("delta.enableChangeDataFeed"));
  EXPECT_EQ(m.created_time, 1512909768000);

  const auto& a = std::get<AddFile>((*actions)[3]);
  EXPECT_EQ(a.size, 841454);
  EXPECT_EQ(a.partition_values.at("date"), "2017-12-10");
  EXPECT_FALSE(a.partition_values.at("n").has_value());
  EXPECT_EQ(a.stats, "{\"numRecords\":1}");
  ASSERT_TRUE(a.deletion_vector);
  EXPECT_EQ(a.deletion_vector->UniqueId(), "uab^-aqEH.-t@S}K{vb[*k^@4");
  EXPECT_EQ(a.base_row_id, 4071);

  const auto& r = std::get<RemoveFile>((*actions)[4]);
  EXPECT_EQ(r.deletion_timestamp, 1515488792485);
  EXPECT_EQ(r.size, 793);
  EXPECT_TRUE(r.partition_values.has_value());

  EXPECT_EQ(std::get<AddCdcFile>((*actions)[5]).size, 1213);
  EXPECT_EQ(std::get<SetTransaction>((*actions)[6]).version, 364475);
  EXPECT_EQ(std::get<DomainMetadata>((*actions)[7]).domain, "delta.rowTracking");
}

TEST(ActionsTest, IgnoresUnknownActionsAndFields) {
  auto actions = ParseCommitFile(
      "{\"some_new_action\":{\"a\":1}}\n"
      "{\"add\":{\"path\":\"f\",\"partitionValues\":{},\"size\":1,\"modificationTime\":2,"
      "\"dataChange\":true,"
      "\"someNewField\":[1,2]},\"unknownTopLevel\":5}\n\n",
      "x.json");
  ASSERT_TRUE(actions.ok()) << actions.status().ToString();
  ASSERT_EQ(actions->size(), 1u);
  EXPECT_EQ(std::get<AddFile>((*actions)[0]).path, "f");
}

TEST(ActionsTest, NonJsonLineIsCorruptionNamingFileAndLine) {
  auto actions = ParseCommitFile("{\"txn\":{\"appId\":\"a\",\"version\":1}}\nnot json\n",
                                 "_delta_log/00000000000000000007.json");
  ASSERT_FALSE(actions.ok());
  EXPECT_TRUE(actions.status().IsCorruption());
  EXPECT_THAT(actions.status().message(), HasSubstr("_delta_log/00000000000000000007.json line 2"));
}

TEST(ActionsTest, MissingRequiredFieldIsCorruption) {
  auto actions = ParseActions(
      R"({"add":{"path":"f","partitionValues":{},"modificationTime":2,"dataChange":true}})");
  ASSERT_FALSE(actions.ok());
  EXPECT_TRUE(actions.status().IsCorruption());
  EXPECT_THAT(actions.status().message(), HasSubstr("'size'"));
  auto txn = ParseActions(R"({"txn":{"version":3}})");
  EXPECT_THAT(txn.status().message(), HasSubstr("'appId'"));
}

TEST(ActionsTest, CheckpointRowWithStatsParsed) {
  // A checkpoint row rendered as JSON: several columns, only one non-null; stats_parsed only.
  auto actions = ParseActions(
      R"({"txn":null,"add":{"path":"p","partitionValues":{},"size":793,"modificationTime":1,"dataChange":false,"tags":null,)"
      R"("stats_parsed":{"numRecords":4,"minValues":{"key":1}}},"remove":null,"unknown":true})");
  ASSERT_TRUE(actions.ok()) << actions.status().ToString();
  ASSERT_EQ(actions->size(), 1u);
  const auto& a = std::get<AddFile>((*actions)[0]);
  EXPECT_EQ(a.stats, R"({"numRecords":4,"minValues":{"key":1}})");
  EXPECT_TRUE(a.tags.empty());
}

TEST(ActionsTest, SerializeRoundTrips) {
  AddFile add;
  add.path = "x=A%252FA/part-0.parquet";
  add.partition_values = {{"x", "A/A"}, {"y", std::nullopt}};
  add.size = 10;
  add.modification_time = 20;
  add.data_change = true;
  add.stats = R"({"numRecords":3})";
  add.tags = {{"t", "v"}};
  RemoveFile rm;
  rm.path = "old.parquet";
  rm.deletion_timestamp = 5;
  rm.extended_file_metadata = true;
  rm.partition_values = PartitionValues{};
  rm.size = 7;
  Metadata md;
  md.id = "id-1";
  md.schema_string = R"({"type":"struct","fields":[]})";
  md.configuration = {{"delta.appendOnly", "true"}};
  md.created_time = 99;
  Protocol pr;
  SetTransaction txn{"app", 4, 123};
  CommitInfo ci;
  ci.timestamp = 1000;
  ci.operation = "WRITE";
  AddCdcFile cdc{"_change_data/c.parquet", {}, 11, false, {}};
  DomainMetadata dm{"d", "{}", false};
  std::vector<Action> actions = {ci, pr, md, add, rm, cdc, txn, dm};
  std::string text = SerializeCommit(actions);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 8);
  EXPECT_THAT(
      text,
      HasSubstr(
          R"({"add":{"path":"x=A%252FA/part-0.parquet","partitionValues":{"x":"A/A","y":null},)"));
  EXPECT_THAT(text, HasSubstr(R"({"protocol":{"minReaderVersion":1,"minWriterVersion":2}})"));
  auto parsed = ParseCommitFile(text, "rt.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->size(), actions.size());
  for (size_t i = 1; i < actions.size(); ++i)
    EXPECT_EQ((*parsed)[i], actions[i]) << ActionName(actions[i]);
  const auto& ci2 = std::get<CommitInfo>((*parsed)[0]);
  EXPECT_EQ(ci2.timestamp, 1000);
  EXPECT_EQ(ci2.operation, "WRITE");
}

}  // namespace
}  // namespace sluice::delta
