# gradeline: `make demo` runs the main job end to end, `make test` runs the tests.
# Both install what they need on a fresh Debian/Ubuntu machine (apt packages as
# root, the venv, the grading image); every step is skipped when already done.
SHELL := /bin/bash
VENV ?= .venv
BIN := $(VENV)/bin
# Debian's python3 (not a pyenv one under /root): the sandbox uid and services
# started as other users must be able to read the interpreter.
PYTHON ?= /usr/bin/python3
APT_PACKAGES := python3 python3-venv bubblewrap debootstrap ca-certificates util-linux \
                postgresql libpq5
DEMO_DIR ?= demo

.PHONY: all demo test deps venv image lint unit clean

all: test

deps:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else echo "missing Debian packages:$$missing -- run: sudo apt-get install$$missing"; exit 1; fi; \
	fi

venv: $(VENV)/.installed
$(VENV)/.installed: pyproject.toml | deps
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

image: deps venv
	$(BIN)/gradeline image build

lint: venv
	$(BIN)/ruff check grader tests bench
	$(BIN)/mypy

unit: venv
	$(BIN)/pytest -q tests/unit

test: deps venv image lint
	GRADELINE_REQUIRE_SANDBOX=1 GRADELINE_REQUIRE_DB=1 $(BIN)/pytest -q

demo: deps venv image
	$(BIN)/gradeline check-env || true
	$(BIN)/gradeline check $$($(BIN)/gradeline examples)
	$(BIN)/gradeline corpus $(DEMO_DIR) --count 240 --seed 1
	$(BIN)/gradeline batch $(DEMO_DIR)/manifest.csv --out $(DEMO_DIR)/results.jsonl

clean:
	rm -rf $(VENV) $(DEMO_DIR) .pytest_cache .ruff_cache .mypy_cache
