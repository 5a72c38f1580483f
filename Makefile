# make demo  - watch two sessions hand off through the real hooks
# make test  - lint, unit, integration and end-to-end tests (needs python3 and npm), and the unit
#              tests on Python 3.9 and 3.13 when the machine has them
PYTHON ?= python3
VENV := .venv
CLAUDE_VERSION := 2.1.332
CLAUDE := .cache/claude-$(CLAUDE_VERSION)/node_modules/.bin/claude
# pytest-xdist: tests/conftest.py sets how many workers `auto` means
PYTEST_PARALLEL := -n auto --dist worksteal
# Where the tests make and remove their files (some 100 000 of them): your TMPDIR if you set one,
# else a tmpfs with room when there is one. On ext4, finding a free inode among those just removed
# cost more system time than the tests' own work.
TEST_TMPDIR := $(or $(TMPDIR),$(shell [ -w /dev/shm ] && df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 && $$4 > 2097152 {print "/dev/shm"}'))
TEST_ENV := $(if $(TEST_TMPDIR),TMPDIR=$(TEST_TMPDIR))

.PHONY: demo test lint unit unit-pythons pythons-ready bench e2e-cli clean

$(VENV)/.installed: requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --disable-pip-version-check -q -r requirements-dev.txt
	touch $@

$(CLAUDE):
	@command -v npm >/dev/null || { echo "make test needs npm for the end-to-end tests against Claude Code"; exit 1; }
	npm install --prefix .cache/claude-$(CLAUDE_VERSION) --no-audit --no-fund --loglevel=error \
		@anthropic-ai/claude-code@$(CLAUDE_VERSION)

e2e-cli: $(CLAUDE)

demo:
	$(PYTHON) scripts/demo.py

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check lib tests hooks scripts bench
	$(VENV)/bin/ruff format --check lib tests hooks scripts bench
	$(VENV)/bin/mypy

unit: $(VENV)/.installed
	$(TEST_ENV) $(VENV)/bin/pytest $(PYTEST_PARALLEL) -m "not e2e"

unit-pythons: $(VENV)/.installed
	$(TEST_ENV) $(VENV)/bin/python scripts/unit_on_pythons.py

pythons-ready: $(VENV)/.installed
	$(VENV)/bin/python scripts/unit_on_pythons.py --build-only

test:
	@$(MAKE) --no-print-directory -j 3 lint $(CLAUDE) pythons-ready  # the checks and the installs, side by side
	$(TEST_ENV) BLACKBOARD_CLAUDE=$(CURDIR)/$(CLAUDE) $(VENV)/bin/pytest $(PYTEST_PARALLEL)
	$(TEST_ENV) $(VENV)/bin/python scripts/unit_on_pythons.py

clean:
	rm -rf $(VENV) .cache

bench: $(VENV)/.installed $(CLAUDE)
	BLACKBOARD_CLAUDE=$(CURDIR)/$(CLAUDE) $(VENV)/bin/python bench/run.py
