#include "ops/join_state_table.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "state/partitions.h"

namespace sluice::ops {
namespace {

void PutBigEndian64(std::string* out, uint64_t v) {
  for (int i = 7; i >= 0; --i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t GetBigEndian64(std::string_view s) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(s[i]);
  return v;
}

std::string StatePrefix(JoinSide side, const std::string& key) {
  std::string p;
  p.reserve(1 + key.size() + 8);
  p.push_back(static_cast<char>(side));
  p.append(key);
  return p;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && std::memcmp(s.data(), prefix.data(), prefix.size()) == 0;
}

}  // namespace

std::string EncodeJoinStoredValue(bool matched, int64_t state_us, std::string_view row) {
  std::string v;
  v.reserve(9 + row.size());
  v.push_back(matched ? 1 : 0);
  PutBigEndian64(&v, static_cast<uint64_t>(state_us) ^ (uint64_t{1} << 63));
  v.append(row);
  return v;
}

Result<JoinStoredValue> DecodeJoinStoredValue(std::string_view bytes) {
  if (bytes.size() < 10) {
    return Status::Corruption("stream-stream join state: value of " + std::to_string(bytes.size()) +
                              " bytes is too short");
  }
  JoinStoredValue v;
  v.matched = bytes[0] != 0;
  v.state_us = static_cast<int64_t>(GetBigEndian64(bytes.substr(1)) ^ (uint64_t{1} << 63));
  v.row = std::string(bytes.substr(9));
  return v;
}

JoinStateTable::JoinStateTable(const std::vector<state::StateStore*>& stores) : stores_(stores) {}

int32_t JoinStateTable::PartitionOf(const std::string& key) const {
  return state::PartitionForKey(key, num_partitions());
}

Status JoinStateTable::ForEachPrefix(
    JoinSide side, const std::vector<const std::string*>& keys,
    const std::function<Status(size_t, const std::string&, state::StateIterator&)>& visit) {
  const int32_t n = num_partitions();
  std::vector<std::vector<size_t>> by_partition(static_cast<size_t>(n));
  for (size_t j = 0; j < keys.size(); ++j) {
    by_partition[static_cast<size_t>(PartitionOf(*keys[j]))].push_back(j);
  }
  for (int32_t p = 0; p < n; ++p) {
    std::vector<size_t>& js = by_partition[static_cast<size_t>(p)];
    if (js.empty()) continue;
    std::sort(js.begin(), js.end(), [&](size_t a, size_t b) { return *keys[a] < *keys[b]; });
    SLUICE_ASSIGN_OR_RETURN(auto it, stores_[static_cast<size_t>(p)]->PrefixScan(
                                         std::string(1, static_cast<char>(side))));
    for (size_t j : js) {
      const std::string prefix = StatePrefix(side, *keys[j]);
      it->Seek(prefix);
      SLUICE_RETURN_NOT_OK(visit(j, prefix, *it));
    }
    SLUICE_RETURN_NOT_OK(it->status());
  }
  return Status::OK();
}

Result<std::vector<std::vector<JoinStateRow>>> JoinStateTable::Scan(
    JoinSide side, const std::vector<const std::string*>& keys) {
  std::vector<std::vector<JoinStateRow>> rows(keys.size());
  SLUICE_RETURN_NOT_OK(ForEachPrefix(
      side, keys, [&](size_t j, const std::string& prefix, state::StateIterator& it) -> Status {
        const int32_t p = PartitionOf(*keys[j]);
        for (; it.Valid() && StartsWith(it.key(), prefix); it.Next()) {
          JoinStateRow row;
          row.partition = p;
          row.key = std::string(it.key());
          SLUICE_ASSIGN_OR_RETURN(row.value, DecodeJoinStoredValue(it.value()));
          rows[j].push_back(std::move(row));
        }
        return it.status();
      }));
  return rows;
}

Result<std::vector<int64_t>> JoinStateTable::NextIndexes(
    JoinSide side, const std::vector<const std::string*>& keys) {
  std::vector<int64_t> next_index(keys.size(), 0);
  SLUICE_RETURN_NOT_OK(ForEachPrefix(
      side, keys, [&](size_t j, const std::string& prefix, state::StateIterator& it) -> Status {
        int64_t next = 0;
        for (; it.Valid() && StartsWith(it.key(), prefix); it.Next()) {
          std::string_view k = it.key();
          if (k.size() == prefix.size() + 8) {
            next = std::max<int64_t>(
                next, static_cast<int64_t>(GetBigEndian64(k.substr(prefix.size()))) + 1);
          }
        }
        SLUICE_RETURN_NOT_OK(it.status());
        next_index[j] = next;
        return Status::OK();
      }));
  return next_index;
}

Status JoinStateTable::AnnounceNewRows(JoinSide side, const std::vector<const std::string*>& keys,
                                       const std::vector<size_t>& rows_per_key,
                                       const std::vector<int64_t>& next_index) {
  const int32_t n = num_partitions();
  std::vector<std::vector<std::string>> by_partition(static_cast<size_t>(n));
  for (size_t j = 0; j < keys.size(); ++j) {
    const std::string prefix = StatePrefix(side, *keys[j]);
    auto& out_keys = by_partition[static_cast<size_t>(PartitionOf(*keys[j]))];
    for (size_t c = 0; c < rows_per_key[j]; ++c) {
      std::string k = prefix;
      PutBigEndian64(&k, static_cast<uint64_t>(next_index[j]) + c);
      out_keys.push_back(std::move(k));
    }
  }
  for (int32_t p = 0; p < n; ++p) {
    std::vector<std::string>& ks = by_partition[static_cast<size_t>(p)];
    if (ks.empty()) continue;
    std::sort(ks.begin(), ks.end());
    std::vector<std::string_view> views(ks.begin(), ks.end());
    SLUICE_ASSIGN_OR_RETURN(auto got, stores_[static_cast<size_t>(p)]->MultiGet(views));
    (void)got;  // absent by construction; the store remembers what it read
  }
  return Status::OK();
}

Status JoinStateTable::Append(JoinSide side, const std::string& key, int64_t* next, bool matched,
                              int64_t state_us, const std::string& row) {
  std::string state_key = StatePrefix(side, key);
  state::StateStore& store = *stores_[static_cast<size_t>(PartitionOf(key))];
  PutBigEndian64(&state_key, static_cast<uint64_t>(*next));
  ++*next;
  SLUICE_RETURN_NOT_OK(store.Put(state_key, EncodeJoinStoredValue(matched, state_us, row)));
  ++appended_;
  return Status::OK();
}

bool JoinStateTable::IsMatched(const JoinStateRow& row) const {
  auto it = matched_now_.find(row.key);
  return it != matched_now_.end() ? it->second : row.value.matched;
}

Status JoinStateTable::SetMatched(const JoinStateRow& row) {
  if (IsMatched(row)) return Status::OK();
  matched_now_[row.key] = true;
  return stores_[static_cast<size_t>(row.partition)]->Put(
      row.key, EncodeJoinStoredValue(true, row.value.state_us, row.value.row));
}

Result<int64_t> JoinStateTable::Evict(JoinSide side,
                                      const std::function<bool(int64_t state_us)>& evicts,
                                      const std::function<void(const JoinStoredValue&)>& removed) {
  int64_t count = 0;
  for (state::StateStore* store : stores_) {
    std::vector<std::pair<std::string, JoinStoredValue>> gone;
    {
      SLUICE_ASSIGN_OR_RETURN(auto it, store->PrefixScan(std::string(1, static_cast<char>(side))));
      for (; it->Valid(); it->Next()) {
        std::string_view value = it->value();
        if (value.size() < 10) {
          SLUICE_RETURN_NOT_OK(DecodeJoinStoredValue(value).status());  // Corruption
        }
        // The state time alone decides; the row is copied only for rows that go.
        const int64_t state_us =
            static_cast<int64_t>(GetBigEndian64(value.substr(1)) ^ (uint64_t{1} << 63));
        if (!evicts(state_us)) continue;
        SLUICE_ASSIGN_OR_RETURN(JoinStoredValue v, DecodeJoinStoredValue(value));
        gone.emplace_back(std::string(it->key()), std::move(v));
      }
      SLUICE_RETURN_NOT_OK(it->status());
    }
    for (const auto& [key, value] : gone) {
      SLUICE_RETURN_NOT_OK(store->Remove(key));
      ++count;
      removed(value);
    }
  }
  return count;
}

}  // namespace sluice::ops
