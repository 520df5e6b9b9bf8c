#!/usr/bin/env bash
# Fails (exit 1) when a tracked C++ or proto file differs from what
# clang-format 14 makes of it with the tree's .clang-format; prints the
# offending lines. Usage: scripts/check-format.sh   (fix: clang-format -i FILE)
# Run by scripts/test.sh before the build.
set -euo pipefail
cd "$(dirname "$0")/.."
CLANG_FORMAT=${CLANG_FORMAT:-clang-format-14}
if ! command -v "$CLANG_FORMAT" >/dev/null; then
  CLANG_FORMAT=clang-format
fi
if ! "$CLANG_FORMAT" --version | grep -q 'version 14\.'; then
  echo "check-format: needs clang-format 14 (apt-get install clang-format-14), found:" \
    "$("$CLANG_FORMAT" --version)" >&2
  exit 1
fi
mapfile -t files < <(git ls-files -- '*.cc' '*.h' '*.proto')
if [[ ${#files[@]} -eq 0 ]]; then
  echo "check-format: no tracked C++/proto files found" >&2
  exit 1
fi
if ! "$CLANG_FORMAT" --dry-run -Werror --style=file "${files[@]}"; then
  echo "check-format: the files above are not clang-formatted; run" \
    "'$CLANG_FORMAT -i <file>' on them" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files clang-formatted"
