# spf developer tasks. On a fresh Debian machine (python3, gcc and make only), `make demo` and
# `make test` install what is missing: system packages via apt-get, Python packages in .venv.

SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.stamp
SRC_DIRS := spf tests benchmarks examples

# System tools the test suite uses: `command=package[,package...]`. A pair is installed with
# apt-get only when its command is missing (mpi4py builds against openmpi's mpicc).
APT_PACKAGES := dot=graphviz mpicc=openmpi-bin,libopenmpi-dev

# Run apt-get as root, through sudo when not root and sudo exists, otherwise not at all.
SUDO := $(shell if [ "$$(id -u)" -eq 0 ]; then echo; \
	elif command -v sudo >/dev/null 2>&1; then echo sudo; else echo none; fi)

.PHONY: help sysdeps venv demo test lint format typecheck bench bench-sysdeps docs notebooks clean distclean

help:
	@echo "make demo       set up (apt-get tools if missing, .venv) and run the demo"
	@echo "make test       set up, then lint, typecheck and the test suite"
	@echo "make lint       ruff check        make format     ruff format"
	@echo "make typecheck  mypy --strict     make bench      python -m spf.bench + MPI blur scaling"
	@echo "                (make bench apt-gets python3-petsc4py-real for the MPI benchmark if missing)"
	@echo "make docs       Sphinx HTML in docs/_build/html (warnings are errors)"
	@echo "make notebooks  re-execute examples/*.ipynb in place (nbconvert), refreshing their outputs"
	@echo "make clean      caches and build outputs (distclean also removes .venv)"

# Missing commands -> their Debian packages; also python3-venv when `python3 -m venv` cannot
# bootstrap pip (Debian splits ensurepip out), and python3-dev when Python.h is missing (the
# replayed calls' look helper, spf.runtime.plan_look, compiles against it). Silent when
# everything is present.
sysdeps:
	@missing=""; \
	for pair in $(APT_PACKAGES); do \
		command -v "$${pair%%=*}" >/dev/null 2>&1 || missing="$$missing $${pair#*=}"; \
	done; \
	$(PYTHON) -c 'import ensurepip, venv' >/dev/null 2>&1 || missing="$$missing python3-venv"; \
	$(PYTHON) -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
		>/dev/null 2>&1 || missing="$$missing python3-dev"; \
	missing="$$(echo $${missing//,/ })"; \
	[ -z "$$missing" ] && exit 0; \
	if ! command -v apt-get >/dev/null 2>&1 || [ "$(SUDO)" = none ]; then \
		echo "sysdeps: cannot install ($$missing): need apt-get and root or sudo;" \
			"tests that need them will be skipped" >&2; \
		exit 0; \
	fi; \
	echo "sysdeps: installing $$missing"; \
	$(SUDO) apt-get update -qq && \
	$(SUDO) env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends $$missing

venv: $(STAMP)

# The venv's own pip (ensurepip's: 23.2.1 with Python 3.11.7 here) installs spf editable (PEP 660,
# pip >= 21.3): upgrading it first was one more download and install before every fresh setup.
# pip byte-compiles what it installs on one core (~24 s of its ~48 s CPU for '.[dev]'), and
# compileall on every core still spent 24 s CPU on all 8,475 modules of the venv: neither runs.
# Python writes each module's bytecode when it is first imported (the Python steps of `make test`
# run without PYTHONDONTWRITEBYTECODE): the suite imports 1,552 of them, 4.1 s CPU to compile
# (measured on this loaded machine), twice at most (the two xdist workers import them at once).
$(STAMP): pyproject.toml | sysdeps
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --no-compile -e '.[dev]'
	@touch $@

demo: sysdeps venv
	$(BIN)/python -m spf.demo

# The suite runs on every core (pytest-xdist; `auto` counts physical cores) and prints its 25
# slowest tests. `worksteal`: a worker that runs out of tests takes the other's last ones (the
# `slow` tests are run first: tests/conftest.py), so both finish together. `make test
# PYTEST_ARGS=-n0` runs it in one process.
PYTEST_ARGS ?= -n auto --dist worksteal --durations=25

# Python writes bytecode (__pycache__, which `make clean` removes) even where
# PYTHONDONTWRITEBYTECODE is set, as in some containers: without it every fresh interpreter the
# suite starts (example scripts, each MPI rank, CLI and bench runs, docs shell blocks) compiles
# spf's modules from source again (~1 s CPU a rank on the loaded 2-core machine), and each
# xdist worker rewrites every test module's asserts at each run (collection 13.8 -> 4.1 s CPU).
#
# mypy --strict is a test of the suite (tests/test_typecheck.py, ~64 s of one core on a fresh
# clone): run before pytest, it left the other core idle but for a --collect-only pass writing
# the bytecode; as the suite's longest test it runs first, beside the others.
#
# The suite builds kernels at gcc's -O0 (SPF_TEST_OPT_LEVEL, spf.runtime.build.default_opt_flags):
# -O3 was a fifth of the suite's CPU; -O1 compiled spf's kernels in under half its time and
# -O0 in about 60% of -O1's (80 sources of a suite's cache, two interleaved runs), to the same
# bits (tests/e2e/test_opt_level_bitwise.py: -O0 and -O1 against -O3); the suite's kernels run on
# small inputs, so their slower code costs less than the compiles save. The tests of vectorised
# schedules and of the flags themselves keep -O3 (marker `default_flags`). `make test
# SPF_TEST_OPT_LEVEL=` runs every test at -O3.
SPF_TEST_OPT_LEVEL ?= 0
PYTEST := env -u PYTHONDONTWRITEBYTECODE SPF_TEST_OPT_LEVEL=$(SPF_TEST_OPT_LEVEL) \
	$(BIN)/python -m pytest
MYPY := $(BIN)/mypy spf

test: sysdeps venv lint
	$(PYTEST) -q $(PYTEST_ARGS)

lint: venv
	$(BIN)/ruff check $(SRC_DIRS)

format: venv
	$(BIN)/ruff format $(SRC_DIRS)

typecheck: venv
	$(MYPY)

# `make bench` only (the tests never need it): PETSc for the MPI benchmark's comparison, Debian's
# petsc4py for the system python (its own mpiexec job), installed when that python lacks it.
PETSC_PACKAGE := python3-petsc4py-real
# The competitors of pyproject's `bench` extra, installed one by one (each optional).
BENCH_PACKAGES := mkl halide finch-tensor torch-mlir apache-tvm apache-tvm-ffi==0.1.14.post0 xgboost \
	psutil cloudpickle

bench-sysdeps:
	@/usr/bin/python3 spf/bench/petsc_mpi.py --probe >/dev/null 2>&1 && exit 0; \
	if ! command -v apt-get >/dev/null 2>&1 || [ "$(SUDO)" = none ]; then \
		echo "bench-sysdeps: cannot install $(PETSC_PACKAGE): need apt-get and root or sudo;" \
			"the MPI benchmark says PETSc is not installed" >&2; \
		exit 0; \
	fi; \
	echo "bench-sysdeps: installing $(PETSC_PACKAGE)"; \
	$(SUDO) apt-get update -qq && \
	$(SUDO) env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends $(PETSC_PACKAGE) || \
		echo "bench-sysdeps: $(PETSC_PACKAGE) not installed; the MPI benchmark goes on without PETSc" >&2

bench: venv bench-sysdeps
	@for pkg in $(BENCH_PACKAGES); do \
		$(BIN)/python -m pip install --quiet "$$pkg" >/dev/null 2>&1 || \
			echo "bench: $$pkg not installable here; its rows are left out" >&2; \
	done
	$(BIN)/python -m spf.bench $(BENCH_ARGS)
	$(BIN)/python benchmarks/mpi_blur.py

docs: venv
	$(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html

# The notebooks' stored outputs are what a reader sees without running them (on GitHub, say).
notebooks: sysdeps venv
	$(BIN)/python -m nbconvert --to notebook --execute --inplace examples/*.ipynb

clean:
	rm -rf build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis docs/_build
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
