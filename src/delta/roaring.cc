#include "delta/roaring.h"

#include <algorithm>
#include <bit>
#include <string>

namespace sluice::delta {

namespace {

constexpr uint32_t kSerialCookieNoRun = 12346;
constexpr uint32_t kSerialCookie = 12347;
constexpr size_t kNoOffsetThreshold = 4;
constexpr uint32_t kMaxArrayCardinality = 4096;
constexpr size_t kBitmapBytes = 8192;

// Little-endian reads over a bounded buffer; every read is checked.
class Reader {
 public:
  Reader(std::string_view bytes, size_t base) : bytes_(bytes), base_(base) {}

  size_t pos() const { return pos_; }
  size_t remaining() const { return bytes_.size() - pos_; }

  Status Need(size_t n, const char* what) const {
    if (remaining() < n) {
      return Status::Corruption("roaring bitmap truncated at byte " + std::to_string(base_ + pos_) +
                                ": " + what + " needs " + std::to_string(n) + " bytes, " +
                                std::to_string(remaining()) + " left");
    }
    return Status::OK();
  }
  uint64_t ReadLe(size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) {
      v |= static_cast<uint64_t>(static_cast<unsigned char>(bytes_[pos_ + i])) << (8 * i);
    }
    pos_ += n;
    return v;
  }
  Result<uint16_t> U16(const char* what) {
    SLUICE_RETURN_NOT_OK(Need(2, what));
    return static_cast<uint16_t>(ReadLe(2));
  }
  Result<uint32_t> U32(const char* what) {
    SLUICE_RETURN_NOT_OK(Need(4, what));
    return static_cast<uint32_t>(ReadLe(4));
  }
  Result<uint64_t> U64(const char* what) {
    SLUICE_RETURN_NOT_OK(Need(8, what));
    return ReadLe(8);
  }
  std::string_view Take(size_t n) {
    std::string_view s = bytes_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  Status Fail(size_t at, const std::string& what) const {
    return Status::Corruption("roaring bitmap corrupt at byte " + std::to_string(base_ + at) +
                              ": " + what);
  }

 private:
  std::string_view bytes_;
  size_t base_;
  size_t pos_ = 0;
};

}  // namespace

uint64_t RowIndexSet::Cardinality() const {
  uint64_t n = 0;
  for (const RowRange& r : ranges) n += r.end - r.begin;
  return n;
}

bool RowIndexSet::Contains(uint64_t index) const {
  size_t lo = 0, hi = ranges.size();
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (ranges[mid].end <= index) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo < ranges.size() && ranges[lo].begin <= index;
}

void RowIndexSet::Append(uint64_t begin, uint64_t end) {
  if (begin >= end) return;
  if (!ranges.empty() && ranges.back().end == begin) {
    ranges.back().end = end;
    return;
  }
  ranges.push_back(RowRange{begin, end});
}

RowIndexSet Difference(const RowIndexSet& a, const RowIndexSet& b) {
  RowIndexSet out;
  size_t j = 0;
  for (const RowRange& r : a.ranges) {
    uint64_t pos = r.begin;
    while (j < b.ranges.size() && b.ranges[j].end <= pos) ++j;
    size_t k = j;
    while (pos < r.end) {
      if (k >= b.ranges.size() || b.ranges[k].begin >= r.end) {
        out.Append(pos, r.end);
        break;
      }
      if (b.ranges[k].begin > pos) out.Append(pos, b.ranges[k].begin);
      pos = std::max(pos, b.ranges[k].end);
      ++k;
    }
  }
  return out;
}

RowIndexSet Union(const RowIndexSet& a, const RowIndexSet& b) {
  RowIndexSet out;
  size_t i = 0, j = 0;
  while (i < a.ranges.size() || j < b.ranges.size()) {
    const bool take_a =
        j >= b.ranges.size() || (i < a.ranges.size() && a.ranges[i].begin <= b.ranges[j].begin);
    const RowRange& r = take_a ? a.ranges[i++] : b.ranges[j++];
    if (!out.ranges.empty() && r.begin <= out.ranges.back().end) {
      out.ranges.back().end = std::max(out.ranges.back().end, r.end);
    } else {
      out.ranges.push_back(r);
    }
  }
  return out;
}

Status DecodeRoaring32(std::string_view bytes, uint64_t high, size_t base_offset, RowIndexSet* out,
                       size_t* consumed) {
  Reader in(bytes, base_offset);
  SLUICE_ASSIGN_OR_RETURN(uint32_t cookie, in.U32("the cookie"));
  bool has_run = false;
  size_t size = 0;
  std::string_view run_flags;
  if ((cookie & 0xFFFF) == kSerialCookie) {
    has_run = true;
    size = (cookie >> 16) + 1;
    SLUICE_RETURN_NOT_OK(in.Need((size + 7) / 8, "the run-container flags"));
    run_flags = in.Take((size + 7) / 8);
  } else if (cookie == kSerialCookieNoRun) {
    SLUICE_ASSIGN_OR_RETURN(uint32_t n, in.U32("the container count"));
    if (n > 65536) return in.Fail(4, "container count " + std::to_string(n) + " exceeds 65536");
    size = n;
  } else {
    return in.Fail(0, "unknown cookie " + std::to_string(cookie) + " (expected 12346 or 12347)");
  }
  struct Header {
    uint16_t key;
    uint32_t cardinality;
  };
  std::vector<Header> headers(size);
  SLUICE_RETURN_NOT_OK(in.Need(size * 4, "the container headers"));
  for (size_t i = 0; i < size; ++i) {
    headers[i].key = static_cast<uint16_t>(in.ReadLe(2));
    headers[i].cardinality = static_cast<uint32_t>(in.ReadLe(2)) + 1;
    if (i > 0 && headers[i].key <= headers[i - 1].key) {
      return in.Fail(in.pos() - 4, "container keys not ascending (" +
                                       std::to_string(headers[i - 1].key) + " then " +
                                       std::to_string(headers[i].key) + ")");
    }
  }
  std::vector<uint32_t> offsets;
  size_t offsets_at = in.pos();
  if (!has_run || size >= kNoOffsetThreshold) {
    SLUICE_RETURN_NOT_OK(in.Need(size * 4, "the container offsets"));
    offsets.resize(size);
    for (size_t i = 0; i < size; ++i) offsets[i] = static_cast<uint32_t>(in.ReadLe(4));
  }
  for (size_t i = 0; i < size; ++i) {
    const Header& h = headers[i];
    size_t at = in.pos();
    if (!offsets.empty() && offsets[i] != at) {
      return in.Fail(offsets_at + 4 * i, "container " + std::to_string(i) + " offset " +
                                             std::to_string(offsets[i]) + " but it starts at " +
                                             std::to_string(at));
    }
    uint64_t key_base = (high << 32) | (static_cast<uint64_t>(h.key) << 16);
    bool is_run = has_run && ((static_cast<unsigned char>(run_flags[i / 8]) >> (i % 8)) & 1);
    if (is_run) {
      SLUICE_ASSIGN_OR_RETURN(uint16_t n_runs, in.U16("a run container's run count"));
      SLUICE_RETURN_NOT_OK(in.Need(size_t{n_runs} * 4, "a run container's runs"));
      uint64_t card = 0;
      int64_t prev_end = -1;  // last value of the previous run
      for (uint16_t r = 0; r < n_runs; ++r) {
        uint32_t start = static_cast<uint32_t>(in.ReadLe(2));
        uint32_t length = static_cast<uint32_t>(in.ReadLe(2));  // values in the run minus one
        if (start + length > 0xFFFF) {
          return in.Fail(in.pos() - 4, "run " + std::to_string(start) + "+" +
                                           std::to_string(length) + " passes 65535");
        }
        if (static_cast<int64_t>(start) <= prev_end) {
          return in.Fail(in.pos() - 4, "runs overlap or are not ascending");
        }
        prev_end = start + length;
        card += length + 1;
        out->Append(key_base + start, key_base + start + length + 1);
      }
      if (card != h.cardinality) {
        return in.Fail(at, "run container " + std::to_string(i) + " holds " + std::to_string(card) +
                               " values, its header says " + std::to_string(h.cardinality));
      }
    } else if (h.cardinality <= kMaxArrayCardinality) {
      SLUICE_RETURN_NOT_OK(in.Need(size_t{h.cardinality} * 2, "an array container"));
      int64_t prev = -1;
      for (uint32_t k = 0; k < h.cardinality; ++k) {
        uint32_t v = static_cast<uint32_t>(in.ReadLe(2));
        if (static_cast<int64_t>(v) <= prev) {
          return in.Fail(in.pos() - 2, "array container values not ascending");
        }
        prev = v;
        out->Append(key_base + v, key_base + v + 1);
      }
    } else {
      SLUICE_RETURN_NOT_OK(in.Need(kBitmapBytes, "a bitmap container"));
      std::string_view words = in.Take(kBitmapBytes);
      uint64_t card = 0;
      for (size_t w = 0; w < kBitmapBytes / 8; ++w) {
        uint64_t word = 0;
        for (size_t b = 0; b < 8; ++b) {
          word |= static_cast<uint64_t>(static_cast<unsigned char>(words[w * 8 + b])) << (8 * b);
        }
        card += static_cast<uint64_t>(std::popcount(word));
        while (word != 0) {
          int bit = std::countr_zero(word);
          uint64_t v = key_base + w * 64 + static_cast<uint64_t>(bit);
          out->Append(v, v + 1);
          word &= word - 1;
        }
      }
      if (card != h.cardinality) {
        return in.Fail(at, "bitmap container " + std::to_string(i) + " has " +
                               std::to_string(card) + " bits set, its header says " +
                               std::to_string(h.cardinality));
      }
    }
  }
  *consumed = in.pos();
  return Status::OK();
}

Result<RowIndexSet> DecodeRoaring64(std::string_view bytes) {
  Reader in(bytes, 0);
  SLUICE_ASSIGN_OR_RETURN(uint64_t buckets, in.U64("the bucket count"));
  // A bucket takes at least 12 bytes (key and an empty 32-bit bitmap's cookie and count).
  if (buckets > in.remaining() / 12) {
    return in.Fail(0, "bucket count " + std::to_string(buckets) + " does not fit in " +
                          std::to_string(bytes.size()) + " bytes");
  }
  RowIndexSet out;
  int64_t prev_key = -1;
  for (uint64_t b = 0; b < buckets; ++b) {
    size_t at = in.pos();
    SLUICE_ASSIGN_OR_RETURN(uint32_t key, in.U32("a bucket key"));
    if (key & 0x80000000u) {
      return in.Fail(at, "bucket key " + std::to_string(key) + " has its top bit set");
    }
    if (static_cast<int64_t>(key) <= prev_key) {
      return in.Fail(at, "bucket keys not ascending (" + std::to_string(prev_key) + " then " +
                             std::to_string(key) + ")");
    }
    prev_key = key;
    size_t consumed = 0;
    SLUICE_RETURN_NOT_OK(DecodeRoaring32(bytes.substr(in.pos()), key, in.pos(), &out, &consumed));
    in.Take(consumed);
  }
  if (in.remaining() != 0) {
    return in.Fail(in.pos(), std::to_string(in.remaining()) + " bytes after the last bucket");
  }
  return out;
}

}  // namespace sluice::delta
