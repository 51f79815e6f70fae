# Two entry points for newcomers: `make run` and `make test` (see README.md).
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000

# Find a Python >= 3.12: python3.13, python3.12, python3 if they run, else pyenv's installs.
PYTHON ?= $(shell for c in python3.13 python3.12 python3 $$(ls -d $$HOME/.pyenv/versions/3.1[2-9]*/bin/python3 2>/dev/null | sort -rV); do \
	if command -v $$c >/dev/null 2>&1 && $$c -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then echo $$c; break; fi; done)

.PHONY: help run serve worker test test-fast lint bench messages clean
.DEFAULT_GOAL := help

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z-]+):.*## (.*)/\1\t\2/' | expand -t 12

$(VENV)/.installed: pyproject.toml
	@test -n "$(PYTHON)" || { echo "No Python >= 3.12 found (tried python3.13, python3.12, python3, ~/.pyenv)."; exit 1; }
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	@touch $@

run: $(VENV)/.installed ## the app with demo data on SQLite, the LLM simulator and a worker (PORT, SIM_PORT)
	@PORT=$(PORT) PY=$(PY) ./scripts/run.sh

# The production web server and a background worker (docs/deploy.md): need SECRET_KEY, DATABASE_URL, ALLOWED_HOSTS.
serve: $(VENV)/.installed ## production: gunicorn, DEBUG off (needs SECRET_KEY, DATABASE_URL, ALLOWED_HOSTS)
	@PORT=$(PORT) PY=$(PY) ./scripts/serve.sh

worker: $(VENV)/.installed ## a production background worker
	DEBUG=0 $(PY) manage.py db_worker --no-reload --interval 1

test: $(VENV)/.installed ## ruff, the migrations check and the whole test suite (PYTEST_ARGS)
	$(PY) -m ruff check .
	DJANGO_SETTINGS_MODULE=config.settings_test $(PY) manage.py makemigrations --check --dry-run
	$(PY) -m pytest $(PYTEST_ARGS)

# Ruff and pytest without the browser tests and the tests that start worker processes.
test-fast: $(VENV)/.installed ## ruff and the tests without browser and worker processes
	$(PY) -m ruff check .
	$(PY) -m pytest -m "not browser and not worker" $(PYTEST_ARGS)

lint: $(VENV)/.installed ## ruff
	$(PY) -m ruff check .

bench: $(VENV)/.installed ## the benchmarks: LLM runs, ratings, pages, imports, labelling, a day in the browser
	$(PY) scripts/bench.py $(BENCH_ARGS)
	$(PY) scripts/bench_batch.py
	$(PY) scripts/bench_ratings.py
	$(PY) scripts/bench_pairing.py
	$(PY) scripts/bench_pairing.py --sweep
	$(PY) scripts/bench_serve.py
	@# Every GET route of the resolver; ends with the route count and the misses (p95 > 50 ms or > 10 queries).
	$(PY) scripts/bench_pages.py --items 2000 --runs 5
	$(PY) scripts/bench_label_efficiency.py
	$(PY) scripts/bench_label_efficiency.py --settings
	@# Every role's day in Chromium on the demo data: responses over 0.5 s of server time and the ten slowest.
	$(PY) scripts/bench_day.py
	@# Enter to the next comparison painted, in Chromium, labelling 60 comparisons by key (100,000 items: the default).
	$(PY) scripts/bench_labelling.py --items 20000 --labels 60
	d=$$(mktemp -d) && export DEBUG=1 DATABASE_URL=sqlite:///$$d/bench.sqlite3 && $(PY) manage.py migrate -v 0 && \
		$(PY) scripts/bench_import.py --items 2000 --release 500

messages: $(VENV)/.installed ## extract and compile the translations (needs GNU gettext)
	DJANGO_SETTINGS_MODULE=config.settings_test $(PY) manage.py makemessages -l zh_Hans --ignore=.venv --no-obsolete
	DJANGO_SETTINGS_MODULE=config.settings_test $(PY) manage.py compilemessages --ignore=.venv

clean: ## remove the virtual environment and the demo database
	rm -rf $(VENV) db.sqlite3
