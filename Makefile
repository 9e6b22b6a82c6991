# The two commands a newcomer needs: `make run` and `make test`. Both create .venv on first use
# and are quick when it is already up to date (the stamp follows pyproject.toml).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
DEMO   := fixtures/demo

.PHONY: run test lint types docs pytest install clean bench services browser

install: $(STAMP)

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python >= 3.11 is required")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

# The embedded default: build the demo repository and check it (exit 1 means "a target is
# refused", the point of the demo), then serve webhooks on 127.0.0.1:$(PORT) with the in-process
# queue and the `local` forge (no network, no Redis). Once the server answers, a signed
# pull_request delivery for the demo pull request is posted; its check shows on the status page
# and in `ichor-bot results`. The demo secret is set here, for this command only; the app
# itself has no default. A port already taken stops everything before it starts, in one line.
DEMO_SECRET ?= demo-secret
DATA_DIR    ?= .ichor-data
PORT        ?= 8000
URL         := http://127.0.0.1:$(PORT)
run: $(STAMP)
	@$(BIN)/python -c 'import sys; from bot.cli.processes import port_problem as p; \
	  e = p("127.0.0.1", int(sys.argv[1])); sys.exit(e and f"make run: {e}")' $(PORT)
	@$(BIN)/python -m bot.cli.demo $(DEMO) $(DATA_DIR)/demo-repos
	@$(BIN)/ichor-bot check $(DEMO)/repo --rev HEAD; rc=$$?; [ $$rc -le 1 ] || exit $$rc
	@echo
	@echo "Serving on $(URL) (status page at /). The demo pull request is posted"
	@echo "once it answers; then try: ICHOR_DATA_DIR=$(DATA_DIR) $(BIN)/ichor-bot results"
	@( for i in $$(seq 100); do \
	     $(BIN)/python -c 'import urllib.request as u; u.urlopen("$(URL)/healthz", timeout=1)' 2>/dev/null && break; \
	     sleep 0.2; done; \
	   $(BIN)/ichor-bot replay $(DATA_DIR)/demo-repos/pull_request__opened.json --forge github --secret $(DEMO_SECRET) --url $(URL) ) & \
	 poller=$$!; \
	 ICHOR_GITHUB_WEBHOOK_SECRET=$${ICHOR_GITHUB_WEBHOOK_SECRET:-$(DEMO_SECRET)} \
	 ICHOR_GITLAB_WEBHOOK_SECRET=$${ICHOR_GITLAB_WEBHOOK_SECRET:-$(DEMO_SECRET)} \
	 ICHOR_GITEA_WEBHOOK_SECRET=$${ICHOR_GITEA_WEBHOOK_SECRET:-$(DEMO_SECRET)} \
	 ICHOR_DATA_DIR=$(DATA_DIR) ICHOR_LOCAL_REPOS=$(DATA_DIR)/demo-repos \
	 $(BIN)/ichor-bot serve --host 127.0.0.1 --port $(PORT); rc=$$?; \
	 kill $$poller 2>/dev/null; exit $$rc

lint: $(STAMP)
	$(BIN)/ruff check bot workers tests bench scripts
	$(BIN)/ruff format --check bot workers tests bench scripts

types: $(STAMP)
	$(BIN)/mypy --strict bot workers tests
	$(BIN)/mypy --strict bench scripts

# The documentation site (mkdocs.yml): docs/ as HTML under build/site. --strict turns every
# warning into a failure: a link to no page, an anchor no heading makes, a page not in the nav
# (not with --quiet, which hides the warnings it counts).
docs: $(STAMP)
	$(BIN)/mkdocs build --strict

# Tests talk to Redis on 127.0.0.1:6379; start one if the machine has none running.
services:
	@$(BIN)/python -c 'import redis; redis.Redis(socket_connect_timeout=1).ping()' 2>/dev/null \
	  || redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no

# The status page's browser tests drive Debian's chromium: install it when apt-get can (they
# are skipped, with the reason, when it is still missing; under CI=true they fail instead).
browser:
	@command -v chromium >/dev/null || ! command -v apt-get >/dev/null \
	  || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } \
	     >/dev/null 2>&1 \
	  || echo "chromium could not be installed: the browser tests will be skipped"

# The suite waits on servers, workers, git and Redis far more than it computes: it runs in
# PYTEST_WORKERS processes (pytest-xdist), each on a Redis database of its own
# (tests/support/redis_url.py). PYTEST_WORKERS=0 runs it in one process.
PYTEST_WORKERS ?= 4
pytest: $(STAMP) services browser
	$(BIN)/pytest -q -n $(PYTEST_WORKERS) --dist worksteal

test: lint types docs pytest

# Speed and memory as ratios against baselines measured in the same run (never asserted).
bench: $(STAMP)
	$(BIN)/python bench/bench_gate.py
	$(BIN)/python bench/bench_ignore.py
	$(BIN)/python bench/bench_ingress.py
	$(BIN)/python bench/bench_check.py
	$(BIN)/python bench/bench_changes.py
	$(BIN)/python bench/bench_unused_ignore.py
	$(BIN)/python bench/bench_workers.py

clean:
	rm -rf $(VENV) $(DEMO)/repo build/site .pytest_cache .mypy_cache .ruff_cache
