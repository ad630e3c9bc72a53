#!/usr/bin/env bash
# Builds what a GPU window carries, from the committed HEAD, and prints the one `run` call.
#
#   bash bench/prepare_gpu_window.sh            # from the checkout the window will copy
#
#   .whl/    damlite's wheel, built from `git archive HEAD` (so it is the commit, whatever the
#            working tree holds), plus the wheels for Python 3.12 that the GPU machine lacks:
#            array-api-compat, array-api-strict, and IPython and ipywidgets for the chapters
#            (pip download: needs the package index)
#   .mnist/  the four MNIST IDX files, gzipped, from $MNIST_SOURCE (default ../shared/data/mnist),
#            each checked against its SHA256SUMS first
# Both stay out of git: /.whl/ is in .gitignore, /.mnist/ is added to .git/info/exclude.
# Leaves the tree as it found it (nothing tracked or unignored is written); fails on any error.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
SOURCE="${MNIST_SOURCE:-../shared/data/mnist}"
COMPAT="array-api-compat==1.16.0"
STRICT="array-api-strict==2.6.1"
HEAD=$(git rev-parse HEAD)
if [ -n "$(git status --porcelain)" ]; then
  echo "warning: the working tree differs from HEAD; the window copies the working tree, the wheel is HEAD ($HEAD)" >&2
fi

# 1. wheels
rm -rf .whl
mkdir -p .whl
EXPORT=$(mktemp -d)
trap 'rm -rf "$EXPORT"' EXIT
git archive HEAD | tar -x -C "$EXPORT"
(cd "$EXPORT" && "$PY" -m pip wheel -q --no-deps --no-build-isolation -w "$OLDPWD/.whl" .)
# the chapters' runner (bench/chapters.py) needs IPython, and chapters 1, 3, 5 and 6 ipywidgets:
# the GPU image has neither. Left out to stay under the window's 64 MiB: jedi and parso (IPython's
# completer, imported only if present) and the widgets' JavaScript (widgetsnbextension,
# jupyterlab-widgets), which no Python code imports. ~3.5 MB together.
CHAPTER_WHEELS="ipython==9.18.1 ipython-pygments-lexers==1.1.1 traitlets==5.16.1 pexpect==4.9.0
  ptyprocess==0.7.0 prompt-toolkit==3.0.53 wcwidth==0.9.4 stack-data==0.6.3 asttokens==3.0.2 executing==2.3.0
  pure-eval==0.2.4 matplotlib-inline==0.2.2 decorator==5.2.1 comm==0.2.3 ipywidgets==8.1.9"
"$PY" -m pip download -q --python-version 3.12 --only-binary=:all: --no-deps -d .whl "$COMPAT" "$STRICT" $CHAPTER_WHEELS
ls .whl | grep -q '^damlite-.*\.whl$' || { echo "no damlite wheel in .whl/" >&2; exit 1; }

# 2. MNIST, checked, gzipped
[ -f "$SOURCE/SHA256SUMS" ] || { echo "no $SOURCE/SHA256SUMS" >&2; exit 1; }
(cd "$SOURCE" && sha256sum --quiet -c SHA256SUMS) || { echo "MNIST files in $SOURCE fail SHA256SUMS" >&2; exit 1; }
rm -rf .mnist
mkdir -p .mnist
for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
  [ -f "$SOURCE/$f" ] || { echo "missing $SOURCE/$f" >&2; exit 1; }
  gzip -n -c "$SOURCE/$f" > ".mnist/$f.gz"
done

# 3. kept out of git
EXCLUDE=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$EXCLUDE")"
grep -qxF '/.mnist/' "$EXCLUDE" 2>/dev/null || echo '/.mnist/' >> "$EXCLUDE"
grep -qxF '/.whl/' .gitignore || { echo "/.whl/ is not in .gitignore: add it and commit" >&2; exit 1; }
if [ -n "$(git status --porcelain --untracked-files=all -- .whl .mnist)" ]; then
  echo ".whl/ or .mnist/ shows in git status" >&2; exit 1
fi

echo "carried: .whl $(du -sh .whl | cut -f1) ($(ls .whl | tr '\n' ' ')), .mnist $(du -sh .mnist | cut -f1)"
echo "the GPU window's one call (device tool \`run\`), from this checkout at $HEAD:"
printf '  run(command="DAMLITE_GIT_COMMIT=%s PROFILE=0 bash bench/gpu_window.sh 500", carry=[".whl", ".mnist"], timeout_s=545)\n' "$HEAD"
