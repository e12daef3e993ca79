#include "scaleout/state_partitioning.h"

#include <memory>
#include <utility>

#include "common/strings.h"
#include "ops/deduplicate.h"
#include "plan/sql_ast.h"

namespace sluice::scaleout {
namespace {

using plan::Json;

constexpr char kAggregationOperator[] = "stateStoreSave";

// One key of the operator's state: its name (an alias or a column's name) and its expression in
// the scope of `node` (the SELECT whose FROM it reads).
struct StateKey {
  std::string name;
  Json expr;
};

Json Unaliased(Json e) {
  if (e.is_object()) e.erase("alias");
  return e;
}

// The name a select item or a key expression goes by: its alias, a column's last name, else its
// SQL text.
Result<std::string> KeyName(plan::SqlAst& ast, const Json& e) {
  if (!plan::Alias(e).empty()) return plan::Alias(e);
  std::vector<std::string> names = plan::ColumnRefNames(e);
  if (!names.empty()) return names.back();
  return ast.ExpressionToSql(Unaliased(e));
}

// A GROUP BY / DISTINCT ON / PARTITION BY expression of `node` as a key: a position or a select
// alias stands for its select item.
Result<StateKey> ToKey(plan::SqlAst& ast, const Json& node, const Json& e) {
  const Json& items = plan::SelectList(node);
  if (std::optional<int64_t> pos = plan::IntegerConstant(e)) {
    if (*pos >= 1 && static_cast<size_t>(*pos) <= items.size()) {
      const Json& item = items[static_cast<size_t>(*pos - 1)];
      SLUICE_ASSIGN_OR_RETURN(std::string name, KeyName(ast, item));
      return StateKey{name, Unaliased(item)};
    }
  }
  std::vector<std::string> names = plan::ColumnRefNames(e);
  if (names.size() == 1) {
    for (const Json& item : items) {
      if (AsciiLower(plan::Alias(item)) == AsciiLower(names[0])) {
        return StateKey{plan::Alias(item), Unaliased(item)};
      }
    }
  }
  for (const Json& item : items) {  // GROUP BY f(x) with f(x) AS name in the select list
    if (!plan::Alias(item).empty() && plan::SameExpression(item, e)) {
      return StateKey{plan::Alias(item), Unaliased(e)};
    }
  }
  SLUICE_ASSIGN_OR_RETURN(std::string name, KeyName(ast, e));
  return StateKey{name, Unaliased(e)};
}

bool IsWindowCall(const Json& e) {
  const std::string fn = plan::FunctionName(e);
  return fn == plan::kWindowFunction || fn == plan::kSessionWindowFunction;
}

// The keys of the top node's state; `kind` says what keeps it ("the aggregation").
Status ReadKeys(plan::SqlAst& ast, const Json& top, const std::string& op, std::string* kind,
                std::vector<StateKey>* keys, bool* windowed) {
  auto add = [&](const Json& e) -> Status {
    if (IsWindowCall(e)) {
      *windowed = true;
      return Status::OK();
    }
    SLUICE_ASSIGN_OR_RETURN(StateKey k, ToKey(ast, top, e));
    if (IsWindowCall(k.expr)) {
      *windowed = true;
      return Status::OK();
    }
    keys->push_back(std::move(k));
    return Status::OK();
  };
  if (op == kAggregationOperator) {
    *kind = "the aggregation";
    for (const Json& g : plan::GroupExpressions(top)) SLUICE_RETURN_NOT_OK(add(g));
    return Status::OK();
  }
  if (op != ops::kDedupeOperatorName && op != ops::kDedupeWithinWatermarkOperatorName) {
    return Status::NotSupported("its stateful operator " + op +
                                " is not supported in group mode yet (aggregation and "
                                "deduplication are)");
  }
  *kind = "the deduplication";
  for (const Json& m : plan::Modifiers(top)) {
    if (plan::NodeType(m) != "DISTINCT_MODIFIER") continue;
    const Json& targets = plan::DistinctOnTargets(m);
    if (targets.empty()) {  // SELECT DISTINCT: every select item
      for (const Json& item : plan::SelectList(top)) SLUICE_RETURN_NOT_OK(add(item));
    } else {
      for (const Json& t : targets) SLUICE_RETURN_NOT_OK(add(t));
    }
    return Status::OK();
  }
  Status st;
  bool found = false;
  plan::VisitExpression(plan::Qualify(top), [&](const Json& e) {
    if (found || plan::ExpressionClass(e) != "WINDOW") return true;
    found = true;
    for (const Json& p : plan::WindowPartitions(e)) {
      if (st.ok()) st = add(p);
    }
    return false;
  });
  return st;
}

// Whether `node` itself is the stateful part: it groups, aggregates, or deduplicates.
bool IsStatefulNode(const Json& node) {
  if (!plan::GroupExpressions(node).empty() || !plan::Qualify(node).is_null()) return true;
  for (const Json& m : plan::Modifiers(node)) {
    if (plan::NodeType(m) == "DISTINCT_MODIFIER") return true;
  }
  for (const Json& item : plan::SelectList(node)) {
    if (plan::ContainsAggregate(item)) return true;
  }
  return false;
}

// The SELECT that keeps the state: the top one, or the first below it through FROM subqueries
// (a stateless SELECT over an aggregation, such as a filter of its rows).
Json StatefulNode(const Json& top) {
  const Json* node = &top;
  for (int depth = 0; depth < 16 && !IsStatefulNode(*node); ++depth) {
    const Json& from = plan::FromTable(*node);
    const Json& sub = plan::SubqueryNode(from);
    if (plan::NodeType(from) != "SUBQUERY" || !plan::IsSelectNode(sub)) break;
    node = &sub;
  }
  return *node;
}

// `expr`, in the scope of `node`, traced down to the SELECT whose FROM is the stream itself:
// through subqueries that project the column (by alias, by name, or by *). On success *base is
// that SELECT and *out the expression over the stream's columns.
Status Trace(const Json& expr, const Json& node, const Json** base, Json* out, int depth = 0) {
  const Json& from = plan::FromTable(node);
  if (plan::StreamIndexOf(from).has_value()) {
    *base = &node;
    *out = expr;
    return Status::OK();
  }
  std::vector<std::string> names = plan::ColumnRefNames(expr);
  const Json& sub = plan::SubqueryNode(from);
  if (names.empty() || plan::NodeType(from) != "SUBQUERY" || !plan::IsSelectNode(sub) ||
      depth > 16) {
    return Status::NotSupported(
        "it is not computed directly over the Kafka stream (a column of the stream, or one a "
        "subquery over the stream computes)");
  }
  const std::string& name = names.back();
  bool star = false;
  for (const Json& item : plan::SelectList(sub)) {
    if (plan::ExpressionClass(item) == "STAR") star = true;
    std::string item_name = plan::Alias(item);
    if (item_name.empty()) {
      std::vector<std::string> n = plan::ColumnRefNames(item);
      if (!n.empty()) item_name = n.back();
    }
    if (AsciiLower(item_name) == AsciiLower(name)) {
      return Trace(Unaliased(item), sub, base, out, depth + 1);
    }
  }
  if (star) return Trace(plan::MakeColumnRef({name}), sub, base, out, depth + 1);
  return Status::NotSupported("the subquery it comes from does not project it");
}

std::string KeyList(const std::vector<StateKey>& keys, bool windowed) {
  std::string out = windowed ? "window" : "";
  for (const StateKey& k : keys) out += (out.empty() ? "" : ", ") + k.name;
  return out;
}

}  // namespace

Result<StatePartitioning> CheckStatePartitioning(engine::Engine* engine,
                                                 const plan::ParsedStreamingQuery& parsed,
                                                 const std::vector<std::string>& operators,
                                                 const std::optional<std::string>& declared,
                                                 const std::string& topic,
                                                 const std::string& what) {
  auto refuse = [&](const std::string& why) {
    return Status::NotSupported(what + ": group mode (--group): " + why +
                                " (docs/scale-out.md \"Keyed state and partitioning\")");
  };
  if (operators.size() != 1) {
    std::string ops;
    for (const std::string& op : operators) ops += (ops.empty() ? "" : ", ") + op;
    return refuse("the query chains several stateful operators (" + ops +
                  "), which group mode does not run yet");
  }
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<plan::SqlAst> ast, plan::SqlAst::Open(engine));
  SLUICE_ASSIGN_OR_RETURN(std::string sql, plan::RewriteWindowCalls(parsed.sql));
  SLUICE_ASSIGN_OR_RETURN(Json parsed_top, ast->ParseSelect(sql));
  const Json top = StatefulNode(parsed_top);
  std::string kind;
  std::vector<StateKey> keys;
  bool windowed = false;
  Status read = ReadKeys(*ast, top, operators[0], &kind, &keys, &windowed);
  if (!read.ok()) return refuse(read.message());
  if (keys.empty()) {
    return refuse(kind + " keeps one state for the whole topic (" +
                  (windowed ? "by window only" : "no key") +
                  "), which cannot be split by partition: group by a key the topic " + topic +
                  " is partitioned by");
  }
  const std::string& first = keys[0].name;
  if (!declared) {
    return refuse(kind + " keeps state by (" + KeyList(keys, windowed) + "); the topic " + topic +
                  " must be partitioned by " + first + " (declare partitionedBy => '" + first +
                  "'), or repartition it first");
  }
  const StateKey* key = nullptr;
  for (const StateKey& k : keys) {
    if (AsciiLower(k.name) == AsciiLower(*declared)) key = &k;
  }
  if (key == nullptr) {
    return refuse(kind + " keeps state by (" + KeyList(keys, windowed) + "), not by " + *declared +
                  " (partitionedBy): the topic " + topic + " must be partitioned by " + first +
                  " (declare partitionedBy => '" + first + "'), or repartition it first");
  }
  const Json* base = nullptr;
  Json expr;
  Status traced = Trace(key->expr, top, &base, &expr);
  if (!traced.ok()) {
    return refuse("the partitionedBy column " + *declared + " cannot be checked against the " +
                  "records' keys: " + traced.message());
  }
  SLUICE_ASSIGN_OR_RETURN(std::string expr_sql, ast->ExpressionToSql(expr));
  SLUICE_ASSIGN_OR_RETURN(Json columns,
                          ast->ParseSelect("SELECT \"partition\" AS __p, \"offset\" AS __o, "
                                           "decode(\"key\") AS __k, CAST((" +
                                           expr_sql + ") AS VARCHAR) AS __v FROM __x"));
  Json check = *base;
  plan::DropAggregationAndModifiers(check);
  plan::WhereClause(check) = nullptr;
  plan::SelectList(check) = plan::SelectList(columns);
  SLUICE_ASSIGN_OR_RETURN(std::string check_sql, ast->ToSql(check));
  StatePartitioning out;
  out.column = *declared;
  out.check_sql = "SELECT __p, __o, __k, __v FROM (" + check_sql +
                  ") WHERE __k IS DISTINCT FROM __v ORDER BY __p, __o LIMIT 1";
  return out;
}

}  // namespace sluice::scaleout
