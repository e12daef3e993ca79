#include "sources/nexmark/nexmark_json.h"

#include <charconv>
#include <cstring>
#include <memory>
#include <string_view>

#include "common/json_escape.h"

namespace sluice::nexmark {
namespace {

// Room for the fixed text of the longest line (an auction): keys, punctuation, 5 integers of
// up to 20 characters and 2 timestamps of up to 30, with a wide margin.
constexpr size_t kMaxFixedLineSize = 512;

char* WriteLiteral(std::string_view s, char* p) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

char* WriteInt(int64_t v, char* p) { return std::to_chars(p, p + 24, v).ptr; }

// A JSON string as Python's json.dumps (ensure_ascii=True) writes it.
char* WriteString(std::string_view s, char* p) { return WriteJsonString(s, JsonEscape::kAscii, p); }

void Put2(int v, char* p) {
  p[0] = static_cast<char>('0' + v / 10);
  p[1] = static_cast<char>('0' + v % 10);
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

}  // namespace

char* JsonFormatter::WriteTimestamp(int64_t ms, char* out) {
  const int64_t second = FloorDiv(ms, 1000);
  const auto millis = static_cast<int>(ms - second * 1000);
  if (second != cached_second_) {
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    const int64_t days = FloorDiv(second, 86400);
    const auto sod = static_cast<int>(second - days * 86400);
    const int64_t z = days + 719468;
    const int64_t era = FloorDiv(z, 146097);
    const int64_t doe = z - era * 146097;
    const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const int64_t mp = (5 * doy + 2) / 153;
    const auto day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
    const auto month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
    const int64_t year = yoe + era * 400 + (month <= 2 ? 1 : 0);
    char* p = cached_prefix_;
    if (year >= 0 && year <= 9999) {
      const auto y = static_cast<int>(year);
      Put2(y / 100, p);
      Put2(y % 100, p + 2);
      p += 4;
    } else {  // Python cannot format these; keep the digits rather than garbage.
      p = std::to_chars(p, p + 8, year).ptr;
    }
    *p++ = '-';
    Put2(month, p);
    p += 2;
    *p++ = '-';
    Put2(day, p);
    p += 2;
    *p++ = ' ';
    Put2(sod / 3600, p);
    p += 2;
    *p++ = ':';
    Put2(sod / 60 % 60, p);
    p += 2;
    *p++ = ':';
    Put2(sod % 60, p);
    p += 2;
    *p++ = '.';
    cached_prefix_len_ = static_cast<size_t>(p - cached_prefix_);
    cached_second_ = second;
  }
  std::memcpy(out, cached_prefix_, cached_prefix_len_);
  out += cached_prefix_len_;
  out[0] = static_cast<char>('0' + millis / 100);
  out[1] = static_cast<char>('0' + millis / 10 % 10);
  out[2] = static_cast<char>('0' + millis % 10);
  return out + 3;
}

void JsonFormatter::AppendTimestamp(int64_t ms, std::string* out) {
  char buf[32];
  const char* end = WriteTimestamp(ms, buf);
  out->append(buf, static_cast<size_t>(end - buf));
}

size_t JsonFormatter::MaxLineSize(const NexmarkEvent& event) {
  size_t strings = 0;
  switch (event.kind) {
    case EventKind::kPerson: {
      const Person& p = event.person;
      strings = p.name.size() + p.email_address.size() + p.credit_card.size() + p.city.size() +
                p.state.size() + p.extra.size();
      break;
    }
    case EventKind::kAuction: {
      const Auction& a = event.auction;
      strings = a.item_name.size() + a.description.size() + a.extra.size();
      break;
    }
    case EventKind::kBid: {
      const Bid& b = event.bid;
      strings = b.channel.size() + b.url.size() + b.extra.size();
      break;
    }
  }
  return kMaxFixedLineSize + kMaxJsonEscapedBytesPerByte * strings;
}

char* JsonFormatter::WriteEvent(const NexmarkEvent& event, char* p) {
  switch (event.kind) {
    case EventKind::kPerson: {
      const Person& e = event.person;
      p = WriteLiteral("{\"event_type\":0,\"person\":{\"id\":", p);
      p = WriteInt(e.id, p);
      p = WriteLiteral(",\"name\":", p);
      p = WriteString(e.name, p);
      p = WriteLiteral(",\"emailAddress\":", p);
      p = WriteString(e.email_address, p);
      p = WriteLiteral(",\"creditCard\":", p);
      p = WriteString(e.credit_card, p);
      p = WriteLiteral(",\"city\":", p);
      p = WriteString(e.city, p);
      p = WriteLiteral(",\"state\":", p);
      p = WriteString(e.state, p);
      p = WriteLiteral(",\"dateTime\":\"", p);
      p = WriteTimestamp(e.date_time, p);
      p = WriteLiteral("\",\"extra\":", p);
      p = WriteString(e.extra, p);
      return WriteLiteral("},\"auction\":null,\"bid\":null}\n", p);
    }
    case EventKind::kAuction: {
      const Auction& e = event.auction;
      p = WriteLiteral("{\"event_type\":1,\"person\":null,\"auction\":{\"id\":", p);
      p = WriteInt(e.id, p);
      p = WriteLiteral(",\"itemName\":", p);
      p = WriteString(e.item_name, p);
      p = WriteLiteral(",\"description\":", p);
      p = WriteString(e.description, p);
      p = WriteLiteral(",\"initialBid\":", p);
      p = WriteInt(e.initial_bid, p);
      p = WriteLiteral(",\"reserve\":", p);
      p = WriteInt(e.reserve, p);
      p = WriteLiteral(",\"dateTime\":\"", p);
      p = WriteTimestamp(e.date_time, p);
      p = WriteLiteral("\",\"expires\":\"", p);
      p = WriteTimestamp(e.expires, p);
      p = WriteLiteral("\",\"seller\":", p);
      p = WriteInt(e.seller, p);
      p = WriteLiteral(",\"category\":", p);
      p = WriteInt(e.category, p);
      p = WriteLiteral(",\"extra\":", p);
      p = WriteString(e.extra, p);
      return WriteLiteral("},\"bid\":null}\n", p);
    }
    case EventKind::kBid: {
      const Bid& e = event.bid;
      p = WriteLiteral("{\"event_type\":2,\"person\":null,\"auction\":null,\"bid\":{\"auction\":",
                       p);
      p = WriteInt(e.auction, p);
      p = WriteLiteral(",\"bidder\":", p);
      p = WriteInt(e.bidder, p);
      p = WriteLiteral(",\"price\":", p);
      p = WriteInt(e.price, p);
      p = WriteLiteral(",\"channel\":", p);
      p = WriteString(e.channel, p);
      p = WriteLiteral(",\"url\":", p);
      p = WriteString(e.url, p);
      p = WriteLiteral(",\"dateTime\":\"", p);
      p = WriteTimestamp(e.date_time, p);
      p = WriteLiteral("\",\"extra\":", p);
      p = WriteString(e.extra, p);
      return WriteLiteral("}}\n", p);
    }
  }
  return p;
}

void JsonFormatter::AppendEvent(const NexmarkEvent& event, std::string* out) {
  const size_t old_size = out->size();
  out->resize(old_size + MaxLineSize(event));
  const char* end = WriteEvent(event, out->data() + old_size);
  out->resize(static_cast<size_t>(end - out->data()));
}

Status EmitJson(const NexmarkGenerator& generator, int64_t first_event, int64_t count,
                std::ostream& os) {
  const int64_t max_events = generator.config().max_events;
  if (first_event < 0 || count < 0 ||
      (max_events > 0 && (first_event > max_events || count > max_events - first_event))) {
    return Status::InvalidArgument(
        "nexmark: events [" + std::to_string(first_event) + ", +" + std::to_string(count) +
        ") are outside the generator's range (max_events = " + std::to_string(max_events) + ")");
  }
  // Lines go into one buffer written out whenever the next line might not fit.
  constexpr size_t kBufferSize = size_t{1} << 20;
  const auto buffer = std::make_unique<char[]>(kBufferSize);
  char* const begin = buffer.get();
  char* p = begin;
  JsonFormatter formatter;
  NexmarkEvent event;
  for (int64_t k = first_event; k < first_event + count; ++k) {
    generator.GenerateEvent(k, &event);
    const size_t need = JsonFormatter::MaxLineSize(event);
    if (need > kBufferSize - static_cast<size_t>(p - begin)) {
      os.write(begin, p - begin);
      if (!os) return Status::IOError("nexmark: writing JSON events failed");
      p = begin;
      if (need > kBufferSize) {  // only with enormous configured sizes
        std::string line;
        formatter.AppendEvent(event, &line);
        os.write(line.data(), static_cast<std::streamsize>(line.size()));
        continue;
      }
    }
    p = formatter.WriteEvent(event, p);
  }
  os.write(begin, p - begin);
  os.flush();
  if (!os) return Status::IOError("nexmark: writing JSON events failed");
  return Status::OK();
}

Status EmitJson(const NexmarkConfig& config, int64_t first_event, int64_t count, std::ostream& os) {
  SLUICE_ASSIGN_OR_RETURN(auto generator, NexmarkGenerator::Open(config));
  return EmitJson(*generator, first_event, count, os);
}

}  // namespace sluice::nexmark
