#!/usr/bin/env bash
# Regenerates the measured tables of docs/EVALUATION.md.
#
#   scripts/eval-report.sh                    # the current tables: both modes (random split and
#                                             # deployed), MovieLens 100K + the preference-exposure log
#   LEGACY=1 scripts/eval-report.sh           # also the earlier tables (the paper's configuration,
#                                             # popularity-exposure log; see the report)
#   KUAIREC_SCALE1=1 LEGACY=1 scripts/eval-report.sh   # and kuairec at scale 1 (long)
#   ONLY=mixture scripts/eval-report.sh       # one group: floor | fresh | mixture | mixture-fresh | rule | final | third | ceiling
#   GP_SCALE1=1 scripts/eval-report.sh        # also the preference log at scale 1 (12M, fm)
#
# Configures and builds `build/` (Release) if needed, builds graphsieve-eval and
# graphsieve-gen, runs the experiments and replaces the text between the
# <!-- BEGIN GENERATED: name --> / <!-- END GENERATED: name --> markers of
# docs/EVALUATION.md. The prose around the tables is written by hand from them.
# MovieLens is read from $ML100K_DIR (default: ../shared/data/ml-100k next to the
# repository, or /work/shared/data/ml-100k); it is never copied into the repository.
# STITCH_ONLY=1 only copies the tables already in WORK_DIR into the report.
# Environment: REPORT (default docs/EVALUATION.md), SEEDS (default 3), BUILD_DIR (default build), WORK_DIR (scratch; default a
# temporary directory), THREADS (pipeline threads per dataset, default 1).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD_DIR:-$ROOT/build}"
SEEDS="${SEEDS:-3}"
THREADS="${THREADS:-1}"
WORK="${WORK_DIR:-$(mktemp -d /tmp/graphsieve-eval-report.XXXXXX)}"
REPORT="${REPORT:-$ROOT/docs/EVALUATION.md}"
mkdir -p "$WORK"

ML_DIR=""
for d in ${ML100K_DIR:+"$ML100K_DIR"} "$ROOT/../shared/data/ml-100k" /work/shared/data/ml-100k; do
  if [[ -f "$d/u.data" ]]; then ML_DIR="$d"; break; fi
  if [[ -n "${ML100K_DIR:-}" ]]; then break; fi  # an explicit directory is the only one tried
done

start=$(date +%s)
if [[ "${STITCH_ONLY:-0}" != "1" && ! -f "$BUILD/build.ninja" && ! -f "$BUILD/Makefile" ]]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
if [[ "${STITCH_ONLY:-0}" != "1" ]]; then
  cmake --build "$BUILD" -j2 --target graphsieve-eval graphsieve-gen
fi
EVAL="$BUILD/eval/graphsieve-eval"
GEN="$BUILD/gen/graphsieve-gen"

# The target models' settings (chosen on the validation split of the full data; see the report).
MODEL_FLAGS=(--models=lr,fm --dim=16 --learning_rate=0.1 --l2=3e-3 --max_epochs=15 --patience=2)
COMMON=(--seeds="$SEEDS" --threads="$THREADS" "${MODEL_FLAGS[@]}")
# Legacy (LEGACY=1): the paper's comparison at alpha = 0.2, the alpha sweep, the
# ablations and the first recommended default, on the popularity-exposure log.
COMPARE=(--methods=uniform,opt,maec,maec-prop,max --alphas=0.2)
SWEEP=(--methods=uniform,maec-prop,max --alphas=0.05,0.1,0.5 --include_full=false)
ABLATION=(--models=fm --methods=uniform,maec,maec-u,maec-prop,maec-prop-sqrt,max-raw --alphas=0.2
          --floors=0.01,0.05 --gammas=0.5 --include_full=false)
DEFAULTS=(--first_seed=4 --methods=uniform,opt,maec,max-raw --alphas=0.2,0.5 --floors=0.05
          --include_full=false)

# Current tables (issues 12 and 17): alpha = 0.2, both modes. Selection on seeds
# 1..SEEDS, the final candidates again on fresh seeds (FRESH_SEED..).
FRESH_SEED="${FRESH_SEED:-4}"
SNAP_WORK="$WORK/snapshots"  # deployed mode builds its snapshots here (removed after each use)
mkdir -p "$SNAP_WORK"
BASE=(--alphas=0.2 --gammas=0.5 --include_full=false --work_dir="$SNAP_WORK")
# The floor rule: today's builder default (maec-prop, floor 0.01, gamma 0.5) and
# maec without propagation at floors 0.01 / 0.05.
FLOOR=(--methods=uniform,maec,maec-prop --floors=0.01,0.05)
# The mixture rule pi = min(1, rho (h / mean h + kappa)): maec with three kappas, the
# propagated floor-rule default again (with counterfactual positives once core/maec has them),
# the propagated mixture variant, and the max-ensemble with a separate kappa for the pilot member.
MIXTURE=(--methods=uniform,maec-prop,maec-mix,maec-prop-mix,max-raw-mix --floors=0.01 --kappas=0.1,0.25,1
         --pilot_kappas=1)
# Fresh seeds: today's default and the floor-rule candidate; then the mixture candidate.
FRESH_A=(--first_seed="$FRESH_SEED" --methods=uniform,maec --floors=0.05)
FRESH_B=(--first_seed="$FRESH_SEED" --methods=uniform,maec-prop --floors=0.01)
MIXTURE_FRESH=(--first_seed="$FRESH_SEED" --methods=${MIXTURE_FRESH_METHODS:-uniform,maec-mix,maec-prop-mix,max-raw-mix}
               --kappas="${MIXTURE_KAPPA:-0.25}" --pilot_kappas=1)

# Issue 12, second round (docs/EVALUATION.md "Rule selection"): the propagation weight γ
# and the rate map t = s^β (--score_power) of the mixture rule, selected on seeds 1..SEEDS
# with fm; the chosen default against the previous one on fresh seeds FINAL_SEED..
# (lr, fm, mlp on MovieLens), the α sweep and the κ trade-off for lr.
FINAL_SEED="${FINAL_SEED:-7}"
RULE_GAMMA=(--methods=uniform,maec-prop-mix --kappas=0.1 --gammas=0.1,0.15,0.25,0.5)
RULE_BETA=(--methods=uniform,maec-prop-mix --kappas=0.1 --gammas=0.25,0.5)
FINAL=(--first_seed="$FINAL_SEED" --methods=uniform,maec-prop-mix --kappas=0.1 --gammas=0.25,0.5)
FINAL_SWEEP=(--first_seed="$FINAL_SEED" --methods=uniform,maec-prop-mix --kappas=0.1 --gammas=0.25,0.5
             --alphas=0.05,0.1,0.5)
FINAL_KAPPA=(--first_seed="$FINAL_SEED" --methods=uniform,maec-prop-mix --kappas=0.5,2 --gammas=0.25,0.5)
# Third round (docs/EVALUATION.md "Third round"): the positive-rate DEFAULT policy against
# node-mean in the deployed mode (selection seeds 1..SEEDS; a κ 0.5 diagnostic), and mlp on
# the preference log in both modes (seeds FINAL_SEED..).
THIRD=(--mode=deployed --methods=uniform,maec-prop-mix --kappas=0.1)
# Ceiling (docs/EVALUATION.md "Ceiling"): the pilot-driven rule opt-mix with an oracle pilot
# (the generated log's true click probability) or a near-oracle one (the fm target model,
# cross-fitted over 2 folds of the training pairs), against uniform, the default and the
# unsampled model (full), seeds FINAL_SEED..
CEILING=(--first_seed="$FINAL_SEED" --methods=uniform,maec-prop-mix,opt-mix --kappas=0.1)
FM_PILOT=(--pilot=fm --pilot_folds=2)

# stitch: copies every finished $WORK/NAME.md between its markers in the report.
stitch() {
  python3 - "$REPORT" "$WORK" <<'PY'
import pathlib, re, sys
report, work = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
text = report.read_text()
for name in re.findall(r"<!-- BEGIN GENERATED: ([\w.-]+) -->", text):
    part = work / f"{name}.md"
    if not part.exists():
        continue
    body = part.read_text().strip()
    text = re.sub(rf"(<!-- BEGIN GENERATED: {re.escape(name)} -->\n).*?(<!-- END GENERATED: {re.escape(name)} -->)",
                  lambda m: m.group(1) + body + "\n" + m.group(2), text, flags=re.S)
report.write_text(text)
PY
}

# run NAME TITLE ARGS... : one experiment into $WORK/NAME.md (+ .json), progress in
# $WORK/NAME.log; later flags override COMMON's.
run() {
  local name="$1" title="$2"
  shift 2
  echo "eval-report: $name ..." >&2
  local t0
  t0=$(date +%s)
  "$EVAL" "${COMMON[@]}" "$@" --title="$title" --output_md="$WORK/$name.md.tmp" \
    --output_json="$WORK/$name.json" 2> "$WORK/$name.log"
  mv "$WORK/$name.md.tmp" "$WORK/$name.md"
  echo "eval-report: $name done in $(( $(date +%s) - t0 )) s" >&2
}

# absent NAME TEXT : a section that could not be measured says why.
absent() { printf '_%s_\n' "$2" > "$WORK/$1.md"; }

want() { [[ -z "${ONLY:-}" || "${ONLY}" == "$1" ]]; }

movielens() {
  if [[ -z "$ML_DIR" ]]; then
    local msg="MovieLens 100K was not found (looked for ${ML100K_DIR:-../shared/data/ml-100k and /work/shared/data/ml-100k}/u.data; set ML100K_DIR). This section was not regenerated."
    for n in ml-floor-random ml-floor-deployed ml-floor-deployed-seeded ml-fresh-a-random \
             ml-fresh-a-deployed ml-fresh-b-random ml-fresh-b-deployed ml-mixture-random \
             ml-mixture-deployed ml-mixture-fresh-random ml-mixture-fresh-deployed \
             ml-rule-gamma-random ml-rule-gamma-deployed ml-rule-beta0.5-random ml-rule-beta1.5-random \
             ml-rule-beta0.75-random ml-rule-beta1.5-deployed ml-final-random ml-final-deployed ml-final-sweep ml-final-kappa \
             ml-final15-random ml-final15-deployed ml-rule-kappa-random ml-policy-alpha-deployed \
             ml-final-policy-alpha ml-third-node-mean ml-third-positive-rate \
             ml-third-k05-node-mean ml-third-k05-positive-rate ml-ceiling-random ml-ceiling-mlp \
             ml-ceiling-insample; do
      absent "$n" "$msg"
    done
    return 0
  fi
  local ML=(--movielens="$ML_DIR" --pilot=lr)
  local T="MovieLens 100K (implicit, rating ≥ 4), α = 0.2"
  if want floor; then
    run ml-floor-random "$T, random split, floor rule, seeds 1–$SEEDS" "${ML[@]}" "${BASE[@]}" \
      --models=lr,fm,mlp "${FLOOR[@]}"
    run ml-floor-deployed "$T, deployed (rating-time split), floor rule, seeds 1–$SEEDS" "${ML[@]}" \
      "${BASE[@]}" --models=lr,fm,mlp --mode=deployed "${FLOOR[@]}"
    run ml-floor-deployed-seeded "$T, deployed (seeded split), floor rule, seeds 1–$SEEDS" "${ML[@]}" \
      "${BASE[@]}" --models=lr,fm --mode=deployed --period_split=seeded "${FLOOR[@]}"
  fi
  if want fresh; then
    for mode in random deployed; do
      run "ml-fresh-a-$mode" "$T, $mode, maec ϱ = 0.05, fresh seeds" "${ML[@]}" "${BASE[@]}" \
        --models=lr,fm,mlp --mode="$mode" "${FRESH_A[@]}"
      run "ml-fresh-b-$mode" "$T, $mode, today's default (maec-prop, ϱ = 0.01, γ = 0.5), fresh seeds" \
        "${ML[@]}" "${BASE[@]}" --models=lr,fm,mlp --mode="$mode" "${FRESH_B[@]}"
    done
  fi
  if want mixture; then
    for mode in random deployed; do
      run "ml-mixture-$mode" "$T, $mode, mixture rule, seeds 1–$SEEDS" "${ML[@]}" "${BASE[@]}" \
        --models=fm --mode="$mode" "${MIXTURE[@]}"
    done
  fi
  if want rule; then
    run ml-rule-kappa-random "$T, random, κ trade-off (lr vs fm), seeds 1–$SEEDS" "${ML[@]}" "${BASE[@]}" \
      --models=lr,fm --methods=uniform,maec-prop-mix --kappas=0.1,0.5,2
    run ml-policy-alpha-deployed "$T, deployed, DEFAULT answers at α (--default_policy=alpha), seeds 1–$SEEDS" \
      "${ML[@]}" "${BASE[@]}" --models=fm --mode=deployed --default_policy=alpha "${RULE_BETA[@]}"
    for mode in random deployed; do
      run "ml-rule-gamma-$mode" "$T, $mode, mixture κ 0.1, γ grid, seeds 1–$SEEDS" "${ML[@]}" "${BASE[@]}" \
        --models=fm --mode="$mode" "${RULE_GAMMA[@]}"
      for beta in $([[ $mode == random ]] && echo 0.5 0.75) 1.5; do
        run "ml-rule-beta$beta-$mode" "$T, $mode, mixture κ 0.1, t = s^$beta, seeds 1–$SEEDS" "${ML[@]}" \
          "${BASE[@]}" --models=fm --mode="$mode" --score_power="$beta" "${RULE_BETA[@]}"
      done
    done
  fi
  if want final; then
    for mode in random deployed; do
      run "ml-final-$mode" "$T, $mode, γ 0.25 and 0.5 (the default), fresh seeds $FINAL_SEED–" \
        "${ML[@]}" "${BASE[@]}" --models=lr,fm,mlp --mode="$mode" "${FINAL[@]}"
    done
    for mode in random deployed; do
      run "ml-final15-$mode" "$T, $mode, t = s^1.5 at γ 0.5, fresh seeds $FINAL_SEED–" "${ML[@]}" "${BASE[@]}" \
        --models=lr,fm,mlp --mode="$mode" --score_power=1.5 "${FINAL[@]}" --gammas=0.5
    done
    run ml-final-policy-alpha "$T, deployed, DEFAULT answers at α (--default_policy=alpha), fresh seeds $FINAL_SEED–" \
      "${ML[@]}" "${BASE[@]}" --models=fm --mode=deployed --default_policy=alpha "${FINAL[@]}" --gammas=0.5
    run ml-final-sweep "MovieLens 100K, random split, α sweep, fresh seeds $FINAL_SEED–" "${ML[@]}" \
      "${BASE[@]}" --models=lr,fm "${FINAL_SWEEP[@]}"
    run ml-final-kappa "MovieLens 100K, random split, κ trade-off (lr vs fm, mlp), fresh seeds $FINAL_SEED–" \
      "${ML[@]}" "${BASE[@]}" --models=lr,fm,mlp "${FINAL_KAPPA[@]}"
  fi
  if want third; then
    for policy in node-mean positive-rate; do
      run "ml-third-$policy" "$T, deployed, DEFAULT policy $policy, seeds 1–$SEEDS" "${ML[@]}" "${BASE[@]}" \
        --models=lr,fm,mlp "${THIRD[@]}" --default_policy="$policy"
      run "ml-third-k05-$policy" "$T, deployed, DEFAULT policy $policy, κ 0.5 (diagnostic), seeds 1–$SEEDS" \
        "${ML[@]}" "${BASE[@]}" --models=lr,fm,mlp "${THIRD[@]}" --kappas=0.5 --default_policy="$policy"
    done
  fi
  if want ceiling; then
    run ml-ceiling-random "$T, random, opt-mix with a cross-fitted fm pilot (near-oracle), seeds $FINAL_SEED–" \
      "${ML[@]}" "${BASE[@]}" "${FM_PILOT[@]}" --models=lr,fm --include_full=true "${CEILING[@]}" --pilot_kappas=0.1,1
    run ml-ceiling-mlp "$T, random, mlp, opt-mix with a cross-fitted fm pilot, seeds $FINAL_SEED–" \
      "${ML[@]}" "${BASE[@]}" "${FM_PILOT[@]}" --models=mlp "${CEILING[@]}" --pilot_kappas=0.1,1
    run ml-ceiling-insample "$T, random, opt-mix with an in-sample fm pilot (diagnostic), seeds $FINAL_SEED–" \
      "${ML[@]}" "${BASE[@]}" --pilot=fm --pilot_folds=1 --models=lr,fm "${CEILING[@]}" \
      --methods=uniform,opt-mix --pilot_kappas=0.1,1
  fi
  if want mixture-fresh; then
    for mode in random deployed; do
      run "ml-mixture-fresh-$mode" "$T, $mode, mixture rule κ = ${MIXTURE_KAPPA:-0.25}, fresh seeds" \
        "${ML[@]}" "${BASE[@]}" --models=lr,fm,mlp --mode="$mode" "${MIXTURE_FRESH[@]}"
    done
  fi
}

preference() {
  "$GEN" --preset=kuairec --scale=0.1 --seed=7 --pilot --exposure=preference --quiet \
    --output="$WORK/pref-0.1.csv"
  local GP=(--log="$WORK/pref-0.1.csv" --pilot_column=pilot_score --pilot=column --models=fm)
  local T="Generated kuairec 0.1, preference exposure (graphsieve-gen --preset=kuairec --scale=0.1 --seed=7 --pilot --exposure=preference), α = 0.2"
  if want floor; then
    for mode in random deployed; do
      run "gp-floor-$mode" "$T, $mode, floor rule, seeds 1–$SEEDS" "${GP[@]}" "${BASE[@]}" \
        --mode="$mode" "${FLOOR[@]}"
    done
  fi
  if want fresh; then
    for mode in random deployed; do
      run "gp-fresh-a-$mode" "$T, $mode, maec ϱ = 0.05, fresh seeds" "${GP[@]}" "${BASE[@]}" \
        --mode="$mode" "${FRESH_A[@]}"
      run "gp-fresh-b-$mode" "$T, $mode, today's default, fresh seeds" "${GP[@]}" "${BASE[@]}" \
        --mode="$mode" "${FRESH_B[@]}"
    done
  fi
  if want mixture; then
    for mode in random deployed; do
      run "gp-mixture-$mode" "$T, $mode, mixture rule, seeds 1–$SEEDS" "${GP[@]}" "${BASE[@]}" \
        --mode="$mode" "${MIXTURE[@]}"
    done
  fi
  if want rule; then
    for mode in random deployed; do
      run "gp-rule-gamma-$mode" "$T, $mode, mixture κ 0.1, γ grid, seeds 1–$SEEDS" "${GP[@]}" "${BASE[@]}" \
        --mode="$mode" "${RULE_GAMMA[@]}"
      for beta in $([[ $mode == random ]] && echo 0.5) 1.5; do
        run "gp-rule-beta$beta-$mode" "$T, $mode, mixture κ 0.1, t = s^$beta, seeds 1–$SEEDS" "${GP[@]}" \
          "${BASE[@]}" --mode="$mode" --score_power="$beta" "${RULE_BETA[@]}"
      done
    done
  fi
  if want final; then
    for mode in random deployed; do
      run "gp-final-$mode" "$T, $mode, γ 0.25 and 0.5 (the default), fresh seeds $FINAL_SEED–" \
        "${GP[@]}" "${BASE[@]}" --mode="$mode" "${FINAL[@]}"
    done
    for mode in random deployed; do
      run "gp-final15-$mode" "$T, $mode, t = s^1.5 at γ 0.5, fresh seeds $FINAL_SEED–" "${GP[@]}" "${BASE[@]}" \
        --mode="$mode" --score_power=1.5 "${FINAL[@]}" --gammas=0.5
    done
    run gp-final-sweep "$T, random, α sweep, fresh seeds $FINAL_SEED–" "${GP[@]}" "${BASE[@]}" "${FINAL_SWEEP[@]}"
  fi
  if want third; then
    for policy in node-mean positive-rate; do
      run "gp-third-$policy" "$T, deployed, DEFAULT policy $policy, seeds 1–$SEEDS" "${GP[@]}" "${BASE[@]}" \
        "${THIRD[@]}" --default_policy="$policy"
    done
    for mode in random deployed; do
      run "gp-third-mlp-$mode" "$T, $mode, mlp, the default rule, seeds $FINAL_SEED–" "${GP[@]}" "${BASE[@]}" \
        --models=mlp --mode="$mode" --first_seed="$FINAL_SEED" --methods=uniform,maec-prop-mix --kappas=0.1
    done
  fi
  if want ceiling; then
    "$GEN" --preset=kuairec --scale=0.1 --seed=7 --pilot --truth --exposure=preference --quiet \
      --output="$WORK/pref-0.1-truth.csv"
    local TRUTH=(--log="$WORK/pref-0.1-truth.csv" --pilot_column=true_prob --pilot=column)
    local TT="Generated kuairec 0.1, preference exposure (graphsieve-gen ... --pilot --truth), α = 0.2"
    run gp-ceiling-truth-random "$TT, random, opt-mix with the true click probability (oracle), seeds $FINAL_SEED–" \
      "${TRUTH[@]}" "${BASE[@]}" --models=lr,fm,mlp "${CEILING[@]}" --pilot_kappas=0.1,0.01
    run gp-ceiling-truth-flat "$TT, random, flatter oracle rules and the unsampled model, seeds $FINAL_SEED–" \
      "${TRUTH[@]}" "${BASE[@]}" --models=lr,fm,mlp --include_full=true "${CEILING[@]}" \
      --methods=uniform,opt-mix,opt-sqrt --floors=0.01 --pilot_kappas=0.5,1,2,4
    run gp-ceiling-truth-deployed "$TT, deployed, opt-mix with the true click probability in the snapshot, seeds $FINAL_SEED–" \
      "${TRUTH[@]}" "${BASE[@]}" --models=fm --mode=deployed "${CEILING[@]}" --pilot_kappas=0.1,1
    run gp-ceiling-fm-random "$T, random, opt-mix with a cross-fitted fm pilot, seeds $FINAL_SEED–" \
      "${GP[@]}" "${BASE[@]}" "${FM_PILOT[@]}" --models=lr,fm,mlp "${CEILING[@]}" --methods=uniform,opt-mix \
      --pilot_kappas=0.1,1
  fi
  if want mixture-fresh; then
    for mode in random deployed; do
      run "gp-mixture-fresh-$mode" "$T, $mode, mixture rule κ = ${MIXTURE_KAPPA:-0.25}, fresh seeds" \
        "${GP[@]}" "${BASE[@]}" --mode="$mode" "${MIXTURE_FRESH[@]}"
    done
  fi
}

# The preference-exposure log at scale 1 (12M instances), fm, floor rule (opt-in: GP_SCALE1=1).
preference_scale1() {
  if want ceiling; then
    "$GEN" --preset=kuairec --scale=1 --seed=7 --truth --exposure=preference --quiet \
      --output="$WORK/pref-1-truth.csv"
    run gp1-ceiling-truth-random "Generated kuairec scale 1 (12M), preference exposure, random, opt-mix with the true click probability (oracle) and the unsampled model, seeds $FINAL_SEED–" \
      --log="$WORK/pref-1-truth.csv" --pilot_column=true_prob --pilot=column --models=fm "${BASE[@]}" \
      --include_full=true "${CEILING[@]}" --pilot_kappas=0.1,1
    run gp1-ceiling-fm-random "Generated kuairec scale 1 (12M), preference exposure, random, opt-mix with a cross-fitted fm pilot, seeds $FINAL_SEED–" \
      --log="$WORK/pref-1-truth.csv" --models=fm "${BASE[@]}" "${FM_PILOT[@]}" "${CEILING[@]}" \
      --methods=uniform,opt-mix --pilot_kappas=0.1,1
    if [[ "${ONLY:-}" == ceiling ]]; then return 0; fi
  fi
  "$GEN" --preset=kuairec --scale=1 --seed=7 --pilot --exposure=preference --quiet \
    --output="$WORK/pref-1.csv"
  local GP=(--log="$WORK/pref-1.csv" --pilot_column=pilot_score --pilot=column --models=fm)
  for mode in random deployed; do
    run "gp1-floor-$mode" "Generated kuairec scale 1 (12M), preference exposure, $mode, floor rule" \
      "${GP[@]}" "${BASE[@]}" --mode="$mode" --methods=uniform,maec,maec-prop --floors=0.05
  done
  # Second round: γ 0.25 and 0.5 (the default), t = s^1.5; selection seeds and fresh seeds.
  if want rule; then
  run gp1-rule-random "Generated kuairec scale 1 (12M), preference exposure, random, γ grid, seeds 1–$SEEDS" \
    "${GP[@]}" "${BASE[@]}" --methods=uniform,maec-prop-mix --kappas=0.1 --gammas=0.25,0.5
  run gp1-rule-beta1.5-random "Generated kuairec scale 1 (12M), preference exposure, random, t = s^1.5, seeds 1–$SEEDS" \
    "${GP[@]}" "${BASE[@]}" --methods=uniform,maec-prop-mix --kappas=0.1 --gammas=0.5 --score_power=1.5
  fi
  if want final; then
  for mode in random deployed; do
    run "gp1-final-$mode" "Generated kuairec scale 1 (12M), preference exposure, $mode, γ 0.25 and 0.5, fresh seeds $FINAL_SEED–" \
      "${GP[@]}" "${BASE[@]}" --mode="$mode" "${FINAL[@]}"
    run "gp1-final15-$mode" "Generated kuairec scale 1 (12M), preference exposure, $mode, t = s^1.5 at γ 0.5, fresh seeds $FINAL_SEED–" \
      "${GP[@]}" "${BASE[@]}" --mode="$mode" --threads=2 --score_power=1.5 "${FINAL[@]}" --gammas=0.5
  done
  # Three more seeds in today's mode (measured after the decision).
  run gp1-extra-random "Generated kuairec scale 1 (12M), preference exposure, random, seeds 10–12" \
    "${GP[@]}" "${BASE[@]}" --threads=2 --first_seed=10 --methods=uniform,maec-prop-mix --kappas=0.1 --gammas=0.25,0.5
  run gp1-extra15-random "Generated kuairec scale 1 (12M), preference exposure, random, t = s^1.5, seeds 10–12" \
    "${GP[@]}" "${BASE[@]}" --first_seed=10 --methods=uniform,maec-prop-mix --kappas=0.1 --gammas=0.5 --score_power=1.5
  fi
  # The recommended default on fresh seeds.
  for mode in random deployed; do
    run "gp1-mixture-fresh01-$mode" "Generated kuairec scale 1 (12M), preference exposure, $mode, the recommended default (maec-prop-mix κ = 0.1), fresh seeds" \
      "${GP[@]}" "${BASE[@]}" --mode="$mode" --first_seed="$FRESH_SEED" --methods=uniform,maec-prop-mix --kappas=0.1
  done
}

legacy_movielens() {
  [[ -n "$ML_DIR" ]] || return 0
  local ML=(--movielens="$ML_DIR" --pilot=lr)
  run ml-compare "MovieLens 100K (implicit: all 943 × 1682 pairs, positive = rating ≥ 4), α = 0.2" \
    "${ML[@]}" "${COMPARE[@]}"
  run ml-sweep "MovieLens 100K, α sweep" "${ML[@]}" "${SWEEP[@]}"
  run ml-ablation "MovieLens 100K, ablations at α = 0.2 (fm)" "${ML[@]}" "${ABLATION[@]}"
  run ml-defaults "MovieLens 100K, the recommended default (maec, no propagation, ϱ = 0.05) and max-raw, fresh seeds 4–6" \
    "${ML[@]}" "${DEFAULTS[@]}"
}

legacy_kuairec() {
  "$GEN" --preset=kuairec --scale=0.1 --seed=7 --pilot --quiet --output="$WORK/kuairec-0.1.csv"
  local KR=(--log="$WORK/kuairec-0.1.csv" --pilot_column=pilot_score --pilot=column)
  run kr-compare "Generated kuairec (graphsieve-gen --preset=kuairec --scale=0.1 --seed=7 --pilot), α = 0.2" \
    "${KR[@]}" "${COMPARE[@]}"
  run kr-sweep "Generated kuairec scale 0.1, α sweep" "${KR[@]}" "${SWEEP[@]}"
  run kr-ablation "Generated kuairec scale 0.1, ablations at α = 0.2 (fm)" "${KR[@]}" "${ABLATION[@]}"
  run kr-defaults "Generated kuairec scale 0.1, the recommended default (maec, no propagation, ϱ = 0.05) and max-raw, fresh seeds 4–6" \
    "${KR[@]}" "${DEFAULTS[@]}"
  if [[ "${KUAIREC_SCALE1:-0}" == "1" ]]; then
    "$GEN" --preset=kuairec --scale=1 --seed=7 --pilot --quiet --output="$WORK/kuairec-1.csv"
    run kr1-compare "Generated kuairec, scale 1 (12M instances), α = 0.2, ϱ = 0.05" \
      --log="$WORK/kuairec-1.csv" --pilot_column=pilot_score --pilot=column --threads=2 \
      --methods=uniform,opt,maec,maec-prop,max-raw --alphas=0.2 --floors=0.05 --include_full=false
  fi
}

movielens_all() { movielens; if [[ "${LEGACY:-0}" == "1" ]]; then legacy_movielens; fi; }
kuairec_all() {
  preference
  if [[ "${GP_SCALE1:-0}" == "1" ]]; then preference_scale1; fi
  if [[ "${LEGACY:-0}" == "1" ]]; then legacy_kuairec; fi
}

if [[ "${STITCH_ONLY:-0}" == "1" ]]; then
  stitch
  exit 0
fi

# The two datasets run side by side (one pipeline thread each by default on 2 cores).
movielens_all & ml_pid=$!
kuairec_all & kr_pid=$!
status=0
wait "$ml_pid" || status=$?
wait "$kr_pid" || status=$?
if (( status != 0 )); then
  echo "eval-report: an experiment failed (see the .log files in $WORK)" >&2
  exit "$status"
fi

elapsed=$(( $(date +%s) - start ))
# The runtime line describes a whole report; a one-group run (ONLY=...) leaves it alone.
if [[ -z "${ONLY:-}" ]]; then
  echo "_Regenerated by \`scripts/eval-report.sh\` (SEEDS=$SEEDS) on $(date -u +%Y-%m-%d) in ${elapsed} s on $(nproc) cores._" > "$WORK/runtime.md"
fi

stitch
echo "eval-report: wrote $REPORT in ${elapsed} s (scratch: $WORK)" >&2
