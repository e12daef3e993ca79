#include "plan/sql_ast.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "common/strings.h"
#include "dialect/tokenizer.h"

namespace sluice::plan {

using dialect::Token;
using dialect::Tokenize;
using dialect::TokenKind;

Result<std::string> RewriteWindowCalls(std::string_view sql) {
  SLUICE_ASSIGN_OR_RETURN(auto tokens, Tokenize(sql));
  std::string out;
  size_t copied = 0;
  for (size_t i = 0; tokens[i].kind != TokenKind::kEnd; ++i) {
    const Token& t = tokens[i];
    if (t.kind != TokenKind::kWord) continue;
    std::string w = AsciiLower(t.text);
    if (w == "left" && (tokens[i + 1].IsKeyword("semi") || tokens[i + 1].IsKeyword("anti")) &&
        tokens[i + 2].IsKeyword("join")) {
      // Spark's LEFT SEMI / LEFT ANTI JOIN is DuckDB's SEMI / ANTI JOIN.
      out += sql.substr(copied, t.begin - copied);
      copied = tokens[i + 1].begin;
      continue;
    }
    if (w != "window" && w != "session_window") continue;
    // A qualified name part (x.window) or a named WINDOW clause (WINDOW w AS (...)) stays.
    bool after_dot = i > 0 && tokens[i - 1].IsSymbol(".");
    std::string replacement;
    if (tokens[i + 1].IsSymbol("(") && !after_dot) {
      replacement = w == "window" ? kWindowFunction : kSessionWindowFunction;
    } else if (w == "window" && tokens[i + 1].kind == TokenKind::kWord &&
               tokens[i + 2].IsKeyword("as")) {
      continue;  // WINDOW name AS (...)
    } else {
      replacement = "\"" + w + "\"";
    }
    out += sql.substr(copied, t.begin - copied);
    out += replacement;
    copied = t.end;
  }
  out += sql.substr(copied);
  return out;
}

Result<std::unique_ptr<SqlAst>> SqlAst::Open(engine::Engine* engine) {
  if (engine == nullptr) return Status::InvalidArgument("SqlAst: no engine");
  SLUICE_ASSIGN_OR_RETURN(auto conn, engine->Connect());
  return std::unique_ptr<SqlAst>(new SqlAst(std::move(conn)));
}

Result<Json> SqlAst::ParseSelect(std::string_view sql) {
  SLUICE_ASSIGN_OR_RETURN(auto batch, conn_->Query("SELECT json_serialize_sql(" +
                                                   QuoteLiteral(sql) + ", skip_null := false)"));
  if (batch.num_rows() != 1 || batch.IsNull(0, 0)) {
    return Status::Internal("json_serialize_sql returned no tree");
  }
  Json tree = Json::parse(*batch.GetString(0, 0), nullptr, /*allow_exceptions=*/false);
  if (tree.is_discarded()) return Status::Internal("json_serialize_sql returned bad JSON");
  if (tree.value("error", false)) {
    return Status::InvalidArgument("cannot parse the query: " +
                                   tree.value("error_message", std::string("syntax error")));
  }
  const Json& statements = tree["statements"];
  if (!statements.is_array() || statements.size() != 1) {
    return Status::InvalidArgument("a streaming query must be exactly one SELECT statement");
  }
  return statements[0]["node"];
}

Result<std::string> SqlAst::ToSql(const Json& select_node) {
  Json tree = {{"error", false},
               {"statements",
                Json::array({Json{{"node", select_node}, {"named_param_map", Json::array()}}})}};
  SLUICE_ASSIGN_OR_RETURN(auto batch, conn_->Query("SELECT json_deserialize_sql(" +
                                                   QuoteLiteral(tree.dump()) + "::JSON)"));
  if (batch.num_rows() != 1 || batch.IsNull(0, 0)) {
    return Status::Internal("json_deserialize_sql returned no SQL");
  }
  return *batch.GetString(0, 0);
}

Result<std::string> SqlAst::ExpressionToSql(const Json& expression) {
  if (select_template_.is_null()) {
    SLUICE_ASSIGN_OR_RETURN(select_template_, ParseSelect("SELECT 1"));
  }
  Json node = select_template_;
  Json e = expression;
  e["alias"] = "";
  node["select_list"] = Json::array({e});
  SLUICE_ASSIGN_OR_RETURN(std::string sql, ToSql(node));
  constexpr std::string_view kPrefix = "SELECT ";
  if (sql.compare(0, kPrefix.size(), kPrefix) == 0) sql = sql.substr(kPrefix.size());
  return sql;
}

// ---- helpers ----

bool IsExpressionObject(const Json& j) {
  return j.is_object() && j.contains("class") && j.contains("type");
}

namespace {

// Keys of an expression object that hold child expressions (arrays or single objects).
bool IsSkippedKey(const std::string& key) {
  return key == "alias" || key == "query_location" || key == "subquery";
}

}  // namespace

bool SameExpression(const Json& a, const Json& b) {
  if (a.type() != b.type()) return false;
  if (a.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it) {
      if (it.key() == "alias" || it.key() == "query_location") continue;
      if (!b.contains(it.key())) return false;
      const Json& other = b[it.key()];
      if ((it.key() == "function_name" || it.key() == "column_names") && it.value().is_string() &&
          other.is_string()) {
        if (AsciiLower(it.value().get<std::string>()) != AsciiLower(other.get<std::string>()))
          return false;
        continue;
      }
      if (it.key() == "column_names" && it.value().is_array() && other.is_array()) {
        if (it.value().size() != other.size()) return false;
        for (size_t i = 0; i < other.size(); ++i) {
          if (AsciiLower(it.value()[i].get<std::string>()) !=
              AsciiLower(other[i].get<std::string>())) {
            return false;
          }
        }
        continue;
      }
      if (!SameExpression(it.value(), other)) return false;
    }
    for (auto it = b.begin(); it != b.end(); ++it) {
      if (it.key() == "alias" || it.key() == "query_location") continue;
      if (!a.contains(it.key())) return false;
    }
    return true;
  }
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!SameExpression(a[i], b[i])) return false;
    }
    return true;
  }
  return a == b;
}

void VisitExpression(const Json& expr, const std::function<bool(const Json&)>& fn) {
  if (expr.is_array()) {
    for (const auto& e : expr) VisitExpression(e, fn);
    return;
  }
  if (!expr.is_object()) return;
  if (IsExpressionObject(expr)) {
    if (expr["class"] == "SUBQUERY") {
      fn(expr);
      return;
    }
    if (!fn(expr)) return;
  }
  for (auto it = expr.begin(); it != expr.end(); ++it) {
    if (IsSkippedKey(it.key())) continue;
    if (it.value().is_object() || it.value().is_array()) VisitExpression(it.value(), fn);
  }
}

Json RewriteExpression(const Json& expr,
                       const std::function<std::optional<Json>(const Json&)>& fn) {
  if (expr.is_array()) {
    Json out = Json::array();
    for (const auto& e : expr) out.push_back(RewriteExpression(e, fn));
    return out;
  }
  if (!expr.is_object()) return expr;
  if (IsExpressionObject(expr) && expr["class"] == "SUBQUERY") {
    auto r = fn(expr);
    return r ? *r : expr;
  }
  Json out = expr;
  for (auto it = out.begin(); it != out.end(); ++it) {
    if (IsSkippedKey(it.key())) continue;
    if (it.value().is_object() || it.value().is_array()) {
      it.value() = RewriteExpression(it.value(), fn);
    }
  }
  if (IsExpressionObject(out)) {
    auto r = fn(out);
    if (r) return *r;
  }
  return out;
}

Json MakeColumnRef(const std::vector<std::string>& names, const std::string& alias) {
  return Json{{"class", "COLUMN_REF"},
              {"type", "COLUMN_REF"},
              {"alias", alias},
              {"query_location", 18446744073709551615ULL},
              {"column_names", names}};
}

Json MakeConjunctionAnd(const std::vector<Json>& conjuncts) {
  if (conjuncts.size() == 1) return conjuncts[0];
  return Json{{"class", "CONJUNCTION"},
              {"type", "CONJUNCTION_AND"},
              {"alias", ""},
              {"query_location", 18446744073709551615ULL},
              {"children", conjuncts}};
}

Json MakeUnnestCall(const std::string& column) {
  return Json{{"class", "FUNCTION"},
              {"type", "FUNCTION"},
              {"alias", ""},
              {"query_location", 18446744073709551615ULL},
              {"function_name", "unnest"},
              {"schema", ""},
              {"children", Json::array({MakeColumnRef({column})})},
              {"filter", nullptr},
              {"order_bys", Json{{"type", "ORDER_MODIFIER"}, {"orders", Json::array()}}},
              {"distinct", false},
              {"is_operator", false},
              {"export_state", false},
              {"catalog", ""}};
}

bool IsAnnotationKey(const std::string& key) { return key == "alias" || key == "query_location"; }

Json WithoutAlias(Json expr) {
  if (expr.is_object()) expr.erase("alias");
  return expr;
}

std::vector<std::string> ColumnRefNames(const Json& expr) {
  std::vector<std::string> out;
  if (!expr.is_object() || expr.value("class", "") != "COLUMN_REF") return out;
  for (const auto& n : expr["column_names"]) out.push_back(n.get<std::string>());
  return out;
}

std::string FunctionName(const Json& expr) {
  if (!expr.is_object() || expr.value("class", "") != "FUNCTION") return "";
  return AsciiLower(expr.value("function_name", std::string()));
}

bool IsAggregateCall(const Json& expr) {
  static const std::set<std::string> kAggregates = {"count",
                                                    "count_star",
                                                    "sum",
                                                    "min",
                                                    "max",
                                                    "avg",
                                                    "mean",
                                                    "first",
                                                    "last",
                                                    "any_value",
                                                    "arbitrary",
                                                    "stddev",
                                                    "stddev_samp",
                                                    "stddev_pop",
                                                    "variance",
                                                    "var_samp",
                                                    "var_pop",
                                                    "median",
                                                    "mode",
                                                    "quantile",
                                                    "quantile_cont",
                                                    "quantile_disc",
                                                    "string_agg",
                                                    "group_concat",
                                                    "list",
                                                    "array_agg",
                                                    "approx_count_distinct",
                                                    "bool_and",
                                                    "bool_or",
                                                    "bit_and",
                                                    "bit_or",
                                                    "bit_xor",
                                                    "product",
                                                    "arg_min",
                                                    "arg_max",
                                                    "min_by",
                                                    "max_by",
                                                    "histogram",
                                                    "collect_list",
                                                    "collect_set",
                                                    "corr",
                                                    "covar_pop",
                                                    "covar_samp",
                                                    "entropy",
                                                    "kurtosis",
                                                    "skewness",
                                                    "fsum",
                                                    "sumkahan",
                                                    "kahan_sum",
                                                    "favg",
                                                    "approx_quantile",
                                                    "reservoir_quantile",
                                                    "regr_slope",
                                                    "every",
                                                    "some",
                                                    "sum_no_overflow",
                                                    "count_if",
                                                    "countif"};
  std::string name = FunctionName(expr);
  return !name.empty() && kAggregates.count(name) > 0;
}

bool ContainsAggregate(const Json& expr) {
  bool found = false;
  VisitExpression(expr, [&](const Json& e) {
    if (e.value("class", "") == "WINDOW") return false;  // OVER (...): not a grouping aggregate
    if (IsAggregateCall(e)) found = true;
    return !found;
  });
  return found;
}

bool ContainsSubquery(const Json& expr) {
  bool found = false;
  VisitExpression(expr, [&](const Json& e) {
    if (e.value("class", "") == "SUBQUERY") found = true;
    return !found;
  });
  return found;
}

std::vector<Json> Conjuncts(const Json& expr) {
  std::vector<Json> out;
  if (expr.is_null()) return out;
  if (expr.value("class", "") == "CONJUNCTION" && expr.value("type", "") == "CONJUNCTION_AND") {
    for (const auto& c : expr["children"]) {
      auto sub = Conjuncts(c);
      out.insert(out.end(), sub.begin(), sub.end());
    }
    return out;
  }
  out.push_back(expr);
  return out;
}

}  // namespace sluice::plan
