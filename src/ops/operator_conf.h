// The persisted conf keys that stateful operators read from OperatorContext::conf, parsed in one
// place so that every operator reads a key the same way.
// Thread safety: stateless functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "state/state_store.h"

namespace sluice::ops {

inline constexpr char kStateProviderClassConf[] = "sluice.streaming.stateStore.providerClass";
inline constexpr char kAggregateMirrorMaxBytesConf[] =
    "sluice.streaming.aggregate.stateMirrorMaxBytes";
inline constexpr char kDedupMirrorMaxBytesConf[] =
    "sluice.streaming.deduplicate.stateMirrorMaxBytes";

// The state store provider that kStateProviderClassConf asks for: in-memory when its value names
// the memory or HDFS provider ("memory", Spark's "...HDFSBackedStateStoreProvider", any case);
// RocksDB otherwise, also when the key is absent (docs/streaming-plan.md §4).
state::StateStoreProviderKind StateProviderFromConf(const std::map<std::string, std::string>& conf);

// `key`'s value as a byte count: nullopt when the key is absent; InvalidArgument naming the key
// and the value when it is not a whole decimal number >= 0 that fits in int64.
Result<std::optional<int64_t>> ByteCountConf(const std::map<std::string, std::string>& conf,
                                             std::string_view key);

}  // namespace sluice::ops
