#include "engine/row_lists.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "duckdb/execution/expression_executor.hpp"
#include "duckdb/main/extension/extension_loader.hpp"
#include "duckdb/planner/expression/bound_function_expression.hpp"

namespace sluice::engine::internal {
namespace {

using duckdb::LogicalType;
using duckdb::unique_ptr;

struct Range {
  int64_t first;
  int64_t last;  // inclusive
};

struct Lists {
  std::string text;
  std::unordered_map<int64_t, std::vector<Range>> by_entry;
};

[[noreturn]] void Bad(const std::string& text, size_t at, const std::string& what) {
  throw duckdb::BinderException("sluice_row_listed: %s at offset %llu of the lists (%llu bytes)",
                                what, static_cast<unsigned long long>(at),
                                static_cast<unsigned long long>(text.size()));
}

// A decimal number >= 0 at text[*at]; advances *at past it.
int64_t Number(const std::string& text, size_t* at) {
  const size_t start = *at;
  int64_t v = 0;
  while (*at < text.size() && text[*at] >= '0' && text[*at] <= '9') {
    if (v > (INT64_MAX - 9) / 10) Bad(text, start, "a number out of range");
    v = v * 10 + (text[*at] - '0');
    ++*at;
  }
  if (*at == start) Bad(text, start, "expected a number");
  return v;
}

void Expect(const std::string& text, size_t* at, char c) {
  if (*at >= text.size() || text[*at] != c) Bad(text, *at, std::string("expected '") + c + "'");
  ++*at;
}

std::shared_ptr<const Lists> Parse(std::string text) {
  auto lists = std::make_shared<Lists>();
  size_t at = 0;
  while (at < text.size()) {
    const size_t entry_at = at;
    const int64_t entry = Number(text, &at);
    Expect(text, &at, ':');
    auto [it, inserted] = lists->by_entry.try_emplace(entry);
    if (!inserted) Bad(text, entry_at, "entry " + std::to_string(entry) + " listed twice");
    std::vector<Range>& ranges = it->second;
    while (at < text.size() && text[at] != ';') {
      if (!ranges.empty()) Expect(text, &at, ',');
      const size_t range_at = at;
      Range r{Number(text, &at), 0};
      Expect(text, &at, '-');
      r.last = Number(text, &at);
      if (r.last < r.first) Bad(text, range_at, "a range that ends before it starts");
      if (!ranges.empty() && r.first <= ranges.back().last) {
        Bad(text, range_at, "a range not after the one before it");
      }
      ranges.push_back(r);
    }
    if (at < text.size()) ++at;  // ';'
  }
  lists->text = std::move(text);
  return lists;
}

struct ListsData : duckdb::FunctionData {
  explicit ListsData(std::shared_ptr<const Lists> l) : lists(std::move(l)) {}
  unique_ptr<duckdb::FunctionData> Copy() const override {
    return duckdb::make_uniq<ListsData>(lists);
  }
  bool Equals(const duckdb::FunctionData& other) const override {
    const auto& o = other.Cast<ListsData>();
    return o.lists == lists || o.lists->text == lists->text;
  }
  std::shared_ptr<const Lists> lists;
};

// Per thread: the entry seen last, its ranges and the first of them that ends at or after the
// row seen last.
struct Cursor : duckdb::FunctionLocalState {
  bool has_entry = false;
  int64_t entry = 0;
  const std::vector<Range>* ranges = nullptr;
  size_t pos = 0;
  int64_t row = 0;
};

unique_ptr<duckdb::FunctionData> Bind(duckdb::ClientContext& context, duckdb::ScalarFunction& bound,
                                      duckdb::vector<unique_ptr<duckdb::Expression>>& arguments) {
  if (!arguments[2]->IsFoldable()) {
    throw duckdb::BinderException("sluice_row_listed: the lists must be a constant");
  }
  duckdb::Value v = duckdb::ExpressionExecutor::EvaluateScalar(context, *arguments[2]);
  if (v.IsNull()) throw duckdb::BinderException("sluice_row_listed: the lists are NULL");
  auto data = duckdb::make_uniq<ListsData>(Parse(v.GetValue<std::string>()));
  // The lists live in the bind data only: a constant argument is materialized again for every
  // chunk (a copy of the whole text per 2,048 rows).
  duckdb::Function::EraseArgument(bound, arguments, 2);
  return data;
}

unique_ptr<duckdb::FunctionLocalState> InitCursor(duckdb::ExpressionState&,
                                                  const duckdb::BoundFunctionExpression&,
                                                  duckdb::FunctionData*) {
  return duckdb::make_uniq<Cursor>();
}

bool Listed(const Lists& lists, Cursor& c, int64_t entry, int64_t row) {
  if (!c.has_entry || entry != c.entry) {
    auto it = lists.by_entry.find(entry);
    c.has_entry = true;
    c.entry = entry;
    c.ranges = it == lists.by_entry.end() ? nullptr : &it->second;
    c.pos = 0;
    c.row = 0;
  }
  if (c.ranges == nullptr) return false;
  const std::vector<Range>& r = *c.ranges;
  if (row >= c.row) {
    while (c.pos < r.size() && r[c.pos].last < row) ++c.pos;
  } else {
    c.pos = static_cast<size_t>(
        std::lower_bound(r.begin(), r.end(), row,
                         [](const Range& range, int64_t x) { return range.last < x; }) -
        r.begin());
  }
  c.row = row;
  return c.pos < r.size() && r[c.pos].first <= row;
}

void RowListed(duckdb::DataChunk& args, duckdb::ExpressionState& state, duckdb::Vector& result) {
  auto& expr = state.expr.Cast<duckdb::BoundFunctionExpression>();
  const Lists& lists = *expr.bind_info->Cast<ListsData>().lists;
  auto& cursor = duckdb::ExecuteFunctionState::GetFunctionState(state)->Cast<Cursor>();
  const duckdb::idx_t n = args.size();
  duckdb::UnifiedVectorFormat entries, rows;
  args.data[0].ToUnifiedFormat(n, entries);
  args.data[1].ToUnifiedFormat(n, rows);
  const auto* e = duckdb::UnifiedVectorFormat::GetData<int64_t>(entries);
  const auto* r = duckdb::UnifiedVectorFormat::GetData<int64_t>(rows);
  result.SetVectorType(duckdb::VectorType::FLAT_VECTOR);
  auto* out = duckdb::FlatVector::GetData<bool>(result);
  auto& valid = duckdb::FlatVector::Validity(result);
  for (duckdb::idx_t i = 0; i < n; ++i) {
    const duckdb::idx_t ei = entries.sel->get_index(i);
    const duckdb::idx_t ri = rows.sel->get_index(i);
    if (!entries.validity.RowIsValid(ei) || !rows.validity.RowIsValid(ri)) {
      valid.SetInvalid(i);
      out[i] = false;
      continue;
    }
    out[i] = Listed(lists, cursor, e[ei], r[ri]);
  }
}

}  // namespace

void RegisterRowLists(duckdb::DatabaseInstance& db) {
  duckdb::ExtensionLoader loader(db, "sluice");
  duckdb::ScalarFunction f("sluice_row_listed",
                           {LogicalType::BIGINT, LogicalType::BIGINT, LogicalType::VARCHAR},
                           LogicalType::BOOLEAN, RowListed, Bind, nullptr, nullptr, InitCursor);
  loader.RegisterFunction(f);
}

}  // namespace sluice::engine::internal
