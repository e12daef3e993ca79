#include "sql/pipeline_expectations.h"

#include <set>
#include <utility>

#include "common/strings.h"
#include "dialect/tokenizer.h"

namespace sluice::sql {
namespace {

using dialect::Token;
using dialect::TokenKind;

// The text of the balanced group at the cursor's '(' without its outer parentheses; the cursor
// ends past the ')'.
Result<std::string> InnerText(plan::TokenCursor& c, std::string_view sql) {
  if (!c.Peek().IsSymbol("(")) return c.Error("'(' after EXPECT");
  c.Next();
  size_t begin = std::string_view::npos, end = 0;
  int depth = 1;
  for (;;) {
    const Token& t = c.Peek();
    if (t.kind == TokenKind::kEnd) return c.Error("')'");
    if (t.IsSymbol("(")) ++depth;
    if (t.IsSymbol(")") && --depth == 0) {
      c.Next();
      if (begin == std::string_view::npos) return std::string();
      return std::string(sql.substr(begin, end - begin));
    }
    if (begin == std::string_view::npos) begin = t.begin;
    end = c.Next().end;
  }
}

}  // namespace

const char* ExpectationActionName(Expectation::Action action) {
  switch (action) {
    case Expectation::Action::kWarn:
      return "warn";
    case Expectation::Action::kDropRow:
      return "drop";
    case Expectation::Action::kFailUpdate:
      return "fail";
  }
  return "warn";
}

Result<Expectation::Action> ParseExpectationAction(std::string_view name) {
  if (name == "warn") return Expectation::Action::kWarn;
  if (name == "drop") return Expectation::Action::kDropRow;
  if (name == "fail") return Expectation::Action::kFailUpdate;
  return Status::InvalidArgument("unknown expectation action '" + std::string(name) +
                                 "' (warn, drop or fail)");
}

Result<ColumnListParts> ParseColumnList(plan::TokenCursor& c, std::string_view sql) {
  ColumnListParts out;
  SLUICE_RETURN_NOT_OK(c.ExpectSymbol("("));
  std::vector<std::string> columns;
  std::set<std::string> names;
  for (;;) {
    if (c.Peek().IsKeyword("constraint") && c.Peek(2).IsKeyword("expect")) {
      const size_t at = c.Next().begin;
      Expectation e;
      SLUICE_ASSIGN_OR_RETURN(e.name, c.Identifier());
      SLUICE_RETURN_NOT_OK(c.ExpectKeyword("expect"));
      SLUICE_ASSIGN_OR_RETURN(e.condition, InnerText(c, sql));
      if (e.condition.empty()) return c.Error("a condition inside EXPECT ( )");
      if (c.Keywords({"on", "violation"})) {
        if (c.Keywords({"drop", "row"})) {
          e.action = Expectation::Action::kDropRow;
        } else if (c.Keywords({"fail", "update"})) {
          e.action = Expectation::Action::kFailUpdate;
        } else {
          return c.Error("DROP ROW or FAIL UPDATE after ON VIOLATION");
        }
      }
      if (!names.insert(AsciiLower(e.name)).second) {
        return Status::InvalidArgument("expectation '" + e.name + "' is defined twice (at " +
                                       dialect::DescribePosition(sql, at) +
                                       "): an expectation's name is unique per dataset");
      }
      out.expectations.push_back(std::move(e));
    } else {
      // A column definition or another constraint: its text up to the next ',' or the ')'.
      const size_t begin = c.Peek().begin;
      size_t end = begin;
      int depth = 0;
      while (true) {
        const Token& t = c.Peek();
        if (t.kind == TokenKind::kEnd) return c.Error("')'");
        if (depth == 0 && (t.IsSymbol(",") || t.IsSymbol(")"))) break;
        if (t.IsSymbol("(")) ++depth;
        if (t.IsSymbol(")")) --depth;
        end = c.Next().end;
      }
      if (end == begin) return c.Error("a column definition or CONSTRAINT name EXPECT (...)");
      columns.emplace_back(sql.substr(begin, end - begin));
    }
    if (c.Symbol(",")) continue;
    SLUICE_RETURN_NOT_OK(c.ExpectSymbol(")"));
    break;
  }
  if (!columns.empty()) {
    out.columns_text = "(";
    for (size_t i = 0; i < columns.size(); ++i) out.columns_text += (i ? ", " : "") + columns[i];
    out.columns_text += ")";
  }
  return out;
}

nlohmann::json ExpectationsToJson(const std::vector<Expectation>& expectations) {
  nlohmann::json a = nlohmann::json::array();
  for (const Expectation& e : expectations) {
    a.push_back({{"name", e.name},
                 {"condition", e.condition},
                 {"action", ExpectationActionName(e.action)}});
  }
  return a;
}

Result<std::vector<Expectation>> ExpectationsFromJson(const nlohmann::json& j,
                                                      const std::string& what) {
  std::vector<Expectation> out;
  if (!j.is_array()) return Status::Corruption(what + ": expectations is not an array");
  for (const auto& e : j) {
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string() ||
        !e.contains("condition") || !e["condition"].is_string() || !e.contains("action") ||
        !e["action"].is_string()) {
      return Status::Corruption(what + ": an expectation needs string name, condition and action");
    }
    Expectation x;
    x.name = e["name"].get<std::string>();
    x.condition = e["condition"].get<std::string>();
    Result<Expectation::Action> action = ParseExpectationAction(e["action"].get<std::string>());
    if (!action.ok()) return Status::Corruption(what + ": " + action.status().message());
    x.action = *action;
    out.push_back(std::move(x));
  }
  return out;
}

nlohmann::ordered_json DataQualityJson(const std::string& dataset, int64_t dropped,
                                       const std::vector<ExpectationCount>& counts) {
  nlohmann::ordered_json dq = nlohmann::ordered_json::object();
  dq["dropped_records"] = dropped;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const ExpectationCount& c : counts) {
    nlohmann::ordered_json e = nlohmann::ordered_json::object();
    e["name"] = c.name;
    e["dataset"] = dataset;
    e["passed_records"] = c.passed;
    e["failed_records"] = c.failed;
    list.push_back(std::move(e));
  }
  dq["expectations"] = std::move(list);
  return dq;
}

std::string ExpectationCountsSql(const std::string& query,
                                 const std::vector<Expectation>& expectations) {
  std::string sql = "SELECT ";
  std::string kept;
  for (size_t i = 0; i < expectations.size(); ++i) {
    const Expectation& e = expectations[i];
    sql += "count_if(NOT (" + e.condition + ")) AS f" + std::to_string(i) + ", ";
    if (e.action == Expectation::Action::kDropRow) {
      kept += (kept.empty() ? "" : " AND ") + std::string("coalesce((") + e.condition + "), true)";
    }
  }
  sql += kept.empty() ? std::string("0") : "count_if(NOT (" + kept + "))";
  return sql + " AS d, count(*) AS n FROM (" + query + ") AS __expect";
}

std::string FirstFailingRowSql(const std::string& query, const Expectation& e) {
  return "SELECT * FROM (" + query + ") AS __expect WHERE NOT (" + e.condition + ") LIMIT 1";
}

std::string QueryKeepingPassingRows(const std::string& query,
                                    const std::vector<Expectation>& expectations) {
  std::string where;
  for (const Expectation& e : expectations) {
    if (e.action != Expectation::Action::kDropRow) continue;
    where += (where.empty() ? "" : " AND ") + std::string("coalesce((") + e.condition + "), true)";
  }
  if (where.empty()) return query;
  return "SELECT * FROM (" + query + ") AS __expect WHERE " + where;
}

std::string RowJson(const engine::Batch& batch, int64_t row) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  const engine::Schema& schema = batch.schema();
  for (size_t c = 0; c < batch.num_columns(); ++c) {
    std::optional<std::string> v = batch.GetString(row, c);
    if (!v) {
      j[schema[c].name] = nullptr;
      continue;
    }
    const engine::TypeId id = schema[c].type.id;
    if (engine::IsNumeric(id) && id != engine::TypeId::kHugeInt && id != engine::TypeId::kDecimal) {
      nlohmann::ordered_json n = nlohmann::ordered_json::parse(*v, nullptr, false);
      j[schema[c].name] = n.is_discarded() ? nlohmann::ordered_json(*v) : n;
    } else if (id == engine::TypeId::kBoolean) {
      j[schema[c].name] = *v == "true";
    } else {
      j[schema[c].name] = *v;
    }
  }
  return j.dump();
}

Status ExpectationFailed(const Expectation& e, const std::string& dataset, const std::string& where,
                         const std::string& row_json) {
  return Status::InvalidArgument("expectation '" + e.name + "' of '" + dataset + "' failed (ON " +
                                 "VIOLATION FAIL UPDATE) " + where + ": a row violates (" +
                                 e.condition + "): " + row_json +
                                 "; nothing of it was written. Fix the data or the expectation, "
                                 "then run again");
}

}  // namespace sluice::sql
