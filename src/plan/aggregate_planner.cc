#include "plan/aggregate_planner.h"

#include <algorithm>
#include <cctype>

#include "common/interval.h"
#include "common/strings.h"
#include "engine/relation_names.h"
#include "ops/hll_sql.h"
#include "ops/streaming_aggregate.h"

namespace sluice::plan {
namespace {

// A duration in months or years refused: Spark's window() refuses them ("Intervals greater than a
// month is not supported (1 month)." from TimeWindow); its session_window() adds calendar months,
// which a fixed gap in microseconds cannot, so Sluice refuses them there too.
Status RefuseMonths(const std::string& what, const std::string& text) {
  if (what == "session gap") {
    return Status::InvalidArgument(
        "a session gap in months or years is not supported (" + text +
        "): Spark adds calendar months to the event time, Sluice's gaps are fixed lengths; write "
        "the gap in days, e.g. '30 days'");
  }
  return Status::InvalidArgument("Intervals greater than a month is not supported (" + text +
                                 "). The " + what +
                                 " of window() must be a fixed length: write it in days or "
                                 "weeks, e.g. '30 days'");
}

Result<int64_t> IntervalMicros(const Json& e, SqlAst& ast, const std::string& what) {
  if (auto s = StringConstant(e)) {
    auto d = ParseDuration(*s);
    if (!d.ok()) return Status::InvalidArgument("bad " + what + ": " + d.status().message());
    if (HasMonthUnit(*s)) return RefuseMonths(what, *s);
    return d->micros;
  }
  SLUICE_ASSIGN_OR_RETURN(std::string sql, ast.ExpressionToSql(e));
  auto b = ast.Query(
      "SELECT CAST(epoch(i) * 1000000 AS BIGINT), datepart('year', i) * 12 + "
      "datepart('month', i) FROM (SELECT CAST((" +
      sql + ") AS INTERVAL) AS i)");
  if (!b.ok() || b->num_rows() != 1) {
    return Status::InvalidArgument("the " + what +
                                   " must be a constant interval such as '5 "
                                   "minutes', not " +
                                   sql);
  }
  SLUICE_ASSIGN_OR_RETURN(auto v, b->GetInt64(0, 0));
  if (!v) return Status::InvalidArgument("the " + what + " must not be NULL");
  SLUICE_ASSIGN_OR_RETURN(auto months, b->GetInt64(0, 1));
  if (months.value_or(0) != 0) return RefuseMonths(what, sql);
  return *v;
}

// `sql` with the planner's window function names back as the query wrote them
// (__sluice_window( -> window(), for descriptions in the state schema and messages.
std::string WrittenWindowCall(std::string sql) {
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{kSessionWindowFunction, "session_window"},
        std::pair<std::string, std::string>{kWindowFunction, "window"}}) {
    for (size_t pos = sql.find(from); pos != std::string::npos; pos = sql.find(from, pos)) {
      sql.replace(pos, from.size(), to);
      pos += to.size();
    }
  }
  return sql;
}

class AggregateBuilder {
 public:
  explicit AggregateBuilder(const QueryAnalysis& a) : a_(a) {}

  Status Groups() {
    const Json& top = a_.top;
    if (GroupsByAll(top)) {
      return Status::InvalidArgument(
          "GROUP BY ALL is not supported in streaming queries yet; list the grouping keys");
    }
    if (GroupSets(top).size() > 1) {
      return Status::InvalidArgument(
          "GROUPING SETS, CUBE and ROLLUP are not supported on streaming DataFrames/Datasets");
    }
    const Json& select = SelectList(top);
    for (Json g : GroupExpressions(top)) {
      if (auto pos = IntegerConstant(g)) {
        if (*pos < 1 || static_cast<size_t>(*pos) > select.size()) {
          return Status::InvalidArgument("GROUP BY position " + std::to_string(*pos) +
                                         " is not in the select list");
        }
        g = select[static_cast<size_t>(*pos - 1)];
      } else if (auto names = ColumnRefNames(g); names.size() == 1) {
        for (const auto& item : select) {
          if (!Alias(item).empty() && AsciiLower(Alias(item)) == AsciiLower(names[0]) &&
              ColumnRefNames(item) != names) {
            g = item;
          }
        }
      }
      std::string fn = FunctionName(g);
      if (fn == kWindowFunction || fn == kSessionWindowFunction) {
        if (window_) {
          return Status::InvalidArgument(
              "more than one window(...) / session_window(...) in GROUP BY is not supported");
        }
        SLUICE_RETURN_NOT_OK(Window(g, fn == kSessionWindowFunction));
        window_call_ = g;
        continue;
      }
      if (ContainsAggregate(g)) {
        return Status::InvalidArgument("GROUP BY cannot contain an aggregate function");
      }
      plain_keys_.push_back(g);
    }
    for (size_t k = 0; k < plain_keys_.size(); ++k) {
      auto names = ColumnRefNames(plain_keys_[k]);
      if (a_.IsWatermarkedColumn(names)) {
        event_time_key_ = "__k" + std::to_string(k);
      }
    }
    return Status::OK();
  }

  const std::vector<Json>& plain_keys() const { return plain_keys_; }
  const std::optional<ops::TimeWindowSpec>& window() const { return window_; }

  Status Window(const Json& call, bool session) {
    const Json& args = Children(call);
    ops::TimeWindowSpec w;
    w.time_column = "__t";
    if (session) {
      if (args.size() != 2) {
        return Status::InvalidArgument("session_window takes (event time, gap duration)");
      }
      w.kind = ops::TimeWindowSpec::Kind::kSession;
      w.output = "session_window";
      SLUICE_ASSIGN_OR_RETURN(w.gap_us, IntervalMicros(args[1], *a_.ast, "session gap"));
      if (w.gap_us <= 0) return Status::InvalidArgument("the session gap must be positive");
    } else {
      if (args.size() != 2 && args.size() != 3) {
        return Status::InvalidArgument(
            "window takes (event time, window duration[, slide duration]); a start time is not "
            "supported yet");
      }
      w.output = "window";
      SLUICE_ASSIGN_OR_RETURN(w.size_us, IntervalMicros(args[1], *a_.ast, "window duration"));
      w.slide_us = w.size_us;
      if (args.size() == 3) {
        SLUICE_ASSIGN_OR_RETURN(w.slide_us, IntervalMicros(args[2], *a_.ast, "slide duration"));
      }
      if (w.size_us <= 0 || w.slide_us <= 0) {
        return Status::InvalidArgument("The window duration and slide duration must be positive");
      }
      if (w.slide_us > w.size_us) {
        return Status::InvalidArgument(
            "The slide duration must be less than or equal to the windowDuration");
      }
      w.kind = w.slide_us == w.size_us ? ops::TimeWindowSpec::Kind::kTumbling
                                       : ops::TimeWindowSpec::Kind::kSliding;
    }
    time_expr_ = args[0];
    auto names = ColumnRefNames(args[0]);
    w.watermarked = a_.IsWatermarkedColumn(names);
    window_ = w;
    return Status::OK();
  }

  // Rewrites an expression of the select list / HAVING / ORDER BY over the operator's output.
  Result<Json> Rewrite(const Json& e) {
    if (e.is_array()) {
      Json out = Json::array();
      for (const auto& x : e) {
        SLUICE_ASSIGN_OR_RETURN(auto r, Rewrite(x));
        out.push_back(std::move(r));
      }
      return out;
    }
    if (!e.is_object()) return e;
    if (!IsExpressionObject(e)) {
      Json out = e;
      for (auto it = out.begin(); it != out.end(); ++it) {
        if (it.value().is_object() || it.value().is_array()) {
          SLUICE_ASSIGN_OR_RETURN(it.value(), Rewrite(it.value()));
        }
      }
      return out;
    }
    const std::string alias = Alias(e);
    for (size_t k = 0; k < plain_keys_.size(); ++k) {
      if (SameExpression(e, plain_keys_[k])) {
        return MakeColumnRef({"__k" + std::to_string(k)}, alias);
      }
    }
    if (window_ && SameExpression(e, window_call_)) {
      return MakeColumnRef({window_->output}, alias);
    }
    std::string cls = ExpressionClass(e);
    if (cls == "SUBQUERY") {
      return Status::InvalidArgument(
          "subqueries in the select list of a streaming aggregation are not supported");
    }
    if (cls == "COLUMN_REF") {
      auto names = ColumnRefNames(e);
      if (window_ && AsciiLower(names[0]) == window_->output) return e;
      if (names.size() == 1 && output_aliases_allowed_) {
        for (const auto& o : outputs_) {
          if (AsciiLower(Alias(o)) == AsciiLower(names[0])) return e;
        }
      }
      return Status::InvalidArgument("column \"" + names.back() +
                                     "\" must appear in the GROUP BY clause or be used in an "
                                     "aggregate function");
    }
    std::string fn = FunctionName(e);
    if (fn == kWindowFunction || fn == kSessionWindowFunction) {
      return Status::InvalidArgument(
          "window(...) / session_window(...) in the select list must be the one in GROUP BY");
    }
    if (IsAggregateCall(e)) return Aggregate(e, alias);
    Json out = e;
    for (auto it = out.begin(); it != out.end(); ++it) {
      if (IsAnnotationKey(it.key())) continue;
      if (it.value().is_object() || it.value().is_array()) {
        SLUICE_ASSIGN_OR_RETURN(it.value(), Rewrite(it.value()));
      }
    }
    return out;
  }

  Result<Json> Aggregate(const Json& e, const std::string& alias) {
    std::string fn = FunctionName(e);
    const Json& args = Children(e);
    bool star = fn == "count_star" || (args.size() == 1 && ExpressionClass(args[0]) == "STAR");
    if (IsDistinctCall(e)) {
      return Status::InvalidArgument(
          "Distinct aggregations are not supported on streaming DataFrames/Datasets (" + fn +
          "(DISTINCT ...))");
    }
    if (!AggregateFilter(e).is_null()) {
      return Status::InvalidArgument(
          "FILTER (WHERE ...) on a streaming aggregate is not "
          "supported yet");
    }
    if (HasCallOrderBy(e)) {
      return Status::InvalidArgument("ORDER BY inside a streaming aggregate is not supported yet");
    }
    auto function = ops::AggregateFunctionFromName(fn, star);
    if (!function) {
      return Status::InvalidArgument(
          "the aggregate function " + fn +
          " is not supported in streaming aggregations yet (supported: count, sum, min, max, "
          "avg, first, last, approx_count_distinct)");
    }
    Json arg;
    int precision = 9;
    if (!star) {
      const bool hll = *function == ops::AggregateFunction::kApproxCountDistinct;
      if (args.size() != 1 && !(hll && args.size() == 2)) {
        return Status::InvalidArgument(
            fn + (hll ? " in a streaming aggregation takes (column[, relative standard deviation])"
                      : " in a streaming aggregation takes one argument"));
      }
      arg = args[0];
      if (ContainsAggregate(arg)) {
        return Status::InvalidArgument("aggregate function calls cannot be nested");
      }
      double rsd = ops::kDefaultApproxCountDistinctRsd;
      if (hll && args.size() == 2) {
        SLUICE_ASSIGN_OR_RETURN(std::string rsd_sql, a_.ast->ExpressionToSql(args[1]));
        auto b = a_.ast->Query("SELECT CAST((" + rsd_sql + ") AS DOUBLE)");
        std::optional<double> v;
        if (b.ok() && b->num_rows() == 1) {
          auto d = b->GetDouble(0, 0);
          if (d.ok() && d->has_value()) v = **d;
        }
        if (!v) {
          return Status::InvalidArgument(
              "approx_count_distinct: the relative standard deviation must be a constant number "
              "such as 0.05, not " +
              rsd_sql);
        }
        rsd = *v;
      }
      if (hll) {
        SLUICE_ASSIGN_OR_RETURN(precision, ops::HllPrecisionForRelativeSd(rsd));
      }
    }
    for (size_t j = 0; j < calls_.size(); ++j) {
      if (calls_[j].function == *function && calls_[j].hll_precision == precision &&
          (star ? calls_[j].argument.empty() : SameExpression(agg_args_[j], arg))) {
        return MakeColumnRef({calls_[j].output}, alias);
      }
    }
    size_t j = calls_.size();
    ops::AggregateCall call;
    call.function = *function;
    call.hll_precision = precision;
    call.argument = star ? "" : "__a" + std::to_string(j);
    call.output = "__agg" + std::to_string(j);
    {
      SLUICE_ASSIGN_OR_RETURN(call.description, a_.ast->ExpressionToSql(WithoutAlias(e)));
      if (star) call.description = "count(*)";
    }
    calls_.push_back(call);
    agg_args_.push_back(arg);
    return MakeColumnRef({call.output}, alias);
  }

  // The select list over the operator's output, with every item named.
  Status Outputs() {
    for (const auto& item : SelectList(a_.top)) {
      if (ExpressionClass(item) == "STAR") {
        return Status::InvalidArgument("SELECT * is not supported with a streaming aggregation");
      }
      SLUICE_ASSIGN_OR_RETURN(Json r, Rewrite(item));
      std::string name = Alias(item);
      if (name.empty()) {
        auto names = ColumnRefNames(item);
        if (!names.empty()) {
          name = names.back();
        } else {
          SLUICE_ASSIGN_OR_RETURN(name, a_.ast->ExpressionToSql(item));
        }
      }
      SetAlias(r, name);
      outputs_.push_back(std::move(r));
    }
    return Status::OK();
  }

  // The spec, in phases: RefuseOutputMode, Outputs, InputSql, OutputSql, UpdateKeys,
  // OperatorOptions.
  Result<StatefulPlanSpec> Build() {
    SLUICE_RETURN_NOT_OK(RefuseOutputMode());
    // UPDATE with a global aggregation (no GROUP BY key) has no MERGE key: update_keys stay
    // empty and the sink keeps the table at the one row (sinks/delta_sink.h update_single_row).
    SLUICE_RETURN_NOT_OK(Outputs());
    StatefulPlanSpec spec;
    SLUICE_ASSIGN_OR_RETURN(std::string input_sql, InputSql());
    spec.input_sqls.push_back(std::move(input_sql));
    SLUICE_ASSIGN_OR_RETURN(spec.output_sql, OutputSql());
    if (a_.output_mode == sluice::OutputMode::kUpdate) UpdateKeys(&spec);
    SLUICE_ASSIGN_OR_RETURN(ops::StreamingAggregateOptions options, OperatorOptions());
    auto op = std::make_unique<ops::StreamingAggregate>(std::move(options));
    spec.operator_name = op->name();
    spec.op = std::move(op);
    return spec;
  }

 private:
  // Spark's refusals by output mode: APPEND needs a watermark, UPDATE no session window.
  Status RefuseOutputMode() const {
    const auto mode = a_.output_mode;
    bool watermarked = (window_ && window_->watermarked) || event_time_key_.has_value();
    if (mode == sluice::OutputMode::kAppend && !watermarked) {
      return Status::InvalidArgument(
          "Append output mode not supported when there are streaming aggregations on streaming "
          "DataFrames/DataSets without watermark");
    }
    if (mode == sluice::OutputMode::kUpdate && window_ &&
        window_->kind == ops::TimeWindowSpec::Kind::kSession) {
      return Status::InvalidArgument(
          "Update output mode is not supported for session window aggregation on streaming "
          "DataFrames/Datasets");
    }
    return Status::OK();
  }

  // Input SQL: the keys, the event time and the aggregate arguments per row.
  Result<std::string> InputSql() const {
    Json input = a_.top;
    Json items = Json::array();
    for (size_t k = 0; k < plain_keys_.size(); ++k) {
      Json e = plain_keys_[k];
      SetAlias(e, "__k" + std::to_string(k));
      items.push_back(std::move(e));
    }
    if (window_) {
      Json e = time_expr_;
      SetAlias(e, "__t");
      items.push_back(std::move(e));
    }
    for (size_t j = 0; j < calls_.size(); ++j) {
      if (calls_[j].argument.empty()) continue;
      Json e = agg_args_[j];
      SetAlias(e, calls_[j].argument);
      items.push_back(std::move(e));
    }
    if (items.empty()) {
      SLUICE_ASSIGN_OR_RETURN(Json one, a_.ast->ParseSelect("SELECT 1 AS __one"));
      items = SelectList(one);
    }
    SelectList(input) = items;
    DropAggregationAndModifiers(input);
    return a_.ast->ToSql(input);
  }

  // Output SQL over __op_output: the select list's outputs, HAVING as WHERE, ORDER BY (COMPLETE
  // mode only).
  Result<std::string> OutputSql() {
    const Json& top = a_.top;
    SLUICE_ASSIGN_OR_RETURN(Json output, a_.ast->ParseSelect(std::string("SELECT * FROM ") +
                                                             engine::kOperatorOutputTable));
    SelectList(output) = outputs_;
    if (!Having(top).is_null()) {
      SLUICE_ASSIGN_OR_RETURN(WhereClause(output), Rewrite(Having(top)));
    }
    for (const auto& m : Modifiers(top)) {
      if (NodeType(m) != "ORDER_MODIFIER") continue;
      if (a_.output_mode != sluice::OutputMode::kComplete) {
        return Status::InvalidArgument(
            "Sorting is not supported on streaming DataFrames/Datasets, unless it is on "
            "aggregated DataFrame/Dataset in Complete output mode");
      }
      output_aliases_allowed_ = true;  // ORDER BY may name output columns
      SLUICE_ASSIGN_OR_RETURN(Json r, Rewrite(m));
      output_aliases_allowed_ = false;
      Modifiers(output).push_back(std::move(r));
    }
    return a_.ast->ToSql(output);
  }

  // UPDATE: the output columns without aggregates are the MERGE key when they carry every
  // grouping key (and the window). Otherwise no output column identifies a group (Spark runs
  // such a query: update mode emits the changed groups' rows, whatever they select), so there
  // is no MERGE key and the sink gets each batch's rows appended (StatefulPlanSpec).
  void UpdateKeys(StatefulPlanSpec* spec) const {
    std::vector<bool> carried(plain_keys_.size() + 1, false);
    for (const auto& o : outputs_) {
      bool has_agg = false;
      std::vector<std::string> refs;
      VisitExpression(o, [&](const Json& e) {
        auto names = ColumnRefNames(e);
        if (!names.empty()) refs.push_back(AsciiLower(names[0]));
        return true;
      });
      for (const auto& r : refs) has_agg = has_agg || r.rfind("__agg", 0) == 0;
      if (has_agg) continue;
      spec->update_keys.push_back(Alias(o));
      for (const auto& r : refs) {
        for (size_t k = 0; k < plain_keys_.size(); ++k) {
          if (r == "__k" + std::to_string(k)) carried[k] = true;
        }
        if (window_ && r == window_->output) carried.back() = true;
      }
    }
    if (!window_) carried.back() = true;
    if (std::find(carried.begin(), carried.end(), false) != carried.end()) {
      spec->update_keys.clear();
      spec->update_appends = true;
    }
  }

  // The operator's options: key columns and their descriptions (restart checks), the window,
  // the event-time key and the aggregate calls.
  Result<ops::StreamingAggregateOptions> OperatorOptions() const {
    ops::StreamingAggregateOptions options;
    for (size_t k = 0; k < plain_keys_.size(); ++k) {
      options.keys.push_back("__k" + std::to_string(k));
      SLUICE_ASSIGN_OR_RETURN(std::string described,
                              a_.ast->ExpressionToSql(WithoutAlias(plain_keys_[k])));
      options.key_descriptions.push_back(std::move(described));
    }
    if (window_) {
      SLUICE_ASSIGN_OR_RETURN(options.window_description,
                              a_.ast->ExpressionToSql(WithoutAlias(window_call_)));
      options.window_description = WrittenWindowCall(options.window_description);
    }
    options.window = window_;
    options.event_time_key = event_time_key_;
    options.aggregates = calls_;
    return options;
  }

  const QueryAnalysis& a_;
  std::vector<Json> plain_keys_;
  std::optional<ops::TimeWindowSpec> window_;
  Json window_call_;
  Json time_expr_;
  std::optional<std::string> event_time_key_;
  std::vector<ops::AggregateCall> calls_;
  std::vector<Json> agg_args_;
  std::vector<Json> outputs_;
  bool output_aliases_allowed_ = false;
};

// The name a select-list item gives its column: its alias, else a column's last name.
std::string OutputName(const Json& item) {
  std::string name = Alias(item);
  if (name.empty() && ExpressionClass(item) == "COLUMN_REF") {
    auto names = ColumnRefNames(item);
    if (!names.empty()) name = names.back();
  }
  return AsciiLower(name);
}

// The one item of `select` that a column reference of the query above names, or nullptr (none,
// several, or not a plain column reference).
const Json* ReferencedItem(const Json& select, const Json& ref) {
  if (ExpressionClass(ref) != "COLUMN_REF") return nullptr;
  auto names = ColumnRefNames(ref);
  if (names.empty()) return nullptr;
  const std::string name = AsciiLower(names.back());
  const Json* found = nullptr;
  for (const auto& item : select) {
    if (OutputName(item) != name) continue;
    if (found != nullptr) return nullptr;
    found = &item;
  }
  return found;
}

bool IsConstantOne(const Json& e) {
  auto v = IntegerConstant(e);
  return v && *v == 1;
}

// The rank() / dense_rank() window of `e` when `e` is `<window> = 1`, `<window> <= 1`,
// `1 = <window>` or `1 >= <window>`; nullptr otherwise.
const Json* RankIsOne(const Json& e) {
  if (ExpressionClass(e) != "COMPARISON") return nullptr;
  const std::string type = NodeType(e);
  const Json& l = ComparisonLeft(e);
  const Json& r = ComparisonRight(e);
  const Json* w = nullptr;
  if ((type == "COMPARE_EQUAL" || type == "COMPARE_LESSTHANOREQUALTO") && IsConstantOne(r)) w = &l;
  if ((type == "COMPARE_EQUAL" || type == "COMPARE_GREATERTHANOREQUALTO") && IsConstantOne(l)) {
    w = &r;
  }
  if (w == nullptr || ExpressionClass(*w) != "WINDOW") return nullptr;
  const std::string wt = NodeType(*w);
  if (wt != "WINDOW_RANK" && wt != "WINDOW_RANK_DENSE") return nullptr;
  if (!Children(*w).empty() || WindowIgnoresNulls(*w) || IsDistinctCall(*w) ||
      !WindowFilter(*w).is_null() || !WindowArgOrders(*w).empty()) {
    return nullptr;
  }
  return w;
}

}  // namespace

Status HintTopOneOverAggregation(const QueryAnalysis& lower, const Json& upper_top,
                                 StatefulPlanSpec* stage) {
  auto* op = dynamic_cast<ops::StreamingAggregate*>(stage->op.get());
  if (op == nullptr || !IsSelectNode(lower.top)) return Status::OK();
  if (!WhereClause(upper_top).is_null() || !Having(lower.top).is_null() ||
      Qualify(upper_top).is_null()) {
    return Status::OK();
  }
  // No OVER window but the rank: another one would see the pruned rows.
  int windows = 0;
  for (const Json* clause : {&SelectList(upper_top), &Qualify(upper_top)}) {
    VisitExpression(*clause, [&](const Json& e) {
      if (ExpressionClass(e) == "WINDOW") ++windows;
      return true;
    });
  }
  if (windows != 1) return Status::OK();
  // The rank is one conjunct of QUALIFY (the others only filter the rank-1 rows further).
  std::vector<const Json*> conjuncts = {&Qualify(upper_top)};
  const Json* rank = nullptr;
  while (!conjuncts.empty() && rank == nullptr) {
    const Json* c = conjuncts.back();
    conjuncts.pop_back();
    if (ExpressionClass(*c) == "CONJUNCTION" && NodeType(*c) == "CONJUNCTION_AND") {
      for (const auto& child : Children(*c)) conjuncts.push_back(&child);
      continue;
    }
    rank = RankIsOne(*c);
  }
  if (rank == nullptr || WindowPartitions(*rank).size() != 1 || WindowOrders(*rank).size() != 1) {
    return Status::OK();
  }
  AggregateBuilder builder(lower);
  SLUICE_RETURN_NOT_OK(builder.Groups());
  const auto& window = builder.window();
  if (!window || window->kind == ops::TimeWindowSpec::Kind::kSession) return Status::OK();
  const Json& select = SelectList(lower.top);
  // PARTITION BY the window: a column that is the window or its start or end.
  const Json* partition = ReferencedItem(select, WindowPartitions(*rank)[0]);
  if (partition == nullptr || ExpressionClass(*partition) != "COLUMN_REF") return Status::OK();
  auto pnames = ColumnRefNames(*partition);
  if (pnames.empty() || pnames.size() > 2 || AsciiLower(pnames[0]) != window->output ||
      (pnames.size() == 2 && AsciiLower(pnames[1]) != "start" && AsciiLower(pnames[1]) != "end")) {
    return Status::OK();
  }
  // ORDER BY a plain grouping key.
  const Json& order = WindowOrders(*rank)[0];
  const Json* item = ReferencedItem(select, OrderExpression(order));
  if (item == nullptr) return Status::OK();
  for (size_t k = 0; k < builder.plain_keys().size(); ++k) {
    if (!SameExpression(*item, builder.plain_keys()[k])) continue;  // (aliases aside)
    ops::KeepTopSpec spec;
    spec.column = "__k" + std::to_string(k);
    spec.descending = OrderType(order) == "DESCENDING";
    op->set_keep_top(spec);
    return Status::OK();
  }
  return Status::OK();
}

Result<StatefulPlanSpec> PlanAggregation(const QueryAnalysis& analysis) {
  if (!IsSelectNode(analysis.top)) {
    return Status::InvalidArgument("a streaming aggregation must be a SELECT ... GROUP BY");
  }
  AggregateBuilder builder(analysis);
  SLUICE_RETURN_NOT_OK(builder.Groups());
  return builder.Build();
}

}  // namespace sluice::plan
