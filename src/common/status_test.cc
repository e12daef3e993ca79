#include "common/status.h"

#include <cerrno>

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(StatusTest, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.ToString(), "OK");
}

TEST(StatusTest, EachFactorySetsItsCode) {
  EXPECT_TRUE(Status::InvalidArgument("x").IsInvalidArgument());
  EXPECT_TRUE(Status::NotFound("x").IsNotFound());
  EXPECT_TRUE(Status::AlreadyExists("x").IsAlreadyExists());
  EXPECT_TRUE(Status::IOError("x").IsIOError());
  EXPECT_TRUE(Status::Corruption("x").IsCorruption());
  EXPECT_TRUE(Status::Conflict("x").IsConflict());
  EXPECT_TRUE(Status::NotSupported("x").IsNotSupported());
  EXPECT_TRUE(Status::Cancelled("x").IsCancelled());
  EXPECT_TRUE(Status::Internal("x").IsInternal());
  EXPECT_FALSE(Status::NotFound("x").IsIOError());
}

TEST(StatusTest, ToStringHasCodeNameAndMessage) {
  EXPECT_EQ(Status::NotFound("table t").ToString(), "Not found: table t");
  EXPECT_EQ(Status::Corruption("bad").ToString(), "Corruption: bad");
}

TEST(StatusTest, WithContextPrefixesMessageAndKeepsCode) {
  Status s = Status::Corruption("unexpected end").WithContext("reading offsets/3");
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_EQ(s.message(), "reading offsets/3: unexpected end");
  EXPECT_TRUE(Status::OK().WithContext("ignored").ok());
}

TEST(StatusTest, CopyAndMoveKeepValue) {
  Status a = Status::Conflict("lost race");
  Status b = a;
  EXPECT_EQ(a, b);
  Status c = std::move(b);
  EXPECT_EQ(c.message(), "lost race");
  Status d;
  d = c;
  EXPECT_TRUE(d.IsConflict());
}

TEST(StatusTest, FromErrnoIsIOErrorWithStrerror) {
  Status s = Status::FromErrno(ENOSPC, "writing /tmp/x");
  EXPECT_TRUE(s.IsIOError());
  EXPECT_EQ(s.message(), "writing /tmp/x: No space left on device");
}

Status FailsWhen(bool fail) { return fail ? Status::IOError("boom") : Status::OK(); }

Status Chain(bool fail, int* reached) {
  SLUICE_RETURN_NOT_OK(FailsWhen(fail));
  *reached = 1;
  SLUICE_RETURN_NOT_OK_CTX(FailsWhen(false), "second");
  return Status::OK();
}

TEST(StatusTest, ReturnNotOkPropagates) {
  int reached = 0;
  EXPECT_TRUE(Chain(true, &reached).IsIOError());
  EXPECT_EQ(reached, 0);
  EXPECT_TRUE(Chain(false, &reached).ok());
  EXPECT_EQ(reached, 1);
}

Status WithCtx() {
  SLUICE_RETURN_NOT_OK_CTX(FailsWhen(true), "opening table t");
  return Status::OK();
}

TEST(StatusTest, ReturnNotOkCtxAddsContext) {
  EXPECT_EQ(WithCtx().ToString(), "IO error: opening table t: boom");
}

}  // namespace
}  // namespace sluice
