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

}  // namespace
}  // namespace graphsieve
