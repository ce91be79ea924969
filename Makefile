# opsgraph — the two commands a newcomer runs: `make run` and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test check lint types unit bench schema clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

## run: install, start the embedded store, seed the demo tenant, serve on 127.0.0.1:8000
run: $(STAMP)
	$(BIN)/opsgraph serve --host $(HOST) --port $(PORT)

## test: install, then lint, types and the test suite (what CI runs)
test: $(STAMP) lint types unit

check: test

lint: $(STAMP)
	$(BIN)/ruff check src tests

types: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest -m "not slow" -n 2 tests

## bench: the performance benchmark (ratios measured side by side)
bench: $(STAMP)
	$(BIN)/opsgraph bench

schema: $(STAMP)
	$(BIN)/python -m opsgraph.registry.schema

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .ruff_cache .pytest_cache
