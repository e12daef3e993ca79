// Lock contracts as code: clang's thread-safety attributes (-Wthread-safety) behind SLUICE_
// macros, which are empty under other compilers (g++ builds ignore them). As LevelDB's
// port/thread_annotations.h, after clang's "Thread Safety Analysis" documentation.
//
//   Mutex mu_;
//   int n_ SLUICE_GUARDED_BY(mu_);         // read or written only with mu_ held
//   void Step() SLUICE_REQUIRES(mu_);      // the caller holds mu_
//   void Run() SLUICE_EXCLUDES(mu_);       // the caller must not hold mu_ (it takes it)
//
// The attributes only have force on a capability type: common/mutex.h's Mutex and MutexLock.
// Header only; nothing to run.
#pragma once

#if defined(__clang__)
#define SLUICE_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define SLUICE_THREAD_ANNOTATION(x)
#endif

// A type that is a lock (a "capability" named `name` in clang's messages).
#define SLUICE_CAPABILITY(name) SLUICE_THREAD_ANNOTATION(capability(name))
// An RAII type that holds a capability from construction to destruction.
#define SLUICE_SCOPED_CAPABILITY SLUICE_THREAD_ANNOTATION(scoped_lockable)

// The member is read and written only with `mu` held.
#define SLUICE_GUARDED_BY(mu) SLUICE_THREAD_ANNOTATION(guarded_by(mu))
// What the pointer member points to is read and written only with `mu` held.
#define SLUICE_PT_GUARDED_BY(mu) SLUICE_THREAD_ANNOTATION(pt_guarded_by(mu))

// The caller holds these locks (exclusively) when it calls the function.
#define SLUICE_REQUIRES(...) SLUICE_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
// The caller must not hold these locks when it calls the function (the function takes them).
#define SLUICE_EXCLUDES(...) SLUICE_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))

// The function takes the lock (and returns holding it) / releases a lock the caller held.
#define SLUICE_ACQUIRE(...) SLUICE_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define SLUICE_RELEASE(...) SLUICE_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
// The function checks at run time that the lock is held (and so tells the analysis it is).
#define SLUICE_ASSERT_CAPABILITY(x) SLUICE_THREAD_ANNOTATION(assert_capability(x))
// The function returns a reference to this lock.
#define SLUICE_RETURN_CAPABILITY(x) SLUICE_THREAD_ANNOTATION(lock_returned(x))

// Turns the analysis off for one function whose locking it cannot follow; say why beside it.
#define SLUICE_NO_THREAD_SAFETY_ANALYSIS SLUICE_THREAD_ANNOTATION(no_thread_safety_analysis)
