# Phalanx — every target does its own set-up on a fresh machine (venv, pip, apt when root).
PYTHON ?= python3
# rustup installs cargo in ~/.cargo/bin, which a non-login shell may not have on its PATH
export PATH := $(HOME)/.cargo/bin:$(PATH)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
CORE   := runtime/engine_core
CORE_STAMP := $(VENV)/.engine-core
FILES  := $(VENV)/.package-files
PACKAGES := grammar compiler runtime targets
APT_PACKAGES := graphviz mlir-22-tools chromium clang-22 openmpi-bin libopenmpi-dev python3-simgrid libsimgrid-dev

.PHONY: help setup apt-deps demo test bench fuzz lint antlr clean FORCE

help: ## list the targets
	@grep -E '^[a-z]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-8s %s\n", $$1, $$2}'

setup: apt-deps $(STAMP) $(CORE_STAMP) ## install system packages (as root) and the venv with phalanx and its native engine core in it

apt-deps: # first: mpi4py builds against libopenmpi-dev
	@bash .ci/apt-deps $(APT_PACKAGES)

# phalanx is installed in setuptools' strict editable mode: the venv sees what a wheel ships (the
# packages and data pyproject.toml lists, no tests/ or bench/) through links to the files, made at
# install time in build/__editable__.*. So a module added, moved or removed needs a reinstall: FILES
# lists the package's files and is rewritten (making the install stale) only when that list changes
# or the links are gone.
$(STAMP): pyproject.toml $(FILES)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]' --config-settings editable_mode=strict
	touch $(STAMP)

# The native event core (docs/engine.md): a Rust crate built by maturin (from PyPI, in pip's build
# environment) with PyO3 (from crates.io), installed into the venv as `phalanx_engine_core`;
# rebuilt when its sources change. Needs cargo (rustup.rs) on the PATH. The wheel is kept in
# build/engine-core-wheel/<source key> (.ci/engine-core-key), where .ci/wheel-check finds it.
$(CORE_STAMP): $(STAMP) $(CORE)/Cargo.toml $(CORE)/Cargo.lock $(CORE)/pyproject.toml $(wildcard $(CORE)/src/*.rs)
	rm -rf build/engine-core-wheel
	$(BIN)/pip wheel -q --no-deps -w build/engine-core-wheel/$$(bash .ci/engine-core-key) ./$(CORE)
	$(BIN)/pip install -q --force-reinstall build/engine-core-wheel/*/phalanx_engine_core-*.whl
	touch $(CORE_STAMP)

$(FILES): FORCE
	@mkdir -p $(VENV)
	@{ ls *.py; find $(PACKAGES) -name __pycache__ -prune -o -type f -print; } | LC_ALL=C sort > $@.new
	@if cmp -s $@.new $@ && ls -d build/__editable__.phalanx-*/phalanx >/dev/null 2>&1; \
	then rm $@.new; else mv $@.new $@; fi

FORCE:

demo: setup ## compile and simulate examples/transpose.phx on ideal:16, report in out/demo/
	$(BIN)/phalanx run examples/transpose.phx --target ideal:16 --report out/demo
	@echo "open out/demo/index.html"

test: setup ## run the test suite
	$(BIN)/python -m pytest -n auto --dist worksteal --durations=40 tests  # the slowest 40: tests/slow_first.txt

bench: setup ## run the benchmarks, results in bench/results*.json, docs/fidelity.md, docs/regret.md and docs/efficiency.md
	$(BIN)/python bench/run.py --out bench/results.json
	$(BIN)/python bench/report.py
	$(BIN)/python bench/compiler.py
	$(BIN)/python bench/iwarp.py
	$(BIN)/python bench/bokhari.py
	$(BIN)/python bench/group_barriers.py
	$(BIN)/python bench/native.py
	$(BIN)/python bench/collectives.py
	$(BIN)/python bench/calibrate_ksr1.py
	$(BIN)/python bench/ideal_direct.py
	$(BIN)/python bench/regret.py
	$(BIN)/python bench/regret.py --programs
	$(BIN)/python bench/fidelity.py
	$(BIN)/python bench/efficiency.py
	$(BIN)/python bench/engine.py
	$(BIN)/python bench/compile_scale.py

fuzz: setup ## 20,000 fuzzed programs through both parsers, the compiler and the simulator, results in bench/results-fuzz.json
	$(BIN)/python bench/fuzz.py

lint: setup ## ruff over the package and tests
	$(BIN)/ruff check .

antlr: ## regenerate grammar/_antlr/ from grammar/Phalanx.g4 (needs java; fetches the pinned ANTLR 4.13.2 jar)
	bash grammar/tools/generate_antlr.sh

clean: ## remove the venv and outputs
	rm -rf $(VENV) out .pytest_cache build/__editable__.* build/engine_core-target build/engine-core-wheel *.egg-info
