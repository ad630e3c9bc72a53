#!/usr/bin/env bash
# One prepared GPU check for damlite (about 5 minutes at most):
#   1. the test suite on CuPy   (DAMLITE_BACKEND=cupy python3 -m pytest -x -q)
#   2. the benchmark on CuPy, against damlite on this machine's CPU (NumPy, all cores)
#      and PyTorch autograd on the GPU where torch sees it   (bench/run.py --preset gpu)
# Results and logs go to $OUT if set, else bench/results/.
#
#   bash bench/gpu.sh
#
# Needs python3 with cupy, numpy, pytest, hypothesis, tqdm, mpmath (torch optional) and
# array-api-compat (+ array-api-strict for some tests) importable, e.g. on PYTHONPATH.
# Time limits (seconds) can be changed: TEST_TIMEOUT (default 150), BENCH_TIMEOUT (140).
# The results JSON is rewritten after each workload, so a timed-out run still leaves what it did.
set -u
cd "$(dirname "$0")/.."
OUTDIR="${OUT:-bench/results}"
mkdir -p "$OUTDIR"
PY="${PYTHON:-python3}"
export DAMLITE_BACKEND=cupy
export DAMLITE_QUIET=1

{
  date -u +"%Y-%m-%dT%H:%M:%SZ"
  nvidia-smi -L 2>/dev/null || echo "nvidia-smi not available"
  $PY - <<'PY'
import numpy, cupy
print("numpy", numpy.__version__, "cupy", cupy.__version__)
try:
    import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())
except ImportError:
    print("torch absent")
PY
} > "$OUTDIR/gpu_env.txt" 2>&1
cat "$OUTDIR/gpu_env.txt"

echo "== tests on CuPy =="
timeout "${TEST_TIMEOUT:-150}" $PY -m pytest -x -q -p no:cacheprovider > "$OUTDIR/gpu_pytest.log" 2>&1
tests_rc=$?
tail -n 15 "$OUTDIR/gpu_pytest.log"
echo "pytest exit status: $tests_rc (124 = timed out)"

echo "== benchmark on CuPy =="
timeout "${BENCH_TIMEOUT:-140}" $PY bench/run.py --backend cupy --preset gpu --threads 0 --label gpu \
  --out "$OUTDIR" > "$OUTDIR/gpu_bench.log" 2>&1
bench_rc=$?
tail -n 40 "$OUTDIR/gpu_bench.log"
echo "bench exit status: $bench_rc (124 = timed out)"
exit $(( tests_rc != 0 || bench_rc != 0 ))
