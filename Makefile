# The two commands a newcomer needs: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DATA_DIR ?= ./.wasdi-data
# HOST and PORT reach `serve` only when given (`make run PORT=18081`): otherwise the settings decide
# (WASDI_SERVER_PORT, a --config file; default 127.0.0.1:8080).
SERVE_ADDRESS = $(if $(HOST), --host $(HOST))$(if $(PORT), --port $(PORT))
# Four workers on two cores: a test waiting on a server, a subprocess or a deadline leaves its core to another
# (with two, the processors were 80 % busy over a run; with three, 94 %), and beside another busy process the
# tests keep a larger share of the processors (with one CPU-bound process running: 10:48 with three, 9:24 with
# four). A module whose tests share one costly fixture is named in tests/conftest.py's ONE_WORKER and runs on one
# worker; the longest slow tests (its FIRST) start first and the quick ones fill the end.
PYTEST_WORKERS ?= 4
PYTEST = $(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadgroup
# Python's bytecode caches on: with PYTHONDONTWRITEBYTECODE set (some shells and CI images set it), every test
# worker, server, CLI command and boxed reader would compile this project's modules (and pytest rewrite every
# test module) again at each start: collecting the tests alone took 12 s instead of 5.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run test test-quick test-install lint typecheck async docs bench fuzz clean stage

# The box's world stage, compiled (src/wasdi_server/launcher/box/stage.c): a boxed run starts faster through it.
# Where there is no C compiler the box uses its Python stage, which confines the same way, only slower.
CC ?= cc
STAGE := src/wasdi_server/launcher/box/wasdi-box-stage
STAGE_SOURCE := src/wasdi_server/launcher/box/stage.c

stage: $(STAGE)

$(STAGE): $(STAGE_SOURCE)
	@if command -v $(CC) >/dev/null 2>&1; then \
		echo "$(CC) $(STAGE_SOURCE) -> $(STAGE)"; \
		$(CC) -O2 -Wall -Wextra -Werror -o $@ $(STAGE_SOURCE); \
	else \
		echo "no C compiler ($(CC)): the box's compiled stage is not built, and boxed runs start through its Python" \
		     "stage (the same walls, about 20 ms slower a run). Install gcc (apt-get install gcc) and run 'make stage'."; \
	fi

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.stamp-run: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[all]'
	touch $@
	@$(MAKE) --no-print-directory stage

$(VENV)/.stamp-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@ $(VENV)/.stamp-run
	@$(MAKE) --no-print-directory stage

run: $(VENV)/.stamp-run stage
	$(BIN)/wasdi-server catalogue sample --if-empty --data-dir $(DATA_DIR)
	$(BIN)/wasdi-server serve --data-dir $(DATA_DIR)$(SERVE_ADDRESS) --init-admin

test: $(VENV)/.stamp-test stage
	$(BIN)/ruff check src tests bench examples tools
	$(BIN)/mypy --strict src/wasdi_sdk src/wasdi_server src/wasdi_cli src/wasdi_command_line
	@# The layers: an import that points up (type-only ones too) fails here ([tool.importlinter] of pyproject.toml).
	$(BIN)/lint-imports
	@# Every test in one run: the slow ones (tests/conftest.py's SLOW) and the quick ones (make test-quick's); the
	@# fifteen longest are listed at the end (what to look at first when the run grows past ten minutes).
	$(PYTEST) -m 'not install' --durations=15 tests
	@# The workers of -n swallow prints: the counts are printed by one more, quick, run.
	@$(BIN)/python -m pytest tests/test_coverage.py::test_counts -q -s --no-header | head -2

# The inner loop: ruff, then every test but the slow ones (no mypy, no end-to-end servers, no docs build).
test-quick: $(VENV)/.stamp-test stage
	$(BIN)/ruff check src tests bench examples tools
	$(PYTEST) -m 'not slow and not install' tests

test-install: $(VENV)/.stamp-test
	$(BIN)/python -m pytest -m install tests/packaging

lint: $(VENV)/.stamp-test
	$(BIN)/ruff check src tests bench examples tools
	$(BIN)/lint-imports

typecheck: $(VENV)/.stamp-test
	$(BIN)/mypy --strict src/wasdi_sdk src/wasdi_server src/wasdi_cli src/wasdi_command_line

# The documentation site, into site/ (the strict build also runs in make test: tests/docs/test_site.py).
docs: $(VENV)/.stamp-test
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict

# The async client is generated from the sync one (tools/gen_async.py); a test fails while it is stale.
async: $(VENV)/.stamp-test
	$(BIN)/python tools/gen_async.py

fuzz: $(VENV)/.stamp-test
	WASDI_FUZZ_EXAMPLES=300 $(BIN)/python -m pytest -n 2 tests/server/test_fuzz.py

bench: $(VENV)/.stamp-test stage
	$(BIN)/python bench/server_overhead.py

clean:
	rm -rf $(VENV) build dist site src/*.egg-info $(STAGE)
