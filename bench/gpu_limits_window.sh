#!/usr/bin/env bash
# The GPU at its limit, one prepared command of at most 9 minutes (issue 48's device steps):
#
#   OUT=DIR DAMLITE_GIT_COMMIT=<HEAD> bash bench/gpu_limits_window.sh [BUDGET_S]   # default 520
#
# In order, each step logged to $OUT/window.log (default OUT: bench/results/gpu-limits/), never past BUDGET_S:
#   1. the GPU, driver, CUDA, CuPy, numba and torch versions; the wheels of .whl/ other than damlite's
#      into /tmp (damlite runs from this checkout)
#   2. TF32 never silent: the CuPy tests of tests/test_backends.py that pin CuPy's float32 products
#      (CUPY_TF32=1 set, a float32 product within 1e-5 of float64)            (<= 60 s)
#   3. `bench/gpu_block_epoch.py check`: the fused paths against the reference (<= 60 s) -> gpu_check.json
#   4. `bench/gpu_block_epoch.py profile`: one minibatch of the whole-epoch path, launch by launch
#      (what is not a product, and how long)                                   (<= 35 s) -> gpu_profile.json
#   5. `bench/gpu_block_epoch.py time`: a block-epoch (36 networks, K = 256, 50 000 digits) in whole
#      fused epochs against its two matrix products alone, float64 and float32 (<= 75 s) -> gpu_block_epoch.json
#   6. the paper's 500-epoch sweep (`python -m damlite sweep mnist --profile full`) into a scratch folder,
#      timed as a whole, with each grid's seconds, for the rest of the budget; a grid cut off by the
#      budget is lost (the record says how many of the 8 finished)           -> sweep_full.jsonl, sweep.json
# Then window.json: each step's seconds and exit status, the block-epoch ratios and the sweep's per-grid
# seconds. Nothing here is extrapolated: a sweep that did not finish is recorded as not finished.
# Data: $DAMLITE_DATA_DIR, else .mnist/ in the checkout (bench/prepare_gpu_window.sh makes it).
set -u
BUDGET="${1:-520}"
START=$(date +%s)
cd "$(dirname "$0")/.."
REPO="$PWD"
OUTDIR="${OUT:-bench/results/gpu-limits}"
mkdir -p "$OUTDIR"
OUTDIR="$(cd "$OUTDIR" && pwd)"
PY="${PYTHON:-python3}"
LOG="$OUTDIR/window.log"
TMP=/tmp/damlite-limits
rm -rf "$TMP"; mkdir -p "$TMP"
STEPS="$TMP/steps.tsv"
: > "$STEPS"
export DAMLITE_BACKEND=cupy DAMLITE_QUIET=1 PYTHONUNBUFFERED=1
[ -n "${DAMLITE_DATA_DIR:-}" ] || { [ -d .mnist ] && export DAMLITE_DATA_DIR="$REPO/.mnist"; }
elapsed() { echo $(( $(date +%s) - START )); }
left() { echo $(( BUDGET - $(elapsed) )); }
say() { echo "[$(elapsed) s] $*" | tee -a "$LOG"; }
step() {  # step NAME SECONDS_MAX command...: run with a time limit, record seconds and exit status
  local name="$1" limit="$2"; shift 2
  local l; l=$(left); [ "$limit" -gt "$l" ] && limit="$l"
  if [ "$limit" -le 5 ]; then say "$name: skipped (budget spent)"; printf '%s\t0\tskipped\n' "$name" >> "$STEPS"; return 99; fi
  local t0; t0=$(date +%s)
  timeout "$limit" "$@" >> "$LOG" 2>&1; local rc=$?
  printf '%s\t%s\t%s\n' "$name" "$(( $(date +%s) - t0 ))" "$rc" >> "$STEPS"
  say "$name: exit $rc after $(( $(date +%s) - t0 )) s (limit $limit s)"
  return $rc
}

# 1. the machine and the packages
SITE=/tmp/damlite-limits-site
rm -rf "$SITE"; mkdir -p "$SITE"
WHEELS=$(ls .whl/*.whl 2>/dev/null | grep -v '/damlite-')
[ -n "$WHEELS" ] && { $PY -m pip install -q --no-index --no-deps --no-compile --target "$SITE" $WHEELS >> "$LOG" 2>&1 \
  || say "pip install from .whl/ failed"; }
export PYTHONPATH="$REPO:$SITE"
export DAMLITE_GIT_COMMIT="${DAMLITE_GIT_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}"
{
  date -u +"%Y-%m-%dT%H:%M:%SZ"
  echo "commit $DAMLITE_GIT_COMMIT"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 || echo "nvidia-smi: not available"
  $PY - <<'PY'
import platform
import damlite
print("python", platform.python_version(), "damlite", damlite.__file__)
for mod in ("numpy", "cupy", "numba", "numba_cuda", "torch"):
    try:
        print(mod, __import__(mod).__version__)
    except Exception as exc:  # noqa: BLE001
        print(mod, "absent:", type(exc).__name__)
from damlite.kernels import gpu_kernels
print("path:", gpu_kernels.status())
PY
} > "$TMP/env.txt" 2>&1
tee -a "$LOG" < "$TMP/env.txt"

# 2. TF32 never silent (the device test, and the CPU ones of the pinning code path)
(cd /tmp && step tf32_tests 60 $PY -m pytest -q -p no:cacheprovider -o addopts="" "$REPO/tests/test_backends.py" \
  -k "tf32 or pinned")

# 3-5. the block-epoch: checked, profiled, timed
step check 60 $PY bench/gpu_block_epoch.py check --out "$OUTDIR"
case $? in
  0) say "whole fused epochs agree with the reference path";;
  5) export DAMLITE_GPU_KERNELS=threepass; say "row-wise kernels DISAGREE: the rest runs DAMLITE_GPU_KERNELS=threepass";;
  4) export DAMLITE_GPU_KERNELS=minibatch; say "whole epochs DISAGREE: the rest runs DAMLITE_GPU_KERNELS=minibatch";;
  *) export DAMLITE_GPU_KERNELS=reference; say "fused kernels DISAGREE or failed: the rest runs on the reference path";;
esac
[ "${PROFILE:-1}" = 1 ] && step profile 35 $PY bench/gpu_block_epoch.py profile --out "$OUTDIR" --time-limit 28
step block_epoch 75 $PY bench/gpu_block_epoch.py time --out "$OUTDIR" --time-limit 55

# 6. the 500-epoch sweep, timed as a whole, into a scratch folder (from /tmp: the checkout on PYTHONPATH runs)
SWEEP="$TMP/sweep"
mkdir -p "$SWEEP"
SWEEP_T0=$(date +%s)
(cd /tmp && step sweep_full $(( $(left) - 15 )) $PY -m damlite sweep mnist --profile full --out "$SWEEP" --no-progress)
SWEEP_RC=$?
SWEEP_S=$(( $(date +%s) - SWEEP_T0 ))
cp "$SWEEP"/*.jsonl "$OUTDIR/" 2>/dev/null

# summary
$PY - "$OUTDIR" "$BUDGET" "$TMP" "$SWEEP_S" "$SWEEP_RC" <<'PY' | tee -a "$LOG"
import json, sys
from pathlib import Path
out, tmp = Path(sys.argv[1]), Path(sys.argv[3])
steps = [line.split("\t") for line in (tmp / "steps.tsv").read_text().splitlines() if line]
summary = {"budget_s": int(sys.argv[2]), "steps": [{"step": s, "seconds": int(t), "exit": rc} for s, t, rc in steps],
           "environment": (tmp / "env.txt").read_text().splitlines()}
t = json.loads((out / "gpu_block_epoch.json").read_text()) if (out / "gpu_block_epoch.json").exists() else {}
summary["block_epoch"] = {k: t[k]["median_after_first"] for k in ("damlite_fused", "damlite_fused_float32")
                          if isinstance(t.get(k), dict)}
summary["block_epoch"].update({k: t[k]["median"] for k in ("ceiling", "ceiling_float32") if isinstance(t.get(k), dict)})
summary["block_epoch"]["ratios"] = t.get("ratios")
grids = []
for f in sorted((tmp / "sweep").glob("*.jsonl")):
    for line in f.read_text().splitlines():
        if line.strip():
            x = json.loads(line)
            grids.append({"key": x["key"][:80], "seconds": x["provenance"].get("seconds"),
                          "gpu_kernels": x["provenance"].get("gpu_kernels")})
summary["sweep_full"] = {"wall_seconds": int(sys.argv[4]), "exit": int(sys.argv[5]), "grids_done": len(grids),
                         "grids_expected": 8, "finished": len(grids) == 8 and sys.argv[5] == "0", "grids": grids}
(out / "window.json").write_text(json.dumps(summary, indent=1))
print(json.dumps({k: summary[k] for k in ("block_epoch", "sweep_full")})[:3000])
PY
say "done"
