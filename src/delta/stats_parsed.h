// A file's add.stats parsed once: numRecords, tightBounds, and per top-level column the min and
// max (as text) and the null count, looked up the way data skipping reads the JSON (an exact
// key first, else the first key equal ignoring case, in key order; a duplicate key keeps its
// last value, as the JSON parser does). FileStatsMemo keeps one with a snapshot's shared file
// entry (file_list.h), so that data skipping parses each file's stats once per entry, not once
// per statement, and the snapshot after a commit carries the parsed stats of every file it
// shares with its predecessor.
//
//   const ParsedFileStats& s = snapshot.files.memo(i).Get(snapshot.files[i]);
//   if (s.usable()) { s.num_records(); s.Min("id"); s.NullCount("id"); ... }
//
// What does not parse is absent, never guessed: stats that are missing, not JSON or not an
// object give !usable() (no skipping on stats); a min/max that is null, an object or an array
// has no text; a nullCount or numRecords that is not an integer is nullopt.
//
// Thread safety: ParsedFileStats is immutable; FileStatsMemo::Get may be called from any number
// of threads at once (the first call parses, the others wait for it).
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "delta/actions.h"

namespace sluice::delta {

class ParsedFileStats {
 public:
  // Parses add.stats text; nullopt, malformed JSON or a non-object give !usable().
  static ParsedFileStats Parse(const std::optional<std::string>& stats_json);

  // Whether the stats parsed as a JSON object.
  bool usable() const { return usable_; }
  // numRecords, when it is an integer.
  std::optional<int64_t> num_records() const { return num_records_; }
  // tightBounds: true unless it is the boolean false (absent = tight).
  bool tight_bounds() const { return tight_bounds_; }

  // The column's minValues / maxValues entry as text (a JSON string's value, any other scalar
  // as JSON text, e.g. 42, 1.5, true); null when missing or not a scalar.
  const std::string* Min(std::string_view column) const { return Text(mins_, column); }
  const std::string* Max(std::string_view column) const { return Text(maxs_, column); }
  // The column's nullCount, when it is an integer.
  std::optional<int64_t> NullCount(std::string_view column) const;

 private:
  // (key, value) in key order, as the JSON object held them.
  template <typename V>
  using Fields = std::vector<std::pair<std::string, V>>;

  template <typename V>
  static const V* Find(const Fields<V>& fields, std::string_view column);
  static const std::string* Text(const Fields<std::optional<std::string>>& fields,
                                 std::string_view column);

  bool usable_ = false;
  bool tight_bounds_ = true;
  std::optional<int64_t> num_records_;
  Fields<std::optional<std::string>> mins_;
  Fields<std::optional<std::string>> maxs_;
  Fields<std::optional<int64_t>> null_counts_;
};

// The parsed stats of one file entry, computed on the first Get and kept for the life of the
// entry. An entry's AddFile never changes, so the memo never goes stale; a file added again
// (or by a later version) is a new entry with a new memo.
class FileStatsMemo {
 public:
  // The parsed stats of `file`, which must be the value of the entry holding this memo.
  const ParsedFileStats& Get(const AddFile& file) const;

 private:
  mutable std::once_flag once_;
  mutable ParsedFileStats parsed_;
};

}  // namespace sluice::delta
