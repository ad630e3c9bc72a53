#!/usr/bin/env bash
# The GPU learning rule's loss kernels on a GPU in about two and a half minutes: the row-wise
# kernels against the reference path, then one MNIST block-epoch timed every way.
#
#   OUT=DIR bash bench/gpu_kernels_window.sh [BUDGET_S]     # default 150
#
# In order, each step logged to $OUT (or bench/results/gpu-kernels/), never past BUDGET_S seconds:
#   1. the GPU, driver, CUDA, CuPy, numba and torch versions                 -> window.log
#   2. the wheels in .whl/ other than damlite's (array-api-compat, ...) into /tmp; damlite itself
#      runs from this checkout (the working tree the window copied)
#   3. `bench/gpu_block_epoch.py check`: whole epochs with the row-wise kernels, the row-wise
#      kernels per call and whole epochs with the three-pass kernels, each against the
#      reference path (<= 60 s)                                              -> gpu_check.json
#   4. `bench/gpu_block_epoch.py time`: seconds per block-epoch, row-wise and three-pass whole
#      epochs, their two matrix products alone, both in float32, per minibatch, the reference
#      path, PyTorch autograd (<= 75 s)                                      -> gpu_block_epoch.json
#   5. with PYTEST=1 (the default) and budget left: the CuPy tests of tests/test_gpu_kernels.py
#      (row-wise kernels and whole epochs against the reference path, small shapes; <= 45 s)
#                                                                           -> window.log
#   6. with PROFILE=1 and budget left: one minibatch launch by launch        -> gpu_profile.json
# Data: $DAMLITE_DATA_DIR, else .mnist/ in the checkout (else MNIST-shaped random data).
set -u
BUDGET="${1:-150}"
START=$(date +%s)
cd "$(dirname "$0")/.."
REPO="$PWD"
OUTDIR="${OUT:-bench/results/gpu-kernels}"
mkdir -p "$OUTDIR"
OUTDIR="$(cd "$OUTDIR" && pwd)"
PY="${PYTHON:-python3}"
LOG="$OUTDIR/window.log"
export DAMLITE_BACKEND=cupy DAMLITE_QUIET=1 PYTHONUNBUFFERED=1
[ -n "${DAMLITE_DATA_DIR:-}" ] || { [ -d .mnist ] && export DAMLITE_DATA_DIR="$REPO/.mnist"; }
elapsed() { echo $(( $(date +%s) - START )); }
say() { echo "[$(elapsed) s] $*" | tee -a "$LOG"; }
step() {  # step NAME SECONDS_MAX command...
  local name="$1" limit="$2"; shift 2
  local l=$(( BUDGET - $(elapsed) )); [ "$limit" -gt "$l" ] && limit="$l"
  if [ "$limit" -le 5 ]; then say "$name: skipped (budget spent)"; return 99; fi
  timeout "$limit" "$@" >> "$LOG" 2>&1; local rc=$?
  say "$name: exit $rc (limit $limit s)"
  return $rc
}

{
  date -u +"%Y-%m-%dT%H:%M:%SZ"
  echo "commit ${DAMLITE_GIT_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 || echo "nvidia-smi: not available"
} | tee -a "$LOG"
SITE=/tmp/damlite-kernels-site
rm -rf "$SITE"; mkdir -p "$SITE"
WHEELS=$(ls .whl/*.whl 2>/dev/null | grep -v '/damlite-')
if [ -n "$WHEELS" ]; then
  $PY -m pip install -q --no-index --no-deps --no-compile --target "$SITE" $WHEELS >> "$LOG" 2>&1 \
    && say "installed from .whl/: $(echo $WHEELS | xargs -n1 basename | tr '\n' ' ')" || say "pip install from .whl/ failed"
fi
export PYTHONPATH="$REPO:$SITE"
$PY - <<'PY' 2>&1 | tee -a "$LOG"
import damlite, platform
print("python", platform.python_version(), "damlite", damlite.__file__)
for mod in ("numpy", "cupy", "numba", "numba_cuda", "torch"):
    try:
        print(mod, __import__(mod).__version__)
    except Exception as exc:  # noqa: BLE001
        print(mod, "absent:", type(exc).__name__)
from damlite.kernels import gpu_kernels
print("path:", gpu_kernels.status())
PY
step check "${CHECK_LIMIT:-60}" $PY bench/gpu_block_epoch.py check --out "$OUTDIR"
rc=$?
case $rc in
  0) say "row-wise whole epochs agree with the reference path";;
  5) say "row-wise kernels DISAGREE or failed; the three-pass whole epochs agree (DAMLITE_GPU_KERNELS=threepass)";;
  4) say "whole epochs DISAGREE or failed; the row-wise kernels per minibatch agree (DAMLITE_GPU_KERNELS=minibatch)";;
  *) say "check exit $rc: see gpu_check.json and window.log";;
esac
step time "${TIME_LIMIT:-75}" $PY bench/gpu_block_epoch.py time --out "$OUTDIR" --time-limit "${TIME_SOFT:-55}"
[ "${PYTEST:-1}" = 1 ] && (cd /tmp && step pytest 45 $PY -m pytest -q -p no:cacheprovider -o addopts="" \
  "$REPO/tests/test_gpu_kernels.py" -k "cupy")
[ "${PROFILE:-0}" = 1 ] && step profile 35 $PY bench/gpu_block_epoch.py profile --out "$OUTDIR" --time-limit 28
$PY - "$OUTDIR" <<'PY' 2>&1 | tee -a "$LOG"
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
t = json.loads((out / "gpu_block_epoch.json").read_text()) if (out / "gpu_block_epoch.json").exists() else {}
c = json.loads((out / "gpu_check.json").read_text()) if (out / "gpu_check.json").exists() else {}
line = {"device": t.get("device") or c.get("device"), "use": c.get("use")}
for k in ("damlite_fused", "damlite_threepass", "damlite_fused_float32", "damlite_threepass_float32",
          "damlite_minibatch", "damlite_reference", "torch"):
    if isinstance(t.get(k), dict):
        line[k] = round(t[k]["median_after_first"], 4)
line["ceiling"] = t.get("ceiling", {}).get("median")
line["ratios"] = t.get("ratios")
print(json.dumps(line))
PY
say "done"
