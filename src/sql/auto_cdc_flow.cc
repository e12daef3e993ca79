#include "sql/auto_cdc_flow.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "common/strings.h"
#include "delta/table.h"
#include "sql/auto_cdc_sink.h"

namespace sluice::sql {
namespace {

// The schema of a Delta table (nullopt when there is no table at `path`).
Result<std::optional<engine::Schema>> DeltaSchemaAt(const std::shared_ptr<fs::FileSystem>& fs,
                                                    engine::Engine* engine,
                                                    const std::string& path) {
  Result<std::unique_ptr<delta::DeltaTable>> table = delta::DeltaTable::Open(fs, engine, path);
  if (table.status().IsNotFound()) return std::optional<engine::Schema>();
  if (!table.ok()) return table.status();
  SLUICE_ASSIGN_OR_RETURN(auto snap, (*table)->Latest());
  return std::optional<engine::Schema>(snap->schema.fields);
}

}  // namespace

Status CheckAutoCdcFlow(const StreamingDefinition& flow,
                        const std::optional<StreamingDefinition>& target,
                        const std::string& target_path, bool target_exists,
                        const std::shared_ptr<fs::FileSystem>& fs, engine::Engine* engine) {
  const AutoCdcSpec& spec = *flow.auto_cdc;
  if (spec.scd_type != 1 && spec.scd_type != 2) {
    return Status::InvalidArgument("no SCD TYPE " + std::to_string(spec.scd_type) +
                                   " (STORED AS SCD TYPE 1 or 2)");
  }
  if (target && target->query) {
    return Status::InvalidArgument(
        "the target " + flow.target +
        " is a streaming table with its own query; an AUTO CDC flow writes a streaming table "
        "defined by its columns only (CREATE STREAMING TABLE " +
        flow.target + " (...)) or a Delta table");
  }
  if (flow.sources.size() != 1) {
    return Status::InvalidArgument("an AUTO CDC flow reads exactly one STREAM source");
  }
  const ResolvedSource& src = flow.sources[0];
  std::optional<engine::Schema> source;
  if (src.format == "delta" || src.format == "delta_cdf") {
    auto path = src.options.find("path");
    if (path != src.options.end()) {
      SLUICE_ASSIGN_OR_RETURN(source, DeltaSchemaAt(fs, engine, path->second));
      if (source && src.format == "delta_cdf") {
        // The change data feed's columns (only their names matter here).
        for (const char* name : {"_change_type", "_commit_version", "_commit_timestamp"}) {
          source->push_back(engine::Field{name, engine::DataType{}});
        }
      }
    }
  }
  if (!source) return Status::OK();  // checked by the first batch
  SLUICE_ASSIGN_OR_RETURN(AutoCdcColumns cols, ResolveAutoCdcColumns(spec, *source, flow.name));
  if (!target_exists) return Status::OK();
  SLUICE_ASSIGN_OR_RETURN(std::optional<engine::Schema> target_schema,
                          DeltaSchemaAt(fs, engine, target_path));
  if (!target_schema) return Status::OK();
  std::vector<std::string> written = cols.selected;
  if (spec.scd_type == 2) {
    written.push_back("__START_AT");
    written.push_back("__END_AT");
  }
  for (const std::string& c : written) {
    bool found = false;
    for (const auto& f : *target_schema) found = found || AsciiLower(f.name) == AsciiLower(c);
    if (!found) {
      std::string names;
      for (const auto& f : *target_schema) names += (names.empty() ? "" : ", ") + f.name;
      return Status::InvalidArgument("the column '" + c +
                                     "' written by the flow is not a column "
                                     "of the target " +
                                     flow.target + " (its columns: " + names + ")" +
                                     (spec.scd_type == 2 && c.starts_with("__")
                                          ? "; SCD type 2 needs __START_AT and __END_AT columns "
                                            "of the sequence column's type"
                                          : "; leave it out with COLUMNS * EXCEPT (...)"));
    }
  }
  return Status::OK();
}

stream::SinkFactory AutoCdcSinkFactory(const StreamingDefinition& flow,
                                       const std::string& target_path,
                                       const std::string& checkpoint) {
  AutoCdcSinkOptions o;
  o.flow = flow.name;
  o.target_path = target_path;
  o.state_path = fs::JoinPath(checkpoint, "auto_cdc_state");
  o.spec = *flow.auto_cdc;
  return [o](const stream::SinkContext& ctx) -> Result<std::shared_ptr<sinks::Sink>> {
    AutoCdcSinkOptions opts = o;
    opts.query_id = ctx.query_id;
    SLUICE_ASSIGN_OR_RETURN(auto sink, AutoCdcSink::Open(ctx.fs, ctx.engine, opts));
    return std::shared_ptr<sinks::Sink>(std::move(sink));
  };
}

}  // namespace sluice::sql
