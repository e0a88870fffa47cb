# The two commands the README promises:  `make` (the main job) and `make test`.
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
ADDR   ?= 127.0.0.1:8000
export NO_MKDOCS_2_WARNING := 1

.PHONY: run verify site serve test browser slurm bench clean lock wheelhouse gpu-evidence

run: verify serve  ## set up, verify what is not up to date, build the site once (strict) and serve it

$(STAMP): pyproject.toml requirements.lock
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c requirements.lock -e '.[test]'
	$(PY) -m compileall -q src >/dev/null  # the bytecode a first import writes, where PYTHONDONTWRITEBYTECODE is set (0.3-0.4 CPU s a command here)
	touch $(STAMP)

lock:  ## pin every dependency's exact version from a fresh install of pyproject.toml
	rm -rf build/lock-venv && python3 -m venv build/lock-venv
	build/lock-venv/bin/pip install -q -e '.[test]'
	{ sed -n '1,3p' requirements.lock; build/lock-venv/bin/pip freeze --exclude-editable; } > build/requirements.lock
	mv build/requirements.lock requirements.lock && rm -rf build/lock-venv

verify: $(STAMP)  ## run the checks whose result is missing or stale, slow ones aside (pytest verify -m slow); failures are evidence, not a build error
	$(PY) -m pytest verify -n 2 --dist loadgroup --stale -q; rc=$$?; test $$rc -le 1 -o $$rc -eq 5  # 1: a check failed (evidence); 5: all fresh; loadgroup: the checks of one experiment: on one worker

site: $(STAMP)  ## build the site strictly into build/site (its pages work opened from disk)
	$(VENV)/bin/mkdocs build --strict

serve: $(STAMP)  ## build the site once, strictly, and serve it with live reload (mkdocs serve builds in memory)
	$(VENV)/bin/mkdocs serve --strict --dev-addr $(ADDR)

browser:  ## Debian's chromium for the browser tests (Playwright drives it; nothing is downloaded at run time)
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null)

slurm:  ## Debian's SLURM and munge for the cluster tests (scripts/slurm-local.sh starts a one-node cluster from them)
	PATH="$$PATH:/usr/sbin" command -v slurmctld >/dev/null || (apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null)

test: $(STAMP) browser slurm  ## the engine's tests
	$(PY) -m pytest tests -n 2 --dist loadgroup -q  # loadgroup: the SLURM tests share one cluster on one worker

bench: $(STAMP)
	for b in bench/bench_*.py; do $(PY) $$b || exit 1; done

wheelhouse:  ## what a bare GPU machine lacks, as wheels for its Python 3.12 (build/wheelhouse, carried there)
	python3 scripts/gpu_evidence.py wheelhouse

gpu-evidence:  ## on the GPU machine: every cuda check in one run; the ledger and the log packed into $$OUT
	python3 scripts/gpu_evidence.py run

clean:
	rm -rf build
