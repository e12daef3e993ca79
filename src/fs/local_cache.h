// LocalCacheDirFor: where the local-disk caches of data kept on object storage live.
//
// A checkpoint on s3:// keeps its durable files (logs, state snapshots and changelogs) on S3; the
// working copies that need a local disk (the RocksDB databases of stateful operators, which are
// caches rebuilt from the state files on every start: docs/state.md) go to a local directory
// derived from the remote path, so that no local directory named "s3:" is ever made and a
// restart on the same machine finds (and removes) what a killed run left:
//
//   LocalCacheDirFor("s3://bucket/cp/q1") == "<cache root>/s3/bucket/cp/q1"
//
// <cache root> is $SLUICE_LOCAL_CACHE_DIR when set, else $TMPDIR/sluice-cache, else
// /tmp/sluice-cache. Characters other than letters, digits, '.', '_', '-' and '/' become '_', and
// "." or ".." components become "_", so the result always stays under the cache root. Nothing is
// created. A path without a scheme is returned unchanged (it is local already).
//
// Thread-safe (reads the environment).
#pragma once

#include <string>
#include <string_view>

namespace sluice::fs {

std::string LocalCacheDirFor(std::string_view path);

}  // namespace sluice::fs
