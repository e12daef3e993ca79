// SLUICE_DCHECK / SLUICE_CHECK: assertions for programmer mistakes only, never for user input or
// I/O results (those are Status). SLUICE_CHECK is always on; SLUICE_DCHECK only in debug builds.
#pragma once

#include <cstdio>
#include <cstdlib>

#define SLUICE_CHECK(cond)                                                          \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                 \
    }                                                                               \
  } while (false)

#ifdef NDEBUG
#define SLUICE_DCHECK(cond) \
  do {                      \
    (void)sizeof(cond);     \
  } while (false)
#else
#define SLUICE_DCHECK(cond) SLUICE_CHECK(cond)
#endif
