# opsgraph — the two commands a newcomer runs: `make run` and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test check lint types unit deploy-check bench test-llm eval-local eval-knowledge schema clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	$(BIN)/python -m opsgraph.knowledge.quantized_model  # the embedder's model, once per machine
	touch $(STAMP)

## run: install, start the embedded store, seed the demo tenant, serve on 127.0.0.1:8000
run: $(STAMP)
	$(BIN)/opsgraph serve --host $(HOST) --port $(PORT)

## test: install, then lint, types and the test suite (what CI runs)
test: $(STAMP) lint types deploy-check unit

check: test

lint: $(STAMP)
	$(BIN)/ruff check src tests

types: $(STAMP)
	$(BIN)/mypy

## deploy-check: hadolint on the Dockerfile; cfn-lint on template.yaml, as written and after
## the SAM transform (offline, no AWS account)
deploy-check: $(STAMP)
	$(BIN)/python -m tests.deploy.validate

# the JS langgraph-sdk of tests/e2e/test_agent_protocol_js.py, pinned by its lock file
# (skipped, saying so, where npm is missing)
JS_STAMP := tests/e2e/js/node_modules/.installed
$(JS_STAMP): tests/e2e/js/package-lock.json
	if command -v npm >/dev/null; then \
	  npm ci --prefix tests/e2e/js --no-audit --no-fund --silent && touch $(JS_STAMP); fi

unit: $(STAMP) $(JS_STAMP)
	$(BIN)/pytest -m "not slow" -n 2 tests

## bench: the performance benchmark (ratios measured side by side)
bench: $(STAMP)
	$(BIN)/opsgraph bench

## test-llm: the slow suite on a real local model (first run builds it: ~15 min)
LLM_PORT ?= 8799
test-llm: $(STAMP)
	../shared/scripts/local-llm prepare
	../shared/scripts/local-llm serve $(LLM_PORT) > .venv/local-llm.log 2>&1 & echo $$! > .venv/local-llm.pid; \
	for i in $$(seq 1 120); do curl -sf http://127.0.0.1:$(LLM_PORT)/v1/models >/dev/null && break; sleep 1; done; \
	OPENAI_BASE_URL=http://127.0.0.1:$(LLM_PORT)/v1 OPSGRAPH_TEST_LLM_URL=http://127.0.0.1:$(LLM_PORT)/v1 \
	  OPENAI_API_KEY=local $(BIN)/pytest -m slow -p no:xdist tests/slow; rc=$$?; \
	kill $$(cat .venv/local-llm.pid) 2>/dev/null; exit $$rc

## eval-local: the eval suite on an OpenAI-compatible model at OPENAI_BASE_URL (default: the
## local model of `../shared/scripts/local-llm serve 8799`; the product never needs it)
OPENAI_BASE_URL ?= http://127.0.0.1:$(LLM_PORT)/v1
OPENAI_API_KEY ?= local
eval-local: $(STAMP)
	OPENAI_BASE_URL=$(OPENAI_BASE_URL) OPENAI_API_KEY=$(OPENAI_API_KEY) \
	  $(BIN)/opsgraph eval --model openai:local --report evals/reports/local-$$(date +%Y%m%d-%H%M)

## eval-knowledge: the knowledge question set, the knowledge agent against 'retrieve top-5 +
## answer', on the same OpenAI-compatible model (slow: ~140 answers; not part of `make test`)
eval-knowledge: $(STAMP)
	OPENAI_BASE_URL=$(OPENAI_BASE_URL) OPENAI_API_KEY=$(OPENAI_API_KEY) \
	  $(BIN)/opsgraph eval --dataset evals/datasets/knowledge --model openai:local \
	  --report evals/reports/knowledge-local-$$(date +%Y%m%d-%H%M)

schema: $(STAMP)
	$(BIN)/python -m opsgraph.registry.schema

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .ruff_cache .pytest_cache
