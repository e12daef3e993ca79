// Crash points that end the real process, for crash tests that kill a child process at a named
// place and then check that recovery loses and duplicates nothing.
//
// A crash point is just a string name, conventionally "<layer>.<place>", e.g.
// "stream.after_offsets_write" or "delta.before_commit". Code reaches one through
// FileSystem::MaybeCrash(point) (so that FaultInjectingFileSystem can simulate the same crash
// in-process) or, where no FileSystem is at hand, through MaybeCrashProcess(point).
//
// SLUICE_CRASH_AT=<point>     the process dies the first time it reaches <point>;
// SLUICE_CRASH_AT=<point>:<n> it dies the n-th time (n >= 1) it reaches <point>.
//
// Death is immediate: a line "sluice: crash point <point> reached (SLUICE_CRASH_AT)" goes to
// stderr with one write(2), then _exit(kCrashExitCode): no destructors, no atexit handlers, no
// stdio flush, no further writes. As far as files are concerned this is a kill -9: what was
// handed to the kernel survives (the page cache outlives the process), nothing else does.
#pragma once

#include <string_view>

namespace sluice::fs {

inline constexpr char kCrashAtEnvVar[] = "SLUICE_CRASH_AT";
// The exit status of a process killed at a crash point: 128 + SIGKILL, as a shell reports kill -9.
inline constexpr int kCrashExitCode = 137;

// Ends the process as described above when SLUICE_CRASH_AT arms `point`; otherwise returns.
// The environment is read at every call (a forked child may set it after the parent has run).
// Thread-safe as long as nobody calls setenv concurrently; the hit count for "<point>:<n>" is
// process-wide.
void MaybeCrashProcess(std::string_view point);

// Parses a SLUICE_CRASH_AT value into a point name and a hit number (1 when absent). Returns
// false for an empty name or a malformed ":<n>" suffix (then nothing is armed). Exposed for tests.
bool ParseCrashAt(std::string_view value, std::string_view* point, long long* hit);

}  // namespace sluice::fs
