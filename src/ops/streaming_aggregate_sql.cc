#include "ops/streaming_aggregate_sql.h"

#include <algorithm>

#include "common/strings.h"
#include "ops/hll_sql.h"
#include "ops/session_window.h"

namespace sluice::ops {
namespace {

bool IsIntegral(engine::TypeId id) {
  using engine::TypeId;
  return id == TypeId::kTinyInt || id == TypeId::kSmallInt || id == TypeId::kInteger ||
         id == TypeId::kBigInt || id == TypeId::kBoolean;
}

}  // namespace

Result<AggregatePartials> AggregatePartialsSql(
    const std::vector<AggregateCall>& calls,
    const std::function<Result<engine::DataType>(const std::string&)>& type_of, bool per_row) {
  AggregatePartials out;
  std::vector<AggregatePartial>& partials = out.partials;
  std::vector<std::string>& finals = out.finals;
  for (size_t j = 0; j < calls.size(); ++j) {
    const AggregateCall& call = calls[j];
    std::string p = "__p" + std::to_string(j);
    std::string x = call.argument.empty() ? "" : QuoteIdentifier(call.argument);
    engine::DataType type;
    if (!x.empty()) {
      SLUICE_ASSIGN_OR_RETURN(type, type_of(call.argument));
    }
    switch (call.function) {
      case AggregateFunction::kCountStar:
        partials.push_back({p, per_row ? "1::BIGINT" : "count(*)", "sum"});
        finals.push_back(QuoteIdentifier(p));
        break;
      case AggregateFunction::kCount:
        partials.push_back(
            {p, per_row ? "(" + x + " IS NOT NULL)::BIGINT" : "count(" + x + ")", "sum"});
        finals.push_back(QuoteIdentifier(p));
        break;
      case AggregateFunction::kSum: {
        std::string v = per_row ? x : "sum(" + x + ")";
        if (IsIntegral(type.id)) v = "CAST(" + v + " AS BIGINT)";
        if (type.id == engine::TypeId::kFloat) v = "CAST(" + v + " AS DOUBLE)";
        partials.push_back({p, v, "sum"});
        finals.push_back(QuoteIdentifier(p));
        break;
      }
      case AggregateFunction::kMin:
      case AggregateFunction::kMax: {
        std::string fn = call.function == AggregateFunction::kMin ? "min" : "max";
        partials.push_back({p, per_row ? x : fn + "(" + x + ")", fn});
        finals.push_back(QuoteIdentifier(p));
        break;
      }
      case AggregateFunction::kAvg:
        if (type.id == engine::TypeId::kDecimal) {
          // Spark's avg of a DECIMAL(p, s): its sum as DECIMAL(p + 10, s) and a count, the mean
          // (a DECIMAL division, Spark's as the engine's `/` is) cast to DECIMAL(p + 4, s + 4),
          // each bounded to 38 digits, as the batch avg (engine/spark_aggregates.h).
          const int p_sum = std::min(38, type.precision + 10);
          const std::string sum_type =
              "DECIMAL(" + std::to_string(p_sum) + ", " + std::to_string(type.scale) + ")";
          const std::string avg_type = "DECIMAL(" +
                                       std::to_string(std::min(38, type.precision + 4)) + ", " +
                                       std::to_string(std::min(38, type.scale + 4)) + ")";
          partials.push_back({p + "_sum",
                              per_row ? "CAST(" + x + " AS " + sum_type + ")"
                                      : "CAST(sum(" + x + ") AS " + sum_type + ")",
                              "sum"});
          partials.push_back({p + "_cnt",
                              per_row ? "(" + x + " IS NOT NULL)::BIGINT" : "count(" + x + ")",
                              "sum"});
          finals.push_back("CASE WHEN " + QuoteIdentifier(p + "_cnt") +
                           " = 0 THEN NULL ELSE CAST(" + QuoteIdentifier(p + "_sum") + " / " +
                           QuoteIdentifier(p + "_cnt") + " AS " + avg_type + ") END");
          break;
        }
        partials.push_back(
            {p + "_sum", per_row ? "CAST(" + x + " AS DOUBLE)" : "CAST(sum(" + x + ") AS DOUBLE)",
             "sum"});
        partials.push_back(
            {p + "_cnt", per_row ? "(" + x + " IS NOT NULL)::BIGINT" : "count(" + x + ")", "sum"});
        finals.push_back("CASE WHEN " + QuoteIdentifier(p + "_cnt") + " = 0 THEN NULL ELSE " +
                         QuoteIdentifier(p + "_sum") + " / " + QuoteIdentifier(p + "_cnt") +
                         " END");
        break;
      case AggregateFunction::kFirst:
      case AggregateFunction::kLast: {
        std::string fn = call.function == AggregateFunction::kFirst ? "first" : "last";
        partials.push_back({p, per_row ? x : fn + "(" + x + ")", fn});
        finals.push_back(QuoteIdentifier(p));
        break;
      }
      case AggregateFunction::kApproxCountDistinct: {
        if (call.hll_precision < 4 || call.hll_precision > 16) {
          return Status::InvalidArgument("approx_count_distinct: precision " +
                                         std::to_string(call.hll_precision) + " is outside 4..16");
        }
        AggregatePartial partial{p, HllPartialSql(x, call.hll_precision, per_row), ""};
        partial.merge_sql = HllMergeSql(QuoteIdentifier(p), call.hll_precision);
        partials.push_back(std::move(partial));
        finals.push_back(HllEstimateSql(QuoteIdentifier(p), call.hll_precision));
        break;
      }
    }
    // State schema names: the call as written; avg's two partials are <call>.sum / <call>.count.
    const std::string described = call.description.empty() ? call.output : call.description;
    if (call.function == AggregateFunction::kAvg) {
      partials[partials.size() - 2].schema_name = described + ".sum";
      partials.back().schema_name = described + ".count";
    } else {
      partials.back().schema_name = described;
    }
  }

  return out;
}

std::string AggregateHelpersSql(const std::optional<TimeWindowSpec>& window,
                                const std::optional<std::string>& event_time_key) {
  const auto& w = window;
  std::string wcol = w ? QuoteIdentifier(w->output) : "";
  std::string evict = "NULL::BIGINT";
  if (w && w->watermarked) {
    evict = "epoch_us(struct_extract(" + wcol + ", 'end'))";
  } else if (event_time_key) {
    evict = "epoch_us(" + QuoteIdentifier(*event_time_key) + ")";
  }
  std::string gstart = w ? "epoch_us(struct_extract(" + wcol + ", 'start'))" : "0::BIGINT";
  return gstart + " AS __gstart_us, " + evict + " AS __evict_us";
}

std::string AggregateBatchSql(const AggregateBatchSqlSpec& spec) {
  const auto& w = *spec.window;
  const std::vector<std::string>& key_items = spec.key_items;
  const std::string& helpers = spec.helpers;
  const std::optional<engine::TypeId>& time_type = spec.time_type;
  const std::string wcol = w ? QuoteIdentifier(w->output) : "";
  const bool session = w && w->kind == TimeWindowSpec::Kind::kSession;
  std::vector<std::string> partial_items;
  for (const auto& p : *spec.partials)
    partial_items.push_back(p.batch_sql + " AS " + QuoteIdentifier(p.name));
  if (session) {
    std::string t = QuoteIdentifier(w->time_column);
    std::vector<std::string> items = key_items;
    items.push_back("{'start': " + t + ", 'end': " + t + " + to_microseconds(" +
                    std::to_string(w->gap_us) + ")} AS " + wcol);
    items.insert(items.end(), partial_items.begin(), partial_items.end());
    items.push_back("1 AS __ord");
    items.push_back("row_number() OVER () AS __seq");
    return "SELECT *, " + helpers + " FROM (SELECT " + Join(items, ", ") + " FROM __agg_in WHERE " +
           t + " IS NOT NULL)";
  } else if (w && time_type) {
    // Window assignment in integer epoch microseconds: TIMESTAMPTZ +/- INTERVAL runs through
    // ICU's calendar (per row and window, ~10 % of a sliding-window query); the window bounds are
    // made timestamps again only once per group. start = t - (t mod slide) - i * slide for
    // i in [0, n), kept when start + size > t; the same windows as the interval form below.
    const std::string make =
        *time_type == engine::TypeId::kTimestampTz ? "make_timestamptz" : "make_timestamp";
    const int64_t n = (w->size_us + w->slide_us - 1) / w->slide_us;
    const std::string slide = std::to_string(w->slide_us);
    const std::string size = std::to_string(w->size_us);
    const std::string t_us = "epoch_us(" + QuoteIdentifier(w->time_column) + ")";
    const std::string bucket =
        "(" + t_us + " - (((" + t_us + " % " + slide + ") + " + slide + ") % " + slide + "))";
    std::vector<std::string> items = key_items;
    items.push_back("{'start': " + make + "(__ws), 'end': " + make + "(__ws + " + size + ")} AS " +
                    wcol);
    items.insert(items.end(), partial_items.begin(), partial_items.end());
    std::vector<std::string> group = key_items;
    group.push_back("__ws");
    std::string rows;
    if (n == 1) {
      rows = "SELECT *, " + bucket + " AS __ws FROM __agg_in WHERE " +
             QuoteIdentifier(w->time_column) + " IS NOT NULL";
    } else {
      rows = "SELECT * FROM (SELECT *, " + bucket + " - __wi * " + slide + " AS __ws, " + t_us +
             " AS __t_us FROM __agg_in CROSS JOIN range(0, " + std::to_string(n) +
             ") __r(__wi) WHERE " + QuoteIdentifier(w->time_column) +
             " IS NOT NULL) WHERE __ws + " + size + " > __t_us";
    }
    if (spec.pre_reduce) rows = spec.pre_reduce(rows);
    return "SELECT *, " + helpers + " FROM (SELECT " + Join(items, ", ") + " FROM (" + rows +
           ") GROUP BY " + Join(group, ", ") + ")";
  } else if (w) {
    std::string t = QuoteIdentifier(w->time_column);
    int64_t n = (w->size_us + w->slide_us - 1) / w->slide_us;
    std::string slide = std::to_string(w->slide_us);
    std::string start = "(" + t + " - to_microseconds((((epoch_us(" + t + ") % " + slide + ") + " +
                        slide + ") % " + slide + ") + __wi * " + slide + "))";
    std::string size = "to_microseconds(" + std::to_string(w->size_us) + ")";
    std::vector<std::string> items = key_items;
    items.push_back("{'start': __ws, 'end': __ws + " + size + "} AS " + wcol);
    items.insert(items.end(), partial_items.begin(), partial_items.end());
    std::vector<std::string> group = key_items;
    group.push_back("__ws");
    return "SELECT *, " + helpers + " FROM (SELECT " + Join(items, ", ") + " FROM (SELECT *, " +
           start + " AS __ws FROM __agg_in CROSS JOIN range(0, " + std::to_string(n) +
           ") __r(__wi) WHERE " + t + " IS NOT NULL) WHERE __ws + " + size + " > " + t +
           " GROUP BY " + Join(group, ", ") + ")";
  } else {
    std::vector<std::string> items = key_items;
    items.insert(items.end(), partial_items.begin(), partial_items.end());
    return "SELECT *, " + helpers + " FROM (SELECT " + Join(items, ", ") + " FROM __agg_in" +
           (key_items.empty() ? "" : " GROUP BY " + Join(key_items, ", ")) +
           (key_items.empty() && spec.empty_input_row ? ")" : " HAVING count(*) > 0)");
  }
}

std::string AggregateMergeSql(const std::vector<std::string>& key_items, const std::string& wcol,
                              bool session, const std::vector<std::string>& row_names,
                              const std::vector<AggregatePartial>& partials,
                              const std::function<std::string(const std::string&)>& type_sql,
                              const std::string& helpers) {
  const bool w = !wcol.empty();
  std::vector<std::string> row_items;
  row_items.reserve(row_names.size());
  for (const auto& name : row_names) row_items.push_back(QuoteIdentifier(name));
  std::vector<std::string> merged_items;
  for (const auto& p : partials) {
    if (p.merge_fn.empty()) {
      merged_items.push_back("CAST(" + p.merge_sql + " AS " + type_sql(p.name) + ") AS " +
                             QuoteIdentifier(p.name));
      continue;
    }
    std::string order =
        p.merge_fn == "first" || p.merge_fn == "last"
            ? (session ? " ORDER BY struct_extract(" + wcol + ", 'start'), __ord, __seq"
                       : " ORDER BY __ord")
            : "";
    merged_items.push_back("CAST(" + p.merge_fn + "(" + QuoteIdentifier(p.name) + order + ") AS " +
                           type_sql(p.name) + ") AS " + QuoteIdentifier(p.name));
  }
  if (session) {
    return SessionMergeSql(key_items, wcol, Join(row_items, ", "), merged_items, helpers);
  } else {
    std::vector<std::string> group = key_items;
    if (w) group.push_back(wcol);
    std::vector<std::string> items = group;
    items.insert(items.end(), merged_items.begin(), merged_items.end());
    return "SELECT *, " + helpers + " FROM (SELECT " + Join(items, ", ") + " FROM (SELECT " +
           Join(row_items, ", ") + ", 0 AS __ord FROM __agg_state UNION ALL SELECT " +
           Join(row_items, ", ") + ", 1 AS __ord FROM __agg_batch)" +
           (group.empty() ? "" : " GROUP BY " + Join(group, ", ")) + ")";
  }
}

std::string AggregateFinalizeSql(const std::vector<std::string>& key_items, const std::string& wcol,
                                 const std::vector<std::string>& finals,
                                 const std::vector<AggregateCall>& calls) {
  std::vector<std::string> fin = key_items;
  if (!wcol.empty()) fin.push_back(wcol);
  for (size_t j = 0; j < finals.size(); ++j) {
    fin.push_back(finals[j] + " AS " + QuoteIdentifier(calls[j].output));
  }
  return "SELECT " + Join(fin, ", ") + " FROM __agg_rows";
}

std::string AggregateNotLateSql(int64_t late_watermark_ms) {
  return "SELECT * FROM __agg_partial WHERE __evict_us IS NULL OR __evict_us > " +
         std::to_string(late_watermark_ms * 1000);
}

}  // namespace sluice::ops
