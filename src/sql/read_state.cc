#include "sql/read_state.h"

#include <algorithm>

#include "common/strings.h"
#include "dialect/tokenizer.h"
#include "sql/literal_rows.h"
#include "sql/state_decoder.h"
#include "state/state_reader.h"
#include "stream/commit_log.h"

namespace sluice::sql {
namespace {

std::string OperatorList(const std::vector<state::OperatorMetadata>& ops) {
  std::string out;
  for (const auto& m : ops) {
    if (!out.empty()) out += ", ";
    out += std::to_string(m.operator_id) + " ('" + m.operator_name + "')";
  }
  return out;
}

// The rows of one operator at `version` (each partition at its latest version <= `version`).
// Sluice's operators write one store per operator ("default"; joins keep both sides in it).
Result<OperatorState> ReadOperator(const std::shared_ptr<fs::FileSystem>& fs,
                                   const std::string& root, const state::OperatorMetadata& m,
                                   int64_t version) {
  if (m.stores.size() != 1) {
    return Status::NotSupported("operator " + std::to_string(m.operator_id) + " ('" +
                                m.operator_name + "') has " + std::to_string(m.stores.size()) +
                                " state stores; only operators with one store can be shown");
  }
  const state::StateStoreInfo& store = m.stores.front();
  OperatorState out;
  out.metadata = m;
  out.version = version;
  SLUICE_ASSIGN_OR_RETURN(state::StateSchema schema,
                          state::ReadStateSchema(*fs, root, m.operator_id, store.store_name));
  std::vector<StateEntry> entries;
  for (int32_t p = 0; p < store.num_partitions; ++p) {
    state::StateStoreId id{root, m.operator_id, p, store.store_name};
    SLUICE_ASSIGN_OR_RETURN(state::StoreFiles files, state::ListStoreFiles(*fs, id));
    const int64_t v = files.LatestVersionAtMost(version);
    if (v == 0) continue;
    SLUICE_ASSIGN_OR_RETURN(auto kvs, state::ReadStoreVersion(fs, id, v));
    for (auto& [k, val] : kvs) entries.push_back({p, std::move(k), std::move(val)});
  }
  SLUICE_ASSIGN_OR_RETURN(out.rows, DecodeOperatorState(m, schema, entries));
  return out;
}

}  // namespace

Result<std::optional<int64_t>> LastCommittedBatch(fs::FileSystem& fs,
                                                  const std::string& checkpoint_root) {
  // CommitLog wants a shared_ptr; the log only lists here, so a non-owning one is enough.
  std::shared_ptr<fs::FileSystem> borrowed(&fs, [](fs::FileSystem*) {});
  stream::CommitLog log(borrowed, checkpoint_root);
  SLUICE_ASSIGN_OR_RETURN(std::vector<BatchId> ids, log.ListIds());
  if (ids.empty()) return std::optional<int64_t>();
  return std::optional<int64_t>(ids.back().value());
}

Result<std::vector<OperatorState>> ReadCommittedState(std::shared_ptr<fs::FileSystem> fs,
                                                      const std::string& checkpoint_root,
                                                      std::optional<int64_t> operator_index,
                                                      const std::string& what) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> ids,
                          state::ListStateOperators(*fs, checkpoint_root));
  if (ids.empty()) {
    return Status::NotFound(what + ": no state in checkpoint " + checkpoint_root +
                            " (the query has no stateful operator, or no batch has run yet)");
  }
  std::vector<state::OperatorMetadata> ops;
  for (int64_t id : ids) {
    SLUICE_ASSIGN_OR_RETURN(state::OperatorMetadata m,
                            state::ReadOperatorMetadata(*fs, checkpoint_root, id));
    ops.push_back(std::move(m));
  }
  if (operator_index) {
    auto it = std::find_if(ops.begin(), ops.end(), [&](const state::OperatorMetadata& m) {
      return m.operator_id == *operator_index;
    });
    if (it == ops.end()) {
      return Status::InvalidArgument(what + ": operator " + std::to_string(*operator_index) +
                                     " is out of range: the query has " +
                                     std::to_string(ops.size()) + " stateful operator" +
                                     (ops.size() == 1 ? "" : "s") + ": " + OperatorList(ops));
    }
    ops = {*it};
  }
  SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> committed,
                          LastCommittedBatch(*fs, checkpoint_root));
  const int64_t version = committed ? *committed + 1 : 0;
  std::vector<OperatorState> out;
  for (const state::OperatorMetadata& m : ops) {
    SLUICE_ASSIGN_OR_RETURN_CTX(OperatorState s, ReadOperator(fs, checkpoint_root, m, version),
                                what);
    out.push_back(std::move(s));
  }
  return out;
}

Result<ReadStateRewrite> RewriteReadState(std::string_view sql) {
  ReadStateRewrite out;
  SLUICE_ASSIGN_OR_RETURN(std::vector<dialect::Token> tokens, dialect::Tokenize(sql));
  size_t copied = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (!tokens[i].IsKeyword("read_state")) continue;
    if (i + 1 >= tokens.size() || !tokens[i + 1].IsSymbol("(")) continue;
    auto bad = [&]() {
      return Status::InvalidArgument(
          "read_state takes the streaming table's name as a string and optionally a stateful "
          "operator's number: read_state('name') or read_state('name', 0) (at " +
          dialect::DescribePosition(sql, tokens[i].begin) + ")");
    };
    if (i + 3 >= tokens.size() || tokens[i + 2].kind != dialect::TokenKind::kString) return bad();
    ReadStateReference ref;
    ref.name = tokens[i + 2].text;
    size_t close = i + 3;
    if (tokens[close].IsSymbol(",")) {
      if (close + 2 >= tokens.size() || tokens[close + 1].kind != dialect::TokenKind::kNumber ||
          tokens[close + 1].text.find_first_not_of("0123456789") != std::string::npos ||
          tokens[close + 1].text.size() > 18) {
        return bad();
      }
      ref.operator_index = std::stoll(tokens[close + 1].text);
      close += 2;
    }
    if (!tokens[close].IsSymbol(")")) return bad();
    ref.view_name = "read_state:" + ref.name +
                    (ref.operator_index ? ":" + std::to_string(*ref.operator_index) : "");
    out.sql += std::string(sql.substr(copied, tokens[i].begin - copied));
    out.sql += QuoteIdentifier(ref.view_name);
    copied = tokens[close].end;
    out.references.push_back(std::move(ref));
    i = close;
  }
  out.sql += std::string(sql.substr(copied));
  return out;
}

}  // namespace sluice::sql
