// Nexmark events in row form (NexmarkEvent) and columnar form (NexmarkBatch).
//
// Times are milliseconds since the Unix epoch (UTC). Row-form string_views point into the
// generator's NexmarkTables (valid while the generator lives); row-form std::strings are reused.
// Batch string columns are views, valid until the batch is cleared or regenerated.
// Neither form is thread-safe; use one object per thread.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::nexmark {

// The JSON event_type: 0 = person, 1 = auction, 2 = bid.
enum class EventKind : uint8_t { kPerson = 0, kAuction = 1, kBid = 2 };

struct Person {
  int64_t id = 0;
  std::string_view name;
  std::string email_address;
  std::string credit_card;  // "dddd dddd dddd dddd"
  std::string_view city;
  std::string_view state;
  int64_t date_time = 0;
  std::string_view extra;
};

struct Auction {
  int64_t id = 0;
  std::string item_name;
  std::string description;
  int64_t initial_bid = 0;  // cents
  int64_t reserve = 0;      // cents
  int64_t date_time = 0;
  int64_t expires = 0;
  int64_t seller = 0;
  int64_t category = 0;
  std::string_view extra;
};

struct Bid {
  int64_t auction = 0;
  int64_t bidder = 0;
  int64_t price = 0;  // cents
  std::string_view channel;
  std::string_view url;
  int64_t date_time = 0;
  std::string_view extra;
};

// One event: `kind` says which of person/auction/bid is filled; the other two hold stale values
// from earlier events (kept so that their capacity is reused).
struct NexmarkEvent {
  EventKind kind = EventKind::kPerson;
  int64_t event_id = 0;      // first_event_id + adjusted event number
  int64_t event_number = 0;  // adjusted event number (the timestamp's argument)
  Person person;
  Auction auction;
  Bid bid;
};

// Owns the bytes of the strings a batch copies (the random strings of people and auctions).
// Memory comes in blocks that never move, so views stay valid until Clear(); Clear() keeps the
// blocks for reuse, so a batch reused in steady state allocates nothing.
class StringArena {
 public:
  StringArena() = default;
  StringArena(const StringArena&) = delete;
  StringArena& operator=(const StringArena&) = delete;
  StringArena(StringArena&&) = default;
  StringArena& operator=(StringArena&&) = default;

  // Copies s; the view of the copy is valid until Clear() or destruction.
  std::string_view Copy(std::string_view s) {
    if (s.size() > remaining_) NextBlock(s.size());
    char* p = cursor_;
    if (!s.empty()) std::memcpy(p, s.data(), s.size());
    cursor_ += s.size();
    remaining_ -= s.size();
    return {p, s.size()};
  }
  // Invalidates every view handed out; keeps the blocks.
  void Clear() {
    next_block_ = 0;
    cursor_ = nullptr;
    remaining_ = 0;
  }

 private:
  static constexpr size_t kBlockSize = size_t{1} << 16;
  struct Block {
    std::unique_ptr<char[]> data;
    size_t size;
  };
  void NextBlock(size_t min_size) {
    while (next_block_ < blocks_.size() && blocks_[next_block_].size < min_size) ++next_block_;
    if (next_block_ == blocks_.size()) {
      const size_t size = min_size > kBlockSize ? min_size : kBlockSize;
      blocks_.push_back(Block{std::make_unique<char[]>(size), size});
    }
    Block& block = blocks_[next_block_++];
    cursor_ = block.data.get();
    remaining_ = block.size;
  }

  std::vector<Block> blocks_;
  size_t next_block_ = 0;
  char* cursor_ = nullptr;
  size_t remaining_ = 0;
};

// A string column as views. Strings from the generator's immutable tables (names, cities,
// states, channels, URLs, every `extra`) are stored as views into the tables without copying
// (the batch keeps the tables alive); generated strings are copied into the batch's arena. The
// engine adapter can hand table strings to DuckDB as external string_t without a copy.
class StringColumn {
 public:
  void Clear() { views_.clear(); }
  // s must stay valid as long as the batch (e.g. it points into the batch's tables).
  void AppendStable(std::string_view s) { views_.push_back(s); }
  // Copies s into `arena` (the batch's).
  void AppendCopy(std::string_view s, StringArena* arena) { views_.push_back(arena->Copy(s)); }

  size_t size() const { return views_.size(); }
  std::string_view operator[](size_t i) const { return views_[i]; }
  const std::vector<std::string_view>& views() const { return views_; }

 private:
  std::vector<std::string_view> views_;
};

struct PersonColumns {
  std::vector<int64_t> event_id;
  std::vector<int64_t> id;
  StringColumn name;
  StringColumn email_address;
  StringColumn credit_card;
  StringColumn city;
  StringColumn state;
  std::vector<int64_t> date_time;
  StringColumn extra;

  size_t size() const { return id.size(); }
  void Clear();
};

struct AuctionColumns {
  std::vector<int64_t> event_id;
  std::vector<int64_t> id;
  StringColumn item_name;
  StringColumn description;
  std::vector<int64_t> initial_bid;
  std::vector<int64_t> reserve;
  std::vector<int64_t> date_time;
  std::vector<int64_t> expires;
  std::vector<int64_t> seller;
  std::vector<int64_t> category;
  StringColumn extra;

  size_t size() const { return id.size(); }
  void Clear();
};

struct BidColumns {
  std::vector<int64_t> event_id;
  std::vector<int64_t> auction;
  std::vector<int64_t> bidder;
  std::vector<int64_t> price;
  StringColumn channel;
  StringColumn url;
  std::vector<int64_t> date_time;
  StringColumn extra;

  size_t size() const { return auction.size(); }
  void Clear();
};

// The events with indexes [first_index, first_index + num_events) of one generator (or, for a
// reader partition, that partition's events [first_index, ...) in its own numbering), split by
// kind. Move-only (string views point into its arena). kinds[j] is the kind of the j-th event; the
// j-th event's row in its kind's columns is the number of earlier events of that kind. Clear()
// keeps all capacity.
struct NexmarkBatch {
  int64_t first_index = 0;
  int64_t num_events = 0;
  std::vector<EventKind> kinds;
  PersonColumns persons;
  AuctionColumns auctions;
  BidColumns bids;
  // Bytes of the copied strings, and what keeps the table strings alive (the generator's
  // tables): every view in the columns is valid until the next Clear() or generation.
  StringArena arena;
  std::shared_ptr<const void> keep_alive;
  // Working space of GenerateBatch (its strings' capacity is reused); not part of the data.
  NexmarkEvent scratch;

  void Clear();
};

inline void PersonColumns::Clear() {
  event_id.clear();
  id.clear();
  name.Clear();
  email_address.Clear();
  credit_card.Clear();
  city.Clear();
  state.Clear();
  date_time.clear();
  extra.Clear();
}

inline void AuctionColumns::Clear() {
  event_id.clear();
  id.clear();
  item_name.Clear();
  description.Clear();
  initial_bid.clear();
  reserve.clear();
  date_time.clear();
  expires.clear();
  seller.clear();
  category.clear();
  extra.Clear();
}

inline void BidColumns::Clear() {
  event_id.clear();
  auction.clear();
  bidder.clear();
  price.clear();
  channel.Clear();
  url.Clear();
  date_time.clear();
  extra.Clear();
}

inline void NexmarkBatch::Clear() {
  first_index = 0;
  num_events = 0;
  kinds.clear();
  persons.Clear();
  auctions.Clear();
  bids.Clear();
  arena.Clear();
}

}  // namespace sluice::nexmark
