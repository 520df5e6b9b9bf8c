// A test-only LD_PRELOAD library (never linked into a product binary): it
// interposes rename(2) so that a test can stop graphsieve-build at an exact
// point of writing or publishing a snapshot and SIGKILL it there.
//
//   GRAPHSIEVE_HOLD_RENAME=<glob>   the first rename whose source path matches
//                                   <glob> (fnmatch with FNM_PATHNAME: `*` stays
//                                   within one path component) is held: the
//                                   process blocks before renaming, for good;
//   GRAPHSIEVE_HOLD_MARKER=<file>   created (holding the source path) once the
//                                   process is held, so the test knows when to
//                                   kill: no timer decides the moment.
//
// Without GRAPHSIEVE_HOLD_RENAME every rename goes straight to libc.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>

namespace {

std::atomic<bool> held{false};

void HoldForever(const char* source) {
  const char* marker = getenv("GRAPHSIEVE_HOLD_MARKER");
  if (marker != nullptr) {
    // Written to a temporary name and renamed, so the test never reads a
    // half-written marker (through libc's rename: this one would recurse).
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.part", marker);
    const int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
      const ssize_t n = write(fd, source, strlen(source));
      (void)n;
      close(fd);
      using RenameFn = int (*)(const char*, const char*);
      reinterpret_cast<RenameFn>(dlsym(RTLD_NEXT, "rename"))(tmp, marker);
    }
  }
  for (;;) pause();  // until the test's SIGKILL
}

}  // namespace

extern "C" int rename(const char* from, const char* to) {
  using RenameFn = int (*)(const char*, const char*);
  static RenameFn next = reinterpret_cast<RenameFn>(dlsym(RTLD_NEXT, "rename"));
  const char* glob = getenv("GRAPHSIEVE_HOLD_RENAME");
  if (glob != nullptr && fnmatch(glob, from, FNM_PATHNAME) == 0 && !held.exchange(true))
    HoldForever(from);
  return next(from, to);
}
