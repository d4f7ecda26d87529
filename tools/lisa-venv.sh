#!/usr/bin/env bash
# Create .venv-lisa at the repository root with LISA 3.1.0 and the pins it needs
# (see docs in /work/shared/spec/trace-format.md, "Installability"):
#   numpy<2      LISA 3.1.0 uses np.NaN
#   pandas       2.0.3, the version LISA 3.1.0 was tested with
#   pyarrow<15   newer ones need numpy 2
#   nest_asyncio missing from the wheel's metadata
#   pytest       runs tests/python/lisa/
# Idempotent: does nothing when the venv already imports lisa.
# Usage: tools/lisa-venv.sh [VENV_DIR]   (default: <repo>/.venv-lisa)
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${1:-$repo_root/.venv-lisa}"
python="${PYTHON:-python3}"

if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import lisa.trace, pytest' 2>/dev/null; then
    echo "lisa-venv: $venv already set up"
    exit 0
fi

start=$(date +%s)
"$python" -m venv "$venv" || "$python" -m virtualenv "$venv" || {
    echo "lisa-venv: cannot create $venv: install the venv module (Debian: apt-get install python3-venv)" >&2
    exit 1
}
"$venv/bin/python" -m pip install --upgrade pip
"$venv/bin/python" -m pip install \
    "lisa-linux==3.1.0" "numpy<2" "pandas==2.0.3" "pyarrow<15" nest_asyncio pytest
"$venv/bin/python" -c 'import lisa.trace' 
echo "lisa-venv: installed in $venv in $(( $(date +%s) - start )) s"
