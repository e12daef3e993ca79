// The stream-stream join planner (docs/streaming-plan.md §2, docs/streaming-sql.md "Joins").
//
// Recognises a JOIN in the top-level FROM whose two sides read streams, and plans
// ops::StreamStreamJoin:
// - each side is `__stream_<i> AS a` or `(subquery) AS a`; its input SQL is
//   `SELECT a.*, <hidden columns> FROM <side> AS a`, the hidden columns being the join keys, the
//   event time (late rows), the state time (eviction) and the side's pre-join filter;
// - the ON condition splits into equi keys (l.x = r.y), conjuncts of one side (pre-join filters)
//   and the rest (condition_sql, evaluated on candidate pairs);
// - watermarks: a side's columns that carry its stream's watermark are the watermark column itself
//   (through `*` or a plain reference) and `window(<watermark column>, ...)`, as in Spark. A join
//   key that is such a column on either side evicts both sides by key (Spark's state key
//   watermark); otherwise a range condition between the sides' event times gives each side a state
//   value watermark (Spark's StreamingJoinHelper.getStateValueWatermark, with its -1 ms for <=, >=
//   and BETWEEN);
// - the output SQL is the top-level SELECT over __op_output, whose columns are one struct per side
//   named by the side's alias, so `l.x` keeps meaning what it meant.
#include "plan/join_planner.h"

#include <algorithm>
#include <cctype>
#include <exception>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/interval.h"
#include "common/strings.h"
#include "ops/stream_stream_join.h"

namespace sluice::plan {
namespace {

constexpr char kOutputTable[] = "__op_output";

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return AsciiLower(a) == AsciiLower(b);
}

// The "type" of a tree node ("" when it has none, or when it is not a string: a constant's type).
std::string NodeType(const Json& node) {
  if (!node.is_object()) return "";
  auto it = node.find("type");
  return it != node.end() && it->is_string() ? it->get<std::string>() : "";
}

// The stream index of a `__stream_<i>` base table, or nullopt.
std::optional<size_t> StreamIndexOf(const Json& table_ref) {
  if (NodeType(table_ref) != "BASE_TABLE") return std::nullopt;
  const std::string name = table_ref.value("table_name", std::string());
  constexpr std::string_view kPrefix = "__stream_";
  if (name.compare(0, kPrefix.size(), kPrefix) != 0) return std::nullopt;
  try {
    return static_cast<size_t>(std::stoul(name.substr(kPrefix.size())));
  } catch (...) {
    return std::nullopt;
  }
}

// Every stream read anywhere below `node` (subqueries included).
void CollectStreams(const Json& node, std::set<size_t>* out) {
  if (node.is_object()) {
    if (auto i = StreamIndexOf(node)) out->insert(*i);
    for (auto it = node.begin(); it != node.end(); ++it) CollectStreams(it.value(), out);
  } else if (node.is_array()) {
    for (const auto& e : node) CollectStreams(e, out);
  }
}

bool ReadsStream(const Json& node) {
  std::set<size_t> s;
  CollectStreams(node, &s);
  return !s.empty();
}

// True when some JOIN below `node` (not `node` itself) joins two stream-reading relations.
bool HasNestedStreamJoin(const Json& node, const Json* top_join) {
  if (node.is_object()) {
    if (&node != top_join && NodeType(node) == "JOIN" && node.contains("left") &&
        node.contains("right") && ReadsStream(node["left"]) && ReadsStream(node["right"])) {
      return true;
    }
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (HasNestedStreamJoin(it.value(), top_join)) return true;
    }
  } else if (node.is_array()) {
    for (const auto& e : node) {
      if (HasNestedStreamJoin(e, top_join)) return true;
    }
  }
  return false;
}

// A column of a side that carries its stream's watermark.
struct WatermarkColumn {
  std::string name;     // the column's name in the side's output
  bool window = false;  // a window STRUCT(start, end): compared by its end
};

struct Side {
  std::string alias;
  std::string relation_sql;  // "__stream_0 AS \"l\"" / "(SELECT ...) AS \"l\""
  // The side's output column names when known (a subquery without *); nullopt when not.
  std::optional<std::vector<std::string>> columns;
  std::vector<WatermarkColumn> watermarks;  // in output order; [0] is the event-time column

  const WatermarkColumn* FindWatermark(const std::string& column) const {
    for (const auto& w : watermarks) {
      if (EqualsIgnoreCase(w.name, column)) return &w;
    }
    return nullptr;
  }
  bool Knows(const std::string& column) const {
    if (!columns) return false;
    for (const auto& c : *columns) {
      if (EqualsIgnoreCase(c, column)) return true;
    }
    return false;
  }
};

// The watermark spec of stream i, if any.
const WatermarkSpec* StreamWatermark(const QueryAnalysis& analysis, size_t i) {
  if (i >= analysis.query->streams.size()) return nullptr;
  const auto& w = analysis.query->streams[i].watermark;
  return w ? &*w : nullptr;
}

Result<Side> AnalyzeSide(const QueryAnalysis& analysis, const Json& ref, const char* which) {
  Side side;
  side.alias = ref.value("alias", std::string());
  if (auto i = StreamIndexOf(ref)) {
    if (side.alias.empty()) side.alias = StreamViewName(*i);
    side.relation_sql = StreamViewName(*i) + " AS " + QuoteIdentifier(side.alias);
    if (const WatermarkSpec* w = StreamWatermark(analysis, *i)) {
      side.watermarks.push_back({w->column, false});
    }
    return side;
  }
  if (NodeType(ref) != "SUBQUERY") {
    return Status::NotSupported(
        std::string("stream-stream join: the ") + which +
        " side must be a STREAM relation or a subquery over one (not supported yet: " +
        ref.value("type", std::string("?")) + ")");
  }
  if (side.alias.empty()) side.alias = std::string("__join_") + which;
  const Json& node = ref["subquery"]["node"];
  SLUICE_ASSIGN_OR_RETURN(std::string sub_sql, analysis.ast->ToSql(node));
  side.relation_sql = "(" + sub_sql + ") AS " + QuoteIdentifier(side.alias);
  if (NodeType(node) != "SELECT_NODE") return side;

  std::set<size_t> streams;
  CollectStreams(node["from_table"], &streams);
  std::vector<const WatermarkSpec*> specs;
  for (size_t i : streams) {
    if (const WatermarkSpec* w = StreamWatermark(analysis, i)) specs.push_back(w);
  }
  auto watermark_of = [&](const Json& expr) -> const WatermarkSpec* {
    std::vector<std::string> names = ColumnRefNames(expr);
    if (names.empty()) return nullptr;
    for (const WatermarkSpec* w : specs) {
      if (EqualsIgnoreCase(names.back(), w->column)) return w;
    }
    return nullptr;
  };
  std::vector<std::string> columns;
  bool known = true;
  for (const Json& item : node["select_list"]) {
    const std::string cls = item.value("class", "");
    const std::string alias = item.value("alias", std::string());
    if (cls == "STAR") {
      known = false;
      for (const WatermarkSpec* w : specs) side.watermarks.push_back({w->column, false});
      continue;
    }
    if (watermark_of(item) != nullptr) {
      std::string name = alias.empty() ? ColumnRefNames(item).back() : alias;
      side.watermarks.push_back({name, false});
      columns.push_back(name);
      continue;
    }
    if (FunctionName(item) == kWindowFunction && item.contains("children") &&
        !item["children"].empty() && watermark_of(item["children"][0]) != nullptr) {
      std::string name = alias.empty() ? "window" : alias;
      side.watermarks.push_back({name, true});
      columns.push_back(name);
      continue;
    }
    if (!alias.empty()) {
      columns.push_back(alias);
    } else if (cls == "COLUMN_REF") {
      columns.push_back(ColumnRefNames(item).back());
    } else {
      known = false;  // DuckDB names it after its text; not referable by a plain name anyway
    }
  }
  if (known) side.columns = std::move(columns);
  return side;
}

// Which side an expression reads: bit 1 = left, bit 2 = right.
struct SideResolver {
  const Side* left;
  const Side* right;

  // The side of a column reference: 1 left, 2 right, or an error for an unknown qualifier or an
  // unqualified name that cannot be placed.
  Result<int> SideOf(const std::vector<std::string>& names) const {
    if (names.size() == 1 && EqualsIgnoreCase(names[0], left->alias)) return 1;
    if (names.size() == 1 && EqualsIgnoreCase(names[0], right->alias)) return 2;
    if (names.size() >= 2) {
      if (EqualsIgnoreCase(names[0], left->alias)) return 1;
      if (EqualsIgnoreCase(names[0], right->alias)) return 2;
    }
    const std::string& first = names[0];
    const bool in_left = left->Knows(first);
    const bool in_right = right->Knows(first);
    if (in_left && !in_right) return 1;
    if (in_right && !in_left) return 2;
    if (names.size() >= 2) {
      return Status::InvalidArgument("stream-stream join: " + names[0] +
                                     " is neither side of the join (" + left->alias + ", " +
                                     right->alias + ")");
    }
    return Status::InvalidArgument("stream-stream join: qualify column " + first +
                                   " with its side (" + left->alias + "." + first + " or " +
                                   right->alias + "." + first + ")");
  }

  // The sides `expr` reads (0 for none).
  Result<int> SidesOf(const Json& expr) const {
    int sides = 0;
    Status error;
    VisitExpression(expr, [&](const Json& e) {
      const std::string cls = e.value("class", "");
      if (cls == "SUBQUERY") {
        error = Status::NotSupported("stream-stream join: subqueries in the ON condition");
        return false;
      }
      if (cls == "COLUMN_REF") {
        auto s = SideOf(ColumnRefNames(e));
        if (!s.ok()) {
          if (error.ok()) error = s.status();
        } else {
          sides |= *s;
        }
      }
      return true;
    });
    SLUICE_RETURN_NOT_OK(error);
    return sides;
  }

  // `expr` with unqualified column references qualified by their side's alias.
  // `keep` (lower case): first names left as they are (the aggregation's `window` column).
  Result<Json> Qualify(const Json& expr, const std::set<std::string>& keep = {}) const {
    Status error;
    Json out = RewriteExpression(expr, [&](const Json& e) -> std::optional<Json> {
      if (e.value("class", "") != "COLUMN_REF") return std::nullopt;
      std::vector<std::string> names = ColumnRefNames(e);
      if (EqualsIgnoreCase(names[0], left->alias) || EqualsIgnoreCase(names[0], right->alias)) {
        return std::nullopt;
      }
      if (keep.count(AsciiLower(names[0])) > 0) return std::nullopt;
      auto s = SideOf(names);
      if (!s.ok()) {
        if (error.ok()) error = s.status();
        return std::nullopt;
      }
      names.insert(names.begin(), *s == 1 ? left->alias : right->alias);
      return MakeColumnRef(names, e.value("alias", std::string()));
    });
    SLUICE_RETURN_NOT_OK(error);
    return out;
  }
};

// ---- Spark's StreamingJoinHelper.getStateValueWatermark on DuckDB parse trees ----

// One additive term of a time expression: a column (side 1 / 2) or a constant (micros).
struct Term {
  int sign = 1;
  int side = 0;  // 0: constant
  std::vector<std::string> column;
  int64_t micros = 0;
};

// The micros of an interval constant subtree, or nullopt.
std::optional<int64_t> IntervalMicros(const Json& e) {
  const std::string cls = e.value("class", "");
  if (cls == "CAST" && e.contains("cast_type") && e["cast_type"].value("id", "") == "INTERVAL" &&
      e["child"].value("class", "") == "CONSTANT") {
    const Json& v = e["child"]["value"];
    if (!v.contains("value") || !v["value"].is_string()) return std::nullopt;
    auto d = ParseDuration(v["value"].get<std::string>());
    if (!d.ok()) return std::nullopt;
    return d->micros;
  }
  if (cls == "CONSTANT" && e["value"]["type"].value("id", "") == "INTERVAL") {
    return std::nullopt;  // not produced by DuckDB's parser
  }
  const std::string fn = FunctionName(e);
  static const std::map<std::string, std::string> kUnits = {{"to_microseconds", "microseconds"},
                                                            {"to_milliseconds", "milliseconds"},
                                                            {"to_seconds", "seconds"},
                                                            {"to_minutes", "minutes"},
                                                            {"to_hours", "hours"},
                                                            {"to_days", "days"},
                                                            {"to_weeks", "weeks"}};
  auto unit = kUnits.find(fn);
  if (unit == kUnits.end() || e["children"].size() != 1) return std::nullopt;
  // The count: a constant, possibly under CAST / trunc (DuckDB's INTERVAL n UNIT).
  const Json* c = &e["children"][0];
  while (true) {
    const std::string ccls = c->value("class", "");
    if (ccls == "CAST") {
      c = &(*c)["child"];
    } else if (FunctionName(*c) == "trunc" && (*c)["children"].size() == 1) {
      c = &(*c)["children"][0];
    } else {
      break;
    }
  }
  if (c->value("class", "") != "CONSTANT") return std::nullopt;
  const Json& v = (*c)["value"];
  if (!v.contains("value")) return std::nullopt;
  std::string count = v["value"].is_string() ? v["value"].get<std::string>() : v["value"].dump();
  auto d = ParseDuration(count + " " + unit->second);
  if (!d.ok()) return std::nullopt;
  return d->micros;
}

// Flattens + / - / unary - / CAST over columns and interval constants; false when the expression
// has any other shape (Spark: "invalid", no state watermark from this predicate).
bool CollectTerms(const Json& e, int sign, const SideResolver& sides, std::vector<Term>* out) {
  if (auto micros = IntervalMicros(e)) {
    out->push_back(Term{sign, 0, {}, *micros});
    return true;
  }
  const std::string cls = e.value("class", "");
  if (cls == "COLUMN_REF") {
    auto s = sides.SideOf(ColumnRefNames(e));
    if (!s.ok()) return false;
    out->push_back(Term{sign, *s, ColumnRefNames(e), 0});
    return true;
  }
  if (cls == "CAST") return CollectTerms(e["child"], sign, sides, out);
  const std::string fn = FunctionName(e);
  const Json& ch = e.contains("children") ? e["children"] : Json::array();
  if (fn == "+" && ch.size() == 2) {
    return CollectTerms(ch[0], sign, sides, out) && CollectTerms(ch[1], sign, sides, out);
  }
  if (fn == "-" && ch.size() == 2) {
    return CollectTerms(ch[0], sign, sides, out) && CollectTerms(ch[1], -sign, sides, out);
  }
  if (fn == "-" && ch.size() == 1) return CollectTerms(ch[0], -sign, sides, out);
  return false;
}

// The watermark column of `side` named by a column reference's names (qualified or not).
const WatermarkColumn* WatermarkOfRef(const Side& side, const std::vector<std::string>& names) {
  if (names.empty()) return nullptr;
  // "a.col" or "col": the column is the last name when there is no struct field access.
  const std::string& col = names.size() >= 2 && EqualsIgnoreCase(names[0], side.alias)
                               ? (names.size() == 2 ? names[1] : std::string())
                               : (names.size() == 1 ? names[0] : std::string());
  if (col.empty()) return nullptr;
  const WatermarkColumn* w = side.FindWatermark(col);
  return w != nullptr && !w->window ? w : nullptr;
}

// For `lesser < greater`: the offset (ms) of state side `s`'s value watermark from the other
// side's watermark, or nullopt (Spark's getStateWatermarkFromLessThenPredicate).
std::optional<int64_t> StateWatermarkFromLessThan(const Json& lesser, const Json& greater, int s,
                                                  const SideResolver& sides) {
  std::vector<Term> terms;
  if (!CollectTerms(lesser, 1, sides, &terms) || !CollectTerms(greater, -1, sides, &terms)) {
    return std::nullopt;
  }
  const Side& other = s == 1 ? *sides.right : *sides.left;
  std::set<std::string> s_columns;
  std::set<std::string> other_columns;
  const Term* constraint = nullptr;
  const Term* watermark_term = nullptr;
  int64_t constant = 0;
  for (const Term& t : terms) {
    if (t.side == 0) {
      constant += t.sign * t.micros;
    } else if (t.side == s) {
      s_columns.insert(AsciiLower(t.column.back()));
      constraint = &t;
    } else {
      other_columns.insert(AsciiLower(t.column.back()));
      watermark_term = &t;
    }
  }
  if (s_columns.size() != 1 || other_columns.size() > 1) return std::nullopt;
  // Exactly one term of the state side, and it must be negative: -sTime + wm + c < 0.
  int s_terms = 0;
  for (const Term& t : terms) s_terms += t.side == s ? 1 : 0;
  if (s_terms != 1 || constraint->sign != -1) return std::nullopt;
  // The other side's terms must be its watermark column (substituted by the watermark).
  if (watermark_term == nullptr) return std::nullopt;
  int other_terms = 0;
  for (const Term& t : terms) other_terms += (t.side != 0 && t.side != s) ? 1 : 0;
  if (other_terms != 1 || watermark_term->sign != 1) return std::nullopt;
  if (WatermarkOfRef(other, watermark_term->column) == nullptr) return std::nullopt;
  return constant / 1000;
}

// Spark's getStateValueWatermark for side `s` (1 left, 2 right): the minimum over the ON
// conjuncts of the offsets they give, or nullopt.
std::optional<int64_t> StateValueWatermarkOffset(const std::vector<Json>& conjuncts, int s,
                                                 const SideResolver& sides) {
  const Side& other = s == 1 ? *sides.right : *sides.left;
  if (other.watermarks.empty()) return std::nullopt;
  std::optional<int64_t> best;
  auto consider = [&](std::optional<int64_t> v) {
    if (v && (!best || *v < *best)) best = v;
  };
  for (const Json& c : conjuncts) {
    const std::string type = c.value("type", "");
    if (type == "COMPARE_BETWEEN") {
      // input BETWEEN lower AND upper = input >= lower AND input <= upper.
      auto ge = StateWatermarkFromLessThan(c["lower"], c["input"], s, sides);
      auto le = StateWatermarkFromLessThan(c["input"], c["upper"], s, sides);
      consider(ge ? std::optional<int64_t>(*ge - 1) : std::nullopt);
      consider(le ? std::optional<int64_t>(*le - 1) : std::nullopt);
      continue;
    }
    if (c.value("class", "") != "COMPARISON") continue;
    const Json& l = c["left"];
    const Json& r = c["right"];
    if (type == "COMPARE_LESSTHAN") {
      consider(StateWatermarkFromLessThan(l, r, s, sides));
    } else if (type == "COMPARE_LESSTHANOREQUALTO") {
      auto v = StateWatermarkFromLessThan(l, r, s, sides);
      consider(v ? std::optional<int64_t>(*v - 1) : std::nullopt);
    } else if (type == "COMPARE_GREATERTHAN") {
      consider(StateWatermarkFromLessThan(r, l, s, sides));
    } else if (type == "COMPARE_GREATERTHANOREQUALTO") {
      auto v = StateWatermarkFromLessThan(r, l, s, sides);
      consider(v ? std::optional<int64_t>(*v - 1) : std::nullopt);
    }
  }
  return best;
}

// SQL of `epoch_us(<column of side>)`, by its end for a window.
std::string TimeMicrosSql(const std::string& column_sql, bool window) {
  return "epoch_us(" + (window ? "struct_extract(" + column_sql + ", 'end')" : column_sql) + ")";
}

Json AndOf(const std::vector<Json>& conjuncts) {
  if (conjuncts.size() == 1) return conjuncts[0];
  return Json{{"class", "CONJUNCTION"},
              {"type", "CONJUNCTION_AND"},
              {"alias", ""},
              {"query_location", 18446744073709551615ULL},
              {"children", conjuncts}};
}

Json UnnestOf(const std::string& alias) {
  return Json{{"class", "FUNCTION"},
              {"type", "FUNCTION"},
              {"alias", ""},
              {"query_location", 18446744073709551615ULL},
              {"function_name", "unnest"},
              {"schema", ""},
              {"children", Json::array({MakeColumnRef({alias})})},
              {"filter", nullptr},
              {"order_bys", Json{{"type", "ORDER_MODIFIER"}, {"orders", Json::array()}}},
              {"distinct", false},
              {"is_operator", false},
              {"export_state", false},
              {"catalog", ""}};
}

Result<std::optional<StatefulPlanSpec>> PlanStreamJoinUnchecked(const QueryAnalysis& analysis) {
  const Json& top = analysis.top;
  if (!top.is_object() || !top.contains("from_table")) return std::optional<StatefulPlanSpec>();
  const Json& from = top["from_table"];
  const bool top_is_stream_join =
      NodeType(from) == "JOIN" && ReadsStream(from["left"]) && ReadsStream(from["right"]);
  if (HasNestedStreamJoin(top, top_is_stream_join ? &from : nullptr)) {
    return Status::NotSupported(
        "a stream-stream join below the top-level FROM (in a subquery, or joined again) is not "
        "supported yet");
  }
  if (!top_is_stream_join) return std::optional<StatefulPlanSpec>();

  // ---- Refusals (Spark's UnsupportedOperationChecker, and what Sluice does not do yet). ----
  // Spark 4.2 runs an inner join in Update mode as in Append (each joined row once; the sink
  // appends, having no keys); other join types are Append only; Complete needs an aggregation.
  const std::string join_type = from.value("join_type", "INNER");
  if (analysis.output_mode == sinks::OutputMode::kComplete) {
    return Status::InvalidArgument(
        "Complete output mode not supported when there are no streaming aggregations on "
        "streaming DataFrames/Datasets (a stream-stream join is Append or, inner, Update)");
  }
  if (analysis.output_mode == sinks::OutputMode::kUpdate && join_type != "INNER") {
    const std::string spark_type = join_type == "LEFT"    ? "LeftOuter"
                                   : join_type == "RIGHT" ? "RightOuter"
                                   : join_type == "SEMI"  ? "LeftSemi"
                                   : join_type == "ANTI"  ? "LeftAnti"
                                                          : "FullOuter";
    return Status::InvalidArgument(
        spark_type +
        " join between two streaming DataFrames/Datasets is not supported in Update output "
        "mode, only in Append output mode");
  }
  if (analysis.has_aggregation || analysis.has_distinct || analysis.has_qualify) {
    return Status::NotSupported(
        "a stream-stream join followed by an aggregation or deduplication in the same query is "
        "not supported yet");
  }
  const std::string ref_type = from.value("ref_type", "REGULAR");
  if (ref_type != "REGULAR" || !from["using_columns"].empty()) {
    return Status::NotSupported("stream-stream join: only JOIN ... ON is supported (not " +
                                (from["using_columns"].empty() ? ref_type : std::string("USING")) +
                                "); write the condition with ON");
  }
  ops::JoinType type;
  const std::string jt = from.value("join_type", "INNER");
  if (jt == "INNER") {
    type = ops::JoinType::kInner;
  } else if (jt == "LEFT") {
    type = ops::JoinType::kLeftOuter;
  } else if (jt == "RIGHT") {
    type = ops::JoinType::kRightOuter;
  } else if (jt == "FULL" || jt == "OUTER") {
    type = ops::JoinType::kFullOuter;
  } else if (jt == "SEMI") {
    type = ops::JoinType::kLeftSemi;
  } else if (jt == "ANTI") {
    return Status::InvalidArgument(
        "Left anti joins with a streaming DataFrame/Dataset on the right are not supported");
  } else {
    return Status::NotSupported("stream-stream join: join type " + jt + " is not supported");
  }
  if (!from.contains("condition") || from["condition"].is_null()) {
    return Status::InvalidArgument(
        "Stream-stream join without equality predicate is not supported");
  }

  SLUICE_ASSIGN_OR_RETURN(Side left, AnalyzeSide(analysis, from["left"], "left"));
  SLUICE_ASSIGN_OR_RETURN(Side right, AnalyzeSide(analysis, from["right"], "right"));
  if (EqualsIgnoreCase(left.alias, right.alias)) {
    return Status::InvalidArgument("stream-stream join: both sides are named " + left.alias +
                                   "; give them different aliases");
  }
  SideResolver sides{&left, &right};

  // ---- The ON condition: keys, one-side filters, the rest. ----
  SLUICE_ASSIGN_OR_RETURN(Json condition, sides.Qualify(from["condition"]));
  const std::vector<Json> conjuncts = Conjuncts(condition);
  std::vector<Json> left_keys;
  std::vector<Json> right_keys;
  std::vector<Json> left_only;
  std::vector<Json> right_only;
  std::vector<Json> both;
  for (const Json& c : conjuncts) {
    SLUICE_ASSIGN_OR_RETURN(int s, sides.SidesOf(c));
    if (c.value("type", "") == "COMPARE_EQUAL" && s == 3) {
      SLUICE_ASSIGN_OR_RETURN(int a, sides.SidesOf(c["left"]));
      SLUICE_ASSIGN_OR_RETURN(int b, sides.SidesOf(c["right"]));
      if (a == 1 && b == 2) {
        left_keys.push_back(c["left"]);
        right_keys.push_back(c["right"]);
        continue;
      }
      if (a == 2 && b == 1) {
        left_keys.push_back(c["right"]);
        right_keys.push_back(c["left"]);
        continue;
      }
    }
    if (s == 1) {
      left_only.push_back(c);
    } else if (s == 2) {
      right_only.push_back(c);
    } else {
      both.push_back(c);
    }
  }
  if (left_keys.empty()) {
    return Status::InvalidArgument(
        "Stream-stream join without equality predicate is not supported");
  }

  // ---- Watermarks: state key watermark, else state value watermarks. ----
  std::optional<size_t> key_ordinal;
  bool key_is_window = false;
  for (size_t k = 0; k < left_keys.size() && !key_ordinal; ++k) {
    for (const auto& [key, side] :
         {std::make_pair(&left_keys[k], &left), std::make_pair(&right_keys[k], &right)}) {
      std::vector<std::string> names = ColumnRefNames(*key);
      if (names.size() == 2 && EqualsIgnoreCase(names[0], side->alias)) {
        if (const WatermarkColumn* w = side->FindWatermark(names[1])) {
          key_ordinal = k;
          key_is_window = w->window;
          break;
        }
      }
    }
  }
  std::optional<int64_t> left_value_offset = StateValueWatermarkOffset(conjuncts, 1, sides);
  std::optional<int64_t> right_value_offset = StateValueWatermarkOffset(conjuncts, 2, sides);
  if (type != ops::JoinType::kInner && !key_ordinal) {
    bool valid = false;
    switch (type) {
      case ops::JoinType::kLeftOuter:
      case ops::JoinType::kLeftSemi:
        valid = left_value_offset.has_value();
        break;
      case ops::JoinType::kRightOuter:
        valid = right_value_offset.has_value();
        break;
      case ops::JoinType::kFullOuter:
        valid = left_value_offset.has_value() && right_value_offset.has_value();
        break;
      case ops::JoinType::kInner:
        break;
    }
    if (!valid) {
      return Status::InvalidArgument(
          std::string("Stream-stream ") + ops::JoinTypeName(type) +
          " join between two streaming DataFrame/Datasets is not supported without a watermark "
          "in the join keys, or a watermark on the nullable side and an appropriate range "
          "condition");
    }
  }

  // ---- Operator options and input SQL per side. ----
  ops::StreamStreamJoinOptions options;
  options.type = type;
  std::vector<std::string> input_sqls;
  for (int s : {1, 2}) {
    const Side& side = s == 1 ? left : right;
    const std::vector<Json>& keys = s == 1 ? left_keys : right_keys;
    const std::vector<Json>& only = s == 1 ? left_only : right_only;
    ops::JoinSideSpec& spec = s == 1 ? options.left : options.right;
    spec.alias = side.alias;
    const std::string a = QuoteIdentifier(side.alias);
    std::string select = "SELECT " + a + ".*";
    for (size_t k = 0; k < keys.size(); ++k) {
      SLUICE_ASSIGN_OR_RETURN(std::string key_sql, analysis.ast->ExpressionToSql(keys[k]));
      spec.key_columns.push_back("__join_key_" + std::to_string(k));
      select += ", " + key_sql + " AS " + spec.key_columns.back();
    }
    if (!side.watermarks.empty()) {
      const WatermarkColumn& w = side.watermarks[0];
      spec.late_time_column = "__join_late_us";
      select += ", " + TimeMicrosSql(a + "." + QuoteIdentifier(w.name), w.window) + " AS " +
                spec.late_time_column;
    }
    if (key_ordinal) {
      SLUICE_ASSIGN_OR_RETURN(std::string key_sql,
                              analysis.ast->ExpressionToSql(keys[*key_ordinal]));
      spec.state_time_column = "__join_state_us";
      select += ", " + TimeMicrosSql("(" + key_sql + ")", key_is_window) + " AS " +
                spec.state_time_column;
      spec.state_watermark_offset_ms = 0;
    } else if (!side.watermarks.empty()) {
      const std::optional<int64_t>& offset = s == 1 ? left_value_offset : right_value_offset;
      if (offset) {
        const WatermarkColumn& w = side.watermarks[0];
        spec.state_time_column = "__join_state_us";
        select += ", " + TimeMicrosSql(a + "." + QuoteIdentifier(w.name), w.window) + " AS " +
                  spec.state_time_column;
        spec.state_watermark_offset_ms = *offset;
      }
    }
    if (!only.empty()) {
      SLUICE_ASSIGN_OR_RETURN(std::string pre_sql, analysis.ast->ExpressionToSql(AndOf(only)));
      spec.pre_filter_column = "__join_pre";
      select += ", (" + pre_sql + ")::BOOLEAN AS " + spec.pre_filter_column;
    }
    input_sqls.push_back(select + " FROM " + side.relation_sql);
  }
  if (!both.empty()) {
    SLUICE_ASSIGN_OR_RETURN(options.condition_sql, analysis.ast->ExpressionToSql(AndOf(both)));
  }
  for (size_t k = 0; k < left_keys.size(); ++k) {  // state schema names (restart checks)
    SLUICE_ASSIGN_OR_RETURN(std::string l, analysis.ast->ExpressionToSql(left_keys[k]));
    SLUICE_ASSIGN_OR_RETURN(std::string r, analysis.ast->ExpressionToSql(right_keys[k]));
    options.key_descriptions.push_back(l + " = " + r);
  }

  // ---- Output SQL: the top-level SELECT over __op_output (one struct column per side). ----
  Json out = top;
  out["from_table"] = Json{{"type", "BASE_TABLE"},
                           {"alias", ""},
                           {"sample", nullptr},
                           {"query_location", 18446744073709551615ULL},
                           {"schema_name", ""},
                           {"table_name", kOutputTable},
                           {"column_name_alias", Json::array()},
                           {"catalog_name", ""},
                           {"at_clause", nullptr}};
  Json select_list = Json::array();
  for (const Json& item : top["select_list"]) {
    if (item.value("class", "") == "STAR") {
      const std::string rel = item.value("relation_name", std::string());
      if (!item.value("exclude_list", Json::array()).empty() ||
          !item.value("replace_list", Json::object()).empty() || item.value("columns", false) ||
          (item.contains("expr") && !item["expr"].is_null())) {
        return Status::NotSupported(
            "stream-stream join: * with EXCLUDE / REPLACE / COLUMNS in the select list");
      }
      if (rel.empty() || EqualsIgnoreCase(rel, left.alias))
        select_list.push_back(UnnestOf(left.alias));
      if ((rel.empty() && type != ops::JoinType::kLeftSemi) || EqualsIgnoreCase(rel, right.alias)) {
        select_list.push_back(UnnestOf(right.alias));
      }
      if (!rel.empty() && !EqualsIgnoreCase(rel, left.alias) &&
          !EqualsIgnoreCase(rel, right.alias)) {
        return Status::InvalidArgument("stream-stream join: " + rel + ".* names neither side");
      }
      continue;
    }
    SLUICE_ASSIGN_OR_RETURN(Json q, sides.Qualify(item));
    select_list.push_back(std::move(q));
  }
  out["select_list"] = std::move(select_list);
  for (const char* clause : {"where_clause", "having", "qualify"}) {
    if (out.contains(clause) && !out[clause].is_null()) {
      SLUICE_ASSIGN_OR_RETURN(out[clause], sides.Qualify(out[clause]));
    }
  }
  if (type == ops::JoinType::kLeftSemi) {
    for (const Json& item : out["select_list"]) {
      SLUICE_ASSIGN_OR_RETURN(int s, sides.SidesOf(item));
      if (s & 2) {
        return Status::InvalidArgument(
            "stream-stream join: a LEFT SEMI JOIN gives only the left "
            "side's columns, but the select list reads " +
            right.alias);
      }
    }
  }
  SLUICE_ASSIGN_OR_RETURN(std::string output_sql, analysis.ast->ToSql(out));

  StatefulPlanSpec spec;
  spec.operator_name = "symmetricHashJoin";
  // Spark's produceOutputWatermark: the smallest state watermark of the sides (the input
  // watermark when no side has one).
  {
    std::optional<int64_t> offset;
    for (const ops::JoinSideSpec* side : {&options.left, &options.right}) {
      if (side->state_time_column.empty()) continue;
      offset = std::min(offset.value_or(side->state_watermark_offset_ms),
                        side->state_watermark_offset_ms);
    }
    spec.output_watermark_offset_ms = std::min<int64_t>(offset.value_or(0), 0);
  }
  spec.input_sqls = std::move(input_sqls);
  spec.output_sql = std::move(output_sql);
  spec.op = std::make_unique<ops::StreamStreamJoin>(std::move(options));
  return std::optional<StatefulPlanSpec>(std::move(spec));
}

Result<std::optional<StreamJoinBelow>> PlanStreamJoinBelowUnchecked(const QueryAnalysis& analysis,
                                                                    const std::string& table) {
  const Json& top = analysis.top;
  if (!top.is_object() || !top.contains("from_table")) return std::optional<StreamJoinBelow>();
  const Json& from = top["from_table"];
  if (NodeType(from) != "JOIN" || !ReadsStream(from["left"]) || !ReadsStream(from["right"])) {
    return std::optional<StreamJoinBelow>();
  }
  // The join alone: its output is one STRUCT column per side (the left one only for a semi
  // join), filtered by the query's WHERE (which reads the joined rows).
  SLUICE_ASSIGN_OR_RETURN(Side left, AnalyzeSide(analysis, from["left"], "left"));
  SLUICE_ASSIGN_OR_RETURN(Side right, AnalyzeSide(analysis, from["right"], "right"));
  const bool semi = from.value("join_type", "") == "SEMI";
  Json join_top = top;
  join_top["select_list"] = Json::array({MakeColumnRef({left.alias})});
  if (!semi) join_top["select_list"].push_back(MakeColumnRef({right.alias}));
  join_top["group_expressions"] = Json::array();
  join_top["group_sets"] = Json::array();
  join_top["having"] = nullptr;
  join_top["qualify"] = nullptr;
  join_top["modifiers"] = Json::array();
  join_top["aggregate_handling"] = "STANDARD_HANDLING";
  QueryAnalysis join_analysis = analysis;
  join_analysis.top = join_top;
  join_analysis.has_aggregation = false;
  join_analysis.has_distinct = false;
  join_analysis.has_qualify = false;
  SLUICE_ASSIGN_OR_RETURN(join_analysis.sql, analysis.ast->ToSql(join_top));
  SLUICE_ASSIGN_OR_RETURN(std::optional<StatefulPlanSpec> join,
                          PlanStreamJoinUnchecked(join_analysis));
  if (!join) return Status::Internal("stream-stream join below an operator was not planned");

  // The rest of the query over the join's output table: column references qualified by their
  // side, read as the side's struct field (l.x); `*` / `l.*` as unnest(l).
  SideResolver sides{&left, &right};
  // The aggregation's window column (`window.start`) is not a side's column.
  const std::set<std::string> keep = {"window", "session_window"};
  Json upper = top;
  Json select_list = Json::array();
  for (const Json& item : top["select_list"]) {
    if (item.value("class", "") == "STAR") {
      const std::string rel = item.value("relation_name", std::string());
      if (rel.empty() || EqualsIgnoreCase(rel, left.alias))
        select_list.push_back(UnnestOf(left.alias));
      if ((rel.empty() && !semi) || EqualsIgnoreCase(rel, right.alias)) {
        select_list.push_back(UnnestOf(right.alias));
      }
      continue;
    }
    SLUICE_ASSIGN_OR_RETURN(Json q, sides.Qualify(item, keep));
    select_list.push_back(std::move(q));
  }
  upper["select_list"] = std::move(select_list);
  SLUICE_ASSIGN_OR_RETURN(upper["group_expressions"],
                          sides.Qualify(top["group_expressions"], keep));
  for (const char* clause : {"having", "qualify"}) {
    if (upper.contains(clause) && !upper[clause].is_null()) {
      SLUICE_ASSIGN_OR_RETURN(upper[clause], sides.Qualify(upper[clause], keep));
    }
  }
  SLUICE_ASSIGN_OR_RETURN(upper["modifiers"], sides.Qualify(top["modifiers"], keep));
  upper["where_clause"] = nullptr;
  upper["from_table"] = Json{{"type", "BASE_TABLE"},
                             {"alias", ""},
                             {"sample", nullptr},
                             {"query_location", 18446744073709551615ULL},
                             {"schema_name", ""},
                             {"table_name", table},
                             {"column_name_alias", Json::array()},
                             {"catalog_name", ""},
                             {"at_clause", nullptr}};
  StreamJoinBelow out;
  out.join = std::move(*join);
  out.upper = std::move(upper);
  for (const Side* side : {&left, &right}) {
    if (semi && side == &right) continue;  // a semi join outputs the left side only
    for (const WatermarkColumn& w : side->watermarks) {
      if (!w.window) out.watermark_columns.emplace_back(side->alias, w.name);
    }
  }
  return std::optional<StreamJoinBelow>(std::move(out));
}

}  // namespace

Result<std::optional<StreamJoinBelow>> PlanStreamJoinBelow(const QueryAnalysis& analysis,
                                                           const std::string& table) {
  try {
    return PlanStreamJoinBelowUnchecked(analysis, table);
  } catch (const std::exception& e) {
    return Status::Internal(std::string("stream-stream join planner: unexpected parse tree: ") +
                            e.what());
  }
}

Result<std::optional<StatefulPlanSpec>> PlanStreamJoin(const QueryAnalysis& analysis) {
  // The tree walks use nlohmann::json, which throws on a shape it does not expect (a DuckDB
  // version with another tree layout): no exception leaves the module.
  try {
    return PlanStreamJoinUnchecked(analysis);
  } catch (const std::exception& e) {
    return Status::Internal(std::string("stream-stream join planner: unexpected parse tree: ") +
                            e.what());
  }
}

}  // namespace sluice::plan
