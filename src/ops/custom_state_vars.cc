#include "ops/custom_state_vars.h"

#include <algorithm>

#include "ops/custom_state_codec.h"
#include "ops/state_rows.h"

namespace sluice::ops {
namespace {

constexpr uint64_t kSignBit = uint64_t{1} << 63;

void PutU64(uint64_t v, std::string* out) {
  for (int i = 7; i >= 0; --i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

uint64_t GetU64(std::string_view s) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(s[i]);
  return v;
}

std::string EncodeTime(int64_t t) {
  std::string out;
  PutU64(static_cast<uint64_t>(t) ^ kSignBit, &out);
  return out;
}

int64_t DecodeTime(std::string_view s) { return static_cast<int64_t>(GetU64(s) ^ kSignBit); }

// The smallest string greater than every string with prefix `p` (p has no trailing 0xFF run
// here: timer keys end with a time byte string after 't').
std::string PrefixEnd(std::string p) {
  while (!p.empty() && static_cast<uint8_t>(p.back()) == 0xFF) p.pop_back();
  if (!p.empty()) p.back() = static_cast<char>(static_cast<uint8_t>(p.back()) + 1);
  return p;
}

}  // namespace

std::string StateVarDecl::Describe() const {
  std::string out;
  switch (kind) {
    case Kind::kValue:
      out = "ValueState<" + type + ">";
      break;
    case Kind::kList:
      out = "ListState<" + type + ">";
      break;
    case Kind::kMap:
      out = "MapState<" + key_type + ", " + type + ">";
      break;
  }
  return ttl_ms > 0 ? out + " TTL" : out;
}

std::string TimerIndexPrefix() { return std::string("\xFF") + "T"; }

std::string TimerIndexEnd(int64_t time_ms) {
  if (time_ms == INT64_MAX) return PrefixEnd(TimerIndexPrefix());
  return TimerIndexPrefix() + EncodeTime(time_ms + 1);
}

Result<std::pair<int64_t, std::string>> ParseTimerIndexKey(std::string_view key) {
  if (key.size() < 10 || key.substr(0, 2) != TimerIndexPrefix()) {
    return Status::Corruption("custom state: bad timer index key of " + std::to_string(key.size()) +
                              " bytes");
  }
  return std::make_pair(DecodeTime(key.substr(2, 8)), std::string(key.substr(10)));
}

// ---- the variables ----

class StateVarBase {
 public:
  StateVarBase(PartitionHandle* h, StateVarDecl decl) : h_(h), decl_(std::move(decl)) {
    suffix_.push_back('v');
    const auto n = static_cast<uint16_t>(decl_.name.size());
    suffix_.push_back(static_cast<char>(n >> 8));
    suffix_.push_back(static_cast<char>(n & 0xFF));
    suffix_ += decl_.name;
  }
  virtual ~StateVarBase() = default;
  const StateVarDecl& decl() const { return decl_; }

  // The key of this variable for the current key.
  std::string Key() const { return h_->key_prefix() + suffix_; }
  std::string What() const { return "state variable '" + decl_.name + "'"; }
  int64_t Expiry() const {
    return decl_.ttl_ms > 0 ? h_->now_us() + decl_.ttl_ms * 1000 : kNeverEvicted;
  }
  // The live payload at `key` (nullopt when absent or expired).
  Result<std::optional<std::string>> Read(state::StateStore* s, std::string_view key) const {
    SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> v, s->Get(key));
    if (!v) return std::optional<std::string>();
    SLUICE_ASSIGN_OR_RETURN(ParsedStateValue p, ParseStateValue(*v));
    if (p.evict_us != kNeverEvicted && p.evict_us <= h_->now_us()) {
      return std::optional<std::string>();
    }
    return std::optional<std::string>(std::string(p.row));
  }
  Status Write(state::StateStore* s, std::string_view key, std::string_view payload) const {
    return s->Put(key, StateValue(Expiry(), payload));
  }
  // Removes every entry of the variable for the current key.
  Status ClearAll() {
    SLUICE_ASSIGN_OR_RETURN(state::StateStore * s, h_->Store(What()));
    const std::string base = Key();
    SLUICE_RETURN_NOT_OK(s->Remove(base));
    if (decl_.kind != StateVarDecl::Kind::kMap) return Status::OK();
    std::vector<std::string> doomed;
    {
      SLUICE_ASSIGN_OR_RETURN(auto it, s->PrefixScan(base));
      for (; it->Valid(); it->Next()) doomed.emplace_back(it->key());
      SLUICE_RETURN_NOT_OK(it->status());
    }
    for (const std::string& k : doomed) SLUICE_RETURN_NOT_OK(s->Remove(k));
    return Status::OK();
  }

 protected:
  PartitionHandle* h_;
  StateVarDecl decl_;
  std::string suffix_;
};

namespace {

class ValueVar final : public StateVarBase, public detail::ValueStateImpl {
 public:
  using StateVarBase::StateVarBase;
  Result<std::optional<Row>> Get() override {
    SLUICE_ASSIGN_OR_RETURN(state::StateStore * s, h_->Store(What()));
    SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> p, Read(s, Key()));
    if (!p) return std::optional<Row>();
    SLUICE_ASSIGN_OR_RETURN_CTX(Row r, DecodeValueRowExact(*p), What());
    return std::optional<Row>(std::move(r));
  }
  Status Update(Row value) override {
    SLUICE_ASSIGN_OR_RETURN(state::StateStore * s, h_->Store(What()));
    return Write(s, Key(), EncodeValueRow(value));
  }
  Status Clear() override { return ClearAll(); }
};

class ListVar final : public StateVarBase, public detail::ListStateImpl {
 public:
  using StateVarBase::StateVarBase;
  Result<std::vector<Row>> Get() override {
    SLUICE_ASSIGN_OR_RETURN(state::StateStore * s, h_->Store(What()));
    SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> p, Read(s, Key()));
    if (!p) return std::vector<Row>();
    SLUICE_ASSIGN_OR_RETURN_CTX(std::vector<Row> rows, DecodeValueRows(*p), What());
    return rows;
  }
  Status Put(std::vector<Row> values) override {
    SLUICE_ASSIGN_OR_RETURN(state::StateStore * s, h_->Store(What()));
    if (values.empty()) return s->Remove(Key());
    return Write(s, Key(), EncodeValueRows(values));
  }
  Status Append(std::vector<Row> values) override {
    SLUICE_ASSIGN_OR_RETURN(std::vector<Row> rows, Get());
    for (Row& r : values) rows.push_back(std::move(r));
    return Put(std::move(rows));
  }
  Status Clear() override { return ClearAll(); }
};

class MapVar final : public StateVarBase, public detail::MapStateImpl {
 public:
  using StateVarBase::StateVarBase;
  Result<std::optional<Row>> Get(const Row& key) override {
    SLUICE_ASSIGN_OR_RETURN(state::StateStore * s, h_->Store(What()));
    SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> p, Read(s, Key() + EncodeValueRow(key)));
    if (!p) return std::optional<Row>();
    SLUICE_ASSIGN_OR_RETURN_CTX(Row r, DecodeValueRowExact(*p), What());
    return std::optional<Row>(std::move(r));
  }
  Status Put(Row key, Row value) override {
    SLUICE_ASSIGN_OR_RETURN(state::StateStore * s, h_->Store(What()));
    return Write(s, Key() + EncodeValueRow(key), EncodeValueRow(value));
  }
  Status Remove(const Row& key) override {
    SLUICE_ASSIGN_OR_RETURN(state::StateStore * s, h_->Store(What()));
    return s->Remove(Key() + EncodeValueRow(key));
  }
  Result<std::vector<std::pair<Row, Row>>> Entries() override {
    SLUICE_ASSIGN_OR_RETURN(state::StateStore * s, h_->Store(What()));
    const std::string base = Key();
    std::vector<std::pair<Row, Row>> out;
    SLUICE_ASSIGN_OR_RETURN(auto it, s->PrefixScan(base));
    for (; it->Valid(); it->Next()) {
      std::string_view k = it->key();
      if (k.size() == base.size()) continue;  // (no base entry for maps; defensive)
      SLUICE_ASSIGN_OR_RETURN(ParsedStateValue p, ParseStateValue(it->value()));
      if (p.evict_us != kNeverEvicted && p.evict_us <= h_->now_us()) continue;
      SLUICE_ASSIGN_OR_RETURN_CTX(Row mk, DecodeValueRowExact(k.substr(base.size())), What());
      SLUICE_ASSIGN_OR_RETURN_CTX(Row mv, DecodeValueRowExact(p.row), What());
      out.emplace_back(std::move(mk), std::move(mv));
    }
    SLUICE_RETURN_NOT_OK(it->status());
    return out;
  }
  Status Clear() override { return ClearAll(); }
};

}  // namespace

// ---- the handle ----

PartitionHandle::PartitionHandle(TimeMode mode, std::vector<Column> input_columns)
    : mode_(mode), input_columns_(std::move(input_columns)) {}

PartitionHandle::~PartitionHandle() = default;

bool PartitionHandle::has_ttl() const {
  return std::any_of(decls_.begin(), decls_.end(),
                     [](const StateVarDecl& d) { return d.ttl_ms > 0; });
}

void PartitionHandle::BeginBatch(state::StateStore* store, int64_t now_ms) {
  store_ = store;
  now_ms_ = now_ms;
  counters_ = {};
  ClearKey();
}

void PartitionHandle::EndBatch() {
  store_ = nullptr;
  ClearKey();
}

void PartitionHandle::SetKey(std::string gk, Row key_row) {
  prefix_ = StateKeyPrefix(gk);
  gk_ = std::move(gk);
  key_row_ = std::move(key_row);
  has_key_ = true;
}

void PartitionHandle::ClearKey() {
  gk_.clear();
  prefix_.clear();
  key_row_.clear();
  has_key_ = false;
}

Result<state::StateStore*> PartitionHandle::Store(const std::string& what) const {
  if (store_ == nullptr || !has_key_) {
    return Status::InvalidArgument(what +
                                   " used outside a handler call (state is per key: use it "
                                   "in HandleInputRows, HandleExpiredTimer or "
                                   "HandleInitialState, not in Init)");
  }
  return store_;
}

Status PartitionHandle::CheckDeclaration(const std::string& name, int64_t ttl_ms) {
  if (sealed_) {
    return Status::InvalidArgument("state variable '" + name +
                                   "' declared after Init: declare every state variable in Init");
  }
  if (name.empty() || name.size() > 1000) {
    return Status::InvalidArgument("a state variable name must have 1 to 1000 bytes");
  }
  for (const StateVarDecl& d : decls_) {
    if (d.name == name) {
      return Status::InvalidArgument("state variable '" + name + "' is declared twice");
    }
  }
  if (ttl_ms < 0) {
    return Status::InvalidArgument("state variable '" + name + "': negative TTL");
  }
  return Status::OK();
}

Result<detail::ValueStateImpl*> PartitionHandle::DeclareValue(const std::string& name,
                                                              const std::string& type,
                                                              TtlConfig ttl) {
  SLUICE_RETURN_NOT_OK(CheckDeclaration(name, ttl.ttl_ms));
  StateVarDecl d{name, StateVarDecl::Kind::kValue, type, "", ttl.ttl_ms};
  decls_.push_back(d);
  auto v = std::make_unique<ValueVar>(this, d);
  detail::ValueStateImpl* impl = v.get();
  vars_.push_back(std::move(v));
  return impl;
}

Result<detail::ListStateImpl*> PartitionHandle::DeclareList(const std::string& name,
                                                            const std::string& type,
                                                            TtlConfig ttl) {
  SLUICE_RETURN_NOT_OK(CheckDeclaration(name, ttl.ttl_ms));
  StateVarDecl d{name, StateVarDecl::Kind::kList, type, "", ttl.ttl_ms};
  decls_.push_back(d);
  auto v = std::make_unique<ListVar>(this, d);
  detail::ListStateImpl* impl = v.get();
  vars_.push_back(std::move(v));
  return impl;
}

Result<detail::MapStateImpl*> PartitionHandle::DeclareMap(const std::string& name,
                                                          const std::string& key_type,
                                                          const std::string& value_type,
                                                          TtlConfig ttl) {
  SLUICE_RETURN_NOT_OK(CheckDeclaration(name, ttl.ttl_ms));
  StateVarDecl d{name, StateVarDecl::Kind::kMap, value_type, key_type, ttl.ttl_ms};
  decls_.push_back(d);
  auto v = std::make_unique<MapVar>(this, d);
  detail::MapStateImpl* impl = v.get();
  vars_.push_back(std::move(v));
  return impl;
}

Status PartitionHandle::CheckTimers(const char* what) const {
  if (mode_ == TimeMode::kNone) {
    return Status::InvalidArgument(std::string(what) +
                                   ": timers need TimeMode::kProcessingTime or kEventTime, and "
                                   "this TransformWithState has TimeMode::kNone");
  }
  return Store(what).status();
}

std::string PartitionHandle::TimerKey(int64_t t) const { return prefix_ + "t" + EncodeTime(t); }

Status PartitionHandle::RegisterTimer(int64_t expiry_time_ms) {
  SLUICE_RETURN_NOT_OK(CheckTimers("RegisterTimer"));
  const std::string key = TimerKey(expiry_time_ms);
  SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> present, store_->Get(key));
  if (present) return Status::OK();
  SLUICE_RETURN_NOT_OK(store_->Put(key, ""));
  SLUICE_RETURN_NOT_OK(
      store_->Put(TimerIndexPrefix() + EncodeTime(expiry_time_ms) + gk_, EncodeValueRow(key_row_)));
  ++counters_.timers_registered;
  return Status::OK();
}

Status PartitionHandle::DeleteTimer(int64_t expiry_time_ms) {
  SLUICE_RETURN_NOT_OK(CheckTimers("DeleteTimer"));
  const std::string key = TimerKey(expiry_time_ms);
  SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> present, store_->Get(key));
  if (!present) return Status::OK();
  SLUICE_RETURN_NOT_OK(store_->Remove(key));
  SLUICE_RETURN_NOT_OK(store_->Remove(TimerIndexPrefix() + EncodeTime(expiry_time_ms) + gk_));
  ++counters_.timers_deleted;
  return Status::OK();
}

Result<std::vector<int64_t>> PartitionHandle::ListTimers() {
  SLUICE_RETURN_NOT_OK(CheckTimers("ListTimers"));
  const std::string base = prefix_ + "t";
  std::vector<int64_t> out;
  SLUICE_ASSIGN_OR_RETURN(auto it, store_->PrefixScan(base));
  for (; it->Valid(); it->Next()) {
    std::string_view k = it->key();
    if (k.size() != base.size() + 8) return Status::Corruption("custom state: bad timer key");
    out.push_back(DecodeTime(k.substr(base.size())));
  }
  SLUICE_RETURN_NOT_OK(it->status());
  return out;
}

Status PartitionHandle::ClearState(const std::string& name) {
  for (auto& v : vars_) {
    if (v->decl().name == name) return v->ClearAll();
  }
  return Status::InvalidArgument("ClearState: no state variable '" + name + "' was declared");
}

Result<std::vector<PartitionHandle::Expired>> PartitionHandle::TakeExpiredTimers(
    int64_t threshold_ms) {
  if (store_ == nullptr) return Status::Internal("TakeExpiredTimers outside a batch");
  std::vector<Expired> out;
  std::vector<std::string> index_keys;
  {
    SLUICE_ASSIGN_OR_RETURN(auto it,
                            store_->RangeScan(TimerIndexPrefix(), TimerIndexEnd(threshold_ms)));
    for (; it->Valid(); it->Next()) {
      SLUICE_ASSIGN_OR_RETURN(auto parsed, ParseTimerIndexKey(it->key()));
      SLUICE_ASSIGN_OR_RETURN_CTX(Row key, DecodeValueRowExact(it->value()), "a timer's key");
      out.push_back({parsed.first, std::move(parsed.second), std::move(key)});
      index_keys.emplace_back(it->key());
    }
    SLUICE_RETURN_NOT_OK(it->status());
  }
  for (size_t i = 0; i < out.size(); ++i) {
    SLUICE_RETURN_NOT_OK(store_->Remove(index_keys[i]));
    SLUICE_RETURN_NOT_OK(
        store_->Remove(StateKeyPrefix(out[i].gk) + "t" + EncodeTime(out[i].time_ms)));
  }
  counters_.timers_expired += static_cast<int64_t>(out.size());
  return out;
}

Result<std::optional<int64_t>> PartitionHandle::EarliestTimer() {
  if (store_ == nullptr) return Status::Internal("EarliestTimer outside a batch");
  SLUICE_ASSIGN_OR_RETURN(auto it, store_->PrefixScan(TimerIndexPrefix()));
  std::optional<int64_t> out;
  if (it->Valid()) {
    SLUICE_ASSIGN_OR_RETURN(auto parsed, ParseTimerIndexKey(it->key()));
    out = parsed.first;
  }
  SLUICE_RETURN_NOT_OK(it->status());
  return out;
}

Status PartitionHandle::RemoveExpired() {
  if (store_ == nullptr) return Status::Internal("RemoveExpired outside a batch");
  std::vector<std::string> doomed;
  {
    SLUICE_ASSIGN_OR_RETURN(auto it, store_->Iterate());
    for (; it->Valid(); it->Next()) {
      std::string_view k = it->key();
      if (k.size() < 5 || static_cast<uint8_t>(k[0]) == 0xFF) continue;
      const uint32_t n = (static_cast<uint32_t>(static_cast<uint8_t>(k[0])) << 24) |
                         (static_cast<uint32_t>(static_cast<uint8_t>(k[1])) << 16) |
                         (static_cast<uint32_t>(static_cast<uint8_t>(k[2])) << 8) |
                         static_cast<uint32_t>(static_cast<uint8_t>(k[3]));
      if (k.size() <= 4 + static_cast<size_t>(n) || k[4 + n] != 'v') continue;
      SLUICE_ASSIGN_OR_RETURN(ParsedStateValue p, ParseStateValue(it->value()));
      if (p.evict_us != kNeverEvicted && p.evict_us <= now_us()) doomed.emplace_back(k);
    }
    SLUICE_RETURN_NOT_OK(it->status());
  }
  for (const std::string& k : doomed) SLUICE_RETURN_NOT_OK(store_->Remove(k));
  counters_.ttl_removed += static_cast<int64_t>(doomed.size());
  return Status::OK();
}

}  // namespace sluice::ops
