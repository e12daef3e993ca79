#include "sources/source_factory.h"

#include "common/interval.h"
#include "common/strings.h"
#include "sources/delta_cdf_source.h"
#include "sources/delta_source.h"
#include "sources/file_source.h"
#include "sources/kafka/kafka_source.h"
#include "sources/memory_source.h"
#include "sources/nexmark/nexmark_source.h"
#include "sources/rate_source.h"
#include "sources/schema_text.h"
#include "sources/source_options.h"
#include "sources/source_util.h"

namespace sluice::sources {

Result<int64_t> ParseTimestampOption(engine::Connection* conn, const std::string& text,
                                     const std::string& option) {
  auto r = conn->Query("SELECT epoch_ms(CAST(" + QuoteLiteral(text) + " AS TIMESTAMPTZ))");
  if (!r.ok() || r->num_rows() != 1) {
    return Status::InvalidArgument("option '" + option +
                                   "' must be a timestamp such as '2024-01-01 10:00:00', got '" +
                                   text + "'");
  }
  SLUICE_ASSIGN_OR_RETURN(auto v, r->GetInt64(0, 0));
  if (!v) return Status::InvalidArgument("option '" + option + "' must not be NULL");
  return *v;
}

namespace {

Result<std::unique_ptr<Source>> CreateDelta(const SourceContext& ctx) {
  SourceOptions o("delta source", ctx.options);
  SLUICE_RETURN_NOT_OK(
      o.CheckKnown({"path", "startingversion", "startingtimestamp", "maxfilespertrigger",
                    "maxbytespertrigger", "skipchangecommits", "schematrackinglocation",
                    "allowsourcecolumnrename", "allowsourcecolumndrop"}));
  DeltaSourceOptions opts;
  opts.schema_tracking_location = o.Get("schemaTrackingLocation");
  opts.allow_source_column_rename = o.Get("allowSourceColumnRename");
  opts.allow_source_column_drop = o.Get("allowSourceColumnDrop");
  opts.path = o.Get("path").value_or("");
  opts.starting_version = o.Get("startingVersion");
  if (opts.starting_version) *opts.starting_version = AsciiLower(*opts.starting_version);
  if (auto ts = o.Get("startingTimestamp")) {
    if (!ctx.engine) return Status::InvalidArgument("delta source: SourceContext needs an engine");
    SLUICE_ASSIGN_OR_RETURN(auto conn, ctx.engine->Connect());
    SLUICE_ASSIGN_OR_RETURN_CTX(opts.starting_timestamp_ms,
                                ParseTimestampOption(conn.get(), *ts, "startingTimestamp"),
                                "delta source");
  }
  SLUICE_ASSIGN_OR_RETURN(opts.max_files_per_trigger, o.GetInt64("maxFilesPerTrigger", 1));
  SLUICE_ASSIGN_OR_RETURN(opts.max_bytes_per_trigger, o.GetBytes("maxBytesPerTrigger"));
  SLUICE_ASSIGN_OR_RETURN(auto skip, o.GetBool("skipChangeCommits"));
  opts.skip_change_commits = skip.value_or(false);
  SLUICE_ASSIGN_OR_RETURN(auto src, DeltaSource::Open(ctx, std::move(opts)));
  return std::unique_ptr<Source>(std::move(src));
}

Result<std::unique_ptr<Source>> CreateDeltaCdf(const SourceContext& ctx) {
  SourceOptions o("table_changes", ctx.options);
  SLUICE_RETURN_NOT_OK(
      o.CheckKnown({"path", "startingversion", "startingtimestamp", "maxfilespertrigger",
                    "maxbytespertrigger", "readchangefeed"}));
  SLUICE_ASSIGN_OR_RETURN(auto rcf, o.GetBool("readChangeFeed"));
  if (rcf && !*rcf)
    return Status::InvalidArgument(
        "table_changes: option 'readChangeFeed' must be true for delta_cdf");
  DeltaCdfSourceOptions opts;
  opts.path = o.Get("path").value_or("");
  SLUICE_ASSIGN_OR_RETURN(opts.starting_version, o.GetInt64("startingVersion", 0));
  if (auto ts = o.Get("startingTimestamp")) {
    if (!ctx.engine) return Status::InvalidArgument("table_changes: SourceContext needs an engine");
    SLUICE_ASSIGN_OR_RETURN(auto conn, ctx.engine->Connect());
    SLUICE_ASSIGN_OR_RETURN_CTX(opts.starting_timestamp_ms,
                                ParseTimestampOption(conn.get(), *ts, "startingTimestamp"),
                                "table_changes");
  }
  SLUICE_ASSIGN_OR_RETURN(opts.max_files_per_trigger, o.GetInt64("maxFilesPerTrigger", 1));
  SLUICE_ASSIGN_OR_RETURN(opts.max_bytes_per_trigger, o.GetBytes("maxBytesPerTrigger"));
  SLUICE_ASSIGN_OR_RETURN(auto src, DeltaCdfSource::Open(ctx, std::move(opts)));
  return std::unique_ptr<Source>(std::move(src));
}

Result<std::unique_ptr<Source>> CreateFiles(const SourceContext& ctx) {
  // Auto Loader spells its options "cloudFiles.<name>".
  std::map<std::string, std::string> stripped;
  for (const auto& [k, v] : ctx.options) {
    std::string lk = AsciiLower(k);
    stripped[lk.rfind("cloudfiles.", 0) == 0 ? k.substr(11) : k] = v;
  }
  SourceOptions o("read_files", stripped);
  SLUICE_RETURN_NOT_OK(
      o.CheckKnown({"path", "format", "schema", "maxfilespertrigger", "maxbytespertrigger",
                    "recursive", "recursivefilelookup", "schemaevolutionmode", "badrecordspath",
                    "header", "delimiter", "sep", "enforceschema"}));
  FileSourceOptions opts;
  opts.path = o.Get("path").value_or("");
  auto format = o.Get("format");
  if (!format)
    return Status::InvalidArgument(
        "read_files: option 'format' is required (json, csv or parquet)");
  std::string f = AsciiLower(*format);
  if (f == "json")
    opts.format = FileFormat::kJson;
  else if (f == "csv")
    opts.format = FileFormat::kCsv;
  else if (f == "parquet")
    opts.format = FileFormat::kParquet;
  else
    return Status::InvalidArgument(
        "read_files: option 'format' must be json, csv or parquet, got '" + *format + "'");
  opts.schema = o.Get("schema");
  SLUICE_ASSIGN_OR_RETURN(opts.max_files_per_trigger, o.GetInt64("maxFilesPerTrigger", 1));
  SLUICE_ASSIGN_OR_RETURN(opts.max_bytes_per_trigger, o.GetBytes("maxBytesPerTrigger"));
  SLUICE_ASSIGN_OR_RETURN(auto rec, o.GetBool("recursive"));
  SLUICE_ASSIGN_OR_RETURN(auto rec2, o.GetBool("recursiveFileLookup"));
  opts.recursive = rec.value_or(rec2.value_or(false));
  if (auto m = o.Get("schemaEvolutionMode")) {
    std::string lm = AsciiLower(*m);
    if (lm == "addnewcolumns")
      opts.schema_evolution_mode = SchemaEvolutionMode::kAddNewColumns;
    else if (lm == "rescue")
      opts.schema_evolution_mode = SchemaEvolutionMode::kRescue;
    else if (lm == "none")
      opts.schema_evolution_mode = SchemaEvolutionMode::kNone;
    else if (lm == "failonnewcolumns")
      opts.schema_evolution_mode = SchemaEvolutionMode::kFailOnNewColumns;
    else {
      return Status::InvalidArgument(
          "read_files: option 'schemaEvolutionMode' must be addNewColumns, rescue, none or "
          "failOnNewColumns, got '" +
          *m + "'");
    }
  }
  opts.bad_records_path = o.Get("badRecordsPath");
  SLUICE_ASSIGN_OR_RETURN(auto header, o.GetBool("header"));
  opts.csv_header = header.value_or(true);
  SLUICE_ASSIGN_OR_RETURN(auto enforce, o.GetBool("enforceSchema"));
  opts.csv_enforce_schema = enforce.value_or(true);
  if (auto d = o.Get("delimiter").has_value() ? o.Get("delimiter") : o.Get("sep")) {
    if (d->size() != 1)
      return Status::InvalidArgument("read_files: option 'delimiter' must be one character, got '" +
                                     *d + "'");
    opts.csv_delimiter = *d;
  }
  if (opts.format != FileFormat::kCsv &&
      (header || enforce || o.Has("delimiter") || o.Has("sep"))) {
    return Status::InvalidArgument(
        "read_files: options 'header', 'delimiter' and 'enforceSchema' apply to format csv only");
  }
  SLUICE_ASSIGN_OR_RETURN(auto src, FileSource::Open(ctx, std::move(opts)));
  return std::unique_ptr<Source>(std::move(src));
}

Result<std::unique_ptr<Source>> CreateRate(const SourceContext& ctx) {
  SourceOptions o("read_rate", ctx.options);
  SLUICE_RETURN_NOT_OK(o.CheckKnown({"rowspersecond", "numpartitions", "rampuptime"}));
  RateSourceOptions opts;
  SLUICE_ASSIGN_OR_RETURN(auto rps, o.GetInt64("rowsPerSecond", 0));
  SLUICE_ASSIGN_OR_RETURN(auto np, o.GetInt64("numPartitions", 1));
  opts.rows_per_second = rps.value_or(1);
  opts.num_partitions = np.value_or(1);
  if (auto ramp = o.Get("rampUpTime")) {
    // Spark accepts "5s", "1m" and a bare number of seconds; whole seconds.
    auto secs = o.GetInt64("rampUpTime", 0);
    if (secs.ok()) {
      opts.ramp_up_seconds = secs->value_or(0);
    } else {
      auto d = ParseDuration(*ramp);
      if (!d.ok() || d->micros < 0 || d->micros % kMicrosPerSecond != 0) {
        return Status::InvalidArgument(
            "read_rate: option 'rampUpTime' must be a whole number of seconds such as 5 or '5s', "
            "got '" +
            *ramp + "'");
      }
      opts.ramp_up_seconds = d->micros / kMicrosPerSecond;
    }
  }
  SLUICE_ASSIGN_OR_RETURN(auto src, RateSource::Open(ctx, opts));
  return std::unique_ptr<Source>(std::move(src));
}

}  // namespace

Result<std::unique_ptr<Source>> CreateSource(const std::string& format, const SourceContext& ctx) {
  std::string f = AsciiLower(format);
  if (f == "delta") return CreateDelta(ctx);
  if (f == "delta_cdf") return CreateDeltaCdf(ctx);
  if (f == "files" || f == "cloudfiles") return CreateFiles(ctx);
  if (f == "rate") return CreateRate(ctx);
  if (f == "kafka") {
    SLUICE_ASSIGN_OR_RETURN(auto options, kafka::ParseKafkaSourceOptions(ctx.options));
    SLUICE_ASSIGN_OR_RETURN(auto src, kafka::KafkaSource::Open(ctx, std::move(options)));
    return std::unique_ptr<Source>(std::move(src));
  }
  if (f == "nexmark") {
    SLUICE_ASSIGN_OR_RETURN(auto options, ParseNexmarkSourceOptions(ctx));
    SLUICE_ASSIGN_OR_RETURN(auto src, NexmarkSource::Open(ctx, options));
    return std::unique_ptr<Source>(std::move(src));
  }
  if (f == "memory") {
    SourceOptions o("memory source", ctx.options);
    SLUICE_RETURN_NOT_OK(o.CheckKnown({"schema"}));
    auto schema = o.Get("schema");
    if (!schema) return Status::InvalidArgument("memory source: option 'schema' is required");
    if (!ctx.engine) return Status::InvalidArgument("memory source: SourceContext needs an engine");
    SLUICE_ASSIGN_OR_RETURN(auto conn, ctx.engine->Connect());
    SLUICE_ASSIGN_OR_RETURN_CTX(engine::Schema s, ParseSchemaText(conn.get(), *schema, "schema"),
                                "memory source");
    return std::unique_ptr<Source>(std::make_unique<MemorySource>(std::move(s)));
  }
  return Status::InvalidArgument(
      "unknown source format '" + format +
      "' (known formats: delta, delta_cdf, files, cloudFiles, rate, kafka, nexmark, memory)");
}

Result<std::optional<std::string>> DescribeWithoutOpening(
    const std::string& format, const std::map<std::string, std::string>& options) {
  const std::string f = AsciiLower(format);
  if (f == "delta" || f == "delta_cdf") {
    SourceOptions o(f + " source", options);
    const std::string path = o.Get("path").value_or("");
    return std::optional(f == "delta" ? DeltaSource::DescriptionOf(path)
                                      : DeltaCdfSource::DescriptionOf(path));
  }
  if (f == "kafka") {
    SLUICE_ASSIGN_OR_RETURN(auto parsed, kafka::ParseKafkaSourceOptions(options));
    return std::optional(kafka::KafkaSource::DescriptionOf(parsed));
  }
  return std::optional<std::string>();
}

}  // namespace sluice::sources
