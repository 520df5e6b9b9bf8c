// ThreadSanitizer builds only (-DGRAPHSIEVE_SANITIZE=thread, docs/RELIABILITY.md):
// Debian's Abseil is not instrumented, so TSan cannot see that absl::Mutex,
// absl::CondVar and absl::Notification order memory accesses, and would
// report every access guarded by them as a race. The top-level
// CMakeLists.txt links every program with -Wl,--wrap=<symbol> for the
// functions below, so calls from our (instrumented) code go through these
// wrappers, which tell TSan about the acquire/release each one implies
// (__tsan_acquire/__tsan_release on the object's address) around the real
// Abseil function. Inline header code (absl::MutexLock, Notification::
// HasBeenNotified's fast path) ends in these out-of-line calls except
// HasBeenNotified(), which is not covered.
//
// Synchronisation inside gRPC, protobuf and RocksDB stays invisible: their
// internals are not instrumented (no reports from them), and hand-offs of our
// objects through them are covered by scripts/sanitizers/tsan.supp.
#include <cstdint>

#include "absl/synchronization/mutex.h"

extern "C" {
void __tsan_acquire(void* addr);
void __tsan_release(void* addr);
}

namespace {

// Abseil evaluates the Condition of Mutex::Await/LockWhen inside the
// (uninstrumented) call, with the mutex held, on the waiting thread or on the
// thread that is unlocking: the wrappers below pass this Condition instead,
// which makes the evaluation acquire the mutex before reading the guarded
// state and release it after (otherwise a read in a Condition that precedes
// the next holder's write looks like a race).
struct ConditionUnderMutex {
  void* mu;
  const absl::Condition* cond;
};
bool EvalUnderMutex(ConditionUnderMutex* c) {
  __tsan_acquire(c->mu);
  const bool result = c->cond->Eval();
  __tsan_release(c->mu);
  return result;
}

}  // namespace

// Abseil 20220623 as built by Debian uses the inline namespace "debian3".
#define GS_REAL(sym) __real_##sym
#define GS_WRAP(sym) __wrap_##sym

extern "C" {

// absl::Mutex
void GS_REAL(_ZN4absl7debian35Mutex4LockEv)(void* mu);
void GS_WRAP(_ZN4absl7debian35Mutex4LockEv)(void* mu) {
  GS_REAL(_ZN4absl7debian35Mutex4LockEv)(mu);
  __tsan_acquire(mu);
}
void GS_REAL(_ZN4absl7debian35Mutex6UnlockEv)(void* mu);
void GS_WRAP(_ZN4absl7debian35Mutex6UnlockEv)(void* mu) {
  __tsan_release(mu);
  GS_REAL(_ZN4absl7debian35Mutex6UnlockEv)(mu);
}
void GS_REAL(_ZN4absl7debian35Mutex10ReaderLockEv)(void* mu);
void GS_WRAP(_ZN4absl7debian35Mutex10ReaderLockEv)(void* mu) {
  GS_REAL(_ZN4absl7debian35Mutex10ReaderLockEv)(mu);
  __tsan_acquire(mu);
}
void GS_REAL(_ZN4absl7debian35Mutex12ReaderUnlockEv)(void* mu);
void GS_WRAP(_ZN4absl7debian35Mutex12ReaderUnlockEv)(void* mu) {
  __tsan_release(mu);
  GS_REAL(_ZN4absl7debian35Mutex12ReaderUnlockEv)(mu);
}
bool GS_REAL(_ZN4absl7debian35Mutex7TryLockEv)(void* mu);
bool GS_WRAP(_ZN4absl7debian35Mutex7TryLockEv)(void* mu) {
  const bool locked = GS_REAL(_ZN4absl7debian35Mutex7TryLockEv)(mu);
  if (locked) __tsan_acquire(mu);
  return locked;
}
bool GS_REAL(_ZN4absl7debian35Mutex13ReaderTryLockEv)(void* mu);
bool GS_WRAP(_ZN4absl7debian35Mutex13ReaderTryLockEv)(void* mu) {
  const bool locked = GS_REAL(_ZN4absl7debian35Mutex13ReaderTryLockEv)(mu);
  if (locked) __tsan_acquire(mu);
  return locked;
}
void GS_REAL(_ZN4absl7debian35Mutex8LockWhenERKNS0_9ConditionE)(void* mu, const void* cond);
void GS_WRAP(_ZN4absl7debian35Mutex8LockWhenERKNS0_9ConditionE)(void* mu, const void* cond) {
  ConditionUnderMutex context{mu, static_cast<const absl::Condition*>(cond)};
  const absl::Condition wrapped(&EvalUnderMutex, &context);
  GS_REAL(_ZN4absl7debian35Mutex8LockWhenERKNS0_9ConditionE)(mu, &wrapped);
  __tsan_acquire(mu);
}
void GS_REAL(_ZN4absl7debian35Mutex5AwaitERKNS0_9ConditionE)(void* mu, const void* cond);
void GS_WRAP(_ZN4absl7debian35Mutex5AwaitERKNS0_9ConditionE)(void* mu, const void* cond) {
  ConditionUnderMutex context{mu, static_cast<const absl::Condition*>(cond)};
  const absl::Condition wrapped(&EvalUnderMutex, &context);
  __tsan_release(mu);
  GS_REAL(_ZN4absl7debian35Mutex5AwaitERKNS0_9ConditionE)(mu, &wrapped);
  __tsan_acquire(mu);
}

// absl::CondVar::Wait(Mutex*) releases and re-acquires the mutex.
void GS_REAL(_ZN4absl7debian37CondVar4WaitEPNS0_5MutexE)(void* cv, void* mu);
void GS_WRAP(_ZN4absl7debian37CondVar4WaitEPNS0_5MutexE)(void* cv, void* mu) {
  __tsan_release(mu);
  GS_REAL(_ZN4absl7debian37CondVar4WaitEPNS0_5MutexE)(cv, mu);
  __tsan_acquire(mu);
}

// absl::Notification
void GS_REAL(_ZN4absl7debian312Notification6NotifyEv)(void* n);
void GS_WRAP(_ZN4absl7debian312Notification6NotifyEv)(void* n) {
  __tsan_release(n);
  GS_REAL(_ZN4absl7debian312Notification6NotifyEv)(n);
}
void GS_REAL(_ZNK4absl7debian312Notification19WaitForNotificationEv)(const void* n);
void GS_WRAP(_ZNK4absl7debian312Notification19WaitForNotificationEv)(const void* n) {
  GS_REAL(_ZNK4absl7debian312Notification19WaitForNotificationEv)(n);
  __tsan_acquire(const_cast<void*>(n));
}

}  // extern "C"
