#include "common/uuid.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <regex>
#include <set>
#include <string>

namespace sluice {
namespace {

TEST(UuidTest, VersionFourCanonicalLowercaseForm) {
  const std::regex shape("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");
  for (int i = 0; i < 2000; ++i) {
    const std::string id = NewUuidV4();
    ASSERT_TRUE(std::regex_match(id, shape)) << id;
    ASSERT_TRUE(IsCanonicalUuid(id)) << id;
  }
}

TEST(UuidTest, Distinct) {
  std::set<std::string> seen;
  for (int i = 0; i < 100000; ++i) ASSERT_TRUE(seen.insert(NewUuidV4()).second);
}

TEST(UuidTest, ForkedChildDoesNotRepeatTheParent) {
  NewUuidV4();  // seed this thread's generator in the parent
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const std::string id = NewUuidV4();
    (void)!::write(fds[1], id.data(), id.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  char buf[36];
  ASSERT_EQ(::read(fds[0], buf, sizeof(buf)), 36);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_NE(std::string(buf, 36), NewUuidV4());
}

TEST(UuidTest, CanonicalShapeCheck) {
  EXPECT_TRUE(IsCanonicalUuid("123E4567-E89B-12D3-A456-426614174000"));
  EXPECT_TRUE(IsCanonicalUuid("123e4567-E89B-12d3-a456-426614174000"));
  EXPECT_FALSE(IsCanonicalUuid(""));
  EXPECT_FALSE(IsCanonicalUuid("123e4567e89b12d3a456426614174000"));
  EXPECT_FALSE(IsCanonicalUuid("123e4567-e89b-12d3-a456-42661417400g"));
  EXPECT_FALSE(IsCanonicalUuid("123e4567-e89b-12d3-a456-4266141740001"));
}

}  // namespace
}  // namespace sluice
