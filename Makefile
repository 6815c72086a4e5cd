PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PAGER := $(VENV)/bin/pager
AWS ?= aws
# The demo, the local server and the bench live in sim/, beside the package (not installed with it).
export PYTHONPATH := $(CURDIR)/sim$(if $(PYTHONPATH),:$(PYTHONPATH))

# SAM CLI: the one on PATH, or else our own copy in .venv-sam (installed from PyPI on first use).
SAM_VENV := .venv-sam
SAM_CLI_VERSION ?= 1.170.0
ifndef SAM
SAM := $(or $(shell command -v sam 2>/dev/null),$(SAM_VENV)/bin/sam)
endif
export SAM_CLI_TELEMETRY := 0

# sam build needs python3.13 (the Lambda runtime): a working python3.13 on PATH, or pyenv's.
# A pyenv shim that is on PATH but not selected fails `--version`, so each candidate is tried.
ifndef PYTHON313
PYTHON313 := $(firstword $(foreach p,\
	$(shell command -v python3.13 2>/dev/null) \
	$(shell pyenv which python3.13 2>/dev/null) \
	$(sort $(wildcard $(shell pyenv root 2>/dev/null)/versions/3.13.*/bin/python3.13)),\
	$(if $(shell $(p) -c 'import sys; print(sys.version_info[:2] == (3, 13))' 2>/dev/null | grep -x True),$(p))))
endif

.PHONY: test test-deep help lint-python demo serve bench lint build deploy check-layer sam clean setup doctor logs outputs remove

# `make` alone runs the tests, as it always has; `make help` lists every target.
.DEFAULT_GOAL := test

test: $(VENV)/.installed  ## the test suite (the default goal)
	$(PY) -m pytest

# The property tests searched anew (the suite draws the same examples each run), ten times deeper; run it
# before changing what a property holds. A case it finds is saved in .hypothesis/ and shown with its seed.
test-deep: $(VENV)/.installed  ## the property tests searched anew, ten times the examples
	HYPOTHESIS_PROFILE=deep FUZZ_DEPTH=$${FUZZ_DEPTH:-10} $(PY) -m pytest $$(grep -l '@given' tests/test_*.py)

# Each target's line ends in "## what it does": this list is made from them, so it cannot drift.
help:  ## this list of the targets
	@awk -F ':.*## ' '/^[a-z][a-z-]*:.*## /{ printf "  %-12s %s\n", $$1, $$2 }' $(firstword $(MAKEFILE_LIST))

# pyflakes, bugbear, pyupgrade and import order (pyproject.toml, [tool.ruff]); the package's type hints (mypy)
lint-python: $(VENV)/.installed  ## ruff and mypy
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

# The offline demo: the real handlers over loopback HTTP, GitHub, Telegram and DynamoDB local.
demo: $(VENV)/.installed  ## the offline demo (no account, no network)
	$(PY) -m pager_local.demo

# Both endpoints on a local port (PORT, default 8080), a sweep every 15 minutes and the recovery check
# every minute; settings from the environment or .env; DynamoDB embedded unless PAGER_TABLE and AWS
# credentials name a real one.
serve: $(VENV)/.installed  ## both endpoints on a local port, with the sweep (PORT, .env)
	$(PY) -m pager_local.serve

# Register the GitHub App from a manifest, store the secrets, set Telegram's webhook (SETUP_ARGS,
# e.g. --org acme or --local https://tunnel); then check a live deployment, check by check.
setup: $(VENV)/.installed  ## pager setup: the GitHub App, the secrets, Telegram's webhook (SETUP_ARGS)
	$(PAGER) setup $(SETUP_ARGS)

doctor: $(VENV)/.installed  ## pager doctor: the live configuration, check by check (DOCTOR_ARGS)
	$(PAGER) doctor $(DOCTOR_ARGS)

# A busy fleet's week on a virtual clock through the real handlers and the real sweep (with and without
# the recovery check), next to two other sweeps, on the full trace and on the events a README deployment
# subscribes to, in the fake world of sim/pager_world; what users feel, the weekly AWS bill, the
# handler's cost and table round trips, the cold start; writes docs/benchmarks.md (BENCH_ARGS: e.g. --days 2).
bench: $(VENV)/.installed  ## the fleet's week on a virtual clock; writes docs/benchmarks.md (BENCH_ARGS)
	$(PY) -m pager_bench $(BENCH_ARGS)

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

# The SAM CLI (and cfn-lint, which it brings) when none is on PATH.
sam: $(SAM)  ## the SAM CLI in .venv-sam, when none is on PATH

$(SAM_VENV)/bin/sam:
	$(PYTHON) -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(SAM_VENV)/bin/python -m pip install --quiet 'aws-sam-cli==$(SAM_CLI_VERSION)'

# sam validate with cfn-lint: fails on any error or warning.
lint: $(SAM)  ## sam validate --lint: the template, with cfn-lint
	$(SAM) validate --lint

# Builds both functions and the layer into .aws-sam/build (no container: layers/pager/Makefile
# fetches wheels for the Lambda platform).
build: $(SAM)  ## sam build: both functions and the layer, for python3.13
	@test -n "$(PYTHON313)" || { echo "sam build needs a python3.13 on the PATH (python3.13 not found, nor through pyenv)" >&2; exit 1; }
	PATH="$(dir $(PYTHON313)):$$PATH" PYTHON313="$(PYTHON313)" $(SAM) build

# Deploys the built stack. The first time, `sam deploy --guided` asks for the parameters and saves the
# answers in samconfig.local.toml (ignored by git); later deploys read them from there. SAM refuses a
# --config-file that does not exist, guided or not: an empty one (its format's version alone) is made first.
DEPLOY_CONFIG := samconfig.local.toml
deploy: $(SAM)  ## sam deploy (guided the first time, answers saved in samconfig.local.toml)
	test -f $(DEPLOY_CONFIG) || echo 'version = 0.1' > $(DEPLOY_CONFIG)
	$(SAM) deploy --config-file $(DEPLOY_CONFIG) $(if $(shell grep -s '^stack_name' $(DEPLOY_CONFIG)),,--guided)

# The stack's name and region for the targets that act on it, found as every pager command finds them
# (`pager where`): samconfig.local.toml's, where `make deploy` saved them, else the stack pager in
# AWS_REGION, AWS_DEFAULT_REGION or the AWS profile's region. They are passed on explicitly: `sam logs`
# reads no AWS_REGION, and neither it nor the AWS CLI reads samconfig.local.toml's deploy parameters.
# Read once, only by a target that uses them; without a region the target stops before it runs anything.
WHERE = $(eval WHERE := $(shell $(PAGER) where))$(WHERE)
STACK_NAME = $(word 1,$(WHERE))
REGION = $(if $(word 2,$(WHERE)),$(word 2,$(WHERE)),$(error no AWS region for the stack (pager where says why above)))

logs: $(VENV)/.installed $(SAM)  ## follow both functions' logs live (FUNCTION=SweepFunction: one; LOGS_ARGS)
	$(SAM) logs --stack-name $(STACK_NAME) --region $(REGION) $(if $(FUNCTION),--name $(FUNCTION)) --tail $(LOGS_ARGS)

outputs: $(VENV)/.installed  ## the stack's outputs: webhook URLs, table, secrets' parameter, log groups (AWS CLI)
	$(AWS) cloudformation describe-stacks --stack-name $(STACK_NAME) --region $(REGION) \
		--query 'Stacks[0].Outputs[].[OutputKey,OutputValue]' --output table

remove: $(VENV)/.installed  ## pager remove: the stack, its secrets, Telegram's webhook; then what stays (REMOVE_ARGS=--yes)
	$(PAGER) remove --stack $(STACK_NAME) --region $(REGION) $(REMOVE_ARGS)

# The built layer as Lambda sees it: python3.13 without site-packages imports `pager` from it, and
# its bytecode is there (boto3 is the runtime's, so only what needs no boto3 is imported here).
LAYER := .aws-sam/build/PagerLayer/python
check-layer:  ## the built layer imports pager as Lambda's python3.13 would
	@test -n "$(PYTHON313)" || { echo "check-layer needs a python3.13 on the PATH" >&2; exit 1; }
	test -f $(LAYER)/pager/__pycache__/settings.cpython-313.pyc
	test -n "$$(find $(LAYER)/cryptography -name '*.cpython-313.pyc' -print -quit)"
	cd $(LAYER) && $(PYTHON313) -I -S -c 'import sys; sys.path.insert(0, ""); import pager.settings, pager.routing, pager.errors, pager.deadline, requests, jwt, aws_lambda_powertools; from cryptography.hazmat.primitives.asymmetric import rsa; print("layer imports pager from", pager.settings.__cached__)'
	test ! -e $(LAYER)/pager/admin && test ! -e $(LAYER)/pager/cli.py  # the operator's commands stay out of the layer
	test ! -e $(LAYER)/dotenv  # and what only they need (python-dotenv, for .env)

# Build output only; the venvs stay (`rm -rf .venv .venv-sam` for a fresh start).
clean:  ## remove the build output (.aws-sam)
	rm -rf .aws-sam
