#include "state/crc32c.h"

#include <gtest/gtest.h>

#include <string>

namespace sluice::state {
namespace {

TEST(Crc32cTest, KnownVectors) {
  EXPECT_EQ(Crc32c(""), 0u);
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(std::string(32, '\xff')), 0x62A8AB43u);
}

TEST(Crc32cTest, IncrementalEqualsWhole) {
  std::string data;
  for (int i = 0; i < 1000; ++i) data.push_back(static_cast<char>(i * 7 + 3));
  for (size_t cut : {0u, 1u, 7u, 8u, 9u, 500u, 999u, 1000u}) {
    EXPECT_EQ(Crc32c(Crc32c(data.substr(0, cut)), data.substr(cut)), Crc32c(data)) << cut;
  }
}

TEST(Crc32cTest, HardwareAndPortableAgree) {
  std::string data;
  uint32_t x = 12345;
  for (int i = 0; i < 4096; ++i) {
    x = x * 1103515245u + 12345u;
    data.push_back(static_cast<char>(x >> 24));
  }
  for (size_t len : {0u, 1u, 7u, 8u, 9u, 15u, 16u, 17u, 29u, 33u, 100u, 4096u}) {
    for (size_t offset : {0u, 1u, 3u}) {
      const std::string_view piece = std::string_view(data).substr(offset, len);
      EXPECT_EQ(Crc32c(piece), internal::Crc32cPortable(0, piece)) << len << "@" << offset;
      EXPECT_EQ(Crc32c(0xDEADBEEFu, piece), internal::Crc32cPortable(0xDEADBEEFu, piece));
    }
  }
  EXPECT_EQ(internal::Crc32cPortable(0, "123456789"), 0xE3069283u);
}

}  // namespace
}  // namespace sluice::state
