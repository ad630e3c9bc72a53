#!/bin/bash
# Issue 50's pooled records (bench/README.md, Methods, "Pooled verdicts"): three default_path.py and three
# cpu_epoch.py records, alternating, of one commit, into OUT; run from a clean worktree, the machine otherwise idle.
#   bash bench/pooled_records.sh OUT AUTHOR_REPO DATA_DIR
set -euo pipefail
out=${1:?OUT folder}; author=${2:?checkout of the author\'s PyTorch repository}; data=${3:?MNIST folder}
if [ -n "$(git status --porcelain)" ]; then echo "the worktree has changes: run from a clean checkout" >&2; exit 2; fi
commit=$(git rev-parse --short HEAD)
mkdir -p "$out"
for i in 1 2 3; do
  echo "$(date -u +%FT%T) default_path $i; load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/log.txt"
  python bench/default_path.py --rounds 9 --author-repo "$author" --data-dir "$data" \
    --out "$out/default-path-$commit-$i.json" > "$out/default-path-$i.log" 2>&1
  echo "$(date -u +%FT%T) cpu_epoch $i; load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/log.txt"
  python bench/cpu_epoch.py --threads 1,2 --rounds 11 --epochs 4 --author-repo "$author" --data-dir "$data" \
    --out "$out/cpu-epoch-$commit-$i.json" > "$out/cpu-epoch-$i.log" 2>&1
done
echo "$(date -u +%FT%T) done" >> "$out/log.txt"
