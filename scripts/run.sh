#!/usr/bin/env bash
# Start EI Studio locally on SQLite with demo data: `make run` calls this. Ctrl-C stops everything it started.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
PORT=${PORT:-8000}
export DEBUG=${DEBUG:-1}

"$PY" manage.py migrate --noinput >/dev/null
"$PY" manage.py seed_demo

pids=()
cleanup() {
  trap - INT TERM EXIT
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup INT TERM EXIT

"$PY" manage.py runserver "127.0.0.1:$PORT" --noreload &
pids+=($!)

echo
echo "EI Studio is running at http://127.0.0.1:$PORT/  (Ctrl-C stops it)"
echo "Demo logins (password demo-pass-2026): admin, lead, expert, researcher"
wait -n "${pids[@]}"
