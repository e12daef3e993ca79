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
#include "engine/relation_names.h"
#include "ops/stream_stream_join.h"

namespace sluice::plan {
namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return AsciiLower(a) == AsciiLower(b);
}

// True when some JOIN below `node` (not `node` itself) joins two stream-reading relations.
bool HasNestedStreamJoin(const Json& node, const Json* top_join) {
  if (node.is_object()) {
    if (&node != top_join && NodeType(node) == "JOIN" && ReadsStream(JoinLeft(node)) &&
        ReadsStream(JoinRight(node))) {
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
  side.alias = Alias(ref);
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
        (NodeType(ref).empty() ? std::string("?") : NodeType(ref)) + ")");
  }
  if (side.alias.empty()) side.alias = std::string("__join_") + which;
  const Json& node = SubqueryNode(ref);
  SLUICE_ASSIGN_OR_RETURN(std::string sub_sql, analysis.ast->ToSql(node));
  side.relation_sql = "(" + sub_sql + ") AS " + QuoteIdentifier(side.alias);
  if (NodeType(node) != "SELECT_NODE") return side;

  std::set<size_t> streams;
  CollectStreams(FromTable(node), &streams);
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
  for (const Json& item : SelectList(node)) {
    const std::string cls = ExpressionClass(item);
    const std::string alias = Alias(item);
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
    if (FunctionName(item) == kWindowFunction && !Children(item).empty() &&
        watermark_of(Children(item)[0]) != nullptr) {
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
      const std::string cls = ExpressionClass(e);
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
      if (ExpressionClass(e) != "COLUMN_REF") return std::nullopt;
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
      return MakeColumnRef(names, Alias(e));
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
  const std::string cls = ExpressionClass(e);
  if (cls == "CAST" && CastTypeId(e) == "INTERVAL" && ExpressionClass(CastChild(e)) == "CONSTANT") {
    const std::optional<std::string> text = StringConstant(CastChild(e));
    if (!text) return std::nullopt;
    auto d = ParseDuration(*text);
    if (!d.ok()) return std::nullopt;
    return d->micros;
  }
  if (IsIntervalConstant(e)) {
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
  if (unit == kUnits.end() || Children(e).size() != 1) return std::nullopt;
  // The count: a constant, possibly under CAST / trunc (DuckDB's INTERVAL n UNIT).
  const Json* c = &Children(e)[0];
  while (true) {
    const std::string ccls = ExpressionClass(*c);
    if (ccls == "CAST") {
      c = &CastChild(*c);
    } else if (FunctionName(*c) == "trunc" && Children(*c).size() == 1) {
      c = &Children(*c)[0];
    } else {
      break;
    }
  }
  const std::optional<std::string> count = ConstantText(*c);
  if (!count) return std::nullopt;
  auto d = ParseDuration(*count + " " + unit->second);
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
  const std::string cls = ExpressionClass(e);
  if (cls == "COLUMN_REF") {
    auto s = sides.SideOf(ColumnRefNames(e));
    if (!s.ok()) return false;
    out->push_back(Term{sign, *s, ColumnRefNames(e), 0});
    return true;
  }
  if (cls == "CAST") return CollectTerms(CastChild(e), sign, sides, out);
  const std::string fn = FunctionName(e);
  const Json& ch = Children(e);
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
    const std::string type = NodeType(c);
    if (type == "COMPARE_BETWEEN") {
      // input BETWEEN lower AND upper = input >= lower AND input <= upper.
      auto ge = StateWatermarkFromLessThan(BetweenLower(c), BetweenInput(c), s, sides);
      auto le = StateWatermarkFromLessThan(BetweenInput(c), BetweenUpper(c), s, sides);
      consider(ge ? std::optional<int64_t>(*ge - 1) : std::nullopt);
      consider(le ? std::optional<int64_t>(*le - 1) : std::nullopt);
      continue;
    }
    if (ExpressionClass(c) != "COMPARISON") continue;
    const Json& l = ComparisonLeft(c);
    const Json& r = ComparisonRight(c);
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

// ---- PlanStreamJoinUnchecked's phases ----

// Phase 1: the join type, or the refusal of this join (Spark's UnsupportedOperationChecker, and
// what Sluice does not do yet). Spark 4.2 runs an inner join in Update mode as in Append (each
// joined row once; the sink appends, having no keys); other join types are Append only;
// Complete needs an aggregation.
Result<ops::JoinType> ReadJoinType(const QueryAnalysis& analysis, const Json& from) {
  const std::string join_type = JoinType(from);
  if (analysis.output_mode == sluice::OutputMode::kComplete) {
    return Status::InvalidArgument(
        "Complete output mode not supported when there are no streaming aggregations on "
        "streaming DataFrames/Datasets (a stream-stream join is Append or, inner, Update)");
  }
  if (analysis.output_mode == sluice::OutputMode::kUpdate && join_type != "INNER") {
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
  const std::string ref_type = JoinRefType(from);
  if (ref_type != "REGULAR" || !JoinUsingColumns(from).empty()) {
    return Status::NotSupported("stream-stream join: only JOIN ... ON is supported (not " +
                                (JoinUsingColumns(from).empty() ? ref_type : std::string("USING")) +
                                "); write the condition with ON");
  }
  ops::JoinType type;
  if (join_type == "INNER") {
    type = ops::JoinType::kInner;
  } else if (join_type == "LEFT") {
    type = ops::JoinType::kLeftOuter;
  } else if (join_type == "RIGHT") {
    type = ops::JoinType::kRightOuter;
  } else if (join_type == "FULL" || join_type == "OUTER") {
    type = ops::JoinType::kFullOuter;
  } else if (join_type == "SEMI") {
    type = ops::JoinType::kLeftSemi;
  } else if (join_type == "ANTI") {
    return Status::InvalidArgument(
        "Left anti joins with a streaming DataFrame/Dataset on the right are not supported");
  } else {
    return Status::NotSupported("stream-stream join: join type " + join_type + " is not supported");
  }
  if (JoinCondition(from).is_null()) {
    return Status::InvalidArgument(
        "Stream-stream join without equality predicate is not supported");
  }
  return type;
}

// The ON condition split: equi-join keys (left_keys[k] = right_keys[k]), one-side filters and
// the conjuncts that read both sides.
struct OnCondition {
  std::vector<Json> conjuncts;  // every conjunct, qualified by side
  std::vector<Json> left_keys;
  std::vector<Json> right_keys;
  std::vector<Json> left_only;
  std::vector<Json> right_only;
  std::vector<Json> both;
};

// Phase 2: the ON condition's keys, one-side filters and the rest.
Result<OnCondition> SplitOnCondition(const Json& from, const SideResolver& sides) {
  OnCondition on;
  SLUICE_ASSIGN_OR_RETURN(Json condition, sides.Qualify(JoinCondition(from)));
  on.conjuncts = Conjuncts(condition);
  for (const Json& c : on.conjuncts) {
    SLUICE_ASSIGN_OR_RETURN(int s, sides.SidesOf(c));
    if (NodeType(c) == "COMPARE_EQUAL" && s == 3) {
      SLUICE_ASSIGN_OR_RETURN(int a, sides.SidesOf(ComparisonLeft(c)));
      SLUICE_ASSIGN_OR_RETURN(int b, sides.SidesOf(ComparisonRight(c)));
      if (a == 1 && b == 2) {
        on.left_keys.push_back(ComparisonLeft(c));
        on.right_keys.push_back(ComparisonRight(c));
        continue;
      }
      if (a == 2 && b == 1) {
        on.left_keys.push_back(ComparisonRight(c));
        on.right_keys.push_back(ComparisonLeft(c));
        continue;
      }
    }
    if (s == 1) {
      on.left_only.push_back(c);
    } else if (s == 2) {
      on.right_only.push_back(c);
    } else {
      on.both.push_back(c);
    }
  }
  if (on.left_keys.empty()) {
    return Status::InvalidArgument(
        "Stream-stream join without equality predicate is not supported");
  }
  return on;
}

// How the join's state is evicted: by a join key that carries a watermark (the state key
// watermark), else by each side's state value watermark offset (from the range conditions).
struct JoinWatermarks {
  std::optional<size_t> key_ordinal;  // the watermarked key's index
  bool key_is_window = false;
  std::optional<int64_t> left_value_offset;
  std::optional<int64_t> right_value_offset;
};

// Phase 3: the state watermarks, or Spark's refusal of an outer / semi join that could never
// evict (no watermark in the keys, none on the nullable side with a range condition).
Result<JoinWatermarks> ReadJoinWatermarks(const OnCondition& on, const SideResolver& sides,
                                          ops::JoinType type) {
  JoinWatermarks w;
  for (size_t k = 0; k < on.left_keys.size() && !w.key_ordinal; ++k) {
    for (const auto& [key, side] : {std::make_pair(&on.left_keys[k], sides.left),
                                    std::make_pair(&on.right_keys[k], sides.right)}) {
      std::vector<std::string> names = ColumnRefNames(*key);
      if (names.size() == 2 && EqualsIgnoreCase(names[0], side->alias)) {
        if (const WatermarkColumn* c = side->FindWatermark(names[1])) {
          w.key_ordinal = k;
          w.key_is_window = c->window;
          break;
        }
      }
    }
  }
  w.left_value_offset = StateValueWatermarkOffset(on.conjuncts, 1, sides);
  w.right_value_offset = StateValueWatermarkOffset(on.conjuncts, 2, sides);
  if (type == ops::JoinType::kInner || w.key_ordinal) return w;
  bool valid = false;
  switch (type) {
    case ops::JoinType::kLeftOuter:
    case ops::JoinType::kLeftSemi:
      valid = w.left_value_offset.has_value();
      break;
    case ops::JoinType::kRightOuter:
      valid = w.right_value_offset.has_value();
      break;
    case ops::JoinType::kFullOuter:
      valid = w.left_value_offset.has_value() && w.right_value_offset.has_value();
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
  return w;
}

// Phase 4: side `s`'s (1 left, 2 right) input SQL and operator spec: its rows with the key
// columns, the late-row time, the state time and the one-side filter.
Result<std::string> SideInputSql(const QueryAnalysis& analysis, int s, const Side& side,
                                 const OnCondition& on, const JoinWatermarks& w,
                                 ops::JoinSideSpec* spec) {
  const std::vector<Json>& keys = s == 1 ? on.left_keys : on.right_keys;
  const std::vector<Json>& only = s == 1 ? on.left_only : on.right_only;
  spec->alias = side.alias;
  const std::string a = QuoteIdentifier(side.alias);
  std::string select = "SELECT " + a + ".*";
  for (size_t k = 0; k < keys.size(); ++k) {
    SLUICE_ASSIGN_OR_RETURN(std::string key_sql, analysis.ast->ExpressionToSql(keys[k]));
    spec->key_columns.push_back("__join_key_" + std::to_string(k));
    select += ", " + key_sql + " AS " + spec->key_columns.back();
  }
  if (!side.watermarks.empty()) {
    const WatermarkColumn& wc = side.watermarks[0];
    spec->late_time_column = "__join_late_us";
    select += ", " + TimeMicrosSql(a + "." + QuoteIdentifier(wc.name), wc.window) + " AS " +
              spec->late_time_column;
  }
  if (w.key_ordinal) {
    SLUICE_ASSIGN_OR_RETURN(std::string key_sql,
                            analysis.ast->ExpressionToSql(keys[*w.key_ordinal]));
    spec->state_time_column = "__join_state_us";
    select += ", " + TimeMicrosSql("(" + key_sql + ")", w.key_is_window) + " AS " +
              spec->state_time_column;
    spec->state_watermark_offset_ms = 0;
  } else if (!side.watermarks.empty()) {
    const std::optional<int64_t>& offset = s == 1 ? w.left_value_offset : w.right_value_offset;
    if (offset) {
      const WatermarkColumn& wc = side.watermarks[0];
      spec->state_time_column = "__join_state_us";
      select += ", " + TimeMicrosSql(a + "." + QuoteIdentifier(wc.name), wc.window) + " AS " +
                spec->state_time_column;
      spec->state_watermark_offset_ms = *offset;
    }
  }
  if (!only.empty()) {
    SLUICE_ASSIGN_OR_RETURN(std::string pre_sql,
                            analysis.ast->ExpressionToSql(MakeConjunctionAnd(only)));
    spec->pre_filter_column = "__join_pre";
    select += ", (" + pre_sql + ")::BOOLEAN AS " + spec->pre_filter_column;
  }
  return select + " FROM " + side.relation_sql;
}

// Phase 5: the output SQL: the top-level SELECT over __op_output, whose columns are one struct
// per side (`*` / `l.*` as unnest of the side's struct, column references qualified by side).
Result<std::string> JoinOutputSql(const QueryAnalysis& analysis, const SideResolver& sides,
                                  ops::JoinType type) {
  const Json& top = analysis.top;
  const Side& left = *sides.left;
  const Side& right = *sides.right;
  Json out = top;
  FromTable(out) = MakeBaseTableRef(engine::kOperatorOutputTable, "");
  Json select_list = Json::array();
  for (const Json& item : SelectList(top)) {
    if (ExpressionClass(item) == "STAR") {
      const std::string rel = StarRelation(item);
      if (!IsPlainStar(item)) {
        return Status::NotSupported(
            "stream-stream join: * with EXCLUDE / REPLACE / RENAME / COLUMNS in the select list");
      }
      if (rel.empty() || EqualsIgnoreCase(rel, left.alias))
        select_list.push_back(MakeUnnestCall(left.alias));
      if ((rel.empty() && type != ops::JoinType::kLeftSemi) || EqualsIgnoreCase(rel, right.alias)) {
        select_list.push_back(MakeUnnestCall(right.alias));
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
  SelectList(out) = std::move(select_list);
  for (Json* clause : {&WhereClause(out), &Having(out), &Qualify(out)}) {
    if (!clause->is_null()) {
      SLUICE_ASSIGN_OR_RETURN(*clause, sides.Qualify(*clause));
    }
  }
  if (type == ops::JoinType::kLeftSemi) {
    for (const Json& item : SelectList(out)) {
      SLUICE_ASSIGN_OR_RETURN(int s, sides.SidesOf(item));
      if (s & 2) {
        return Status::InvalidArgument(
            "stream-stream join: a LEFT SEMI JOIN gives only the left "
            "side's columns, but the select list reads " +
            right.alias);
      }
    }
  }
  return analysis.ast->ToSql(out);
}

// Spark's produceOutputWatermark: the smallest state watermark offset of the sides (the input
// watermark, 0, when no side has one).
int64_t OutputWatermarkOffset(const ops::StreamStreamJoinOptions& options) {
  std::optional<int64_t> offset;
  for (const ops::JoinSideSpec* side : {&options.left, &options.right}) {
    if (side->state_time_column.empty()) continue;
    offset =
        std::min(offset.value_or(side->state_watermark_offset_ms), side->state_watermark_offset_ms);
  }
  return std::min<int64_t>(offset.value_or(0), 0);
}

Result<std::optional<StatefulPlanSpec>> PlanStreamJoinUnchecked(const QueryAnalysis& analysis) {
  const Json& top = analysis.top;
  if (FromTable(top).is_null()) return std::optional<StatefulPlanSpec>();
  const Json& from = FromTable(top);
  const bool top_is_stream_join =
      NodeType(from) == "JOIN" && ReadsStream(JoinLeft(from)) && ReadsStream(JoinRight(from));
  if (HasNestedStreamJoin(top, top_is_stream_join ? &from : nullptr)) {
    return Status::NotSupported(
        "a stream-stream join below the top-level FROM (in a subquery, or joined again) is not "
        "supported yet");
  }
  if (!top_is_stream_join) return std::optional<StatefulPlanSpec>();
  SLUICE_ASSIGN_OR_RETURN(ops::JoinType type, ReadJoinType(analysis, from));
  SLUICE_ASSIGN_OR_RETURN(Side left, AnalyzeSide(analysis, JoinLeft(from), "left"));
  SLUICE_ASSIGN_OR_RETURN(Side right, AnalyzeSide(analysis, JoinRight(from), "right"));
  if (EqualsIgnoreCase(left.alias, right.alias)) {
    return Status::InvalidArgument("stream-stream join: both sides are named " + left.alias +
                                   "; give them different aliases");
  }
  SideResolver sides{&left, &right};
  SLUICE_ASSIGN_OR_RETURN(OnCondition on, SplitOnCondition(from, sides));
  SLUICE_ASSIGN_OR_RETURN(JoinWatermarks watermarks, ReadJoinWatermarks(on, sides, type));

  ops::StreamStreamJoinOptions options;
  options.type = type;
  std::vector<std::string> input_sqls;
  for (int s : {1, 2}) {
    SLUICE_ASSIGN_OR_RETURN(std::string sql,
                            SideInputSql(analysis, s, s == 1 ? left : right, on, watermarks,
                                         s == 1 ? &options.left : &options.right));
    input_sqls.push_back(std::move(sql));
  }
  if (!on.both.empty()) {
    SLUICE_ASSIGN_OR_RETURN(options.condition_sql,
                            analysis.ast->ExpressionToSql(MakeConjunctionAnd(on.both)));
  }
  for (size_t k = 0; k < on.left_keys.size(); ++k) {  // state schema names (restart checks)
    SLUICE_ASSIGN_OR_RETURN(std::string l, analysis.ast->ExpressionToSql(on.left_keys[k]));
    SLUICE_ASSIGN_OR_RETURN(std::string r, analysis.ast->ExpressionToSql(on.right_keys[k]));
    options.key_descriptions.push_back(l + " = " + r);
  }
  SLUICE_ASSIGN_OR_RETURN(std::string output_sql, JoinOutputSql(analysis, sides, type));

  StatefulPlanSpec spec;
  spec.operator_name = "symmetricHashJoin";
  spec.output_watermark_offset_ms = OutputWatermarkOffset(options);
  spec.input_sqls = std::move(input_sqls);
  spec.output_sql = std::move(output_sql);
  spec.op = std::make_unique<ops::StreamStreamJoin>(std::move(options));
  return std::optional<StatefulPlanSpec>(std::move(spec));
}

Result<std::optional<StreamJoinBelow>> PlanStreamJoinBelowUnchecked(const QueryAnalysis& analysis,
                                                                    const std::string& table) {
  const Json& top = analysis.top;
  const Json& from = FromTable(top);
  if (NodeType(from) != "JOIN" || !ReadsStream(JoinLeft(from)) || !ReadsStream(JoinRight(from))) {
    return std::optional<StreamJoinBelow>();
  }
  // The join alone: its output is one STRUCT column per side (the left one only for a semi
  // join), filtered by the query's WHERE (which reads the joined rows).
  SLUICE_ASSIGN_OR_RETURN(Side left, AnalyzeSide(analysis, JoinLeft(from), "left"));
  SLUICE_ASSIGN_OR_RETURN(Side right, AnalyzeSide(analysis, JoinRight(from), "right"));
  const bool semi = JoinType(from) == "SEMI";
  Json join_top = top;
  SelectList(join_top) = Json::array({MakeColumnRef({left.alias})});
  if (!semi) SelectList(join_top).push_back(MakeColumnRef({right.alias}));
  DropAggregationAndModifiers(join_top);
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
  for (const Json& item : SelectList(top)) {
    if (ExpressionClass(item) == "STAR") {
      const std::string rel = StarRelation(item);
      if (rel.empty() || EqualsIgnoreCase(rel, left.alias))
        select_list.push_back(MakeUnnestCall(left.alias));
      if ((rel.empty() && !semi) || EqualsIgnoreCase(rel, right.alias)) {
        select_list.push_back(MakeUnnestCall(right.alias));
      }
      continue;
    }
    SLUICE_ASSIGN_OR_RETURN(Json q, sides.Qualify(item, keep));
    select_list.push_back(std::move(q));
  }
  SelectList(upper) = std::move(select_list);
  SLUICE_ASSIGN_OR_RETURN(GroupExpressions(upper), sides.Qualify(GroupExpressions(top), keep));
  for (Json* clause : {&Having(upper), &Qualify(upper)}) {
    if (!clause->is_null()) {
      SLUICE_ASSIGN_OR_RETURN(*clause, sides.Qualify(*clause, keep));
    }
  }
  SLUICE_ASSIGN_OR_RETURN(Modifiers(upper), sides.Qualify(Modifiers(top), keep));
  WhereClause(upper) = nullptr;
  FromTable(upper) = MakeBaseTableRef(table, "");
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
