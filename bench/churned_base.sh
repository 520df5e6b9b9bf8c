# shellcheck shell=bash
# Sourced by bench/delta_rss.sh and bench/freshness_lag.sh: a churned
# kuairec-shaped log and a full base version built from its first 13 days.
#
#   gs_churned_base WORK SCALE BUILD
#
# graphsieve-gen --preset kuairec --scale SCALE --exposure preference
# --churn_days 14 (new users and items a day: 120 and 300 times √SCALE, as
# docs/FRESHNESS.md scales them; items' exposure halves every 2 days), seed 1.
# At scale 1: ~12M impressions over 14 days. Sets:
#   GS_LOG        the whole log
#   GS_BASE_LOG   its rows with timestamp < 13 days (the base's log)
#   GS_LATER_LOG  the rows of day 14, in time order (what deltas are built from)
#   GS_BASE_ROOT  a snapshot root whose CURRENT is the base, built from
#                 GS_BASE_LOG with --alpha 0.2 --threads 2
# Files already in WORK are reused (delete them to regenerate); the base's
# build figures are in WORK/base-s$SCALE.time (wall, user, sys s, peak KB).
gs_churned_base() {
  local work=$1 scale=$2 build=$3
  local gen=$build/gen/graphsieve-gen builder=$build/builder/graphsieve-build
  local b
  for b in "$gen" "$builder"; do
    [[ -x $b ]] || { echo "churned_base: $b is not built" >&2; return 2; }
  done
  mkdir -p "$work"
  GS_LOG=$work/churned-s$scale.csv
  GS_BASE_LOG=$work/churned-s$scale-base.csv
  GS_LATER_LOG=$work/churned-s$scale-later.csv
  GS_BASE_ROOT=$work/base-s$scale
  if [[ ! -f $GS_LOG ]]; then
    local users items
    users=$(python3 -c "import math; print(round(120 * math.sqrt($scale)))")
    items=$(python3 -c "import math; print(round(300 * math.sqrt($scale)))")
    "$gen" --preset kuairec --scale "$scale" --exposure preference --churn_days 14 \
      --new_users_per_day "$users" --new_items_per_day "$items" --item_half_life_days 2 \
      --seed 1 --quiet --output "$GS_LOG.tmp"
    mv "$GS_LOG.tmp" "$GS_LOG"
  fi
  if [[ ! -f $GS_BASE_LOG || ! -f $GS_LATER_LOG ]]; then
    [[ $(head -1 "$GS_LOG") == user_id,item_id,label,timestamp ]] \
      || { echo "churned_base: $GS_LOG: unexpected header" >&2; return 2; }
    awk -F, -v cut=$((13 * 86400)) 'NR == 1 || $4 < cut' "$GS_LOG" > "$GS_BASE_LOG"
    { head -1 "$GS_LOG"; awk -F, -v cut=$((13 * 86400)) 'NR > 1 && $4 >= cut' "$GS_LOG" \
        | sort -t, -k4,4n; } > "$GS_LATER_LOG"
  fi
  if [[ ! -f $GS_BASE_ROOT/CURRENT ]]; then
    rm -rf "$GS_BASE_ROOT"
    /usr/bin/time -f '%e %U %S %M' -o "$work/base-s$scale.time" \
      "$builder" --input="$GS_BASE_LOG" --snapshot_root="$GS_BASE_ROOT" --alpha=0.2 \
      --threads=2 --quiet \
      || { echo "churned_base: the base build failed" >&2; return 1; }
  fi
}
