// Crash points: the named places where a crash matters ("<layer>.<place>" by convention, e.g.
// "delta.before_commit", or the micro-batch loop's "after_offsets_write"), and the one call that
// marks one: CrashPoint(fs, point, context).
//
// A crash point is three test mechanisms behind one name; each is off unless a test arms it:
// 1. Simulated crash: the file system's MaybeCrash (a FaultInjectingFileSystem armed with
//    SetCrashPoint returns Cancelled("injected crash at <point>") and fails everything after).
// 2. Process death: SLUICE_CRASH_AT=<point> (or <point>:<n>, the n-th hit, n >= 1) ends the
//    process the first (n-th) time it reaches <point>: a line "sluice: crash point <point> reached
//    (SLUICE_CRASH_AT)" goes to stderr with one write(2), then _exit(kCrashExitCode): no
//    destructors, no atexit handlers, no stdio flush. As far as files are concerned this is a
//    kill -9: what was handed to the kernel survives, nothing else does. (The default
//    FileSystem::MaybeCrash does this; MaybeCrashProcess is it without a file system.)
// 3. Injected error: SLUICE_TEST_FAIL_AT=<point> (or <point>:<n>) makes the first (n) calls that
//    reach <point> in this process return IOError "injected failure at <point>
//    (SLUICE_TEST_FAIL_AT, k of n)", as a transient storage failure would, and leaves the process
//    running (a supervisor such as `sluice run --max-restarts` restarts the query). Malformed
//    values are ignored with one warning. Only points marked with CrashPoint() can fail this way.
//
// The environment is read at every call (a forked child may set it after the parent has run).
// Thread-safe as long as nobody calls setenv concurrently; hit and failure counts are
// process-wide. Never set the variables outside tests.
#pragma once

#include <string_view>

#include "common/status.h"

namespace sluice::fs {

class FileSystem;

inline constexpr char kCrashAtEnvVar[] = "SLUICE_CRASH_AT";
inline constexpr char kFailAtEnvVar[] = "SLUICE_TEST_FAIL_AT";
// The exit status of a process killed at a crash point: 128 + SIGKILL, as a shell reports kill -9.
inline constexpr int kCrashExitCode = 137;

// The crash point `point`: fs.MaybeCrash(point) (1 and 2 above), then the injected error (3).
// OK when nothing is armed; otherwise the status, with `context` (e.g. "batch 3") added.
Status CrashPoint(FileSystem& fs, std::string_view point, std::string_view context);

// Mechanism 2 alone: ends the process when SLUICE_CRASH_AT arms `point`; otherwise returns.
void MaybeCrashProcess(std::string_view point);

// Mechanism 3 alone: the injected error when SLUICE_TEST_FAIL_AT arms `point` and its count is not
// used up; otherwise OK.
Status MaybeInjectFailure(std::string_view point);

// Forgets how many failures were injected (tests that change SLUICE_TEST_FAIL_AT).
void ResetInjectedFailuresForTesting();

// Parses a SLUICE_CRASH_AT or SLUICE_TEST_FAIL_AT value "<point>[:<n>]" into a point name and a
// hit number (1 when absent). Returns false for an empty name or a malformed ":<n>" suffix (then
// nothing is armed). Exposed for tests.
bool ParseCrashAt(std::string_view value, std::string_view* point, long long* hit);

}  // namespace sluice::fs
