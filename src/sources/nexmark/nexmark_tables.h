// NexmarkTables: the generator's global tables, derived from the seed once (spec §2.7).
//
// The 1 MiB `extra` pool, the 4 hot URLs, the 10 000 channel URLs and names, and the 99 person
// names (FIRST + " " + LAST). Immutable after construction: safe to share between threads.
// Events hold string_views into these tables, valid while the tables live.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sources/nexmark/nexmark_config.h"
#include "sources/nexmark/nexmark_rng.h"

namespace sluice::nexmark {

inline constexpr std::array<std::string_view, 11> kFirstNames = {
    "Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"};
inline constexpr std::array<std::string_view, 9> kLastNames = {
    "Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"};
inline constexpr std::array<std::string_view, 10> kCities = {
    "Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland",
    "Bend",    "Redmond",     "Seattle",       "Kent",  "Cheyenne"};
inline constexpr std::array<std::string_view, 6> kStates = {"AZ", "CA", "ID", "OR", "WA", "WY"};
inline constexpr std::array<std::string_view, kNumHotChannels> kHotChannels = {"Google", "Facebook",
                                                                               "Baidu", "Apple"};

// nextString(max, special) of the spec, appended to *out: 3 + nextInt(max - 3) characters, each
// `special` with probability 1/13 else a lowercase letter; when special is ' ', the appended
// part's leading and trailing spaces are trimmed (the reference's strip(' ')). Requires max > 3.
void AppendNextString(Rng& rng, int max, char special, std::string* out);

// Like AppendNextString into an emptied *out (its capacity is reused).
inline void NextString(Rng& rng, int max, char special, std::string* out) {
  out->clear();
  AppendNextString(rng, max, special, out);
}

class NexmarkTables {
 public:
  // The tables for `seed`, built on first use and cached for the life of the process (one
  // entry per distinct seed, ~1.7 MB each). Thread-safe.
  static std::shared_ptr<const NexmarkTables> ForSeed(uint64_t seed);

  // Builds the tables (tens of milliseconds); prefer ForSeed.
  explicit NexmarkTables(uint64_t seed);

  std::string_view pool() const { return pool_; }
  std::string_view hot_url(int i) const { return hot_urls_[static_cast<size_t>(i)]; }
  std::string_view channel_url(int c) const {
    const ChannelEntry& e = channels_[static_cast<size_t>(c)];
    return {channel_data_.data() + e.offset + e.name_len, e.url_len};
  }
  // "channel-<c>".
  std::string_view channel_name(int c) const {
    const ChannelEntry& e = channels_[static_cast<size_t>(c)];
    return {channel_data_.data() + e.offset, e.name_len};
  }
  std::string_view person_name(int first, int last) const {
    return person_names_[static_cast<size_t>(first * static_cast<int>(kLastNames.size()) + last)];
  }

 private:
  std::string pool_;
  std::vector<std::string> hot_urls_;
  // Channel c's name and URL sit next to each other in channel_data_ (one or two cache lines
  // per random channel pick) behind an 8-byte index entry (the index, 80 KB, stays cached).
  struct ChannelEntry {
    uint32_t offset;
    uint16_t name_len;
    uint16_t url_len;
  };
  std::string channel_data_;
  std::vector<ChannelEntry> channels_;
  std::vector<std::string> person_names_;
};

}  // namespace sluice::nexmark
