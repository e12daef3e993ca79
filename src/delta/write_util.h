// Small helpers of the Delta writer: UUIDs, data file names, Spark's Hive-style partition
// directory escaping and the URI encoding of paths written into the log.
//
// Path rules (PROTOCOL.md "Path", Spark's ExternalCatalogUtils.escapePathName):
//   partition value "A/A"  -> directory "x=A%2FA"        (Hive escaping, on storage)
//                          -> log path  "x=A%252FA/..."  (URI encoding of the relative path)
// The reader percent-decodes the log path once (paths.h) and gets the storage path back.
// partitionValues in the log hold the raw (unescaped) value; a null value becomes the directory
// `x=__HIVE_DEFAULT_PARTITION__` and a JSON null in the log.
//
// Thread safety: all functions are thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "delta/actions.h"

namespace sluice::delta {

inline constexpr char kHiveDefaultPartition[] = "__HIVE_DEFAULT_PARTITION__";
inline constexpr char kEngineInfo[] = "Sluice/0.1.0";

// Spark's escapePathName: control characters and "#%'*/:=?\{[]^ and DEL become %XX (upper-case
// hex); everything else (including spaces and non-ASCII bytes) is kept.
std::string EscapePartitionValue(std::string_view value);

// The directory of one partition, relative to the table root: "a=1/b=x%3Dy" (columns in
// `partition_columns` order; values looked up in `values`, missing or null -> default partition).
std::string PartitionDirectory(const std::vector<std::string>& partition_columns,
                               const PartitionValues& values);

// URI-encodes a relative storage path for the log: every byte outside the RFC 2396 path
// characters (A-Z a-z 0-9 - _ . ! ~ * ' ( ) / : @ & = + $ ,) and outside non-ASCII is %XX.
// In particular '%' -> "%25" and ' ' -> "%20". PercentDecode (paths.h) inverts it.
std::string EncodeLogPath(std::string_view relative_path);

// "part-00003-<uuid>.c000.snappy.parquet".
std::string DataFileName(int index, std::string_view uuid, std::string_view compression = "snappy");

// Milliseconds since the epoch from the system clock.
int64_t NowMillis();

}  // namespace sluice::delta
