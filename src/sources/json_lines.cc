#include "sources/json_lines.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "engine/batch_builder.h"
#include "fs/file_system.h"

namespace sluice::sources {
namespace {

// Decodes one UTF-8 sequence at s[i]; returns its length (0 when invalid) and the code point.
size_t DecodeUtf8(std::string_view s, size_t i, uint32_t* cp) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  size_t len = b0 < 0x80           ? 1
               : (b0 >> 5) == 0x6  ? 2
               : (b0 >> 4) == 0xE  ? 3
               : (b0 >> 3) == 0x1E ? 4
                                   : 0;
  if (len == 0 || i + len > s.size()) return 0;
  uint32_t v = len == 1 ? b0 : len == 2 ? (b0 & 0x1F) : len == 3 ? (b0 & 0x0F) : (b0 & 0x07);
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b >> 6) != 0x2) return 0;
    v = (v << 6) | (b & 0x3F);
  }
  *cp = v;
  return len;
}

// Unicode category Zs (space separators).
bool IsZs(uint32_t cp) {
  return cp == 0x20 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
         cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

}  // namespace

engine::Schema JsonLinesSchema() {
  return {{"fidx", engine::DataType{engine::TypeId::kBigInt}, true},
          {"ln", engine::DataType{engine::TypeId::kBigInt}, true},
          {"line", engine::DataType{engine::TypeId::kVarchar}, true}};
}

bool IsBlankLine(std::string_view line) {
  size_t i = 0;
  while (i < line.size()) {
    if (line[i] == ' ') {
      ++i;
      continue;
    }
    if (static_cast<unsigned char>(line[i]) < 0x80) return false;
    uint32_t cp = 0;
    size_t n = DecodeUtf8(line, i, &cp);
    if (n == 0 || !IsZs(cp)) return false;
    i += n;
  }
  return true;
}

namespace {

constexpr size_t kChunkBytes = size_t{1} << 20;

// Feeds the bytes `data` of a file to on_line, line by line: `carry` holds a line that spans
// chunks, `ln` counts lines.
template <typename OnLine>
Status FeedChunk(std::string_view data, std::string& carry, int64_t& ln, OnLine& on_line) {
  size_t pos = 0;
  while (pos < data.size()) {
    const void* nl = std::memchr(data.data() + pos, '\n', data.size() - pos);
    if (nl == nullptr) {
      carry.append(data.substr(pos));
      break;
    }
    const size_t end = static_cast<size_t>(static_cast<const char*>(nl) - data.data());
    if (carry.empty()) {
      SLUICE_RETURN_NOT_OK(on_line(data.substr(pos, end - pos), ln++));
    } else {
      carry.append(data.substr(pos, end - pos));
      SLUICE_RETURN_NOT_OK(on_line(std::string_view(carry), ln++));
      carry.clear();
    }
    pos = end + 1;
  }
  return Status::OK();
}

// Calls on_line(line, number) for every '\n'-separated line of `path`, the part after the last
// '\n' included (empty when the file ends with one), reading 1 MiB at a time into one buffer. A
// path with a scheme (s3://) is read whole through its file system (fs::FileSystemForPath;
// other schemes are refused by name there).
template <typename OnLine>
Status ForEachLine(const std::string& path, std::vector<char>& chunk, OnLine&& on_line) {
  std::string carry;  // a line that spans chunks
  int64_t ln = 0;
  if (!fs::PathScheme(path).empty()) {
    SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<fs::FileSystem> store, fs::FileSystemForPath(path));
    SLUICE_ASSIGN_OR_RETURN(std::string bytes, store->ReadFile(path));
    SLUICE_RETURN_NOT_OK(FeedChunk(bytes, carry, ln, on_line));
    return on_line(std::string_view(carry), ln);
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, "opening " + path);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  while (true) {
    ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(errno, "reading " + path);
    }
    if (n == 0) break;
    SLUICE_RETURN_NOT_OK(
        FeedChunk(std::string_view(chunk.data(), static_cast<size_t>(n)), carry, ln, on_line));
  }
  return on_line(std::string_view(carry), ln);
}

}  // namespace

Status ForEachJsonLine(const std::vector<std::string>& paths,
                       const std::function<Status(size_t, int64_t, std::string_view)>& on_line) {
  std::vector<char> chunk(kChunkBytes);
  for (size_t f = 0; f < paths.size(); ++f) {
    SLUICE_RETURN_NOT_OK(
        ForEachLine(paths[f], chunk, [&](std::string_view line, int64_t ln) -> Status {
          if (IsBlankLine(line)) return Status::OK();
          while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
          return on_line(f, ln, line);
        }));
  }
  return Status::OK();
}

Status InvalidUtf8LineError(const std::string& path, int64_t line_number) {
  return Status::InvalidArgument("could not read " + path + " as text: line " +
                                 std::to_string(line_number + 1) + " is not valid UTF-8");
}

Result<engine::Batch> ReadJsonLines(const std::vector<std::string>& paths) {
  engine::BatchBuilder builder(JsonLinesSchema());
  SLUICE_RETURN_NOT_OK(
      ForEachJsonLine(paths, [&](size_t f, int64_t ln, std::string_view line) -> Status {
        SLUICE_RETURN_NOT_OK(builder.AppendInt64(static_cast<int64_t>(f) + 1));
        SLUICE_RETURN_NOT_OK(builder.AppendInt64(ln));
        if (!builder.AppendString(line).ok()) return InvalidUtf8LineError(paths[f], ln);
        return builder.EndRow();
      }));
  return builder.Finish();
}

}  // namespace sluice::sources
