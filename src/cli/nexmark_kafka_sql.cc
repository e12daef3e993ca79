#include "cli/nexmark_kafka_sql.h"

#include <algorithm>
#include <regex>

#include "cli/nexmark_kafka_feed.h"
#include "common/strings.h"
#include "sql/literal_rows.h"

namespace sluice::cli {

namespace {

struct KafkaKind {
  const char* placeholder;  // "BID" (in @BID@)
  const char* name;         // "bid": the JSON object, the topic's suffix
  int64_t share;            // events of the kind in every 50 (the generator's default mix)
  const char* schema;       // from_json's schema: the kind's fields except dateTime
  const char* columns;      // the generator source's columns, in its order, over __e
};

const KafkaKind kKafkaKinds[] = {
    {"PERSON", "person", 1,
     "person STRUCT<id: BIGINT, name: STRING, emailAddress: STRING, creditCard: STRING, "
     "city: STRING, state: STRING, extra: STRING>",
     "__e.person.id AS id, __e.person.name AS name, __e.person.emailAddress AS emailAddress, "
     "__e.person.creditCard AS creditCard, __e.person.city AS city, __e.person.state AS state, "
     "dateTime, __e.person.extra AS extra"},
    {"AUCTION", "auction", 3,
     "auction STRUCT<id: BIGINT, itemName: STRING, description: STRING, initialBid: BIGINT, "
     "reserve: BIGINT, expires: TIMESTAMP, seller: BIGINT, category: BIGINT, extra: STRING>",
     "__e.auction.id AS id, __e.auction.itemName AS itemName, "
     "__e.auction.description AS description, __e.auction.initialBid AS initialBid, "
     "__e.auction.reserve AS reserve, dateTime, "
     "CAST(__e.auction.expires AS TIMESTAMPTZ) AS expires, "
     "__e.auction.seller AS seller, __e.auction.category AS category, "
     "__e.auction.extra AS extra"},
    {"BID", "bid", 46,
     "bid STRUCT<auction: BIGINT, bidder: BIGINT, price: BIGINT, channel: STRING, url: STRING, "
     "extra: STRING>",
     "__e.bid.auction AS auction, __e.bid.bidder AS bidder, __e.bid.price AS price, "
     "__e.bid.channel AS channel, __e.bid.url AS url, dateTime, __e.bid.extra AS extra"},
};

// Consumer settings (librdkafka's, through the source's kafka.* options). The source keeps its
// assignment across the batches of a run, but each run (round) starts a new consumer, and a
// (re)assignment waits for the consumer's outstanding fetch. The mock answers a fetch that finds
// no new record only after the full fetch.wait.max.ms (500 ms by default; a real broker answers
// as soon as a record arrives), so with the default a seek at the end of the data stalls up to
// 0.5 s. (Lowering queued.min.messages to cut the prefetch made it worse: a partition whose
// queue is full backs off ~1 s.)
constexpr const char* kConsumerOptions = "'kafka.fetch.wait.max.ms' = '10'";

const KafkaKind* FindKind(const std::string& placeholder) {
  for (const KafkaKind& k : kKafkaKinds) {
    if (placeholder == k.placeholder) return &k;
  }
  return nullptr;
}

}  // namespace

Result<std::string> NexmarkKafkaQueryText(const std::string& text,
                                          const NexmarkKafkaStreams& streams) {
  // STREAM @KIND@ WATERMARK <w> DELAY OF <interval> AS <alias>
  static const std::regex kPhrase(
      R"(STREAM\s+@(BID|PERSON|AUCTION)@\s+WATERMARK\s+(.+?)\s+DELAY\s+OF\s+(INTERVAL\s+\S+\s+[A-Za-z]+)\s+AS\s+([A-Za-z_][A-Za-z_0-9]*))");
  static const std::regex kExprAs(R"(^(.+)\s+AS\s+([A-Za-z_][A-Za-z_0-9]*)$)");
  std::string out;
  auto begin = std::sregex_iterator(text.begin(), text.end(), kPhrase);
  size_t copied = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    const KafkaKind* kind = FindKind(m[1].str());
    const std::string w = m[2].str();
    std::string watermark_expr = "timestamp", watermark_col = "dateTime", inner_extra, outer_extra;
    std::string columns = kind->columns;
    // A time column other than dateTime is parsed as TIMESTAMP and cast to the generator's
    // TIMESTAMPTZ (kKafkaKinds), so its select item is the cast.
    const std::string own_column =
        "CAST(__e." + std::string(kind->name) + "." + w + " AS TIMESTAMPTZ) AS " + w;
    if (w != "dateTime" && columns.find(own_column) != std::string::npos) {
      // Another time column of the kind (q4's auction `expires`): the watermark needs it at the
      // Kafka relation, so it is parsed there (a second, partial parse of the value).
      // (TIMESTAMPTZ spelled out: in a WATERMARK expression the result is TIMESTAMP otherwise.)
      watermark_expr = "CAST(from_json(decode(value), " +
                       QuoteLiteral(std::string(kind->name) + " STRUCT<" + w + ": TIMESTAMP>") +
                       ")." + kind->name + "." + w + " AS TIMESTAMPTZ)";
      watermark_col = w;
      inner_extra = ", timestamp AS dateTime, " + w;
      columns.replace(columns.find(own_column), own_column.size(), w);
    } else if (w != "dateTime") {
      std::smatch e;
      if (!std::regex_match(w, e, kExprAs)) {
        return Status::InvalidArgument("nexmark kafka: the watermark '" + w + "' of @" +
                                       m[1].str() +
                                       "@ is neither a time column of the kind nor "
                                       "'<expression> AS <column>'");
      }
      watermark_expr = e[1].str();
      watermark_col = e[2].str();
      inner_extra = ", timestamp AS dateTime, " + watermark_col;
      outer_extra = ", " + watermark_col;
    } else {
      inner_extra = ", dateTime";
    }
    const int64_t max_offsets = std::max<int64_t>(1, streams.batch_events * kind->share / 50);
    std::string relation =
        "(SELECT " + columns + outer_extra + " FROM (SELECT from_json(decode(value), " +
        QuoteLiteral(kind->schema) + ") AS __e" + inner_extra +
        " FROM STREAM read_kafka(bootstrapServers => " + QuoteLiteral(streams.bootstrap) +
        ", subscribe => " + QuoteLiteral(NexmarkKafkaFeed::Topic(kind->name)) +
        ", startingOffsets => 'earliest', maxOffsetsPerTrigger => " + std::to_string(max_offsets) +
        ") WITH (" + kConsumerOptions + ") WATERMARK " + watermark_expr + " AS " + watermark_col +
        " DELAY OF " + m[3].str() + " AS __k)) AS " + m[4].str();
    out += text.substr(copied, static_cast<size_t>(m.position(0)) - copied);
    out += relation;
    copied = static_cast<size_t>(m.position(0) + m.length(0));
  }
  out += text.substr(copied);
  for (const KafkaKind& k : kKafkaKinds) {
    const std::string placeholder = "@" + std::string(k.placeholder) + "@";
    if (out.find(placeholder) != std::string::npos) {
      return Status::InvalidArgument(
          "nexmark kafka: " + placeholder +
          " is used in a form the Kafka rewrite does not know; it must read 'STREAM " +
          placeholder + " WATERMARK <column or expression AS column> DELAY OF INTERVAL <n> " +
          "<unit> AS <alias>'");
    }
  }
  return out;
}

}  // namespace sluice::cli
