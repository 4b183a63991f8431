#!/usr/bin/env bash
# The test command: installs what the tests need (apt and pip), then lints, checks layering and runs pytest.
# Works on a fresh Debian machine with no GPU, sound card or screen.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bash tests/tools/install-system-deps.sh
bash packaging/bootstrap.sh --dev
. .venv/bin/activate

echo "== ruff"; ruff check desktop tests packaging
echo "== import-linter"; lint-imports
echo "== mypy"; mypy
echo "== pytest"
export QT_QPA_PLATFORM=offscreen
python -m pytest -p no:cacheprovider "$@"

# The double-click build and its frozen self-test (about 10 minutes; docs/packaging.md has the
# timings). VOICEDESK_CI_BUILD=0 skips it for a quicker local run.
if [ "${VOICEDESK_CI_BUILD:-1}" = 1 ]; then
  echo "== frozen build (packaging/build.sh) and its self-test"
  bash packaging/build.sh
fi
