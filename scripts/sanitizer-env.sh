# Sourced by scripts/test.sh when SANITIZE=... is set (and usable by hand:
# `source scripts/sanitizer-env.sh` before running a sanitized binary).
# Runtime options of the sanitizers, and the suppression files, which only
# name uninstrumented Debian libraries (docs/RELIABILITY.md explains each).
_gs_supp="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/sanitizers"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=0}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$_gs_supp/lsan.supp:print_suppressions=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:suppressions=$_gs_supp/ubsan.supp}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-suppressions=$_gs_supp/tsan.supp:halt_on_error=1:second_deadlock_stack=1}"
unset _gs_supp
