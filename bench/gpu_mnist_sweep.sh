#!/usr/bin/env bash
# The paper's full MNIST sweep on a GPU, resumable: run it again (same command) until
# `python -m damlite list mnist --profile full --out book/results/mnist` shows no "todo".
#
#   DAMLITE_GIT_COMMIT=$(git rev-parse HEAD) TIME_LIMIT=540 bash bench/gpu_mnist_sweep.sh
#
# Needs the full MNIST files in $DAMLITE_DATA_DIR (defaults to ../shared/data/mnist) and
# damlite importable with CuPy. On a machine whose copy of the repository has no .git,
# set DAMLITE_GIT_COMMIT so that every record names the commit it ran. Blocks finished
# before TIME_LIMIT seconds are on disk; the block in flight is lost and reruns next time.
# Also runs the `leak-short` profile (the author's leaky F, chapter 7) when time is left.
# PROFILES chooses the profiles, in order; the readings' whole grids still to run on a GPU (chapter 8, MNIST):
#
#   PROFILES="author-short b-short author-full b-full author-seed2" TIME_LIMIT=540 bash bench/gpu_mnist_sweep.sh
set -u
cd "$(dirname "$0")/.."
export DAMLITE_BACKEND=cupy
export DAMLITE_DATA_DIR="${DAMLITE_DATA_DIR:-$(cd ../shared/data/mnist 2>/dev/null && pwd)}"
PY="${PYTHON:-python3}"
LIMIT="${TIME_LIMIT:-540}"
start=$(date +%s)
for profile in ${PROFILES:-full leak-short}; do
  left=$(( LIMIT - ($(date +%s) - start) ))
  [ "$left" -gt 30 ] || break
  timeout "$left" $PY -m damlite sweep mnist --profile "$profile" --out book/results/mnist --no-progress
  echo "$profile: $($PY -m damlite list mnist --profile "$profile" --out book/results/mnist | grep -c "^todo") blocks left"
done
