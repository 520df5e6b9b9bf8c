// ThreadSanitizer annotations for the one hand-off of ours that only gRPC
// orders: every handler of the service returns before grpc::Server::Wait()
// does, and the service is destroyed after. gRPC (Debian's, uninstrumented)
// orders them inside its library, where TSan cannot see it, so without these
// a handler's read of a service member and the service's destruction look
// like a race (docs/RELIABILITY.md "ThreadSanitizer"). No-ops in other builds.
#ifndef GRAPHSIEVE_SERVER_TSAN_SYNC_H_
#define GRAPHSIEVE_SERVER_TSAN_SYNC_H_

#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace graphsieve {

// At the end of a handler: what it did happens before a later TsanAcquire(p).
inline void TsanRelease(const void* p) {
#if defined(__SANITIZE_THREAD__)
  __tsan_release(const_cast<void*>(p));
#else
  (void)p;
#endif
}

// After the server's Wait(): every handler's TsanRelease(p) happens before.
inline void TsanAcquire(const void* p) {
#if defined(__SANITIZE_THREAD__)
  __tsan_acquire(const_cast<void*>(p));
#else
  (void)p;
#endif
}

}  // namespace graphsieve

#endif  // GRAPHSIEVE_SERVER_TSAN_SYNC_H_
