#include "delta/deletion_vector_writer.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "common/uuid.h"
#include "delta/deletion_vector.h"

namespace sluice::delta {

namespace {

constexpr std::string_view kZ85Alphabet =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
constexpr uint32_t kPortableMagic = 1681511377;
constexpr uint32_t kSerialCookieNoRun = 12346;
constexpr uint32_t kSerialCookie = 12347;
constexpr size_t kNoOffsetThreshold = 4;
constexpr uint64_t kMaxArrayCardinality = 4096;
constexpr size_t kBitmapBytes = 8192;

void PutLe(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

void PutBe32(std::string* out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out->push_back(static_cast<char>((v >> s) & 0xFF));
}

// One container: its 16-bit key and its values as ranges [begin, end) within 0..65536.
struct Container {
  uint16_t key = 0;
  std::vector<std::pair<uint32_t, uint32_t>> runs;
  uint64_t cardinality = 0;

  // RoaringBitmap's choice: array up to 4096 values, else bitmap; run when strictly smaller.
  bool IsRun() const {
    size_t plain = cardinality <= kMaxArrayCardinality ? 2 * cardinality : kBitmapBytes;
    return 2 + 4 * runs.size() < plain;
  }
  std::string Bytes() const {
    std::string out;
    if (IsRun()) {
      PutLe(&out, runs.size(), 2);
      for (const auto& [b, e] : runs) {
        PutLe(&out, b, 2);
        PutLe(&out, e - b - 1, 2);
      }
    } else if (cardinality <= kMaxArrayCardinality) {
      for (const auto& [b, e] : runs) {
        for (uint32_t v = b; v < e; ++v) PutLe(&out, v, 2);
      }
    } else {
      std::vector<uint64_t> words(kBitmapBytes / 8, 0);
      for (const auto& [b, e] : runs) {
        for (uint32_t v = b; v < e; ++v) words[v >> 6] |= uint64_t{1} << (v & 63);
      }
      for (uint64_t w : words) PutLe(&out, w, 8);
    }
    return out;
  }
};

// The 32-bit portable serialization of the containers of one bucket.
std::string EncodeRoaring32(const std::vector<Container>& containers) {
  const size_t size = containers.size();
  bool has_run = false;
  std::vector<std::string> data;
  data.reserve(size);
  for (const Container& c : containers) {
    has_run |= c.IsRun();
    data.push_back(c.Bytes());
  }
  std::string out;
  if (has_run) {
    PutLe(&out, kSerialCookie | (static_cast<uint32_t>(size - 1) << 16), 4);
    std::string flags((size + 7) / 8, '\0');
    for (size_t i = 0; i < size; ++i) {
      if (containers[i].IsRun()) flags[i / 8] = static_cast<char>(flags[i / 8] | (1 << (i % 8)));
    }
    out += flags;
  } else {
    PutLe(&out, kSerialCookieNoRun, 4);
    PutLe(&out, size, 4);
  }
  for (const Container& c : containers) {
    PutLe(&out, c.key, 2);
    PutLe(&out, c.cardinality - 1, 2);
  }
  if (!has_run || size >= kNoOffsetThreshold) {
    size_t offset = out.size() + 4 * size;
    for (const std::string& d : data) {
      PutLe(&out, offset, 4);
      offset += d.size();
    }
  }
  for (const std::string& d : data) out += d;
  return out;
}

}  // namespace

Result<std::string> Z85Encode(std::string_view bytes) {
  if (bytes.size() % 4 != 0) {
    return Status::InvalidArgument("Z85 input of " + std::to_string(bytes.size()) +
                                   " bytes is not a multiple of 4");
  }
  std::string out;
  out.reserve(bytes.size() / 4 * 5);
  for (size_t i = 0; i < bytes.size(); i += 4) {
    uint32_t v = 0;
    for (size_t k = 0; k < 4; ++k) v = (v << 8) | static_cast<unsigned char>(bytes[i + k]);
    char group[5];
    for (int k = 4; k >= 0; --k) {
      group[k] = kZ85Alphabet[v % 85];
      v /= 85;
    }
    out.append(group, 5);
  }
  return out;
}

Result<std::string> EncodeRoaring64(const RowIndexSet& rows) {
  // Split the ranges into buckets (upper 32 bits) and containers (next 16 bits).
  std::vector<std::pair<uint32_t, std::vector<Container>>> buckets;
  for (const RowRange& r : rows.ranges) {
    if (r.end > (uint64_t{1} << 63)) {
      return Status::InvalidArgument("deletion vector row index " + std::to_string(r.end - 1) +
                                     " is not below 2^63");
    }
    uint64_t pos = r.begin;
    while (pos < r.end) {
      const uint64_t container_end = std::min(r.end, (pos | 0xFFFF) + 1);
      const auto high = static_cast<uint32_t>(pos >> 32);
      const auto key = static_cast<uint16_t>((pos >> 16) & 0xFFFF);
      if (buckets.empty() || buckets.back().first != high) buckets.push_back({high, {}});
      std::vector<Container>& cs = buckets.back().second;
      if (cs.empty() || cs.back().key != key) cs.push_back(Container{key, {}, 0});
      const auto b = static_cast<uint32_t>(pos & 0xFFFF);
      const auto e = static_cast<uint32_t>(container_end - (pos & ~uint64_t{0xFFFF}));
      cs.back().runs.emplace_back(b, e);
      cs.back().cardinality += e - b;
      pos = container_end;
    }
  }
  std::string out;
  PutLe(&out, buckets.size(), 8);
  for (const auto& [high, containers] : buckets) {
    PutLe(&out, high, 4);
    out += EncodeRoaring32(containers);
  }
  return out;
}

Result<std::string> EncodeDeletionVectorBitmap(const RowIndexSet& rows) {
  std::string out;
  PutLe(&out, kPortableMagic, 4);
  SLUICE_ASSIGN_OR_RETURN(std::string bitmap, EncodeRoaring64(rows));
  return out + bitmap;
}

DeletionVectorFileWriter::DeletionVectorFileWriter(fs::FileSystem* fs, std::string table_root)
    : fs_(fs) {
  const std::string uuid = NewUuidV4();
  path_ = fs::JoinPath(table_root, "deletion_vector_" + uuid + ".bin");
  std::string raw;
  for (size_t i = 0; i + 1 < uuid.size(); ++i) {
    if (uuid[i] == '-') continue;
    raw.push_back(static_cast<char>(std::stoi(uuid.substr(i, 2), nullptr, 16)));
    ++i;
  }
  z85_uuid_ = Z85Encode(raw).ValueOr("");  // 16 bytes: always a multiple of 4
  bytes_.push_back('\x01');                // format version
}

Result<DeletionVector> DeletionVectorFileWriter::Add(const RowIndexSet& rows) {
  if (rows.ranges.empty()) return Status::InvalidArgument("an empty deletion vector");
  SLUICE_ASSIGN_OR_RETURN(std::string bitmap, EncodeDeletionVectorBitmap(rows));
  if (bytes_.size() + bitmap.size() + 8 >
      static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return Status::InvalidArgument("deletion vector file " + path_ +
                                   " would exceed 2 GiB (offsets are 32-bit)");
  }
  DeletionVector dv;
  dv.storage_type = "u";
  dv.path_or_inline_dv = z85_uuid_;
  dv.offset = static_cast<int32_t>(bytes_.size());
  dv.size_in_bytes = static_cast<int32_t>(bitmap.size());
  dv.cardinality = static_cast<int64_t>(rows.Cardinality());
  PutBe32(&bytes_, static_cast<uint32_t>(bitmap.size()));
  bytes_ += bitmap;
  PutBe32(&bytes_, Crc32(bitmap));
  ++count_;
  return dv;
}

Status DeletionVectorFileWriter::Write(bool sync) {
  fs::WriteOptions options;
  options.sync = sync;
  return fs_->CreateIfAbsent(path_, bytes_, options)
      .WithContext("writing deletion vector file " + path_);
}

}  // namespace sluice::delta
