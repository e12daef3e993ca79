#include "scaleout/group_membership.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "sources/kafka/test_cluster.h"

namespace sluice::scaleout {
namespace {

using ::testing::HasSubstr;

// Records what the group gives and takes.
class RecordingListener final : public GroupListener {
 public:
  void OnAssigned(const std::vector<int32_t>& partitions) override {
    owned.insert(partitions.begin(), partitions.end());
    ++assigned_events;
  }
  void OnRevoked(const std::vector<int32_t>& partitions, bool lost) override {
    for (int32_t p : partitions) owned.erase(p);
    revoked.insert(partitions.begin(), partitions.end());
    any_lost = any_lost || lost;
  }
  std::set<int32_t> owned, revoked;
  int assigned_events = 0;
  bool any_lost = false;
};

GroupMembershipOptions Options(const std::string& bootstrap, const std::string& group) {
  GroupMembershipOptions o;
  o.config = {{"bootstrap.servers", bootstrap},
              {"session.timeout.ms", "6000"},
              {"heartbeat.interval.ms", "500"},
              {"client.id", "group-membership-test"}};
  o.group_id = group;
  o.topic = "events";
  return o;
}

// Polls every membership until `done` or 600 rounds of 50 ms (30 s).
template <typename Done>
bool PollUntil(const std::vector<GroupMembership*>& members, Done done) {
  for (int round = 0; round < 600; ++round) {
    for (GroupMembership* m : members) {
      Status st = m->Poll(50);
      if (!st.ok()) {
        ADD_FAILURE() << st.ToString();
        return false;
      }
    }
    if (done()) return true;
  }
  return false;
}

TEST(GroupMembershipTest, TwoMembersShareThePartitionsAndTheLastTakesAll) {
  sources::kafka::testing::KafkaTestCluster cluster;
  cluster.CreateTopic("events", 4);
  RecordingListener la, lb;
  auto a = GroupMembership::Open(Options(cluster.bootstrap(), "share"), &la);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(PollUntil({a->get()}, [&] { return la.owned.size() == 4; }))
      << "a alone was not given the 4 partitions";
  EXPECT_EQ((*a)->Owned(), la.owned);
  EXPECT_EQ((*a)->Protocol(), "COOPERATIVE");

  auto b = GroupMembership::Open(Options(cluster.bootstrap(), "share"), &lb);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ASSERT_TRUE(
      PollUntil({a->get(), b->get()}, [&] { return la.owned.size() == 2 && lb.owned.size() == 2; }))
      << "a owns " << la.owned.size() << ", b " << lb.owned.size();
  // Cooperative: a gave up exactly what b was given, asked (not lost).
  EXPECT_EQ(la.revoked, lb.owned);
  EXPECT_FALSE(la.any_lost);
  std::set<int32_t> all = la.owned;
  all.insert(lb.owned.begin(), lb.owned.end());
  EXPECT_EQ(all, (std::set<int32_t>{0, 1, 2, 3}));

  // b leaves: its partitions are revoked (asked) and a is given them back.
  ASSERT_TRUE((*b)->Close().ok());
  EXPECT_TRUE(lb.owned.empty());
  EXPECT_FALSE(lb.any_lost);
  ASSERT_TRUE(PollUntil({a->get()}, [&] { return la.owned.size() == 4; }))
      << "a was not given b's partitions after b left";
  EXPECT_TRUE((*b)->Poll(10).IsCancelled());
}

TEST(GroupMembershipTest, RefusesWhatItCannotJoin) {
  RecordingListener l;
  GroupMembershipOptions o = Options("127.0.0.1:1", "");
  EXPECT_THAT(GroupMembership::Open(o, &l).status().message(), HasSubstr("no group name"));
  o = Options("127.0.0.1:1", "g");
  o.topic = "";
  EXPECT_THAT(GroupMembership::Open(o, &l).status().message(), HasSubstr("no topic"));
  o = Options("127.0.0.1:1", "g");
  o.config["session.timeout.ms"] = "not-a-number";
  Result<std::unique_ptr<GroupMembership>> bad = GroupMembership::Open(o, &l);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.status().IsInvalidArgument()) << bad.status().ToString();
  EXPECT_THAT(bad.status().message(), HasSubstr("kafka.session.timeout.ms"));
}

}  // namespace
}  // namespace sluice::scaleout
