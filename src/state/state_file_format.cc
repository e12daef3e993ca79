#include "state/state_file_format.h"

#include <cstring>

#include "common/check.h"
#include "state/crc32c.h"

namespace sluice::state {
namespace {

constexpr char kPut = 'P';
constexpr char kDelete = 'D';
constexpr char kEnd = 'E';

std::string_view MagicFor(StateFileKind kind) {
  return kind == StateFileKind::kChangelog ? "SLCL" : "SLSN";
}
std::string_view KindName(StateFileKind kind) {
  return kind == StateFileKind::kChangelog ? "changelog" : "snapshot";
}

template <typename T>
void AppendLE(std::string* out, T v) {
  char b[sizeof(T)];
  for (size_t i = 0; i < sizeof(T); ++i)
    b[i] = static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xFF);
  out->append(b, sizeof(T));
}

template <typename T>
T LoadLE(const char* p) {
  uint64_t v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return static_cast<T>(v);
}

void AppendCrcOf(std::string* out, size_t record_start) {
  AppendLE<uint32_t>(out, Crc32c(std::string_view(*out).substr(record_start)));
}

Status Corrupt(std::string_view path, const std::string& what) {
  return Status::Corruption(std::string(path) + ": " + what);
}

// Parses the record at `pos`. Sets `rec`, `*size` (total bytes incl. crc) and `*crc_ok`.
// Returns false when the record does not fit in the remaining bytes (a torn tail) or the kind
// byte is unknown (`*unknown_kind`).
struct Parsed {
  char kind = 0;
  StateRecord rec;
  uint64_t end_num_records = 0;
  int64_t end_num_keys = -1;
  size_t size = 0;
  bool fits = false;
  bool known_kind = true;
  bool crc_ok = false;
};

Parsed ParseRecord(std::string_view bytes, size_t pos, bool check_crc) {
  Parsed p;
  const size_t left = bytes.size() - pos;
  const char* b = bytes.data() + pos;
  if (left < 1) return p;
  p.kind = b[0];
  size_t body = 0;  // bytes before the crc
  if (p.kind == kPut) {
    if (left < 9) return p;
    const uint64_t klen = LoadLE<uint32_t>(b + 1);
    const uint64_t vlen = LoadLE<uint32_t>(b + 5);
    body = 9 + klen + vlen;
    if (left < body + 4) return p;
    p.rec.key = std::string_view(b + 9, klen);
    p.rec.value = std::string_view(b + 9 + klen, vlen);
  } else if (p.kind == kDelete) {
    if (left < 5) return p;
    const uint64_t klen = LoadLE<uint32_t>(b + 1);
    body = 5 + klen;
    if (left < body + 4) return p;
    p.rec.is_delete = true;
    p.rec.key = std::string_view(b + 5, klen);
  } else if (p.kind == kEnd) {
    body = 17;
    if (left < body + 4) return p;
    p.end_num_records = LoadLE<uint64_t>(b + 1);
    p.end_num_keys = LoadLE<int64_t>(b + 9);
  } else {
    p.known_kind = false;
    return p;
  }
  p.fits = true;
  p.size = body + 4;
  p.crc_ok = !check_crc || Crc32c(std::string_view(b, body)) == LoadLE<uint32_t>(b + body);
  return p;
}

}  // namespace

StateFileWriter::StateFileWriter(StateFileKind kind, int64_t version)
    : kind_(kind), version_(version) {
  AppendHeader();
}

void StateFileWriter::AppendHeader() {
  buf_.append(MagicFor(kind_));
  buf_.push_back(static_cast<char>(kStateFileFormatVersion));
  buf_.push_back(0);  // flags
  AppendLE<uint16_t>(&buf_, 0);
  AppendLE<int64_t>(&buf_, version_);
  AppendCrcOf(&buf_, 0);
}

void StateFileWriter::Put(std::string_view key, std::string_view value) {
  const size_t start = buf_.size();
  buf_.push_back(kPut);
  AppendLE<uint32_t>(&buf_, static_cast<uint32_t>(key.size()));
  AppendLE<uint32_t>(&buf_, static_cast<uint32_t>(value.size()));
  buf_.append(key);
  buf_.append(value);
  AppendCrcOf(&buf_, start);
  ++num_records_;
}

void StateFileWriter::Delete(std::string_view key) {
  SLUICE_DCHECK(kind_ == StateFileKind::kChangelog);
  const size_t start = buf_.size();
  buf_.push_back(kDelete);
  AppendLE<uint32_t>(&buf_, static_cast<uint32_t>(key.size()));
  buf_.append(key);
  AppendCrcOf(&buf_, start);
  ++num_records_;
}

std::string StateFileWriter::Finish(int64_t num_keys_after) {
  const size_t start = buf_.size();
  buf_.push_back(kEnd);
  AppendLE<uint64_t>(&buf_, static_cast<uint64_t>(num_records_));
  AppendLE<int64_t>(&buf_, num_keys_after);
  AppendCrcOf(&buf_, start);
  std::string out = std::move(buf_);
  buf_.clear();
  Clear();
  return out;
}

void StateFileWriter::Clear() {
  buf_.clear();
  num_records_ = 0;
  AppendHeader();
}

Result<StateFileInfo> ValidateStateFile(std::string_view bytes, std::string_view path,
                                        StateFileKind kind, int64_t version) {
  const std::string kind_name(KindName(kind));
  if (bytes.size() < kStateFileHeaderSize) {
    return Corrupt(path, "torn tail: the file has " + std::to_string(bytes.size()) +
                             " bytes, less than the " + std::to_string(kStateFileHeaderSize) +
                             "-byte header of a state " + kind_name);
  }
  if (bytes.substr(0, 4) != MagicFor(kind)) {
    return Corrupt(path, "not a state " + kind_name + " file (bad magic bytes)");
  }
  if (Crc32c(bytes.substr(0, 16)) != LoadLE<uint32_t>(bytes.data() + 16)) {
    return Corrupt(path, "checksum mismatch in the file header");
  }
  const auto format = static_cast<uint8_t>(bytes[4]);
  if (format != kStateFileFormatVersion) {
    return Status::NotSupported(std::string(path) + ": state file format version " +
                                std::to_string(format) + " is not supported (this build reads " +
                                std::to_string(kStateFileFormatVersion) + ")");
  }
  if (bytes[5] != 0) {
    return Status::NotSupported(std::string(path) + ": unknown state file flags " +
                                std::to_string(static_cast<uint8_t>(bytes[5])));
  }
  StateFileInfo info;
  info.kind = kind;
  info.version = LoadLE<int64_t>(bytes.data() + 8);
  if (info.version != version) {
    return Corrupt(path, "the file holds version " + std::to_string(info.version) +
                             ", its name says " + std::to_string(version));
  }
  size_t pos = kStateFileHeaderSize;
  int64_t index = 0;
  std::string_view prev_key;
  while (true) {
    Parsed p = ParseRecord(bytes, pos, /*check_crc=*/true);
    if (!p.known_kind) {
      return Corrupt(path, "unknown record kind " + std::to_string(static_cast<uint8_t>(p.kind)) +
                               " in record " + std::to_string(index) + " at byte " +
                               std::to_string(pos));
    }
    if (!p.fits) {
      return Corrupt(path, "torn tail: the file ends at byte " + std::to_string(bytes.size()) +
                               " inside record " + std::to_string(index) +
                               " (a complete file ends with an end record)");
    }
    if (!p.crc_ok) {
      return Corrupt(path, "checksum mismatch in record " + std::to_string(index) + " at byte " +
                               std::to_string(pos));
    }
    if (p.kind == kEnd) {
      if (p.end_num_records != static_cast<uint64_t>(index)) {
        return Corrupt(path, "the end record counts " + std::to_string(p.end_num_records) +
                                 " records, the file has " + std::to_string(index));
      }
      info.num_records = index;
      info.num_keys_after = p.end_num_keys;
      pos += p.size;
      break;
    }
    if (kind == StateFileKind::kSnapshot) {
      if (p.rec.is_delete) {
        return Corrupt(path,
                       "a delete record (record " + std::to_string(index) + ") in a snapshot");
      }
      if (index > 0 && !(prev_key < p.rec.key)) {
        return Corrupt(path, "snapshot keys out of order at record " + std::to_string(index));
      }
      prev_key = p.rec.key;
    }
    pos += p.size;
    ++index;
  }
  if (pos != bytes.size()) {
    return Corrupt(path, std::to_string(bytes.size() - pos) + " bytes after the end record");
  }
  return info;
}

Status ForEachStateRecord(std::string_view bytes,
                          const std::function<Status(const StateRecord&)>& fn) {
  if (bytes.size() < kStateFileHeaderSize) return Status::Corruption("state file too short");
  size_t pos = kStateFileHeaderSize;
  while (true) {
    Parsed p = ParseRecord(bytes, pos, /*check_crc=*/false);
    if (!p.fits || !p.known_kind) {
      return Status::Corruption("state file damaged at byte " + std::to_string(pos));
    }
    if (p.kind == kEnd) return Status::OK();
    SLUICE_RETURN_NOT_OK(fn(p.rec));
    pos += p.size;
  }
}

}  // namespace sluice::state
