# The two commands the README promises:  `make` (the main job) and `make test`.
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
ADDR   ?= 127.0.0.1:8000
export NO_MKDOCS_2_WARNING := 1

.PHONY: run verify site serve test browser bench clean lock

run: verify serve  ## set up, verify what is not up to date, build and serve the site

$(STAMP): pyproject.toml requirements.lock
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c requirements.lock -e '.[test]'
	touch $(STAMP)

lock:  ## pin every dependency's exact version from a fresh install of pyproject.toml
	rm -rf build/lock-venv && python3 -m venv build/lock-venv
	build/lock-venv/bin/pip install -q -e '.[test]'
	{ sed -n '1,3p' requirements.lock; build/lock-venv/bin/pip freeze --exclude-editable; } > build/requirements.lock
	mv build/requirements.lock requirements.lock && rm -rf build/lock-venv

verify: $(STAMP)  ## run the checks whose result is missing or stale; failures are evidence, not a build error
	$(PY) -m pytest verify -n 2 --stale -q; rc=$$?; test $$rc -le 1 -o $$rc -eq 5  # 1: a check failed (evidence); 5: all fresh

site: $(STAMP)
	$(VENV)/bin/mkdocs build --strict

serve: site
	$(VENV)/bin/mkdocs serve --dev-addr $(ADDR)

browser:  ## Debian's chromium for the browser tests (Playwright drives it; nothing is downloaded at run time)
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null)

test: $(STAMP) browser  ## the engine's tests
	$(PY) -m pytest tests -n 2 -q

bench: $(STAMP)
	for b in bench/bench_*.py; do $(PY) $$b || exit 1; done

clean:
	rm -rf build
