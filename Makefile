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

# The interface's catalogs (locale/*/LC_MESSAGES/django.po), compiled whenever one changes.
MESSAGES := $(patsubst %.po,%.mo,$(wildcard locale/*/LC_MESSAGES/django.po))
%.mo: %.po $(VENV)/.installed
	$(PY) scripts/compile_messages.py

run: $(VENV)/.installed $(MESSAGES)
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput --verbosity 0
	$(PY) manage.py bootstrap
	$(PY) manage.py serve --workers $(WORKERS) --port $(PORT)

test: $(VENV)/.installed $(MESSAGES)
	$(PY) -m ruff check .
	$(VENV)/bin/lint-imports --no-cache
	$(PY) -m pytest

lint: $(VENV)/.installed
	$(PY) -m ruff check .
	$(VENV)/bin/lint-imports --no-cache

# Every pin in requirements.lock against PyPI's vulnerability records (needs pypi.org).
audit:
	$(PYTHON) scripts/audit_deps.py requirements.lock

clean-venv:
	rm -rf $(VENV)
