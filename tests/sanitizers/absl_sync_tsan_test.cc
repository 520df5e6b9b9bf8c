// Built only with -DGRAPHSIEVE_SANITIZE=thread: absl::Mutex-, CondVar- and
// Notification-ordered accesses raise no ThreadSanitizer report, i.e. the
// wrappers of absl_sync_tsan.cc are in effect. (Without them TSan reports a
// data race on the first test's counter: docs/RELIABILITY.md.) With
// halt_on_error=1 (scripts/sanitizer-env.sh) a report fails the test.
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace graphsieve {
namespace {

TEST(AbslSyncTsanTest, MutexGuardedCounterIsNoRace) {
  int counter = 0;
  absl::Mutex mu;
  auto work = [&] {
    for (int i = 0; i < 1000; ++i) {
      absl::MutexLock l(&mu);
      ++counter;
    }
  };
  std::thread a(work), b(work);
  a.join();
  b.join();
  EXPECT_EQ(counter, 2000);
}

TEST(AbslSyncTsanTest, NotificationAndCondVarOrderWrites) {
  int value = 0;
  absl::Notification ready;
  std::thread writer([&] {
    value = 42;
    ready.Notify();
  });
  ready.WaitForNotification();
  EXPECT_EQ(value, 42);
  writer.join();

  absl::Mutex mu;
  absl::CondVar cv;
  bool done = false;
  int payload = 0;
  std::thread producer([&] {
    payload = 7;
    absl::MutexLock l(&mu);
    done = true;
    cv.Signal();
  });
  {
    absl::MutexLock l(&mu);
    while (!done) cv.Wait(&mu);
  }
  EXPECT_EQ(payload, 7);
  producer.join();
}

// Abseil evaluates an Await/LockWhen Condition inside its own (uninstrumented)
// code; the condition's read of guarded state must be ordered with the next
// holder's write (server/version_profiler.cc waits this way; before the
// Condition wrapping in absl_sync_tsan.cc, server_test reported a race there).
// Deterministic: the main thread writes only once the waiter's condition has
// been evaluated (and found false) at least once.
TEST(AbslSyncTsanTest, AwaitConditionReadsAreOrderedWithLaterWrites) {
  absl::Mutex mu;
  int evaluations = 0;  // guarded by mu
  bool ready = false;   // guarded by mu
  std::thread waiter([&] {
    absl::MutexLock l(&mu);
    auto is_ready = [&] {
      ++evaluations;
      return ready;
    };
    mu.Await(absl::Condition(&is_ready));
  });
  auto evaluated = [&] { return evaluations > 0; };
  mu.LockWhen(absl::Condition(&evaluated));
  ready = true;
  mu.Unlock();
  waiter.join();
  absl::MutexLock l(&mu);
  EXPECT_TRUE(ready);
  EXPECT_GE(evaluations, 2);  // false first, then true
}

}  // namespace
}  // namespace graphsieve
