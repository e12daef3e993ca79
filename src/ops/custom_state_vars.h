// The state variables and timers of a transformWithState processor (ops/transform_with_state.h)
// over one state partition: the engine side of include/sluice/stateful_processor.h.
//
// Byte layout in the operator's state store (one "default" store per partition; gk = the row
// codec bytes of the grouping key columns, P = StateKeyPrefix(gk) of ops/state_rows.h, i.e.
// [u32 BE length of gk][gk]; e(t) = u64 BE of t with the sign bit flipped):
//   P 'v' [u16 BE name length][name]                 ValueState / ListState value
//   P 'v' [u16 BE name length][name][value-row key]  one MapState entry (key: custom_state_codec.h)
//   P 't' e(expiry ms)                               a timer of the key
//   0xFF 'T' e(expiry ms) gk                         the partition's timer index, in time order;
//                                                    its value is the key as a value row
// Values of state variables are StateValue(expiry us, bytes) of ops/state_rows.h: the TTL expiry
// (kNeverEvicted without TTL) and a value row (ValueState, MapState) or a list of value rows
// (ListState, custom_state_codec.h). Timer entries have empty values. A key's bytes cannot start
// with 0xFF (a u32 length < 4 GiB), so the index never mixes with key entries.
//
// TTL: a write in the batch with timestamp T stores expiry (T + ttl) ms; a value whose expiry is
// <= the current batch timestamp reads as absent, and RemoveExpired removes it.
//
// Thread safety: one PartitionHandle per partition, used by one thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "sluice/stateful_processor.h"
#include "state/state_store.h"

namespace sluice::ops {

// One declared state variable.
struct StateVarDecl {
  enum class Kind { kValue, kList, kMap };
  std::string name;
  Kind kind = Kind::kValue;
  std::string type;      // StateTypeName of the value
  std::string key_type;  // kMap: of the map key
  int64_t ttl_ms = 0;
  // "ValueState<BIGINT>", "MapState<VARCHAR, ROW> TTL": the state schema's type text.
  std::string Describe() const;
  bool operator==(const StateVarDecl&) const = default;
};

// Counters of one batch of one partition.
struct CustomStateCounters {
  int64_t timers_registered = 0;
  int64_t timers_deleted = 0;
  int64_t timers_expired = 0;
  int64_t ttl_removed = 0;
};

// The timer index's key prefix (0xFF 'T') and the bounds of a time scan.
std::string TimerIndexPrefix();
// The smallest index key after every timer at or before `time_ms`.
std::string TimerIndexEnd(int64_t time_ms);
// Parses an index key: expiry ms and gk.
Result<std::pair<int64_t, std::string>> ParseTimerIndexKey(std::string_view key);

class StateVarBase;  // custom_state_vars.cc

class PartitionHandle final : public StatefulProcessorHandle {
 public:
  PartitionHandle(TimeMode mode, std::vector<Column> input_columns);
  ~PartitionHandle() override;

  const std::vector<StateVarDecl>& declarations() const { return decls_; }
  bool has_ttl() const;

  // A batch on `store` with the batch timestamp; ends with EndBatch (before the commit).
  void BeginBatch(state::StateStore* store, int64_t now_ms);
  void EndBatch();
  // The key the state calls refer to: its row codec bytes and its value row.
  void SetKey(std::string gk, Row key_row);
  void ClearKey();
  // Declarations are refused after this (Init is over).
  void SealDeclarations() { sealed_ = true; }

  // Removes every timer of the partition at or before `threshold_ms` and returns them in
  // (time, gk) order with the key row.
  struct Expired {
    int64_t time_ms;
    std::string gk;
    Row key;
  };
  Result<std::vector<Expired>> TakeExpiredTimers(int64_t threshold_ms);
  // The earliest timer of the partition, if any.
  Result<std::optional<int64_t>> EarliestTimer();
  // Removes the variables' values whose TTL expired (counted in counters().ttl_removed).
  Status RemoveExpired();

  CustomStateCounters& counters() { return counters_; }

  // StatefulProcessorHandle
  Status RegisterTimer(int64_t expiry_time_ms) override;
  Status DeleteTimer(int64_t expiry_time_ms) override;
  Result<std::vector<int64_t>> ListTimers() override;
  Status ClearState(const std::string& name) override;
  TimeMode time_mode() const override { return mode_; }
  const std::vector<Column>& input_columns() const override { return input_columns_; }

  // For the variables (custom_state_vars.cc).
  Result<state::StateStore*> Store(const std::string& what) const;
  const std::string& key_prefix() const { return prefix_; }
  int64_t now_us() const { return now_ms_ * 1000; }

 protected:
  Result<detail::ValueStateImpl*> DeclareValue(const std::string& name, const std::string& type,
                                               TtlConfig ttl) override;
  Result<detail::ListStateImpl*> DeclareList(const std::string& name, const std::string& type,
                                             TtlConfig ttl) override;
  Result<detail::MapStateImpl*> DeclareMap(const std::string& name, const std::string& key_type,
                                           const std::string& value_type, TtlConfig ttl) override;

 private:
  Status CheckDeclaration(const std::string& name, int64_t ttl_ms);
  Status CheckTimers(const char* what) const;
  std::string TimerKey(int64_t t) const;

  const TimeMode mode_;
  const std::vector<Column> input_columns_;
  std::vector<StateVarDecl> decls_;
  std::vector<std::unique_ptr<StateVarBase>> vars_;
  bool sealed_ = false;
  state::StateStore* store_ = nullptr;
  int64_t now_ms_ = 0;
  std::string gk_, prefix_;
  Row key_row_;
  bool has_key_ = false;
  CustomStateCounters counters_;
};

}  // namespace sluice::ops
