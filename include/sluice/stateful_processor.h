// Custom state: Spark's transformWithState for the C++ API (docs/cpp-api.md, "Custom state").
//
//   class RunningCount : public sluice::StatefulProcessor {
//    public:
//     sluice::Status Init(sluice::StatefulProcessorHandle& handle) override {
//       SLUICE_ASSIGN_OR_RETURN(count_, handle.GetValueState<int64_t>("count"));
//       return sluice::Status::OK();
//     }
//     sluice::Result<std::vector<sluice::Row>> HandleInputRows(
//         const sluice::Row& key, const std::vector<sluice::Row>& rows,
//         const sluice::TimerValues& /*timer_values*/) override {
//       SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> n, count_.Get());
//       int64_t total = n.value_or(0) + static_cast<int64_t>(rows.size());
//       SLUICE_RETURN_NOT_OK(count_.Update(total));
//       return std::vector<sluice::Row>{{key[0], total}};
//     }
//    private:
//     sluice::ValueState<int64_t> count_;
//   };
//
//   DataFrame counts = events.GroupBy({"user"}).TransformWithState(
//       [] { return std::make_unique<RunningCount>(); }, sluice::TimeMode::kNone,
//       sluice::OutputMode::kUpdate, "user STRING, count BIGINT");
//
// Model (Spark's StatefulProcessor): per micro-batch, the rows of the batch are grouped by the
// GroupBy key and HandleInputRows is called once per key with all of that key's rows; then every
// expired timer fires (HandleExpiredTimer); then values whose TTL passed are removed. Inside a
// call the state variables and timers are those of the call's key (the implicit grouping key).
// Everything the processor stores is checkpointed in the query's state store with the other
// operators' state: a restart continues from it exactly, and the re-run of a batch after a crash
// sees the state as it was before the batch, so its output is the same if the processor is
// deterministic (it must not read the wall clock or random numbers; use TimerValues).
//
// Values. Input rows, keys, state values and output rows are `Row`s of `Value`s: NULL
// (std::monostate), bool, int64_t, double or std::string. Input columns are converted as
//   BOOLEAN -> bool; TINYINT..BIGINT, HUGEINT -> int64_t; FLOAT, DOUBLE, DECIMAL -> double;
//   TIMESTAMP, TIMESTAMP WITH TIME ZONE -> int64_t microseconds since the epoch (UTC);
//   anything else -> std::string (its SQL text, CAST(x AS VARCHAR)).
// Output rows must match the output schema given to TransformWithState: one Value per column,
// int64_t for integer and TIMESTAMP columns (microseconds), double (or int64_t) for FLOAT/DOUBLE,
// std::string for VARCHAR/BLOB, bool for BOOLEAN, NULL anywhere. State variables are typed: T is
// one of bool, int64_t, double, std::string or Row (a whole row of values).
//
// Errors: every state call returns Status/Result; a non-OK Status returned by a handler fails the
// batch (and the query) with the key and handler named. Nothing may throw out of a handler.
//
// Ownership and threads: the query creates one processor per state partition with the factory,
// calls Init once on it, and calls its handlers from one thread at a time (different processors
// may run on different threads). State and handle objects are valid for the processor's life.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "sluice/result.h"
#include "sluice/rows.h"

namespace sluice {

// One value: NULL, BOOLEAN, BIGINT, DOUBLE or VARCHAR.
using Value = std::variant<std::monostate, bool, int64_t, double, std::string>;
// A row of values.
using Row = std::vector<Value>;

// Which clock the processor's timers use (Spark's TimeMode).
enum class TimeMode {
  kNone,            // no timers
  kProcessingTime,  // a timer fires in the first batch whose timestamp is >= its time
  kEventTime,       // a timer fires in the first batch whose watermark is >= its time; late input
                    // rows (event time <= the previous batch's watermark) are dropped
};

// Time to live of a state variable's values (Spark's TTLConfig): a value written in the batch
// with timestamp T expires at T + ttl_ms (processing time) and is no longer visible from the
// first batch whose timestamp is >= that; it is then removed from the state. 0: no TTL. Each
// Update / Put / Append renews the expiry of what it writes (a list's values expire together).
struct TtlConfig {
  int64_t ttl_ms = 0;
};

// The times a handler call sees.
struct TimerValues {
  // The batch timestamp (current_timestamp() of the batch), ms since the epoch.
  int64_t current_processing_time_ms = 0;
  // TimeMode::kEventTime: the watermark of this batch (the one timers fire by), ms; nullopt in
  // the other modes.
  std::optional<int64_t> current_watermark_ms;
};

// The timer that fired.
struct ExpiredTimerInfo {
  int64_t expiry_time_ms = 0;
};

namespace detail {

// The untyped state variables behind the typed ones (implemented by the engine).
class ValueStateImpl {
 public:
  virtual ~ValueStateImpl() = default;
  virtual Result<std::optional<Row>> Get() = 0;
  virtual Status Update(Row value) = 0;
  virtual Status Clear() = 0;
};
class ListStateImpl {
 public:
  virtual ~ListStateImpl() = default;
  virtual Result<std::vector<Row>> Get() = 0;
  virtual Status Put(std::vector<Row> values) = 0;
  virtual Status Append(std::vector<Row> values) = 0;
  virtual Status Clear() = 0;
};
class MapStateImpl {
 public:
  virtual ~MapStateImpl() = default;
  virtual Result<std::optional<Row>> Get(const Row& key) = 0;
  virtual Status Put(Row key, Row value) = 0;
  virtual Status Remove(const Row& key) = 0;
  // In the byte order of the encoded keys (for int64_t keys: numeric order; strings: byte order
  // after a length prefix, i.e. shorter first).
  virtual Result<std::vector<std::pair<Row, Row>>> Entries() = 0;
  virtual Status Clear() = 0;
};

template <typename T>
inline constexpr bool kIsStateType =
    std::is_same_v<T, bool> || std::is_same_v<T, int64_t> || std::is_same_v<T, double> ||
    std::is_same_v<T, std::string> || std::is_same_v<T, Row>;

// The SQL-like name of a state type, recorded in the checkpoint's state schema.
template <typename T>
const char* StateTypeName() {
  static_assert(kIsStateType<T>, "state types: bool, int64_t, double, std::string, sluice::Row");
  if constexpr (std::is_same_v<T, bool>) return "BOOLEAN";
  if constexpr (std::is_same_v<T, int64_t>) return "BIGINT";
  if constexpr (std::is_same_v<T, double>) return "DOUBLE";
  if constexpr (std::is_same_v<T, std::string>) return "VARCHAR";
  if constexpr (std::is_same_v<T, Row>) return "ROW";
}

template <typename T>
Row ToRow(const T& value) {
  if constexpr (std::is_same_v<T, Row>) {
    return value;
  } else {
    return Row{Value(value)};
  }
}

template <typename T>
Result<T> FromRow(Row row) {
  if constexpr (std::is_same_v<T, Row>) {
    return row;
  } else {
    if (row.size() != 1 || !std::holds_alternative<T>(row[0])) {
      return Status::Corruption(std::string("a state value is not a ") + StateTypeName<T>());
    }
    return std::get<T>(std::move(row[0]));
  }
}

inline Status Unbound() {
  return Status::InvalidArgument(
      "a state variable was used before StatefulProcessorHandle::Get*State bound it (in Init)");
}

}  // namespace detail

// A single value per grouping key (Spark's ValueState).
template <typename T>
class ValueState {
 public:
  ValueState() = default;
  // The value, or nullopt when none is set (or it expired).
  Result<std::optional<T>> Get() const {
    if (impl_ == nullptr) return detail::Unbound();
    SLUICE_ASSIGN_OR_RETURN(std::optional<Row> row, impl_->Get());
    if (!row) return std::optional<T>();
    SLUICE_ASSIGN_OR_RETURN(T value, detail::FromRow<T>(std::move(*row)));
    return std::optional<T>(std::move(value));
  }
  Result<bool> Exists() const {
    SLUICE_ASSIGN_OR_RETURN(std::optional<T> v, Get());
    return v.has_value();
  }
  Status Update(const T& value) {
    return impl_ == nullptr ? detail::Unbound() : impl_->Update(detail::ToRow(value));
  }
  Status Clear() { return impl_ == nullptr ? detail::Unbound() : impl_->Clear(); }

 private:
  friend class StatefulProcessorHandle;
  explicit ValueState(detail::ValueStateImpl* impl) : impl_(impl) {}
  detail::ValueStateImpl* impl_ = nullptr;
};

// A list of values per grouping key (Spark's ListState).
template <typename T>
class ListState {
 public:
  ListState() = default;
  // The values in order (empty when none).
  Result<std::vector<T>> Get() const {
    if (impl_ == nullptr) return detail::Unbound();
    SLUICE_ASSIGN_OR_RETURN(std::vector<Row> rows, impl_->Get());
    std::vector<T> out;
    out.reserve(rows.size());
    for (Row& r : rows) {
      SLUICE_ASSIGN_OR_RETURN(T v, detail::FromRow<T>(std::move(r)));
      out.push_back(std::move(v));
    }
    return out;
  }
  Result<bool> Exists() const {
    SLUICE_ASSIGN_OR_RETURN(std::vector<T> v, Get());
    return !v.empty();
  }
  // Replaces the list.
  Status Put(const std::vector<T>& values) {
    return impl_ == nullptr ? detail::Unbound() : impl_->Put(ToRows(values));
  }
  Status AppendValue(const T& value) { return AppendList({value}); }
  Status AppendList(const std::vector<T>& values) {
    return impl_ == nullptr ? detail::Unbound() : impl_->Append(ToRows(values));
  }
  Status Clear() { return impl_ == nullptr ? detail::Unbound() : impl_->Clear(); }

 private:
  friend class StatefulProcessorHandle;
  explicit ListState(detail::ListStateImpl* impl) : impl_(impl) {}
  static std::vector<Row> ToRows(const std::vector<T>& values) {
    std::vector<Row> rows;
    rows.reserve(values.size());
    for (const T& v : values) rows.push_back(detail::ToRow(v));
    return rows;
  }
  detail::ListStateImpl* impl_ = nullptr;
};

// A map of user keys to values per grouping key (Spark's MapState).
template <typename K, typename V>
class MapState {
 public:
  MapState() = default;
  Result<std::optional<V>> GetValue(const K& key) const {
    if (impl_ == nullptr) return detail::Unbound();
    SLUICE_ASSIGN_OR_RETURN(std::optional<Row> row, impl_->Get(detail::ToRow(key)));
    if (!row) return std::optional<V>();
    SLUICE_ASSIGN_OR_RETURN(V value, detail::FromRow<V>(std::move(*row)));
    return std::optional<V>(std::move(value));
  }
  Result<bool> ContainsKey(const K& key) const {
    SLUICE_ASSIGN_OR_RETURN(std::optional<V> v, GetValue(key));
    return v.has_value();
  }
  Status UpdateValue(const K& key, const V& value) {
    return impl_ == nullptr ? detail::Unbound()
                            : impl_->Put(detail::ToRow(key), detail::ToRow(value));
  }
  Status RemoveKey(const K& key) {
    return impl_ == nullptr ? detail::Unbound() : impl_->Remove(detail::ToRow(key));
  }
  // Every entry, ordered as MapStateImpl::Entries says.
  Result<std::vector<std::pair<K, V>>> Entries() const {
    if (impl_ == nullptr) return detail::Unbound();
    SLUICE_ASSIGN_OR_RETURN(auto rows, impl_->Entries());
    std::vector<std::pair<K, V>> out;
    out.reserve(rows.size());
    for (auto& [k, v] : rows) {
      SLUICE_ASSIGN_OR_RETURN(K key, detail::FromRow<K>(std::move(k)));
      SLUICE_ASSIGN_OR_RETURN(V value, detail::FromRow<V>(std::move(v)));
      out.emplace_back(std::move(key), std::move(value));
    }
    return out;
  }
  Result<bool> Exists() const {
    SLUICE_ASSIGN_OR_RETURN(auto e, Entries());
    return !e.empty();
  }
  Status Clear() { return impl_ == nullptr ? detail::Unbound() : impl_->Clear(); }

 private:
  friend class StatefulProcessorHandle;
  explicit MapState(detail::MapStateImpl* impl) : impl_(impl) {}
  detail::MapStateImpl* impl_ = nullptr;
};

// What Init gets: declares state variables, and (in the handlers) manages the current key's
// timers. Implemented by the engine.
class StatefulProcessorHandle {
 public:
  virtual ~StatefulProcessorHandle() = default;

  // Declare state variables (in Init only; a name once per processor). The declarations (names,
  // kinds, types, TTL or not) are recorded in the checkpoint's state schema: a restart whose
  // processor declares other variables is refused, naming the difference.
  template <typename T>
  Result<ValueState<T>> GetValueState(const std::string& name, TtlConfig ttl = {}) {
    SLUICE_ASSIGN_OR_RETURN(detail::ValueStateImpl * impl,
                            DeclareValue(name, detail::StateTypeName<T>(), ttl));
    return ValueState<T>(impl);
  }
  template <typename T>
  Result<ListState<T>> GetListState(const std::string& name, TtlConfig ttl = {}) {
    SLUICE_ASSIGN_OR_RETURN(detail::ListStateImpl * impl,
                            DeclareList(name, detail::StateTypeName<T>(), ttl));
    return ListState<T>(impl);
  }
  // (In SLUICE_ASSIGN_OR_RETURN, put the call in parentheses: the comma of <K, V> would split
  // the macro's arguments.)
  template <typename K, typename V>
  Result<MapState<K, V>> GetMapState(const std::string& name, TtlConfig ttl = {}) {
    SLUICE_ASSIGN_OR_RETURN(
        detail::MapStateImpl * impl,
        DeclareMap(name, detail::StateTypeName<K>(), detail::StateTypeName<V>(), ttl));
    return MapState<K, V>(impl);
  }

  // Timers of the current key (handlers only; InvalidArgument in Init or with TimeMode::kNone).
  // A key has at most one timer per time; registering it again is a no-op.
  virtual Status RegisterTimer(int64_t expiry_time_ms) = 0;
  // OK when absent.
  virtual Status DeleteTimer(int64_t expiry_time_ms) = 0;
  // The current key's timers, earliest first.
  virtual Result<std::vector<int64_t>> ListTimers() = 0;
  // Removes every value of state variable `name` of the current key (Spark's deleteIfExists
  // for one key; handlers only).
  virtual Status ClearState(const std::string& name) = 0;

  virtual TimeMode time_mode() const = 0;
  // The input rows' columns (names and SQL types before the conversion to Values).
  virtual const std::vector<Column>& input_columns() const = 0;

 protected:
  virtual Result<detail::ValueStateImpl*> DeclareValue(const std::string& name,
                                                       const std::string& type, TtlConfig ttl) = 0;
  virtual Result<detail::ListStateImpl*> DeclareList(const std::string& name,
                                                     const std::string& type, TtlConfig ttl) = 0;
  virtual Result<detail::MapStateImpl*> DeclareMap(const std::string& name,
                                                   const std::string& key_type,
                                                   const std::string& value_type,
                                                   TtlConfig ttl) = 0;
};

// The user's processor (Spark's StatefulProcessor). Subclass it and give TransformWithState a
// factory that makes new instances.
class StatefulProcessor {
 public:
  virtual ~StatefulProcessor() = default;

  // Declares the state variables (GetValueState...). Called once per instance, before any
  // handler. `handle` outlives the instance's handler calls.
  virtual Status Init(StatefulProcessorHandle& handle) = 0;

  // All the rows of `key` in this batch, in input order (late rows already dropped). Returns
  // the output rows (any number, including none).
  virtual Result<std::vector<Row>> HandleInputRows(const Row& key, const std::vector<Row>& rows,
                                                   const TimerValues& timer_values) = 0;

  // A timer of `key` expired (it is already deleted; register it again to repeat). Called after
  // the input rows of the batch were handled, earliest timer first.
  virtual Result<std::vector<Row>> HandleExpiredTimer(const Row& key,
                                                      const TimerValues& timer_values,
                                                      const ExpiredTimerInfo& expired_timer) {
    (void)key;
    (void)timer_values;
    (void)expired_timer;
    return std::vector<Row>{};
  }

  // One row of the initial state frame for `key` (its non-key columns), in the first batch of a
  // new checkpoint only, before the input rows. Store what it says; it produces no output.
  virtual Status HandleInitialState(const Row& key, const Row& initial_state,
                                    const TimerValues& timer_values) {
    (void)key;
    (void)initial_state;
    (void)timer_values;
    return Status::InvalidArgument(
        "TransformWithState was given an initial state but the processor does not override "
        "HandleInitialState");
  }
};

// Makes a new processor (one per state partition).
using StatefulProcessorFactory = std::function<std::unique_ptr<StatefulProcessor>()>;

}  // namespace sluice
