// The offset of the Delta table and change data feed sources: Spark's DeltaSourceOffset JSON,
//   {"sourceVersion":1,"reservoirId":"<table
//   id>","reservoirVersion":V,"index":I,"isStartingVersion":B}
// Meaning (Delta source): every version before V has been read, and of version V the files with
// index <= I (index -1: none of V's files). With isStartingVersion=true, V is the version of
// the starting snapshot and I indexes its files (sorted by modificationTime, then path); else I
// indexes the data-changing add actions of commit V, in their order in the commit file.
// The change data feed source uses index -1 only: (V, -1) = every version before V was read.
// With a schema log (delta_schema_log.h), (V, -20) is Delta's metadata-change barrier: every
// version before V was read and commit V changes the schema; its batch has no rows, and its
// commit records V's schema in the log (sourceVersion 3, as Delta writes it). Delta's (V, -19)
// (after the barrier) is read as the same position.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

namespace sluice::sources {

struct DeltaSourceOffset {
  static constexpr int64_t kSourceVersion = 1;
  static constexpr int64_t kBaseIndex = -1;
  // Delta's METADATA_CHANGE_INDEX / POST_METADATA_CHANGE_INDEX, written with sourceVersion 3.
  static constexpr int64_t kMetadataChangeIndex = -20;
  static constexpr int64_t kPostMetadataChangeIndex = -19;
  static constexpr int64_t kMetadataChangeSourceVersion = 3;

  std::string reservoir_id;
  int64_t reservoir_version = 0;
  int64_t index = kBaseIndex;
  bool is_starting_version = false;

  std::string ToJson() const;
  // Corruption naming the text when it is not such an offset; NotSupported for a
  // sourceVersion above 3.
  static Result<DeltaSourceOffset> Parse(const std::string& json);

  // Position order (reservoir id ignored): version, then starting snapshot before its commit
  // (a starting version V's files come before commit V+1), then index.
  bool operator==(const DeltaSourceOffset&) const = default;
  // At the metadata-change barrier of reservoir_version (index -20 or -19).
  bool AtMetadataChange() const {
    return index == kMetadataChangeIndex || index == kPostMetadataChangeIndex;
  }
};

}  // namespace sluice::sources
