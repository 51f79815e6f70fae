#!/usr/bin/env bash
# Start EI Studio locally on SQLite with demo data, the LLM simulator and a background worker: `make run` calls
# this. Ctrl-C stops everything it started.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
PORT=${PORT:-8000}
SIM_PORT=${SIM_PORT:-8765}
export DEBUG=${DEBUG:-1}
export LLM_SIMULATOR_URL=${LLM_SIMULATOR_URL:-http://127.0.0.1:$SIM_PORT/v1}

"$PY" manage.py demo_database_prepare
"$PY" manage.py migrate --noinput >/dev/null
# The web server and the worker share the database cache (figures the worker draws are found by the pages).
"$PY" manage.py createcachetable
"$PY" manage.py seed_demo
"$PY" manage.py llm_register_simulator --base-url "$LLM_SIMULATOR_URL"

pids=()
cleanup() {
  trap - INT TERM EXIT
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  # The worker finishes the requests it has in flight; whatever is still running after 5 s is killed
  # (runs survive that: leases expire and idempotency keys prevent paying twice).
  for _ in $(seq 50); do
    alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup INT TERM EXIT

"$PY" manage.py runserver "127.0.0.1:$PORT" --noreload &
pids+=($!)
"$PY" manage.py llm_simulator --port "$SIM_PORT" &
pids+=($!)
"$PY" manage.py db_worker --no-reload --skip-checks --interval 0.2 &
pids+=($!)

# The demo studies (expert labels, simulated judges, a calibration report, a completed evaluation run) need the
# simulator; the first start takes about a minute, later starts find them in place.
for _ in $(seq 100); do
  "$PY" -c "import urllib.request,sys; urllib.request.urlopen(sys.argv[1] + '/models', timeout=1)" \
    "$LLM_SIMULATOR_URL" 2>/dev/null && break
  sleep 0.1
done
"$PY" manage.py seed_demo_studies || echo "(demo studies skipped; the app works without them)"

# Ready once the web server answers (it started before the demo studies were built, so this is quick).
for _ in $(seq 300); do
  "$PY" -c "import urllib.request,sys; urllib.request.urlopen(sys.argv[1], timeout=2)" \
    "http://127.0.0.1:$PORT/login/" 2>/dev/null && break
  sleep 0.2
done
echo
echo "Demo logins (password demo-pass-2026): admin, lead, expert, researcher"
echo "LLM simulator at $LLM_SIMULATOR_URL (no API key needed; SIM_PORT=$SIM_PORT); background worker running."
echo "Try: $PY manage.py llm_run_start llm/fixtures/demo_prompts.jsonl --endpoint 'Simulator · MCQ 70%' --parser mcq_letter --follow"
echo
echo "Ready: open http://127.0.0.1:$PORT/ and sign in (Ctrl-C stops everything)."
wait -n "${pids[@]}"
