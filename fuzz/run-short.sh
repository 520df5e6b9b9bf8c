#!/usr/bin/env bash
# Short libFuzzer runs of every fuzz_<target> (docs/RELIABILITY.md, "Fuzzing in
# CI"): each target first replays its committed seeds (fuzz/corpus/<target>/),
# then mutates them for SECONDS seconds. New inputs go to a temporary directory
# (the committed corpus is never written); a crash, a sanitizer report, a
# timeout or an out-of-memory stops the run and fails the script, and
# libFuzzer's reproducer is kept in ARTIFACT_DIR (default: BUILD_DIR/fuzz-artifacts).
# Usage: fuzz/run-short.sh BUILD_DIR SECONDS   (BUILD_DIR configured with -DGRAPHSIEVE_FUZZ=ON)
set -euo pipefail
if (($# != 2)); then
  echo "usage: $0 BUILD_DIR SECONDS" >&2
  exit 2
fi
build_dir=$1
seconds=$2
cd "$(dirname "$0")/.."
artifacts=${ARTIFACT_DIR:-$build_dir/fuzz-artifacts}
mkdir -p "$artifacts"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

failed=()
for corpus in fuzz/corpus/*/; do  # one seed directory per target
  target=$(basename "$corpus")
  binary=$build_dir/fuzz/fuzz_$target
  if [[ ! -x $binary ]]; then
    echo "fuzz: $binary not built" >&2
    exit 2
  fi
  # The limits of the 11-minute runs (docs/RELIABILITY.md, "Figures").
  limits=(-timeout=20 -rss_limit_mb=2048)
  case $target in
    snapshot_open) limits=(-timeout=60 -rss_limit_mb=3072 -max_len=40000) ;;
    log_reader) limits+=(-len_control=0 -max_len=20000) ;;
    cli_inputs) limits+=(-len_control=0 -max_len=8192) ;;
  esac
  mkdir -p "$work/$target"
  start=$SECONDS
  if "$binary" "${limits[@]}" -max_total_time="$seconds" -print_final_stats=1 \
       -artifact_prefix="$artifacts/$target-" "$work/$target" "fuzz/corpus/$target" \
       > "$work/$target.log" 2>&1; then
    stats=$(grep -E '^stat::number_of_executed_units|^#[0-9]+ *DONE' "$work/$target.log" | tr '\n' ' ')
    echo "fuzz: fuzz_$target ok in $((SECONDS - start)) s: $stats"
  else
    echo "fuzz: fuzz_$target FAILED after $((SECONDS - start)) s (reproducer in $artifacts):" >&2
    tail -40 "$work/$target.log" >&2
    failed+=("$target")
  fi
done
if ((${#failed[@]} > 0)); then
  echo "fuzz: failed: ${failed[*]}" >&2
  exit 1
fi
