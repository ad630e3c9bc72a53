#!/usr/bin/env bash
# Regenerate the locks (needs uv: `pip install uv`):
#
#     bash requirements/lock.sh              # keep every pin that still satisfies the ranges
#     bash requirements/lock.sh --upgrade    # move every pin to the newest that satisfies them
#
# requirements/book.txt locks requirements.txt (the book's environment), requirements/dev.txt locks
# pyproject.toml's `dev` extra (the tests' environment). Both are universal (one file for Python 3.10 to
# 3.13 and every platform, with markers where a version differs) and carry every wheel's hash; both take
# requirements/pins.txt (the NumPy and numba the committed results ran on) as constraints, and the tests'
# lock takes the book's as constraints too, so that a package in both has one version.
# tests/test_lock.py fails when pyproject.toml or requirements.txt and these locks disagree.
set -euo pipefail
cd "$(dirname "$0")/.."
common=(--universal --python-version 3.10 --generate-hashes -c requirements/pins.txt
        --custom-compile-command "bash requirements/lock.sh" "$@")
uv pip compile requirements.txt --no-emit-package damlite "${common[@]}" -o requirements/book.txt
uv pip compile pyproject.toml --extra dev -c requirements/book.txt "${common[@]}" -o requirements/dev.txt
