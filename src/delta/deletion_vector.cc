#include "delta/deletion_vector.h"

#include <array>
#include <string>

#include "delta/paths.h"

namespace sluice::delta {

namespace {

constexpr std::string_view kZ85Alphabet =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
constexpr uint32_t kPortableMagic = 1681511377;
constexpr uint32_t kNativeMagic = 1681511376;
constexpr size_t kUuidZ85Length = 20;

uint32_t ReadBe32(std::string_view b, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(b[at + i]);
  return v;
}

std::string Hex(std::string_view bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (char c : bytes) {
    unsigned char u = static_cast<unsigned char>(c);
    out += kDigits[u >> 4];
    out += kDigits[u & 15];
  }
  return out;
}

}  // namespace

Result<std::string> Z85Decode(std::string_view text) {
  static const std::array<int, 256> kValue = [] {
    std::array<int, 256> t{};
    t.fill(-1);
    for (size_t i = 0; i < kZ85Alphabet.size(); ++i) {
      t[static_cast<unsigned char>(kZ85Alphabet[i])] = static_cast<int>(i);
    }
    return t;
  }();
  if (text.size() % 5 != 0) {
    return Status::Corruption("Z85 text of length " + std::to_string(text.size()) +
                              " is not a multiple of 5");
  }
  std::string out;
  out.reserve(text.size() / 5 * 4);
  for (size_t i = 0; i < text.size(); i += 5) {
    uint64_t v = 0;
    for (size_t k = 0; k < 5; ++k) {
      int d = kValue[static_cast<unsigned char>(text[i + k])];
      if (d < 0) {
        return Status::Corruption("Z85 text has a character outside the alphabet at position " +
                                  std::to_string(i + k));
      }
      v = v * 85 + static_cast<uint64_t>(d);
    }
    if (v > 0xFFFFFFFFull) {
      return Status::Corruption("Z85 group at position " + std::to_string(i) + " exceeds 32 bits");
    }
    for (int s = 24; s >= 0; s -= 8) out += static_cast<char>((v >> s) & 0xFF);
  }
  return out;
}

uint32_t Crc32(std::string_view data) {
  static const std::array<uint32_t, 256> kTable = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t crc = 0xFFFFFFFFu;
  for (char ch : data) crc = kTable[(crc ^ static_cast<unsigned char>(ch)) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

Result<std::string> DeletionVectorFilePath(const std::string& table_root,
                                           const DeletionVector& dv) {
  if (dv.storage_type == "p") return ResolveLogPath(table_root, dv.path_or_inline_dv);
  if (dv.storage_type == "i") {
    return Status::InvalidArgument("an inline deletion vector has no file");
  }
  if (dv.storage_type != "u") {
    return Status::Corruption("unknown deletion vector storageType '" + dv.storage_type +
                              "' (expected u, i or p)");
  }
  const std::string& v = dv.path_or_inline_dv;
  if (v.size() < kUuidZ85Length) {
    return Status::Corruption("deletion vector pathOrInlineDv '" + v +
                              "' is shorter than a Z85-encoded UUID (20 characters)");
  }
  std::string prefix = v.substr(0, v.size() - kUuidZ85Length);
  auto uuid = Z85Decode(std::string_view(v).substr(v.size() - kUuidZ85Length));
  if (!uuid.ok()) {
    return uuid.status().WithContext("the UUID of deletion vector pathOrInlineDv '" + v + "'");
  }
  std::string h = Hex(*uuid);
  std::string canonical = h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" +
                          h.substr(16, 4) + "-" + h.substr(20);
  std::string root = table_root;
  if (!root.empty() && root.back() != '/') root += '/';
  return root + (prefix.empty() ? "" : prefix + "/") + "deletion_vector_" + canonical + ".bin";
}

namespace {

uint32_t ReadLe32(std::string_view b, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i)
    v |= static_cast<uint32_t>(static_cast<unsigned char>(b[at + i])) << (8 * i);
  return v;
}

// Delta's "native" RoaringBitmapArray format (magic 1681511376): a u32 count of bitmaps, then
// per bitmap a u32 size and a 32-bit roaring bitmap whose key is its index. Delta writes it
// little endian; the protocol's inline example frames it big endian (the bitmaps themselves are
// little endian in both), so the magic number's byte order gives the framing's.
Result<RowIndexSet> DecodeNative(std::string_view bytes, bool big_endian) {
  auto u32 = [&](size_t at) { return big_endian ? ReadBe32(bytes, at) : ReadLe32(bytes, at); };
  if (bytes.size() < 8) {
    return Status::Corruption("native deletion vector of " + std::to_string(bytes.size()) +
                              " bytes has no bitmap count");
  }
  uint32_t count = u32(4);
  size_t pos = 8;
  RowIndexSet out;
  for (uint32_t key = 0; key < count; ++key) {
    if (bytes.size() - pos < 4) {
      return Status::Corruption("native deletion vector truncated at byte " + std::to_string(pos) +
                                ": bitmap " + std::to_string(key) + " of " + std::to_string(count) +
                                " has no size");
    }
    uint32_t size = u32(pos);
    pos += 4;
    if (bytes.size() - pos < size) {
      return Status::Corruption("native deletion vector truncated at byte " + std::to_string(pos) +
                                ": bitmap " + std::to_string(key) + " needs " +
                                std::to_string(size) + " bytes");
    }
    size_t consumed = 0;
    SLUICE_RETURN_NOT_OK(DecodeRoaring32(bytes.substr(pos, size), key, pos, &out, &consumed));
    if (consumed != size) {
      return Status::Corruption("native deletion vector corrupt at byte " + std::to_string(pos) +
                                ": bitmap " + std::to_string(key) + " is " +
                                std::to_string(consumed) + " bytes, its size says " +
                                std::to_string(size));
    }
    pos += size;
  }
  if (pos != bytes.size()) {
    return Status::Corruption("native deletion vector corrupt at byte " + std::to_string(pos) +
                              ": " + std::to_string(bytes.size() - pos) +
                              " bytes after the last bitmap");
  }
  return out;
}

}  // namespace

Result<RowIndexSet> DecodeDeletionVectorBitmap(std::string_view bytes) {
  if (bytes.size() < 4) {
    return Status::Corruption("deletion vector of " + std::to_string(bytes.size()) +
                              " bytes has no magic number");
  }
  uint32_t magic = ReadLe32(bytes, 0);
  if (magic == kNativeMagic || ReadBe32(bytes, 0) == kNativeMagic) {
    return DecodeNative(bytes, magic != kNativeMagic);
  }
  if (magic != kPortableMagic) {
    return Status::Corruption("deletion vector magic number " + std::to_string(magic) +
                              " is neither 1681511377 (the portable RoaringBitmapArray format) "
                              "nor 1681511376 (the native one)");
  }
  auto set = DecodeRoaring64(bytes.substr(4));
  if (!set.ok()) return set.status().WithContext("after the 4-byte magic number");
  return set;
}

Result<RowIndexSet> DeletionVectorLoader::LoadUncached(const DeletionVector& dv) {
  if (dv.storage_type == "i") {
    if (dv.size_in_bytes < 0) return Status::Corruption("negative sizeInBytes");
    SLUICE_ASSIGN_OR_RETURN_CTX(std::string bytes, Z85Decode(dv.path_or_inline_dv),
                                "inline deletion vector");
    if (bytes.size() < static_cast<size_t>(dv.size_in_bytes)) {
      return Status::Corruption("inline deletion vector decodes to " +
                                std::to_string(bytes.size()) + " bytes, sizeInBytes is " +
                                std::to_string(dv.size_in_bytes));
    }
    bytes.resize(static_cast<size_t>(dv.size_in_bytes));
    return DecodeDeletionVectorBitmap(bytes).WithContext("inline deletion vector");
  }
  SLUICE_ASSIGN_OR_RETURN(std::string path, DeletionVectorFilePath(table_root_, dv));
  auto it = files_.find(path);
  if (it == files_.end()) {
    auto contents = fs_->ReadFile(path);
    if (!contents.ok())
      return contents.status().WithContext("reading deletion vector file " + path);
    it = files_.emplace(path, std::move(*contents)).first;
  }
  const std::string& file = it->second;
  int64_t offset = dv.offset.value_or(0);
  std::string where = "deletion vector file " + path + " at offset " + std::to_string(offset);
  if (file.empty() || file[0] != 1) {
    return Status::Corruption(where + ": format version " +
                              (file.empty() ? std::string("missing (empty file)")
                                            : std::to_string(static_cast<unsigned char>(file[0]))) +
                              ", expected 1");
  }
  if (offset < 1 || dv.size_in_bytes < 0 ||
      static_cast<uint64_t>(offset) + 8 + static_cast<uint64_t>(dv.size_in_bytes) > file.size()) {
    return Status::Corruption(where + ": a deletion vector of " + std::to_string(dv.size_in_bytes) +
                              " bytes (with its size and checksum) does not fit in the file's " +
                              std::to_string(file.size()) + " bytes");
  }
  size_t at = static_cast<size_t>(offset);
  uint32_t data_size = ReadBe32(file, at);
  if (data_size != static_cast<uint32_t>(dv.size_in_bytes)) {
    return Status::Corruption(where + ": the file says " + std::to_string(data_size) +
                              " bytes, the log's sizeInBytes " + std::to_string(dv.size_in_bytes));
  }
  std::string_view data = std::string_view(file).substr(at + 4, data_size);
  uint32_t stored = ReadBe32(file, at + 4 + data_size);
  uint32_t actual = Crc32(data);
  if (stored != actual) {
    return Status::Corruption(where + ": checksum mismatch (stored " + std::to_string(stored) +
                              ", computed " + std::to_string(actual) + ")");
  }
  return DecodeDeletionVectorBitmap(data).WithContext(where);
}

Result<std::shared_ptr<const RowIndexSet>> DeletionVectorLoader::Load(
    const DeletionVector& dv, const std::string& data_file) {
  std::string ctx = "deletion vector of " + data_file;
  std::string key = dv.UniqueId();
  auto it = loaded_.find(key);
  if (it == loaded_.end()) {
    auto set = LoadUncached(dv);
    if (!set.ok()) return set.status().WithContext(ctx);
    it = loaded_.emplace(key, std::make_shared<const RowIndexSet>(std::move(*set))).first;
  }
  // Checked on every use: the cardinality is not part of the descriptor's unique id.
  if (it->second->Cardinality() != static_cast<uint64_t>(dv.cardinality)) {
    return Status::Corruption(ctx + ": it holds " + std::to_string(it->second->Cardinality()) +
                              " row indexes, the log's cardinality is " +
                              std::to_string(dv.cardinality));
  }
  return it->second;
}

}  // namespace sluice::delta
