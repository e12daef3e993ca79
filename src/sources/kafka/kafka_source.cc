#include "sources/kafka/kafka_source.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <thread>

#include "common/interval.h"
#include "common/logging.h"
#include "common/redaction.h"
#include "common/strings.h"
#include "engine/batch_builder.h"
#include "sources/source_options.h"

namespace sluice::sources::kafka {

namespace {

std::vector<std::string> SplitTopics(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    std::string t = text.substr(pos, comma - pos);
    t.erase(0, t.find_first_not_of(" \t"));
    t.erase(t.find_last_not_of(" \t") + 1);
    if (!t.empty()) out.push_back(t);
    pos = comma + 1;
  }
  return out;
}

std::string RandomHex() {
  std::random_device rd;
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%08x%08x", rd(), rd());
  return buf;
}

constexpr const char* kInitialOffsetsFile = "0";

// A partition whose latest offset is below where the stream stands: the topic was deleted and
// created again, or the partition's records were deleted.
std::string OffsetChanged(const TopicPartition& tp, int64_t from, int64_t to) {
  return "partition " + tp.ToString() + "'s offset was changed from " + std::to_string(from) +
         " to " + std::to_string(to) + " (was the topic deleted and created again?)";
}

// Some partition of `latest` is below its offset in `from`.
bool AnyBehind(const PartitionOffsets& latest, const PartitionOffsets& from) {
  for (const auto& [tp, high] : latest) {
    if (auto it = from.find(tp); it != from.end() && high < it->second) return true;
  }
  return false;
}

// Some partition of `from` (the stream's offset) is not in `latest`.
bool AnyGone(const PartitionOffsets& latest, const PartitionOffsets& from) {
  for (const auto& [tp, offset] : from) {
    if (!latest.count(tp)) return true;
  }
  return false;
}

}  // namespace

bool IsSecretOption(std::string_view name) { return IsSecretOptionName(name); }

Result<KafkaSourceOptions> ParseKafkaSourceOptions(const std::map<std::string, std::string>& user) {
  SourceOptions o("kafka source", user);
  SLUICE_RETURN_NOT_OK(o.CheckNoDuplicates());
  KafkaSourceOptions out;
  for (const auto& [name, value] : user) {
    std::string lower = AsciiLower(name);
    if (lower.rfind("kafka.", 0) == 0) {
      out.kafka_config[name.substr(6)] = value;
    } else if (lower == "bootstrapservers") {  // read_kafka(bootstrapServers => ...)
      out.kafka_config["bootstrap.servers"] = value;
    } else if (lower != "subscribe" && lower != "subscribepattern" && lower != "assign" &&
               lower != "startingoffsets" && lower != "maxoffsetspertrigger" &&
               lower != "failondataloss" && lower != "groupidprefix" &&
               lower != "kafkaconsumer.polltimeoutms" && lower != "minoffsetspertrigger" &&
               lower != "includeheaders" && lower != "maxtriggerdelay" &&
               lower != "partitionedby") {
      return Status::InvalidArgument(
          "kafka source: unknown option '" + name +
          "' (known: kafka.bootstrap.servers and other kafka.* options, subscribe, "
          "subscribePattern, assign, startingOffsets, maxOffsetsPerTrigger, "
          "minOffsetsPerTrigger, maxTriggerDelay, failOnDataLoss, groupIdPrefix, "
          "includeHeaders, kafkaConsumer.pollTimeoutMs, partitionedBy)");
    }
  }
  if (!out.kafka_config.count("bootstrap.servers")) {
    return Status::InvalidArgument(
        "kafka source: option 'kafka.bootstrap.servers' is required (bootstrapServers in SQL)");
  }
  int strategies = o.Has("subscribe") + o.Has("subscribePattern") + o.Has("assign");
  if (strategies != 1) {
    return Status::InvalidArgument(
        "kafka source: exactly one of the options 'subscribe', 'subscribePattern' and 'assign' "
        "must be given" +
        std::string(strategies == 0 ? "" : ", got " + std::to_string(strategies)));
  }
  if (auto s = o.Get("subscribe")) {
    out.subscribe = SplitTopics(*s);
    if (out.subscribe.empty()) {
      return Status::InvalidArgument("kafka source: option 'subscribe' names no topic");
    }
  }
  if (auto p = o.Get("subscribePattern")) {
    if (p->empty())
      return Status::InvalidArgument("kafka source: option 'subscribePattern' is empty");
    try {
      std::regex check(*p);
    } catch (const std::regex_error& e) {
      return Status::InvalidArgument(
          "kafka source: option 'subscribePattern' is not a valid "
          "regular expression: '" +
          *p + "' (" + e.what() + ")");
    }
    out.subscribe_pattern = *p;
  }
  if (auto a = o.Get("assign")) {
    SLUICE_ASSIGN_OR_RETURN(out.assign, AssignmentFromJson(*a));
  }
  if (auto s = o.Get("startingOffsets")) {
    std::string lower = AsciiLower(*s);
    if (lower == "earliest") {
      out.starting_earliest = true;
    } else if (lower != "latest") {
      SLUICE_ASSIGN_OR_RETURN(out.starting_offsets,
                              OffsetsFromJson(*s, "option 'startingOffsets'", true));
    }
  }
  SLUICE_ASSIGN_OR_RETURN(out.max_offsets_per_trigger, o.GetInt64("maxOffsetsPerTrigger", 1));
  if (auto col = o.Get("partitionedBy")) {
    if (col->empty()) {
      return Status::InvalidArgument("kafka source: option 'partitionedBy' names no column");
    }
    out.partitioned_by = *col;
  }
  SLUICE_ASSIGN_OR_RETURN(out.min_offsets_per_trigger, o.GetInt64("minOffsetsPerTrigger", 1));
  if (auto d = o.Get("maxTriggerDelay")) {
    auto parsed = ParseDuration(*d);
    if (!parsed.ok() || parsed->micros < 0) {
      return Status::InvalidArgument(
          "kafka source: option 'maxTriggerDelay' must be a duration "
          "such as '15m' or '30 seconds', got '" +
          *d + "'");
    }
    out.max_trigger_delay_ms = parsed->micros / 1000;
  }
  if (out.min_offsets_per_trigger && out.max_offsets_per_trigger &&
      *out.min_offsets_per_trigger > *out.max_offsets_per_trigger) {
    return Status::InvalidArgument("kafka source: option 'minOffsetsPerTrigger' (" +
                                   std::to_string(*out.min_offsets_per_trigger) +
                                   ") must not be greater than 'maxOffsetsPerTrigger' (" +
                                   std::to_string(*out.max_offsets_per_trigger) + ")");
  }
  SLUICE_ASSIGN_OR_RETURN(auto fail, o.GetBool("failOnDataLoss"));
  out.fail_on_data_loss = fail.value_or(true);
  if (auto g = o.Get("groupIdPrefix")) out.group_id_prefix = *g;
  SLUICE_ASSIGN_OR_RETURN(auto headers, o.GetBool("includeHeaders"));
  out.include_headers = headers.value_or(false);
  SLUICE_ASSIGN_OR_RETURN(auto poll, o.GetInt64("kafkaConsumer.pollTimeoutMs", 1));
  if (poll) out.poll_timeout_ms = *poll;
  return out;
}

engine::Schema KafkaSource::RowSchema(bool include_headers) {
  using engine::DataType;
  using engine::TypeId;
  engine::Schema schema = {{"key", DataType{TypeId::kBlob}},
                           {"value", DataType{TypeId::kBlob}},
                           {"topic", DataType{TypeId::kVarchar}},
                           {"partition", DataType{TypeId::kInteger}},
                           {"offset", DataType{TypeId::kBigInt}},
                           {"timestamp", DataType{TypeId::kTimestampTz}},
                           {"timestampType", DataType{TypeId::kInteger}}};
  if (include_headers) {
    DataType header{TypeId::kStruct};
    header.children = {{"key", DataType{TypeId::kVarchar}}, {"value", DataType{TypeId::kBlob}}};
    DataType list{TypeId::kList};
    list.children = {{"element", header}};
    schema.push_back({"headers", list});
  }
  return schema;
}

KafkaSource::KafkaSource(const SourceContext& ctx, KafkaSourceOptions options,
                         std::unique_ptr<KafkaClient> client)
    : ctx_(ctx),
      options_(std::move(options)),
      client_(std::move(client)),
      schema_(RowSchema(options_.include_headers)) {
  if (options_.subscribe_pattern) pattern_.emplace(*options_.subscribe_pattern);
  if (ctx_.clock) {
    clock_ = ctx_.clock;
  } else {
    default_clock_ = DefaultClock();
    clock_ = default_clock_.get();
  }
}

Result<std::unique_ptr<KafkaSource>> KafkaSource::Open(const SourceContext& ctx,
                                                       KafkaSourceOptions options) {
  KafkaClientOptions co;
  co.config = options.kafka_config;
  co.group_id = options.group_id_prefix + "-" + RandomHex();
  co.timeout_ms = options.poll_timeout_ms;
  co.read_headers = options.include_headers;
  auto client = KafkaClient::Open(co);
  if (!client.ok()) return client.status().WithContext("kafka source");
  std::unique_ptr<engine::Connection> headers_conn;
  if (options.include_headers) {
    if (!ctx.engine) {
      return Status::InvalidArgument("kafka source: includeHeaders needs an engine in the context");
    }
    SLUICE_ASSIGN_OR_RETURN(headers_conn, ctx.engine->Connect());
  }
  std::unique_ptr<KafkaSource> source(new KafkaSource(ctx, std::move(options), std::move(*client)));
  source->headers_conn_ = std::move(headers_conn);
  return source;
}

std::string KafkaSource::DescriptionOf(const KafkaSourceOptions& options) {
  // Spark: KafkaV2[Subscribe[orders]]; options (and so secrets) never appear here.
  std::string what;
  if (!options.subscribe.empty()) {
    what = "Subscribe[";
    for (size_t i = 0; i < options.subscribe.size(); ++i) {
      what += (i ? "," : "") + options.subscribe[i];
    }
  } else if (options.subscribe_pattern) {
    what = "SubscribePattern[" + *options.subscribe_pattern;
  } else {
    what = "Assign[";
    bool first = true;
    for (const auto& tp : options.assign) {
      what += (first ? "" : ", ") + tp.ToString();
      first = false;
    }
  }
  return "KafkaV2[" + what + "]]";
}

Result<std::set<TopicPartition>> KafkaSource::CurrentPartitions() {
  if (!options_.assign.empty()) return options_.assign;
  SLUICE_ASSIGN_OR_RETURN(auto topics, client_->ListTopics());
  std::set<TopicPartition> out;
  for (const auto& [topic, count] : topics) {
    bool wanted = pattern_ ? std::regex_match(topic, *pattern_)
                           : std::find(options_.subscribe.begin(), options_.subscribe.end(),
                                       topic) != options_.subscribe.end();
    if (!wanted) continue;
    for (int32_t p = 0; p < count; ++p) out.insert(TopicPartition{topic, p});
  }
  return out;
}

Result<PartitionOffsets> KafkaSource::FetchLatest() {
  SLUICE_ASSIGN_OR_RETURN(auto partitions, CurrentPartitions());
  // One batched request; a partition deleted since the metadata was read is left out.
  auto latest = client_->ListOffsets(partitions, KafkaClient::OffsetQuery::kLatest);
  if (!latest.ok()) return latest.status().WithContext(Description());
  last_latest_ = *latest;
  return std::move(*latest);
}

Result<PartitionOffsets> KafkaSource::FetchEarliest(const std::set<TopicPartition>& partitions) {
  auto earliest = client_->ListOffsets(partitions, KafkaClient::OffsetQuery::kEarliest);
  if (!earliest.ok()) return earliest.status().WithContext(Description());
  return std::move(*earliest);
}

Result<int64_t> KafkaSource::EarliestOf(const PartitionOffsets& earliest,
                                        const TopicPartition& tp) const {
  auto it = earliest.find(tp);
  if (it == earliest.end()) {
    return Status::NotFound(Description() + ": Kafka: " + tp.ToString() + " does not exist");
  }
  return it->second;
}

Result<PartitionOffsets> KafkaSource::InitialOffsets(const PartitionOffsets& latest) {
  const std::string path =
      ctx_.checkpoint_dir.empty() ? "" : fs::JoinPath(ctx_.checkpoint_dir, kInitialOffsetsFile);
  auto parse = [&](const std::string& text) -> Result<PartitionOffsets> {
    if (text.rfind("v1\n", 0) != 0) {
      return Status::Corruption("Kafka initial offsets file " + path +
                                " is malformed: it must start with the line v1");
    }
    auto offsets = OffsetsFromJson(text.substr(3), "Kafka initial offsets file " + path, false);
    if (!offsets.ok()) return Status::Corruption(offsets.status().message());
    return *offsets;
  };
  if (!path.empty()) {
    auto text = ctx_.fs->ReadFile(path);
    if (text.ok()) return parse(*text);
    if (!text.status().IsNotFound()) return text.status().WithContext(Description());
  }
  // The earliest offsets that startingOffsets asks for, in one request.
  std::set<TopicPartition> want_earliest;
  for (const auto& [tp, high] : latest) {
    if (options_.starting_offsets) {
      auto it = options_.starting_offsets->find(tp);
      if (it != options_.starting_offsets->end() && it->second == kEarliest) {
        want_earliest.insert(tp);
      }
    } else if (options_.starting_earliest) {
      want_earliest.insert(tp);
    }
  }
  SLUICE_ASSIGN_OR_RETURN(PartitionOffsets earliest, FetchEarliest(want_earliest));
  PartitionOffsets initial;
  for (const auto& [tp, high] : latest) {
    int64_t want = options_.starting_earliest ? kEarliest : kLatest;
    if (options_.starting_offsets) {
      auto it = options_.starting_offsets->find(tp);
      if (it == options_.starting_offsets->end()) {
        // Spark: startingOffsets JSON must name every partition of the subscription.
        return Status::InvalidArgument(Description() +
                                       ": option 'startingOffsets' does not "
                                       "name partition " +
                                       tp.ToString() +
                                       " (it must give an offset, or -2/-1, for every partition)");
      }
      want = it->second;
    }
    if (want == kLatest) {
      initial[tp] = high;
    } else if (want == kEarliest) {
      SLUICE_ASSIGN_OR_RETURN(initial[tp], EarliestOf(earliest, tp));
    } else {
      initial[tp] = want;
    }
  }
  if (options_.starting_offsets) {
    for (const auto& [tp, o] : *options_.starting_offsets) {
      if (!latest.count(tp)) {
        return Status::InvalidArgument(Description() + ": option 'startingOffsets' names " +
                                       tp.ToString() +
                                       ", which is not subscribed or does not exist");
      }
    }
  }
  if (!path.empty()) {
    Status st = ctx_.fs->CreateIfAbsent(path, "v1\n" + OffsetsToJson(initial));
    if (st.IsAlreadyExists()) {
      SLUICE_ASSIGN_OR_RETURN(std::string text, ctx_.fs->ReadFile(path));
      return parse(text);
    }
    SLUICE_RETURN_NOT_OK_CTX(st, Description());
  }
  return initial;
}

Status KafkaSource::ReportDataLoss(const std::string& message) {
  if (options_.fail_on_data_loss) {
    return Status::IOError(
        Description() + ": " + message +
        ". Some data may have been lost because it is no longer available in Kafka. If you want "
        "the query to continue, set the source option 'failOnDataLoss' to 'false'.");
  }
  SLUICE_LOG(kWarning) << Description() << ": " << message
                       << ". Some data may have been lost; continuing (failOnDataLoss=false).";
  return Status::OK();
}

Status KafkaSource::PrepareForAvailableNow() {
  SLUICE_ASSIGN_OR_RETURN(auto latest, FetchLatest());
  available_now_end_ = std::move(latest);
  return Status::OK();
}

Result<std::optional<OffsetJson>> KafkaSource::LatestOffset(const std::optional<OffsetJson>& start,
                                                            const ReadLimit& limit) {
  PartitionOffsets until;
  if (available_now_end_) {
    until = *available_now_end_;
  } else {
    SLUICE_ASSIGN_OR_RETURN(until, FetchLatest());
  }
  PartitionOffsets from;
  if (start) {
    SLUICE_ASSIGN_OR_RETURN(from, OffsetsFromJson(*start, Description() + " offset", false));
    // A latest offset below the stream's offset: as Spark (KAFKA-7703: a broker may answer a
    // stale offset for a moment) the offsets are fetched again, twice, a second apart. Still
    // below, the topic was re-created or emptied: failOnDataLoss=true fails now, before a batch
    // is planned; otherwise the end moves back and GetBatch reads the partition anew.
    // A partition of the stream missing from the answer is asked again the same way: a broker
    // that is shutting down may answer metadata without the topic for a moment, and a batch
    // planned from that answer would read as if the partition were deleted. Still missing, it
    // is gone: failOnDataLoss=true fails here, before the batch is planned, as Spark's
    // latestOffset does; otherwise GetBatch warns and reads the others.
    for (int attempt = 0;
         attempt < 2 && !available_now_end_ && (AnyBehind(until, from) || AnyGone(until, from));
         ++attempt) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      SLUICE_ASSIGN_OR_RETURN(until, FetchLatest());
    }
    if (options_.fail_on_data_loss) {
      for (const auto& [tp, offset] : from) {
        if (!until.count(tp)) return ReportDataLoss("partition " + tp.ToString() + " is gone");
      }
      for (const auto& [tp, high] : until) {
        if (auto it = from.find(tp); it != from.end() && high < it->second) {
          return ReportDataLoss(OffsetChanged(tp, it->second, high));
        }
      }
    }
  } else {
    SLUICE_ASSIGN_OR_RETURN(from, InitialOffsets(until));
  }
  // Where partitions new to the stream start (for the rate limit; one request, and only when
  // there are any). Not answered, RateLimit starts them at 0.
  std::set<TopicPartition> added;
  for (const auto& [tp, end] : until) {
    if (!from.count(tp)) added.insert(tp);
  }
  PartitionOffsets new_starts;
  if (!added.empty()) {
    auto earliest = FetchEarliest(added);
    if (earliest.ok()) new_starts = std::move(*earliest);
  }
  if (options_.min_offsets_per_trigger && !limit.all_available && !available_now_end_ &&
      DelayBatch(from, until)) {
    return start ? *start : OffsetsToJson(from);
  }
  PartitionOffsets end = until;
  if (limit.max_rows && !limit.all_available) {
    end = RateLimit(*limit.max_rows, from, until, new_starts);
  } else if (options_.max_offsets_per_trigger && !limit.all_available) {
    end = RateLimit(*options_.max_offsets_per_trigger, from, until, new_starts);
  }
  // The first batch never ends before its start (startingOffsets JSON past a partition's latest
  // offset waits for the data). Later, a partition behind the stream's offset (a re-created
  // topic, failOnDataLoss=false here) moves back: GetBatch reads it anew and warns.
  if (!start) {
    for (auto& [tp, offset] : end) {
      if (auto it = from.find(tp); it != from.end() && offset < it->second) offset = it->second;
    }
  }
  return OffsetsToJson(end);
}

bool KafkaSource::DelayBatch(const PartitionOffsets& from, const PartitionOffsets& until) {
  const int64_t now = clock_->NowMs();
  if (last_trigger_ms_ == 0) last_trigger_ms_ = now;
  int64_t available = 0;
  for (const auto& [tp, high] : until) {
    auto it = from.find(tp);
    available += std::max<int64_t>(0, high - (it == from.end() ? 0 : it->second));
  }
  if (available < *options_.min_offsets_per_trigger &&
      now - last_trigger_ms_ < options_.max_trigger_delay_ms) {
    return true;
  }
  last_trigger_ms_ = now;
  return false;
}

Result<engine::Batch> KafkaSource::GetBatch(const std::optional<OffsetJson>& start,
                                            const OffsetJson& end_json) {
  SLUICE_ASSIGN_OR_RETURN(PartitionOffsets end,
                          OffsetsFromJson(end_json, Description() + " end offset", false));
  PartitionOffsets from;
  if (start) {
    SLUICE_ASSIGN_OR_RETURN(from, OffsetsFromJson(*start, Description() + " start offset", false));
  } else {
    SLUICE_ASSIGN_OR_RETURN(from, InitialOffsets(end));
  }
  for (const auto& [tp, offset] : from) {
    if (!end.count(tp)) {
      SLUICE_RETURN_NOT_OK(ReportDataLoss("partition " + tp.ToString() + " is gone"));
    }
  }
  // The earliest available offset of every partition the batch reads or starts: one request
  // (the data-loss checks below), none when no partition moved.
  std::set<TopicPartition> asked;
  for (const auto& [tp, until] : end) {
    auto it = from.find(tp);
    if (it == from.end() || it->second != until) asked.insert(tp);
  }
  SLUICE_ASSIGN_OR_RETURN(PartitionOffsets earliest, FetchEarliest(asked));
  std::map<TopicPartition, std::pair<int64_t, int64_t>> ranges;
  for (const auto& [tp, until] : end) {
    int64_t first = 0;
    auto it = from.find(tp);
    if (it != from.end()) {
      first = it->second;
    } else {
      // A new partition: read from its earliest offset; anything else than 0 lost data.
      SLUICE_ASSIGN_OR_RETURN(first, EarliestOf(earliest, tp));
      if (first != 0) {
        SLUICE_RETURN_NOT_OK(ReportDataLoss("added partition " + tp.ToString() + " starts from " +
                                            std::to_string(first) + " instead of 0"));
      }
    }
    if (until < first) {
      // The topic was created again (or emptied) since the stream read up to `first`: what it
      // holds now up to `until` is new data, read from the partition's earliest offset.
      SLUICE_RETURN_NOT_OK(ReportDataLoss(OffsetChanged(tp, first, until)));
      SLUICE_ASSIGN_OR_RETURN(int64_t low, EarliestOf(earliest, tp));
      if (low < until) ranges[tp] = {low, until};
      continue;
    }
    if (until == first) {
      ranges[tp] = {first, first};  // nothing to read; keeps an idle partition assigned
      continue;
    }
    SLUICE_ASSIGN_OR_RETURN(int64_t low, EarliestOf(earliest, tp));
    if (first < low) {
      SLUICE_RETURN_NOT_OK(
          ReportDataLoss("offsets [" + std::to_string(first) + ", " +
                         std::to_string(std::min(until, low)) + ") of " + tp.ToString() +
                         " were deleted (earliest available offset " + std::to_string(low) + ")"));
      first = low;
      if (first >= until) continue;
    }
    ranges[tp] = {first, until};
  }
  // One builder for the batch, filled straight from librdkafka's buffers: the client delivers
  // the records partition by partition, each partition's in offset order.
  if (!builder_) {
    engine::Schema build_schema = RowSchema(false);
    if (options_.include_headers) {
      build_schema.push_back({"headers", engine::DataType{engine::TypeId::kVarchar}});
    }
    builder_ = std::make_unique<engine::BatchBuilder>(std::move(build_schema));
  }
  engine::BatchBuilder& b = *builder_;
  std::string encoded;
  int64_t bytes = 0, records = 0;
  auto append = [&](const KafkaRecord& r) -> Status {
    bytes += static_cast<int64_t>(r.key_len + r.value_len);
    ++records;
    if (r.key) {
      SLUICE_RETURN_NOT_OK(
          b.AppendString(std::string_view(static_cast<const char*>(r.key), r.key_len)));
    } else {
      SLUICE_RETURN_NOT_OK(b.AppendNull());
    }
    if (r.value) {
      SLUICE_RETURN_NOT_OK(
          b.AppendString(std::string_view(static_cast<const char*>(r.value), r.value_len)));
    } else {
      SLUICE_RETURN_NOT_OK(b.AppendNull());
    }
    SLUICE_RETURN_NOT_OK(b.AppendString(r.tp->topic));
    SLUICE_RETURN_NOT_OK(b.AppendInt64(r.tp->partition));
    SLUICE_RETURN_NOT_OK(b.AppendInt64(r.offset));
    if (r.timestamp_ms >= 0) {
      SLUICE_RETURN_NOT_OK(b.AppendTimestampMicros(r.timestamp_ms * 1000));
    } else {
      SLUICE_RETURN_NOT_OK(b.AppendNull());
    }
    SLUICE_RETURN_NOT_OK(b.AppendInt64(r.timestamp_type));
    if (options_.include_headers) {
      if (!r.headers || r.headers->empty()) {
        SLUICE_RETURN_NOT_OK(b.AppendNull());
      } else {
        EncodeHeaders(*r.headers, &encoded);
        SLUICE_RETURN_NOT_OK(b.AppendString(encoded));
      }
    }
    return b.EndRow();
  };
  Status read = client_->ReadRanges(ranges, append);
  if (!read.ok()) {
    builder_.reset();  // drops a partial batch (and a row in progress); the next call makes one
    return read.WithContext(Description());
  }
  if (records > 0) {
    last_batch_bytes_ = bytes;
    last_batch_records_ = records;
  }
  SLUICE_ASSIGN_OR_RETURN(engine::Batch rows, b.Finish());
  if (!options_.include_headers) return rows;
  return DecodeHeaders(rows);
}

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

bool NotContinuation(unsigned char b) { return (b & 0xC0) != 0x80; }

// The JDK's String(byte[], UTF_8) rules (java.lang.String.decodeUTF8_UTF16), checked against
// Java 17 through the Spark peer's JVM: how many bytes a malformed 3- or 4-byte sequence
// replaces, and where a truncated one ends the input.
bool Malformed3(unsigned char b1, unsigned char b2) {
  return (b1 == 0xE0 && (b2 & 0xE0) == 0x80) || NotContinuation(b2);
}
bool Malformed4Second(unsigned char b1, unsigned char b2) {
  return (b1 == 0xF0 && (b2 < 0x90 || b2 > 0xBF)) || (b1 == 0xF4 && (b2 & 0xF0) != 0x80) ||
         NotContinuation(b2);
}

}  // namespace

std::string KafkaSource::HeaderKeyText(std::string_view bytes) {
  const auto* s = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  std::string out;
  out.reserve(n);
  size_t i = 0;
  while (i < n) {
    const unsigned char b1 = s[i];
    if (b1 < 0x80) {
      out.push_back(static_cast<char>(b1));
      i += 1;
    } else if ((b1 & 0xE0) == 0xC0 && b1 >= 0xC2) {  // 2 bytes (C0, C1: overlong, below)
      if (i + 1 >= n) {
        out += kReplacement;
        break;
      }
      if (NotContinuation(s[i + 1])) {
        out += kReplacement;
        i += 1;
      } else {
        out.append(bytes.substr(i, 2));
        i += 2;
      }
    } else if ((b1 & 0xF0) == 0xE0) {  // 3 bytes
      if (i + 2 >= n) {                // truncated
        if (i + 1 < n && Malformed3(b1, s[i + 1])) {
          out += kReplacement;
          i += 1;
          continue;
        }
        out += kReplacement;
        break;
      }
      const unsigned char b2 = s[i + 1], b3 = s[i + 2];
      if (Malformed3(b1, b2) || NotContinuation(b3)) {
        out += kReplacement;
        i += Malformed3(b1, b2) ? 1 : 2;
        continue;
      }
      const uint32_t c = ((b1 & 0x0Fu) << 12) | ((b2 & 0x3Fu) << 6) | (b3 & 0x3Fu);
      if (c >= 0xD800 && c <= 0xDFFF) {
        out += kReplacement;  // an encoded surrogate: one U+FFFD for its three bytes
      } else {
        out.append(bytes.substr(i, 3));
      }
      i += 3;
    } else if ((b1 & 0xF8) == 0xF0) {  // 4 bytes
      if (i + 3 >= n) {                // truncated
        if (b1 > 0xF4 || (i + 1 < n && Malformed4Second(b1, s[i + 1]))) {
          out += kReplacement;
          i += 1;
          continue;
        }
        out += kReplacement;
        i += 2;
        if (i < n && NotContinuation(s[i])) continue;
        break;
      }
      const unsigned char b2 = s[i + 1], b3 = s[i + 2], b4 = s[i + 3];
      const uint32_t c =
          ((b1 & 0x07u) << 18) | ((b2 & 0x3Fu) << 12) | ((b3 & 0x3Fu) << 6) | (b4 & 0x3Fu);
      if (NotContinuation(b2) || NotContinuation(b3) || NotContinuation(b4) || c < 0x10000 ||
          c > 0x10FFFF) {
        out += kReplacement;
        i += (b1 > 0xF4 || Malformed4Second(b1, b2)) ? 1 : NotContinuation(b3) ? 2 : 3;
        continue;
      }
      out.append(bytes.substr(i, 4));
      i += 4;
    } else {  // a continuation byte, C0, C1, F8..FF
      out += kReplacement;
      i += 1;
    }
  }
  return out;
}

void KafkaSource::EncodeHeaders(const std::vector<KafkaHeader>& headers, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  auto hex = [&](const void* data, size_t len) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < len; ++i) {
      out->push_back(kHex[p[i] >> 4]);
      out->push_back(kHex[p[i] & 15]);
    }
  };
  out->clear();
  for (size_t i = 0; i < headers.size(); ++i) {
    if (i) out->push_back(',');
    // As Spark's Kafka source: the key is text (a bad byte once failed every batch's decode).
    const std::string key = HeaderKeyText(headers[i].key);
    hex(key.data(), key.size());
    out->push_back(':');
    if (headers[i].value) {
      hex(headers[i].value, headers[i].value_len);
    } else {
      out->push_back('~');  // a NULL value
    }
  }
}

Result<engine::Batch> KafkaSource::DecodeHeaders(const engine::Batch& rows) {
  // Each header is "<hex key>:<hex value or ~>", joined by ','; decode(unhex(..)) gives the
  // key's text, unhex(..) the value's bytes.
  static constexpr const char* kName = "__sluice_kafka_headers";
  SLUICE_RETURN_NOT_OK(headers_conn_->RegisterBatch(kName, rows));
  auto out = headers_conn_->Query(
      "SELECT key, value, topic, \"partition\", \"offset\", \"timestamp\", timestampType, "
      "CASE WHEN headers IS NULL THEN NULL ELSE list_transform(string_split(headers, ','), "
      "h -> {'key': decode(unhex(split_part(h, ':', 1))), 'value': CASE WHEN "
      "split_part(h, ':', 2) = '~' THEN NULL ELSE unhex(split_part(h, ':', 2)) END}) END "
      "AS headers FROM " +
      std::string(kName));
  Status dropped = headers_conn_->UnregisterBatch(kName);
  if (!out.ok()) return out.status().WithContext(Description() + ": decoding record headers");
  SLUICE_RETURN_NOT_OK(dropped);
  return out;
}

Result<engine::Batch> KafkaSource::ReadBatch(const SourceContext& batch_ctx) {
  SourceContext ctx = batch_ctx;
  ctx.checkpoint_dir.clear();
  std::optional<std::string> ending;
  bool has_starting = false;
  for (auto it = ctx.options.begin(); it != ctx.options.end();) {
    const std::string lower = AsciiLower(it->first);
    if (lower == "maxoffsetspertrigger" || lower == "minoffsetspertrigger" ||
        lower == "maxtriggerdelay") {
      return Status::InvalidArgument("kafka batch read: option '" + it->first +
                                     "' applies to streaming reads only");
    }
    if (lower == "startingoffsets") {
      has_starting = true;
      if (AsciiLower(it->second) == "latest") {
        return Status::InvalidArgument(
            "kafka batch read: startingOffsets can't be latest for a batch read (use earliest "
            "or JSON offsets)");
      }
    }
    if (lower == "endingoffsets") {
      ending = it->second;
      it = ctx.options.erase(it);
      continue;
    }
    ++it;
  }
  if (!has_starting) ctx.options["startingOffsets"] = "earliest";
  SLUICE_ASSIGN_OR_RETURN(KafkaSourceOptions options, ParseKafkaSourceOptions(ctx.options));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<KafkaSource> source, Open(ctx, std::move(options)));
  SLUICE_ASSIGN_OR_RETURN(PartitionOffsets latest, source->FetchLatest());
  SLUICE_ASSIGN_OR_RETURN(PartitionOffsets start, source->InitialOffsets(latest));
  PartitionOffsets end = latest;
  if (ending && AsciiLower(*ending) == "earliest") {
    return Status::InvalidArgument(
        "kafka batch read: endingOffsets can't be earliest for a batch "
        "read (use latest or JSON offsets)");
  }
  if (ending && AsciiLower(*ending) != "latest") {
    SLUICE_ASSIGN_OR_RETURN(PartitionOffsets given,
                            OffsetsFromJson(*ending, "option 'endingOffsets'", true));
    for (const auto& [tp, offset] : given) {
      if (!latest.count(tp)) {
        return Status::InvalidArgument("kafka batch read: option 'endingOffsets' names " +
                                       tp.ToString() +
                                       ", which is not subscribed or does not exist");
      }
      if (offset == kEarliest) {
        return Status::InvalidArgument(
            "kafka batch read: option 'endingOffsets' can't use -2 "
            "(earliest) for " +
            tp.ToString());
      }
    }
    for (auto& [tp, offset] : end) {
      auto it = given.find(tp);
      if (it == given.end()) {
        return Status::InvalidArgument(
            "kafka batch read: option 'endingOffsets' does not name "
            "partition " +
            tp.ToString() + " (it must give an offset, or -1, for every partition)");
      }
      if (it->second == kLatest) continue;
      if (it->second > offset) {
        return Status::InvalidArgument(
            "kafka batch read: the ending offset " + std::to_string(it->second) + " of " +
            tp.ToString() + " is past the partition's latest offset " + std::to_string(offset));
      }
      offset = it->second;
    }
  }
  for (const auto& [tp, offset] : end) {
    auto it = start.find(tp);
    if (it != start.end() && offset < it->second) {
      return Status::InvalidArgument(
          "kafka batch read: the ending offset " + std::to_string(offset) + " of " + tp.ToString() +
          " is before its starting offset " + std::to_string(it->second));
    }
  }
  return source->GetBatch(OffsetsToJson(start), OffsetsToJson(end));
}

std::map<std::string, std::string> KafkaSource::Metrics(
    const std::optional<OffsetJson>& latest) const {
  if (!latest || last_latest_.empty()) return {};
  auto end = OffsetsFromJson(*latest, "offset", false);
  if (!end.ok() || end->empty()) return {};
  int64_t min = INT64_MAX, max = 0;
  double sum = 0;
  int64_t n = 0;
  for (const auto& [tp, high] : last_latest_) {
    auto it = end->find(tp);
    int64_t behind = std::max<int64_t>(0, high - (it == end->end() ? 0 : it->second));
    min = std::min(min, behind);
    max = std::max(max, behind);
    sum += static_cast<double>(behind);
    ++n;
  }
  char avg[32];
  std::snprintf(avg, sizeof(avg), "%.1f", sum / static_cast<double>(n));
  std::map<std::string, std::string> out = {{"avgOffsetsBehindLatest", avg},
                                            {"maxOffsetsBehindLatest", std::to_string(max)},
                                            {"minOffsetsBehindLatest", std::to_string(min)}};
  if (last_batch_records_ > 0) {
    // Offsets behind times the average key + value size of the last batch that read records.
    out["estimatedTotalBytesBehindLatest"] = std::to_string(static_cast<int64_t>(
        sum * static_cast<double>(last_batch_bytes_) / static_cast<double>(last_batch_records_)));
  }
  return out;
}

}  // namespace sluice::sources::kafka
