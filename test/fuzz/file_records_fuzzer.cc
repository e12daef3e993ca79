// Fuzz target for the files source's record parsing (src/sources/file_source.h): the bytes become
// one file in a watched directory, read by a `read_files` source as the micro-batch loop reads it
// (LatestOffset, then GetBatch) with a fixed schema, so that every path from the file to the rows
// runs: the JSON lines splitter and decoder, DuckDB's CSV reader, the rescue of bad records.
// Built by `make fuzz` (test/fuzz/CMakeLists.txt), replayed over corpus/file_records by
// `make test`.
//
// The first byte picks the reader: '0' JSON, '1' CSV with a header, '2' CSV without one,
// '3' CSV with a header and enforceSchema => false. The rest is the file. A crash, an exception,
// an error that does not name the file, or (JSON) a batch whose row count is not the file's
// number of non-blank lines (the source's contract: bad records are rescued, never dropped) is a
// bug (std::abort).
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>

#include "engine/engine.h"
#include "fs/file_system.h"
#include "sources/json_lines.h"
#include "sources/source_factory.h"

namespace {

using namespace sluice;

void Check(bool ok) {
  if (!ok) std::abort();
}

engine::Engine* SharedEngine() {
  static engine::Engine* engine = [] {
    auto e = engine::Engine::Open();
    Check(e.ok());
    return e.MoveValueUnsafe().release();
  }();
  return engine;
}

// A directory of this process, removed at exit.
const std::string& WorkDir() {
  static const std::string dir = [] {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "sluice-fuzz-files-XXXXXX").string();
    Check(::mkdtemp(tmpl.data()) != nullptr);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(WorkDir(), ec);
    });
    return tmpl;
  }();
  return dir;
}

// The lines the JSON reader keeps (json_lines.h): split on '\n', blank ones skipped.
int64_t NonBlankLines(std::string_view bytes) {
  int64_t n = 0;
  size_t pos = 0;
  while (pos <= bytes.size()) {
    size_t end = bytes.find('\n', pos);
    if (end == std::string_view::npos) end = bytes.size();
    if (!sources::IsBlankLine(bytes.substr(pos, end - pos))) ++n;
    pos = end + 1;
  }
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  const int mode = data[0] % 4;
  const std::string root = WorkDir() + "/run";
  std::error_code ec;
  std::filesystem::remove_all(root, ec);
  std::filesystem::create_directories(root + "/landing");
  const std::string file = root + "/landing/part-0." + (mode == 0 ? "json" : "csv");
  {
    std::ofstream out(file, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    Check(out.good());
  }
  sources::SourceContext ctx;
  ctx.fs = fs::LocalFileSystem();
  ctx.engine = SharedEngine();
  ctx.checkpoint_dir = root + "/checkpoint/sources/0";
  ctx.options = {{"path", root + "/landing"},
                 {"format", mode == 0 ? "json" : "csv"},
                 {"schema", "a BIGINT, b STRING, c DOUBLE, d TIMESTAMP, e BOOLEAN"}};
  if (mode == 2) ctx.options["header"] = "false";
  if (mode == 3) ctx.options["enforceSchema"] = "false";
  auto source = sources::CreateSource("files", ctx);
  Check(source.ok());
  auto end = (*source)->LatestOffset(std::nullopt, sources::ReadLimit{});
  Check(end.ok() && end->has_value());
  auto batch = (*source)->GetBatch(std::nullopt, **end);
  if (!batch.ok()) {
    // A file the reader cannot take (not UTF-8, a CSV header that does not match with
    // enforceSchema => false, ...) fails the batch: the error must say which file.
    Check(batch.status().message().find("part-0.") != std::string::npos);
    return 0;
  }
  if (mode == 0) Check(batch->num_rows() == NonBlankLines(bytes));
  return 0;
}
