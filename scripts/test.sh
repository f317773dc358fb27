#!/usr/bin/env bash
# Set up everything (scripts/setup.sh --dev), then run lint, type checks and the whole test
# suite. Extra arguments go to pytest. Run as root: the block-device safety tests use loop
# devices (they skip themselves, saying why, without root).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --dev
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
.venv/bin/python -m pytest "$@"
