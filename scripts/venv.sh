# Sourced by scripts/dev and scripts/test: make .venv and install Pixie into it.
# Reinstalls only when pyproject.toml changed since the last install.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "Pixie needs Python 3.11 or newer; '$PYTHON' is $("$PYTHON" --version 2>&1)." >&2
  echo "Set PYTHON=/path/to/python3.11 and try again." >&2
  exit 1
fi
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv

extras=${PIXIE_EXTRAS:-}
stamp=".venv/.pixie-installed${extras:+-$extras}"
want=$(cat pyproject.toml | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "Installing Pixie and its dependencies into .venv ..."
  # (Some machines' pip configs name local mirrors that may be absent; that noise is dropped.)
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip \
    2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".${extras:+[$extras]}" \
    2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
  echo "$want" > "$stamp"
fi
