PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: test
test: $(VENV)/.installed
	$(PY) -m pytest

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@
