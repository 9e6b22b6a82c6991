# The two commands a newcomer needs: `make run` and `make test`. Both create .venv on first use
# and are quick when it is already up to date (the stamp follows pyproject.toml).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
DEMO   := fixtures/demo

.PHONY: run test lint types pytest install clean bench services

install: $(STAMP)

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python >= 3.11 is required")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

# Until the web app exists, the main job is a check of the demo repository (built as a real git
# repository from fixtures/demo/tree). Exit 1 means "a target is refused", which is the point of
# the demo; only a usage or configuration error (exit 2) fails `make run`.
run: $(STAMP)
	@$(BIN)/python -m bot.demo $(DEMO)
	@$(BIN)/ichor-bot check $(DEMO)/repo --rev HEAD; rc=$$?; [ $$rc -le 1 ] || exit $$rc

lint: $(STAMP)
	$(BIN)/ruff check bot workers tests bench scripts
	$(BIN)/ruff format --check bot workers tests bench scripts

types: $(STAMP)
	$(BIN)/mypy --strict bot workers

# Tests talk to Redis on 127.0.0.1:6379; start one if the machine has none running.
services:
	@$(BIN)/python -c 'import redis; redis.Redis(socket_connect_timeout=1).ping()' 2>/dev/null \
	  || redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no

pytest: $(STAMP) services
	$(BIN)/pytest -q

test: lint types pytest

# Speed and memory as ratios against baselines measured in the same run (never asserted).
bench: $(STAMP)
	$(BIN)/python bench/bench_gate.py
	$(BIN)/python bench/bench_ingress.py

clean:
	rm -rf $(VENV) $(DEMO)/repo .pytest_cache .mypy_cache .ruff_cache
