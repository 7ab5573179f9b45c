# Two commands from a fresh clone: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[test,io]"
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m lazyarr demo

test: $(STAMP)
	$(PY) -m ruff check lazyarr tests bench
	$(PY) -m pytest -n 2 -q

lint: $(STAMP)
	$(PY) -m ruff check lazyarr tests bench
	$(PY) -m ruff format --check lazyarr tests bench

bench: $(STAMP)
	$(PY) -m pip install -q -e ".[test,io,bench]"
	$(PY) bench/overhead.py
	$(PY) bench/local.py
	$(PY) bench/distributed_placement.py
	$(PY) bench/scale.py
	$(PY) bench/algorithms.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
