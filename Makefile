# Two commands: `make run` and `make test`. Everything else is a helper.
PYTHON ?= $(shell scripts/find-python)
VENV := .venv
PY := $(VENV)/bin/python
WORKERS ?= 1
PORT ?= 8000

.PHONY: run test test-postgres lint audit bench clean-venv

$(VENV)/.installed: requirements.lock pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.lock
	touch $@

run: $(VENV)/.installed
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput --verbosity 0
	$(PY) manage.py bootstrap
	$(PY) manage.py serve --workers $(WORKERS) --port $(PORT)

test: lint
	$(PY) -m pytest

# vulture: dead code (its settings and the names only Django or a template uses: pyproject.toml).
lint: $(VENV)/.installed
	$(PY) -m ruff check .
	$(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/vulture

# Every pin in requirements.lock against PyPI's vulnerability records (needs pypi.org).
audit:
	$(PYTHON) scripts/audit_deps.py requirements.lock

clean-venv:
	rm -rf $(VENV)
