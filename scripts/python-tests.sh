#!/usr/bin/env bash
# The Python package's tests (CI runs this after the cargo steps): build crates/shamba-py
# into a virtual environment with maturin and run its pytest suite.
#
# The extension is built in the dev profile: it reuses what `cargo test --workspace` just
# built, and the suite checks behaviour, not speed (for a release build: `maturin develop
# --release`, or `pip install ./crates/shamba-py`).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${SHAMBA_PY_VENV:-target/py-venv}
if [ ! -x "$venv/bin/python" ]; then
    if ! python3 -m venv "$venv"; then
        # Debian's python3 without ensurepip: its venv module is a package of its own.
        rm -rf "$venv"
        apt-get update -qq && apt-get install -y -qq python3-venv
        python3 -m venv "$venv"
    fi
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check "maturin>=1.5,<2" pytest
# maturin installs into the active environment.
export VIRTUAL_ENV="$PWD/$venv" PATH="$PWD/$venv/bin:$PATH"
(cd crates/shamba-py && maturin develop -q)
python -m pytest -q -p no:cacheprovider crates/shamba-py/tests
