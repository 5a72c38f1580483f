# make demo  - watch two sessions hand off through the real hooks
# make test  - lint, unit, integration and end-to-end tests (needs python3 and npm), and the unit
#              tests on Python 3.9 and 3.13 when the machine has them
PYTHON ?= python3
VENV := .venv
CLAUDE_VERSION := 2.1.330
CLAUDE := .cache/claude-$(CLAUDE_VERSION)/node_modules/.bin/claude
# pytest-xdist: tests/conftest.py sets how many workers `auto` means
PYTEST_PARALLEL := -n auto --dist worksteal

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
	$(VENV)/bin/pytest $(PYTEST_PARALLEL) -m "not e2e"

unit-pythons: $(VENV)/.installed
	$(VENV)/bin/python scripts/unit_on_pythons.py

pythons-ready: $(VENV)/.installed
	$(VENV)/bin/python scripts/unit_on_pythons.py --build-only

test: $(VENV)/.installed
	@$(MAKE) --no-print-directory -j 3 lint $(CLAUDE) pythons-ready  # the checks and the installs, side by side
	BLACKBOARD_CLAUDE=$(CURDIR)/$(CLAUDE) $(VENV)/bin/pytest $(PYTEST_PARALLEL)
	$(VENV)/bin/python scripts/unit_on_pythons.py

clean:
	rm -rf $(VENV) .cache

bench: $(VENV)/.installed $(CLAUDE)
	BLACKBOARD_CLAUDE=$(CURDIR)/$(CLAUDE) $(VENV)/bin/python bench/run.py
