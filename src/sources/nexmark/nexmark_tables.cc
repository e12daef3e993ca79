#include "sources/nexmark/nexmark_tables.h"

#include <map>
#include <mutex>

namespace sluice::nexmark {
namespace {

// Java Integer.reverse read as a signed int32.
int32_t BitReverse32(uint32_t x) {
  uint32_t y = 0;
  for (int i = 0; i < 32; ++i) {
    y = (y << 1) | (x & 1);
    x >>= 1;
  }
  return static_cast<int32_t>(y);
}

// baseUrl() of the spec.
std::string BaseUrl(Rng& rng) {
  std::string url = "https://www.nexmark.com/";
  for (int i = 0; i < 3; ++i) {
    AppendNextString(rng, 5, '_', &url);
    url += '/';
  }
  url += "item.htm?query=1";
  return url;
}

}  // namespace

void AppendNextString(Rng& rng, int max, char special, std::string* out) {
  const size_t start = out->size();
  // A local copy: stores through `p` (char) may alias rng's state, which would force a
  // store/reload of the state per draw.
  Rng local = rng;
  const auto len = static_cast<size_t>(3 + local.NextInt(max - 3));
  out->resize(start + len);
  char* p = out->data() + start;
  for (size_t i = 0; i < len; ++i) {
    p[i] = local.NextInt(13) == 0 ? special : static_cast<char>('a' + local.NextInt(26));
  }
  rng = local;
  if (special != ' ') return;
  size_t begin = 0;
  size_t end = len;
  while (begin < end && p[begin] == ' ') ++begin;
  while (end > begin && p[end - 1] == ' ') --end;
  if (begin != 0 || end != len) {
    out->erase(start + end);
    out->erase(start, begin);
  }
}

NexmarkTables::NexmarkTables(uint64_t seed) {
  Rng pool_rng(seed ^ 0x504F4F4CULL);
  pool_.resize(static_cast<size_t>(kPoolSize));
  for (char& c : pool_) c = static_cast<char>('a' + pool_rng.NextInt(26));

  Rng url_rng(seed ^ 0x55524C53ULL);
  for (int i = 0; i < kNumHotChannels; ++i) hot_urls_.push_back(BaseUrl(url_rng));

  channels_.reserve(kNumChannels);
  for (int c = 0; c < kNumChannels; ++c) {
    Rng rng(seed ^ ((0xC0FFEE00ULL + static_cast<uint64_t>(c)) * kGolden));
    std::string url = BaseUrl(rng);
    if (rng.NextInt(10) > 0) {
      const int64_t id = BitReverse32(static_cast<uint32_t>(c));
      url += "&channel_id=";
      url += std::to_string(id < 0 ? -id : id);
    }
    const std::string name = "channel-" + std::to_string(c);
    channels_.push_back(ChannelEntry{static_cast<uint32_t>(channel_data_.size()),
                                     static_cast<uint16_t>(name.size()),
                                     static_cast<uint16_t>(url.size())});
    channel_data_ += name;
    channel_data_ += url;
  }

  for (std::string_view first : kFirstNames) {
    for (std::string_view last : kLastNames) {
      std::string name(first);
      name += ' ';
      name += last;
      person_names_.push_back(std::move(name));
    }
  }
}

std::shared_ptr<const NexmarkTables> NexmarkTables::ForSeed(uint64_t seed) {
  static std::mutex mu;
  static std::map<uint64_t, std::shared_ptr<const NexmarkTables>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto& entry = cache[seed];
  if (entry == nullptr) entry = std::make_shared<const NexmarkTables>(seed);
  return entry;
}

}  // namespace sluice::nexmark
