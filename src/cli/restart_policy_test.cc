#include "cli/restart_policy.h"

#include <gtest/gtest.h>

namespace sluice::cli {
namespace {

TEST(RestartPolicyTest, ParsesDurations) {
  EXPECT_EQ(*ParseDurationMs("500ms"), 500);
  EXPECT_EQ(*ParseDurationMs("10s"), 10000);
  EXPECT_EQ(*ParseDurationMs("10"), 10000);
  EXPECT_EQ(*ParseDurationMs("1.5s"), 1500);
  EXPECT_EQ(*ParseDurationMs("2m"), 120000);
  EXPECT_EQ(*ParseDurationMs("1h"), 3600000);
  EXPECT_EQ(*ParseDurationMs("0"), 0);
  for (const char* bad : {"", "s", "-1s", "10 s", "10x", "1.2.3s"}) {
    Result<int64_t> r = ParseDurationMs(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("is not a duration"), std::string::npos);
  }
}

TEST(RestartPolicyTest, FormatsDurations) {
  EXPECT_EQ(FormatDurationMs(200), "200 ms");
  EXPECT_EQ(FormatDurationMs(10000), "10 s");
  EXPECT_EQ(FormatDurationMs(1500), "1.5 s");
  EXPECT_EQ(FormatDurationMs(90000), "1 min 30 s");
  EXPECT_EQ(FormatDurationMs(7200000), "2 h");
}

TEST(RestartPolicyTest, ClassifiesFailures) {
  EXPECT_EQ(ClassifyFailure(Status::IOError("disk hiccup")).kind, FailureKind::kTransient);
  EXPECT_EQ(ClassifyFailure(Status::Conflict("a concurrent transaction committed")).kind,
            FailureKind::kTransient);
  FailureClass lock = ClassifyFailure(
      Status::Conflict("checkpoint /c is in use by another query (pid 12 on host)"));
  EXPECT_EQ(lock.kind, FailureKind::kPermanent);
  EXPECT_EQ(lock.reason, "another query holds the checkpoint");
  EXPECT_EQ(ClassifyFailure(Status::InvalidArgument("Parser Error: syntax error")).kind,
            FailureKind::kPermanent);
  FailureClass additive = ClassifyFailure(Status::InvalidArgument(
      "DeltaSource[/t]: detected a schema change at version 3 (additive: columns added): ..."));
  EXPECT_EQ(additive.kind, FailureKind::kAdditiveSchemaChange);
  FailureClass other = ClassifyFailure(Status::InvalidArgument(
      "DeltaSource[/t]: detected a schema change at version 3 (not additive): ..."));
  EXPECT_EQ(other.kind, FailureKind::kPermanent);
  EXPECT_EQ(other.reason, "incompatible source schema change: a new checkpoint is needed");
  EXPECT_EQ(
      ClassifyFailure(Status::InvalidArgument(
                          "the conf changed since the checkpoint; a new checkpoint is needed"))
          .reason,
      "the checkpoint cannot continue with this query (restart-change rules)");
  EXPECT_EQ(ClassifyFailure(Status::Corruption("offsets/3 is damaged")).kind,
            FailureKind::kPermanent);
  EXPECT_EQ(ClassifyFailure(Status::Internal("bug")).kind, FailureKind::kTransient);
}

TEST(RestartPolicyTest, BacksOffExponentiallyWithACapAndGivesUp) {
  RestartTracker t(RestartPolicy{4, 1000, 3000, 60000});
  RestartDecision d1 = t.OnFailure(FailureKind::kTransient, 0, 10);
  EXPECT_TRUE(d1.restart);
  EXPECT_EQ(d1.delay_ms, 1000);
  EXPECT_EQ(d1.restart_number, 1);
  EXPECT_EQ(t.OnFailure(FailureKind::kTransient, 1000, 1010).delay_ms, 2000);
  EXPECT_EQ(t.OnFailure(FailureKind::kTransient, 3000, 3010).delay_ms, 3000);  // capped
  RestartDecision d4 = t.OnFailure(FailureKind::kTransient, 6000, 6010);
  EXPECT_EQ(d4.delay_ms, 3000);
  EXPECT_EQ(d4.restart_number, 4);
  EXPECT_FALSE(t.OnFailure(FailureKind::kTransient, 9000, 9010).restart);  // 4 used up
  EXPECT_EQ(t.consecutive_restarts(), 4);
}

TEST(RestartPolicyTest, AHealthyRunResetsTheBudget) {
  RestartTracker t(RestartPolicy{2, 100, 10000, 5000});
  EXPECT_EQ(t.OnFailure(FailureKind::kTransient, 0, 10).restart_number, 1);
  EXPECT_EQ(t.OnFailure(FailureKind::kTransient, 100, 200).restart_number, 2);
  // Ran 5 s before failing: the count starts over, and so does the backoff.
  RestartDecision d = t.OnFailure(FailureKind::kTransient, 1000, 6000);
  EXPECT_TRUE(d.restart);
  EXPECT_EQ(d.restart_number, 1);
  EXPECT_EQ(d.delay_ms, 100);
  EXPECT_EQ(t.total_restarts(), 3);
}

TEST(RestartPolicyTest, PermanentNeverRestartsAdditiveAlwaysDoes) {
  RestartTracker none(RestartPolicy{0, 100, 1000, 1000});
  EXPECT_FALSE(none.OnFailure(FailureKind::kTransient, 0, 1).restart);
  EXPECT_FALSE(none.OnFailure(FailureKind::kPermanent, 0, 1).restart);
  RestartDecision d = none.OnFailure(FailureKind::kAdditiveSchemaChange, 0, 1);
  EXPECT_TRUE(d.restart);
  EXPECT_EQ(d.delay_ms, 0);
  EXPECT_EQ(d.restart_number, 0);
  RestartTracker unlimited(RestartPolicy{-1, 0, 0, 1000000});
  for (int i = 0; i < 100; ++i) {
    EXPECT_TRUE(unlimited.OnFailure(FailureKind::kTransient, i, i).restart);
  }
}

}  // namespace
}  // namespace sluice::cli
