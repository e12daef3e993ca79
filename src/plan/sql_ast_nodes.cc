// The typed accessors of sql_ast.h: every key of DuckDB's parse-tree JSON the planners use is
// spelled in this file only.
#include "engine/relation_names.h"
#include "plan/sql_ast.h"

namespace sluice::plan {
namespace {

const Json& Null() {
  static const Json kNull;
  return kNull;
}

// node[key] without inserting: null when `node` is not an object or has no `key`.
const Json& Get(const Json& node, const char* key) {
  if (!node.is_object()) return Null();
  auto it = node.find(key);
  return it == node.end() ? Null() : *it;
}

std::string GetString(const Json& node, const char* key, const char* fallback = "") {
  const Json& v = Get(node, key);
  return v.is_string() ? v.get<std::string>() : std::string(fallback);
}

bool GetBool(const Json& node, const char* key, bool fallback) {
  const Json& v = Get(node, key);
  return v.is_boolean() ? v.get<bool>() : fallback;
}

bool EmptyOrNull(const Json& v) { return v.is_null() || v.empty(); }

}  // namespace

std::string NodeType(const Json& node) { return GetString(node, "type"); }
bool IsSelectNode(const Json& node) { return NodeType(node) == "SELECT_NODE"; }
std::string ExpressionClass(const Json& expr) { return GetString(expr, "class"); }
std::string Alias(const Json& node) { return GetString(node, "alias"); }
void SetAlias(Json& node, const std::string& alias) { node["alias"] = alias; }

const Json& SelectList(const Json& node) { return Get(node, "select_list"); }
Json& SelectList(Json& node) { return node["select_list"]; }
const Json& FromTable(const Json& node) { return Get(node, "from_table"); }
Json& FromTable(Json& node) { return node["from_table"]; }
const Json& WhereClause(const Json& node) { return Get(node, "where_clause"); }
Json& WhereClause(Json& node) { return node["where_clause"]; }
const Json& GroupExpressions(const Json& node) { return Get(node, "group_expressions"); }
Json& GroupExpressions(Json& node) { return node["group_expressions"]; }
const Json& GroupSets(const Json& node) { return Get(node, "group_sets"); }
Json& GroupSets(Json& node) { return node["group_sets"]; }
const Json& Having(const Json& node) { return Get(node, "having"); }
Json& Having(Json& node) { return node["having"]; }
const Json& Qualify(const Json& node) { return Get(node, "qualify"); }
Json& Qualify(Json& node) { return node["qualify"]; }
const Json& Modifiers(const Json& node) { return Get(node, "modifiers"); }
Json& Modifiers(Json& node) { return node["modifiers"]; }
bool GroupsByAll(const Json& node) {
  return GetString(node, "aggregate_handling") == "FORCE_AGGREGATES";
}

void DropAggregationAndModifiers(Json& node) {
  node["group_expressions"] = Json::array();
  node["group_sets"] = Json::array();
  node["having"] = nullptr;
  node["qualify"] = nullptr;
  node["modifiers"] = Json::array();
  node["aggregate_handling"] = "STANDARD_HANDLING";
}

std::vector<const Json*> SetOperationInputs(const Json& node) {
  std::vector<const Json*> out;
  for (const char* side : {"left", "right"}) {
    const Json& v = Get(node, side);
    if (!v.is_null()) out.push_back(&v);
  }
  for (const Json& c : Get(node, "children")) out.push_back(&c);
  return out;
}
std::string SetOperationType(const Json& node) { return GetString(node, "setop_type"); }
bool SetOperationAll(const Json& node) { return GetBool(node, "setop_all", true); }

bool HasModifier(const Json& node, std::string_view type) {
  for (const Json& m : Modifiers(node)) {
    if (NodeType(m) == type) return true;
  }
  return false;
}
const Json& DistinctOnTargets(const Json& modifier) { return Get(modifier, "distinct_on_targets"); }
const Json& ModifierOrders(const Json& modifier) { return Get(modifier, "orders"); }
const Json& LimitCount(const Json& modifier) { return Get(modifier, "limit"); }
const Json& LimitOffset(const Json& modifier) { return Get(modifier, "offset"); }
const Json& OrderExpression(const Json& order) { return Get(order, "expression"); }
std::string OrderType(const Json& order) { return GetString(order, "type", "ORDER_DEFAULT"); }
std::string OrderNullOrder(const Json& order) {
  return GetString(order, "null_order", "ORDER_DEFAULT");
}

std::string BaseTableName(const Json& ref) { return GetString(ref, "table_name"); }

std::optional<size_t> StreamIndexOf(const Json& ref) {
  if (NodeType(ref) != "BASE_TABLE") return std::nullopt;
  return engine::StreamViewIndex(BaseTableName(ref));
}

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

Json MakeBaseTableRef(const std::string& name, const std::string& alias,
                      const Json& column_name_alias) {
  return Json{{"type", "BASE_TABLE"},
              {"alias", alias},
              {"sample", nullptr},
              {"query_location", 18446744073709551615ULL},
              {"schema_name", ""},
              {"table_name", name},
              {"column_name_alias", column_name_alias},
              {"catalog_name", ""},
              {"at_clause", nullptr}};
}

const Json& ColumnNameAliases(const Json& ref) { return Get(ref, "column_name_alias"); }
const Json& JoinLeft(const Json& join) { return Get(join, "left"); }
const Json& JoinRight(const Json& join) { return Get(join, "right"); }
const Json& JoinCondition(const Json& join) { return Get(join, "condition"); }
const Json& JoinUsingColumns(const Json& join) { return Get(join, "using_columns"); }
std::string JoinType(const Json& join) { return GetString(join, "join_type", "INNER"); }
std::string JoinRefType(const Json& join) { return GetString(join, "ref_type", "REGULAR"); }
const Json& SubqueryNode(const Json& ref) { return Get(Get(ref, "subquery"), "node"); }

const Json& Children(const Json& expr) { return Get(expr, "children"); }
const Json& CastChild(const Json& cast) { return Get(cast, "child"); }
std::string CastTypeId(const Json& cast) { return GetString(Get(cast, "cast_type"), "id"); }
const Json& ComparisonLeft(const Json& comparison) { return Get(comparison, "left"); }
const Json& ComparisonRight(const Json& comparison) { return Get(comparison, "right"); }
const Json& BetweenInput(const Json& between) { return Get(between, "input"); }
const Json& BetweenLower(const Json& between) { return Get(between, "lower"); }
const Json& BetweenUpper(const Json& between) { return Get(between, "upper"); }

bool IsDistinctCall(const Json& call) { return GetBool(call, "distinct", false); }
const Json& AggregateFilter(const Json& call) { return Get(call, "filter"); }
bool HasCallOrderBy(const Json& call) {
  const Json& order_bys = Get(call, "order_bys");
  return order_bys.is_object() && !EmptyOrNull(Get(order_bys, "orders"));
}

const Json& WindowPartitions(const Json& window) { return Get(window, "partitions"); }
const Json& WindowOrders(const Json& window) { return Get(window, "orders"); }
const Json& WindowFilter(const Json& window) { return Get(window, "filter_expr"); }
bool WindowIgnoresNulls(const Json& window) { return GetBool(window, "ignore_nulls", false); }
const Json& WindowArgOrders(const Json& window) { return Get(window, "arg_orders"); }

std::string StarRelation(const Json& star) { return GetString(star, "relation_name"); }
const Json& StarExcludeList(const Json& star) { return Get(star, "exclude_list"); }
bool StarHasMoreThanExclude(const Json& star) {
  return !Get(star, "expr").is_null() || GetBool(star, "columns", false) ||
         !EmptyOrNull(Get(star, "qualified_exclude_list")) ||
         !EmptyOrNull(Get(star, "replace_list")) || !EmptyOrNull(Get(star, "rename_list"));
}
bool IsPlainStar(const Json& star) {
  return ExpressionClass(star) == "STAR" && EmptyOrNull(StarExcludeList(star)) &&
         !StarHasMoreThanExclude(star);
}

const Json& ConstantValue(const Json& constant) { return Get(constant, "value"); }

namespace {
// The payload of a non-null CONSTANT's value, or null.
const Json& ConstantPayload(const Json& expr) {
  if (ExpressionClass(expr) != "CONSTANT") return Null();
  const Json& v = ConstantValue(expr);
  if (!v.is_object() || GetBool(v, "is_null", false)) return Null();
  return Get(v, "value");
}
}  // namespace

std::optional<int64_t> IntegerConstant(const Json& expr) {
  const Json& p = ConstantPayload(expr);
  if (!p.is_number_integer()) return std::nullopt;
  return p.get<int64_t>();
}

std::optional<std::string> StringConstant(const Json& expr) {
  if (ExpressionClass(expr) == "CAST") return StringConstant(CastChild(expr));
  const Json& p = ConstantPayload(expr);
  if (!p.is_string()) return std::nullopt;
  return p.get<std::string>();
}

std::optional<std::string> ConstantText(const Json& expr) {
  const Json& p = ConstantPayload(expr);
  if (p.is_null()) return std::nullopt;
  return p.is_string() ? p.get<std::string>() : p.dump();
}

bool IsIntervalConstant(const Json& expr) {
  return ExpressionClass(expr) == "CONSTANT" &&
         GetString(Get(ConstantValue(expr), "type"), "id") == "INTERVAL";
}

}  // namespace sluice::plan
