# Sourced by scripts/dev and scripts/test: make .venv and install Pixie into it.
# Reinstalls only when pyproject.toml or the lock file changed since the last install.
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
# Dependencies come pinned from the lock file (requirements/README.md says how
# to regenerate it); Pixie itself is then installed on top without resolving.
lock="requirements/lock${extras:+-$extras}.txt"
stamp=".venv/.pixie-installed${extras:+-$extras}"
want=$(cat pyproject.toml "$lock" | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "Installing Pixie and its dependencies ($lock) into .venv ..."
  rm -f .venv/.pixie-installed*  # an install that fails half-way is redone next time
  # (Some machines' pip configs name local mirrors that may be absent; that noise is dropped.)
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip \
    2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --requirement "$lock" \
    2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps -e . \
    2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
  if ! problems=$(.venv/bin/python -m pip check --disable-pip-version-check 2>&1); then
    grep -v "is ignored: it is neither a file nor a directory" <<<"$problems" >&2
    echo "pyproject.toml and $lock disagree: regenerate the lock files (requirements/README.md)." >&2
    exit 1
  fi
  echo "$want" > "$stamp"
  # The test lock pins every base package alike, so this install serves scripts/dev
  # and scripts/prod too (the production test starts scripts/prod).
  if [ -n "$extras" ] && ! grep -qvxFf "$lock" <(grep "==" requirements/lock.txt); then
    cat pyproject.toml requirements/lock.txt | sha256sum | cut -d' ' -f1 > .venv/.pixie-installed
  fi
fi
