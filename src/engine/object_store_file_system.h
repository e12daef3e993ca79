// Internal to src/engine: DuckDB reads and writes files on object stores through Sluice's own
// file systems (src/fs/), not through an extension. RegisterObjectStoreFileSystem gives the
// engine's database a DuckDB file system that claims every path with a scheme (fs::PathScheme:
// "s3://b/k", "gs://b/k", ...) except DuckDB's own "file:"; each call goes to
// fs::FileSystemForPath(path), so:
//
//   s3://   read_parquet, read_json and COPY ... TO work on S3 with Sluice's S3 client (SigV4,
//           retries, the configuration of docs/s3.md): a read is a HEAD for the size, then ranged
//           GETs (a file up to kWholeObjectBytes is fetched whole on its first read; larger ones
//           in windows of at least kReadWindowBytes); a write is held in memory and uploaded when
//           DuckDB closes (or syncs) the file: a single PUT, or a multipart upload when large,
//           so no reader ever sees a partial object. A file opened for exclusive creation is
//           uploaded with If-None-Match: * (fs::FileSystem::CreateIfAbsent).
//   other   refused by name (NotSupported from FileSystemForPath), so a query naming gs://...
//           gets Sluice's message instead of DuckDB's "install httpfs" hint.
//
// Globs on s3:// (*, ?, [...]) match within one path segment; "**" crosses segments.
// Why not DuckDB's httpfs extension: docs/s3.md "Parquet data on S3".
//
// Include only from src/engine/*.cc.
#pragma once

#include <cstdint>

#include "duckdb.hpp"

namespace sluice::engine::internal {

inline constexpr int64_t kWholeObjectBytes = 8 << 20;
inline constexpr int64_t kReadWindowBytes = 1 << 20;

// Registers the object store file system in `db`. Throws DuckDB exceptions (callers use
// CatchAll).
void RegisterObjectStoreFileSystem(duckdb::DatabaseInstance& db);

}  // namespace sluice::engine::internal
