// The offset of the Delta table and change data feed sources: Spark's DeltaSourceOffset JSON,
//   {"sourceVersion":1,"reservoirId":"<table
//   id>","reservoirVersion":V,"index":I,"isStartingVersion":B}
// Meaning (Delta source): every version before V has been read, and of version V the files with
// index <= I (index -1: none of V's files). With isStartingVersion=true, V is the version of
// the starting snapshot and I indexes its files (sorted by modificationTime, then path); else I
// indexes the data-changing add actions of commit V, in their order in the commit file.
// The change data feed source uses index -1 only: (V, -1) = every version before V was read.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

namespace sluice::sources {

struct DeltaSourceOffset {
  static constexpr int64_t kSourceVersion = 1;
  static constexpr int64_t kBaseIndex = -1;

  std::string reservoir_id;
  int64_t reservoir_version = 0;
  int64_t index = kBaseIndex;
  bool is_starting_version = false;

  std::string ToJson() const;
  // Corruption naming the text when it is not such an offset; NotSupported for a
  // sourceVersion above 1.
  static Result<DeltaSourceOffset> Parse(const std::string& json);

  // Position order (reservoir id ignored): version, then starting snapshot before its commit
  // (a starting version V's files come before commit V+1), then index.
  bool operator==(const DeltaSourceOffset&) const = default;
};

}  // namespace sluice::sources
