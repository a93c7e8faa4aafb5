# Phalanx — every target does its own set-up on a fresh machine (venv, pip, apt when root).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
APT_PACKAGES := graphviz mlir-22-tools chromium clang-22 openmpi-bin libopenmpi-dev python3-simgrid libsimgrid-dev

.PHONY: help setup apt-deps demo test bench fuzz lint antlr clean

help: ## list the targets
	@grep -E '^[a-z]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-8s %s\n", $$1, $$2}'

setup: apt-deps $(STAMP) ## install system packages (as root) and the venv with phalanx in it

apt-deps: # first: mpi4py builds against libopenmpi-dev
	@bash .ci/apt-deps $(APT_PACKAGES)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

demo: setup ## compile and simulate examples/transpose.phx on ideal:16, report in out/demo/
	$(BIN)/phalanx run examples/transpose.phx --target ideal:16 --report out/demo
	@echo "open out/demo/index.html"

test: setup ## run the test suite
	$(BIN)/python -m pytest tests

bench: setup ## run the benchmarks, results in bench/results*.json
	$(BIN)/python bench/run.py --out bench/results.json
	$(BIN)/python bench/compiler.py
	$(BIN)/python bench/iwarp.py
	$(BIN)/python bench/bokhari.py
	$(BIN)/python bench/native.py

fuzz: setup ## 20,000 fuzzed programs through both parsers, the compiler and the simulator, results in bench/results-fuzz.json
	$(BIN)/python bench/fuzz.py

lint: setup ## ruff over the package and tests
	$(BIN)/ruff check .

antlr: ## regenerate grammar/_antlr/ from grammar/Phalanx.g4 (needs java; fetches the pinned ANTLR 4.13.2 jar)
	bash grammar/tools/generate_antlr.sh

clean: ## remove the venv and outputs
	rm -rf $(VENV) out .pytest_cache
