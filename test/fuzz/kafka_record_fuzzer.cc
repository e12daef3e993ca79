// Fuzz target for the Kafka source's decoding of records into rows
// (src/sources/kafka/kafka_source.h, includeHeaders => true): the input describes records (key,
// value and header bytes, NULLs), which are produced to librdkafka's mock cluster and read back
// by one `kafka` source the way the micro-batch loop reads them (LatestOffset from the last end,
// then GetBatch of that range). Every row must carry exactly the bytes of its record: key and
// value, header keys and values, in order, and nothing else may be in the batch. Built by
// `make fuzz` (test/fuzz/CMakeLists.txt), replayed over corpus/kafka_record by `make test`.
//
// Input: records one after another, each
//   flags (bit 0: NULL key, bit 1: the record has headers, and then a NULL key),
//   key length (1 byte) + key, value length (1 byte) + value,
//   with headers: a count (1 byte, at most 4), then per header a key length + key and a value
//   length (255: NULL) + value;
// a record cut short by the end of the input is left out; at most 8 records per input.
//
// A crash, an exception, a failed read, or a row that differs from its record is a bug
// (std::abort). A header key is compared up to its first NUL byte (librdkafka's limit, below).
// Header keys are strings in Kafka's clients (Java decodes their bytes as UTF-8, replacing
// malformed sequences with U+FFFD): a key that is not UTF-8 must read as
// KafkaSource::HeaderKeyText gives it (the JDK's rule, checked against Java in
// kafka_source_test.cc), which must be UTF-8 (a batch holding one once failed, issue 24).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/engine.h"
#include "fs/file_system.h"
#include "fs/test_util.h"
#include "sources/kafka/kafka_source.h"
#include "sources/kafka/test_cluster.h"
#include "sources/source_factory.h"

namespace {

using namespace sluice;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "kafka_record_fuzzer: %s\n", what);
    std::abort();
  }
}

struct Header {
  std::string key;
  std::optional<std::string> value;
};

struct Record {
  std::optional<std::string> key;
  std::string value;
  std::vector<Header> headers;
  bool with_headers = false;
};

std::vector<Record> Decode(std::string_view in) {
  std::vector<Record> out;
  size_t pos = 0;
  auto byte = [&](uint8_t* b) {
    if (pos >= in.size()) return false;
    *b = static_cast<uint8_t>(in[pos++]);
    return true;
  };
  auto bytes = [&](size_t n, std::string* s) {
    if (in.size() - pos < n) return false;
    *s = std::string(in.substr(pos, n));
    pos += n;
    return true;
  };
  while (out.size() < 8) {
    Record r;
    uint8_t flags = 0, len = 0;
    std::string key;
    if (!byte(&flags) || !byte(&len) || !bytes(len, &key) || !byte(&len) || !bytes(len, &r.value))
      break;
    r.with_headers = (flags & 2) != 0;
    if (!(flags & 1) && !r.with_headers) r.key = std::move(key);
    if (r.with_headers) {
      uint8_t count = 0;
      if (!byte(&count)) break;
      bool cut = false;
      for (int h = 0; h < count % 5; ++h) {
        Header hd;
        std::string v;
        if (!byte(&len) || !bytes(len, &hd.key) || !byte(&len)) {
          cut = true;
          break;
        }
        if (len != 255) {
          if (!bytes(len, &v)) {
            cut = true;
            break;
          }
          hd.value = std::move(v);
        }
        r.headers.push_back(std::move(hd));
      }
      if (cut) break;
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::string Hex(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

// Valid UTF-8 as DuckDB requires of VARCHAR: no overlong forms, surrogates or code points above
// U+10FFFF.
bool IsUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c >> 5) == 6) {
      n = 1;
      cp = c & 0x1F;
    } else if ((c >> 4) == 14) {
      n = 2;
      cp = c & 0x0F;
    } else if ((c >> 3) == 30) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (s.size() - i <= n) return false;
    for (size_t k = 1; k <= n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d >> 6) != 2) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    const uint32_t min = n == 1 ? 0x80 : n == 2 ? 0x800 : 0x10000;
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n + 1;
  }
  return true;
}

// What the row of `r` must show through ExpectedRowsSql's columns.
std::string Expected(const Record& r) {
  std::string row = (r.key ? Hex(*r.key) : "NULL") + "|" + Hex(r.value) + "|";
  if (!r.with_headers || r.headers.empty()) return row + "NULL";
  for (size_t i = 0; i < r.headers.size(); ++i) {
    if (i) row += ",";
    // librdkafka hands a consumer the header name as a C string (rd_kafka_header_get_all has no
    // length for it), so a key is cut at its first NUL byte; Java's clients keep it. Found by
    // this target; a limit of librdkafka's API (docs/reliability.md), asked for as it is.
    const std::string_view key =
        std::string_view(r.headers[i].key).substr(0, r.headers[i].key.find('\0'));
    const std::string text = sources::kafka::KafkaSource::HeaderKeyText(key);
    Check(IsUtf8(text), "HeaderKeyText gave bytes that are not UTF-8");
    Check(!IsUtf8(key) || text == key, "HeaderKeyText changed a key that is UTF-8");
    row += Hex(text) + ":" + (r.headers[i].value ? Hex(*r.headers[i].value) : "~");
  }
  return row;
}

struct Fixture {
  fs::ScopedTempDir dir{"sluice-fuzz-kafka"};
  sources::kafka::testing::KafkaTestCluster cluster;
  std::unique_ptr<engine::Engine> engine;
  std::unique_ptr<engine::Connection> conn;
  std::unique_ptr<sources::Source> source;
  std::optional<std::string> end;  // where the last batch ended

  Fixture() {
    cluster.CreateTopic("fuzz", 1);
    auto e = engine::Engine::Open();
    Check(e.ok(), "engine");
    engine = std::move(*e);
    auto c = engine->Connect();
    Check(c.ok(), "connection");
    conn = std::move(*c);
    sources::SourceContext ctx;
    ctx.fs = fs::LocalFileSystem();
    ctx.engine = engine.get();
    ctx.checkpoint_dir = dir.Join("src");
    ctx.options = {{"kafka.bootstrap.servers", cluster.bootstrap()},
                   {"kafkaConsumer.pollTimeoutMs", "20000"},
                   {"kafka.fetch.wait.max.ms", "10"},
                   {"subscribe", "fuzz"},
                   {"startingOffsets", "earliest"},
                   {"includeHeaders", "true"}};
    auto s = sources::CreateSource("kafka", ctx);
    Check(s.ok(), "source");
    source = std::move(*s);
  }
};

Fixture& Shared() {
  static Fixture* f = new Fixture();  // lives until exit (the mock cluster's threads with it)
  return *f;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<Record> records =
      Decode(std::string_view(reinterpret_cast<const char*>(data), size));
  if (records.empty()) return 0;
  Fixture& f = Shared();
  for (const Record& r : records) {
    if (r.with_headers) {
      std::vector<std::pair<std::string, std::optional<std::string>>> headers;
      for (const Header& h : r.headers) headers.emplace_back(h.key, h.value);
      f.cluster.ProduceWithHeaders("fuzz", 0, r.value, headers);
    } else {
      f.cluster.Produce("fuzz", 0, r.key, r.value);
    }
  }
  f.cluster.Flush();
  auto end = f.source->LatestOffset(f.end, sources::ReadLimit{});
  Check(end.ok() && end->has_value(), "LatestOffset failed");
  auto batch = f.source->GetBatch(f.end, **end);
  f.end = **end;
  std::vector<std::string> want;
  for (const Record& r : records) want.push_back(Expected(r));
  if (!batch.ok()) std::fprintf(stderr, "GetBatch: %s\n", batch.status().ToString().c_str());
  Check(batch.ok(), "GetBatch failed");
  Check(batch->num_rows() == static_cast<int64_t>(records.size()), "row count");
  Check(f.conn->RegisterBatch("fuzz_rows", *batch).ok(), "register");
  auto rows = f.conn->Query(
      "SELECT coalesce(hex(key), 'NULL') || '|' || hex(value) || '|' || coalesce(array_to_string("
      "list_transform(headers, h -> hex(h.key) || ':' || coalesce(hex(h.value), '~')), ','), "
      "'NULL') FROM fuzz_rows");
  Check(f.conn->UnregisterBatch("fuzz_rows").ok(), "unregister");
  Check(rows.ok(), "rendering the rows");
  Check(rows->num_rows() == static_cast<int64_t>(want.size()), "rendered row count");
  for (int64_t i = 0; i < rows->num_rows(); ++i) {
    const std::string got = rows->GetString(i, 0).value_or("<null>");
    if (got != want[static_cast<size_t>(i)]) {
      std::fprintf(stderr, "row %lld: got %s want %s\n", static_cast<long long>(i), got.c_str(),
                   want[static_cast<size_t>(i)].c_str());
      Check(false, "a row differs from its record");
    }
  }
  return 0;
}
