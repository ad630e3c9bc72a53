#!/usr/bin/env bash
# The one command for a GPU window: checks, timings, the book's chapters, then MNIST sweep blocks.
#
#   bash bench/gpu_window.sh BUDGET_S          # e.g. 500 for a 9-minute command
#
# In order, each step logged to $OUT (or bench/results/gpu-window/), never past BUDGET_S seconds:
#   1. the GPU, driver, CUDA, CuPy, numba and torch versions              -> window.log
#   2. damlite installed from .whl/ (else from this checkout) into /tmp/site, with the wheels
#      it needs that the machine lacks; the CuPy test subset run against the installed
#      package: the GPU files' CuPy tests, then every test marked `gpu` (<= 90 s each)
#                                                                         -> window.log
#   3. the fused kernels against the reference path on one small block: whole epochs
#      (damlite.kernels.gpu_fit) and the per-minibatch kernels; the rest runs on the fastest path
#      that agrees (whole epochs, else DAMLITE_GPU_KERNELS=threepass, else minibatch, else reference)
#      and says so                                                        -> gpu_check.json
#   4. one MNIST minibatch, launch by launch (PROFILE=0 skips it; <= 30 s) -> gpu_profile.json
#   5. one MNIST block-epoch: whole epochs, per minibatch, reference, PyTorch autograd,
#      matrix products (<= 60 s)                                          -> gpu_block_epoch.json
#   6. every chapter (bench/chapters.py) on CuPy, float64 as the GPU has it, then with
#      float64 treated as slow (a T4's dtype decision), the two at once; CHAPTERS=0 skips it
#                                                     -> chapters-gpu.json, chapters-gpu-t4.json
#   7. sweep blocks until the budget is spent: the missing `mnist-short` grids, then
#      `mnist-full`; every block is appended when it finishes; the block in flight when
#      the budget ends is lost and runs next time                        -> mnist/mnist-*.jsonl
#   8. a summary naming the device, with each step's seconds              -> window.json
# At most 8 files come back (window.log, six JSON files, the result files).
# Compare the chapter records with a CPU run of the same commit:
#   python bench/chapters.py compare CPU.json chapters-gpu.json
# Copy mnist/*.jsonl back into book/results/mnist/ and commit; the next window resumes.
#
# Data: $DAMLITE_DATA_DIR, else .mnist/ in the checkout (the four IDX files, raw or .gz).
# Records name their commit: set DAMLITE_GIT_COMMIT where the copy has no .git.
set -u
BUDGET="${1:-520}"
START=$(date +%s)
cd "$(dirname "$0")/.."
REPO="$PWD"
OUTDIR="${OUT:-bench/results/gpu-window}"
mkdir -p "$OUTDIR/mnist"
OUTDIR="$(cd "$OUTDIR" && pwd)"
PY="${PYTHON:-python3}"
LOG="$OUTDIR/window.log"
TMP=/tmp/damlite-window
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
  timeout "$limit" "$@"; local rc=$?
  printf '%s\t%s\t%s\n' "$name" "$(( $(date +%s) - t0 ))" "$rc" >> "$STEPS"
  say "$name: exit $rc after $(( $(date +%s) - t0 )) s (limit $limit s)"
  return $rc
}

# 1. the machine
{
  date -u +"%Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 || echo "nvidia-smi: not available"
  $PY - <<'PY'
import platform
print("python", platform.python_version())
for mod in ("numpy", "cupy", "numba", "numba_cuda", "torch"):
    try:
        m = __import__(mod)
        print(mod, m.__version__)
    except Exception as exc:  # noqa: BLE001
        print(mod, "absent:", type(exc).__name__)
try:
    import cupy
    rt = cupy.cuda.runtime
    print("cuda runtime", rt.runtimeGetVersion(), "driver", rt.driverGetVersion())
except Exception as exc:  # noqa: BLE001
    print("cupy runtime: unavailable:", exc)
PY
} > "$TMP/gpu_env.txt" 2>&1
cat "$TMP/gpu_env.txt" | tee -a "$LOG"

# 2. install, then the CuPy tests on the installed package
SITE=/tmp/damlite-site
rm -rf "$SITE"
WHEELS=$(ls .whl/*.whl 2>/dev/null)
if [ -n "$WHEELS" ] && $PY -m pip install -q --no-index --no-deps --no-compile --target "$SITE" $WHEELS >> "$LOG" 2>&1; then
  say "installed from .whl/: $(ls .whl | tr '\n' ' ')"
elif $PY -m pip install -q --no-index --no-deps --no-build-isolation --target "$SITE" . >> "$LOG" 2>&1; then
  say "installed damlite from this checkout"
else
  say "install failed: damlite runs from this checkout (PYTHONPATH)"; SITE="$REPO"
fi
export PYTHONPATH="$SITE"
export DAMLITE_GIT_COMMIT="${DAMLITE_GIT_COMMIT:-$(git rev-parse HEAD 2>/dev/null)}"
say "damlite from: $(cd /tmp && $PY -c 'import damlite; print(damlite.__file__, damlite.__version__)' 2>&1)"
# (the simulator and PTX tests are the CPU's: here the same comparisons run on CuPy)
(cd /tmp && step pytest "${PYTEST_LIMIT:-90}" $PY -m pytest -q -p no:cacheprovider -o addopts="" -m "not slow" \
   "$REPO/tests/test_gpu_kernels.py" "$REPO/tests/test_backends.py" "$REPO/tests/test_network.py" \
   "$REPO/tests/test_classification.py" -k "(cupy or gpu or backend) and not simulated and not ptx" > "$TMP/gpu_pytest.log" 2>&1)
# every test that takes the `cupy` backend (marked `gpu`), wherever it lives
(cd /tmp && step pytest_gpu_marked "${PYTEST_LIMIT:-90}" $PY -m pytest -q -p no:cacheprovider -o addopts="" -m gpu \
   --ignore "$REPO/tests/test_book.py" --ignore "$REPO/tests/test_pages_render.py" "$REPO/tests" \
   >> "$TMP/gpu_pytest.log" 2>&1)  # (the book's tests need Jupyter and Sphinx, and take no backend)
{ echo "----- gpu_pytest.log"; cat "$TMP/gpu_pytest.log"; echo "-----"; } >> "$LOG"
tail -n 5 "$TMP/gpu_pytest.log"

# 3. fused kernels vs reference path
step check "${CHECK_LIMIT:-90}" $PY bench/gpu_block_epoch.py check --out "$OUTDIR" >> "$LOG" 2>&1
rc=$?
if [ "$rc" -eq 0 ]; then
  say "whole epochs (damlite.kernels.gpu_fit) agree with the reference path: the sweep uses them"
elif [ "$rc" -eq 5 ]; then
  export DAMLITE_GPU_KERNELS=threepass
  say "row-wise loss kernels DISAGREE or failed, the three-pass whole epochs agree (see gpu_check.json): the sweep runs with DAMLITE_GPU_KERNELS=threepass"
elif [ "$rc" -eq 4 ]; then
  export DAMLITE_GPU_KERNELS=minibatch
  say "whole epochs DISAGREE or failed, the per-minibatch kernels agree (see gpu_check.json): the sweep runs with DAMLITE_GPU_KERNELS=minibatch"
else
  export DAMLITE_GPU_KERNELS=reference
  say "fused kernels DISAGREE or failed (exit $rc, see gpu_check.json): the sweep runs on the reference path"
fi

# 4. one minibatch, launch by launch
[ "${PROFILE:-1}" = 1 ] && step profile "${PROFILE_LIMIT:-35}" $PY bench/gpu_block_epoch.py profile --out "$OUTDIR" --time-limit 28 >> "$LOG" 2>&1

# 5. one block-epoch, five ways
step block_epoch "${EPOCH_LIMIT:-75}" $PY bench/gpu_block_epoch.py time --out "$OUTDIR" --time-limit 55 >> "$LOG" 2>&1

# 6. every chapter of the book on CuPy: float64 as this GPU has it, then float64 treated as slow
#    (the T4 decision: dtype="auto" gives the normalized network float32); each record is
#    rewritten after every chapter, so a chapter cut off by the budget leaves the others
#    (the two runs share the GPU at once: their seconds are not timings)
if [ "${CHAPTERS:-1}" = 1 ]; then
  limit=$(( $(left) - 25 ))
  (cd /tmp && step chapters_float64 "$limit" $PY "$REPO/bench/chapters.py" run --out "$OUTDIR/chapters-gpu.json" \
    > "$TMP/chapters-gpu.log" 2>&1) &
  (cd /tmp && step chapters_t4 "$limit" $PY "$REPO/bench/chapters.py" run --float64 slow \
    --out "$OUTDIR/chapters-gpu-t4.json" > "$TMP/chapters-gpu-t4.log" 2>&1) &
  wait
  for f in chapters-gpu chapters-gpu-t4; do { echo "----- $f.log"; cat "$TMP/$f.log"; } | tee -a "$LOG"; done
fi

# 7. sweep blocks until the budget is spent
# (the sweep writes outside $OUT: only the result files come back, not their lock files)
SWEEP=/tmp/damlite-sweep
rm -rf "$SWEEP"; mkdir -p "$SWEEP"
for f in book/results/mnist/mnist-short.jsonl book/results/mnist/mnist-full.jsonl; do
  [ -f "$f" ] && cp "$f" "$SWEEP/"
done
for profile in short full; do
  [ "$(left)" -gt 20 ] || break
  # from /tmp: `python -m` puts the working directory first on sys.path, and the sweep must run
  # the installed package (whose records then name $DAMLITE_GIT_COMMIT), not the checkout
  (cd /tmp && step "sweep_$profile" $(( $(left) - 8 )) $PY -m damlite sweep mnist --profile "$profile" \
    --out "$SWEEP" --no-progress >> "$LOG" 2>&1)
  cp "$SWEEP"/*.jsonl "$OUTDIR/mnist/" 2>/dev/null
  say "sweep $profile: $(cd /tmp && $PY -m damlite list mnist --profile "$profile" --out "$SWEEP" 2>/dev/null | grep -c '^done') blocks done"
done

# 8. summary
$PY - "$OUTDIR" "$BUDGET" "$TMP" <<'PY' | tee -a "$LOG"
import json, sys
from pathlib import Path
out, tmp = Path(sys.argv[1]), Path(sys.argv[3])
steps = [line.split("\t") for line in (tmp / "steps.tsv").read_text().splitlines() if line]
summary = {"budget_s": int(sys.argv[2]), "steps": [{"step": s, "seconds": int(t), "exit": rc} for s, t, rc in steps]}
summary["environment"] = (tmp / "gpu_env.txt").read_text().splitlines()
for name in ("gpu_check.json", "gpu_profile.json", "gpu_block_epoch.json"):
    if (out / name).exists():
        summary[name.removesuffix(".json")] = json.loads((out / name).read_text())
for name in ("chapters-gpu.json", "chapters-gpu-t4.json"):
    if (out / name).exists():
        record = json.loads((out / name).read_text())
        summary[name.removesuffix(".json")] = [{k: c.get(k) for k in ("chapter", "status", "seconds", "error")}
                                               for c in record["chapters"]]
for f in sorted((out / "mnist").glob("*.jsonl")):
    lines = [json.loads(x) for x in f.read_text().splitlines() if x.strip()]
    summary[f.name] = [{"key": x["key"][:60], "device": x["provenance"].get("device"),
                        "seconds": x["provenance"].get("seconds"), "gpu_kernels": x["provenance"].get("gpu_kernels"),
                        "median_epoch_seconds": x["records"][0].get("median_epoch_seconds")} for x in lines]
(out / "window.json").write_text(json.dumps(summary, indent=1))
print(json.dumps({k: summary[k] for k in ("steps",)}, indent=None))
PY
say "done"
