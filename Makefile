# gradeline: `make demo` runs the main job end to end, `make test` runs the tests.
# Both install what they need on a fresh Debian/Ubuntu machine (apt packages as
# root, the venv, the grading image); every step is skipped when already done.
SHELL := /bin/bash
VENV ?= .venv
BIN := $(VENV)/bin
# Debian's python3 (not a pyenv one under /root): the sandbox uid and services
# started as other users must be able to read the interpreter.
PYTHON ?= /usr/bin/python3
# What `make demo` needs (Slurm's packages come with slurm/local-cluster.sh); the rest
# below only `make test` and the measurements need.
DEMO_APT_PACKAGES := python3 python3-venv bubblewrap mmdebstrap debootstrap ca-certificates util-linux \
                     postgresql libpq5
# Java and Maven on the host: JPlag (the similarity report) and the unit-test tiers.
APT_PACKAGES := default-jdk-headless maven
# Slurm accounting for the local cluster's --accounting mode (accounts, QOS, fair share).
ACCOUNTING_PACKAGES := slurmdbd mariadb-server
# Measurement (issue #5): host compilers for the bare and CPU loops, the counter and
# simulation tools, and a headless browser to check the report renders.
MEASURE_PACKAGES := g++ valgrind linux-perf likwid chromium
# The front ends' tests: Open OnDemand's app runtime (Debian's Passenger, behind Apache
# with mod_lua as the portal's proxy; installing apache2 starts no service where
# policy-rc.d forbids it) and Node for the browser tools (playwright-core, axe-core).
PORTAL_PACKAGES := passenger apache2 apache2-utils
DEMO_DIR ?= demo

.PHONY: all demo check-examples test deps deps-demo venv apptainer image lint docs unit slurm db clean campaign test-cgroup2 test-nfs-soak \
	test-sharing test-nfs notebook-autograder

all: test

# $(call apt_install,PACKAGES,EXTRA APT FLAGS): install what is missing (as root),
# or name the command to run (otherwise).
define apt_install
	@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2) $$missing >/dev/null; \
	  else echo "missing Debian packages:$$missing -- run: sudo apt-get install $(2)$$missing"; exit 1; fi; \
	fi
endef

deps-demo:
	$(call apt_install,$(DEMO_APT_PACKAGES),)

deps: deps-demo
	$(call apt_install,$(APT_PACKAGES),)
	$(call apt_install,$(MEASURE_PACKAGES),--no-install-recommends)
	$(call apt_install,$(ACCOUNTING_PACKAGES),--no-install-recommends)
	$(call apt_install,$(PORTAL_PACKAGES),--no-install-recommends)
	@command -v npm >/dev/null || { [ "$$(id -u)" = 0 ] || { echo "missing: node and npm" \
	  "-- run: sudo apt-get install nodejs npm"; exit 1; }; echo "installing: nodejs npm"; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null; }

venv: $(VENV)/.installed
$(VENV)/.installed: pyproject.toml | deps-demo
	$(PYTHON) -m venv $(VENV)
	# uv installs the packages (parallel downloads, one resolver run: 21 s where pip
	# took 43 s from an empty cache, bytecode compiled as pip does); pip where uv
	# cannot be had
	{ $(BIN)/pip install -q uv && $(BIN)/uv pip install -q --python $(BIN)/python \
	    --compile-bytecode -e '.[dev]' 2>$(VENV)/uv.log; } \
	  || { cat $(VENV)/uv.log 2>/dev/null; $(BIN)/pip install -q -e '.[dev]'; }
	# uv leaves its lock file writable by every account (0666): nothing in a checkout
	# that Slurm's prolog runs may be (slurm/root-check.sh refuses such a checkout)
	rm -f $(VENV)/.lock $(VENV)/uv.log
	# bytecode now, as a regular pip install does: every array task and pilot starts
	# Python, and where PYTHONDONTWRITEBYTECODE is set it would compile each time
	$(BIN)/python -m compileall -q -x '/examples/.+/' grader
	touch $@

# Apptainer for development and tests (Debian 12 ships none): a debootstrapped sid
# root holding apptainer 1.4.5 and a shim on PATH (containers/apptainer-dev.sh; root
# only). gradeline itself just calls `apptainer` from PATH, as on a site.
apptainer: deps-demo
	@if [ "$$(id -u)" = 0 ]; then containers/apptainer-dev.sh install; \
	else echo "not root: apptainer from PATH if any ($$(command -v apptainer || echo none)), else bubblewrap"; fi

image: deps-demo venv apptainer
	$(BIN)/gradeline image build

# The layer contract (import-linter, [tool.importlinter] in pyproject.toml), ruff with
# its banned-API rule (subprocess, os.environ, psycopg only where they belong), mypy
# --strict, Snakemake's own linter, and the docs built --strict (not --quiet: it hides
# the warnings --strict fails on).
lint: venv
	$(BIN)/ruff check grader analysis tests bench docs
	$(BIN)/mypy
	$(BIN)/lint-imports
	PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/snakemake --lint >/dev/null
	set -o pipefail; $(BIN)/mkdocs build --strict -f docs/mkdocs.yml 2>&1 | { grep -v '^INFO' || true; }

# The documentation site (docs/mkdocs.yml) into build/docs, then its front page and CLI
# page looked at in headless Chromium (a screenshot lands in build/docs/screenshot.png).
docs: venv
	set -o pipefail; $(BIN)/mkdocs build --strict -f docs/mkdocs.yml 2>&1 | { grep -v '^INFO' || true; }
	$(BIN)/python docs/check_site.py build/docs

unit: venv
	$(BIN)/pytest -q tests/unit

# The local one-node Slurm cluster (root only; elsewhere the site's Slurm is used).
slurm:
	@if [ "$$(id -u)" = 0 ]; then slurm/local-cluster.sh start; \
	else echo "not root: no local Slurm cluster (grading falls back to local workers)"; fi

db: venv
	$(BIN)/gradeline db start

# Every tier under the production runtime (Apptainer when installed), as root and, in
# tests/site, as an ordinary user through Slurm; then the sandbox contract and the
# hostile corpus again under the bubblewrap fallback.
TEST_ENV = GRADELINE_REQUIRE_SANDBOX=1 GRADELINE_REQUIRE_DB=1 \
	GRADELINE_REQUIRE_SLURM=$$([ "$$(id -u)" = 0 ] && echo 1 || echo 0)
test: deps venv image lint
	$(TEST_ENV) $(BIN)/pytest -q
	$(TEST_ENV) GRADELINE_RUNTIME=bwrap $(BIN)/pytest -q tests/contract tests/integration/test_hostile.py \
	  tests/integration/test_notebook.py

# Two courses sharing the partition on the local cluster with accounting (slurmdbd +
# MariaDB): accounts, QOS, the live-vs-flood latencies and per-course core-hours. Also
# part of `make test`; this runs it alone.
test-sharing: deps venv image
	$(TEST_ENV) $(BIN)/pytest -q -s tests/slurm/test_sharing.py

# The spool on NFS: the emulated node (as below) runs the kernel NFS server over
# loopback and the shared-file-system tests on two NFS mounts; test-nfs-soak runs the
# soak there instead (the spool on NFS, the local Slurm, the five faults; ~6 min).
# Run from a checkout nobody edits meanwhile (the node reads it live).
test-nfs: deps venv image
	$(call apt_install,nfs-kernel-server,--no-install-recommends)
	GRADELINE_NODE_INIT=$(CURDIR)/bench/cgroup2/nfs-init.sh \
	GRADELINE_CGROUP2_LOG=$(CURDIR)/bench/results/nfs/node.log bench/cgroup2/node.sh

test-nfs-soak: deps venv image
	$(call apt_install,nfs-kernel-server,--no-install-recommends)
	GRADELINE_NODE_TESTS=0 GRADELINE_NODE_SOAK=1 GRADELINE_NODE_SOAK_COUNT=30 \
	GRADELINE_NODE_INIT=$(CURDIR)/bench/cgroup2/nfs-init.sh \
	GRADELINE_CGROUP2_LOG=$(CURDIR)/bench/results/nfs/soak-node.log bench/cgroup2/node.sh

# A cgroup v2 node booted under QEMU's emulation (this VM's cgroups are v1): the
# sandbox contract and the hostile corpus as root and as an ordinary user with a
# delegated subtree. Slow (tens of minutes): run it when the runner or the cgroup code
# changes; its log goes to bench/results/cgroup2/.
test-cgroup2: deps venv image
	bench/cgroup2/node.sh

DEMO_COURSE ?= example
DEMO_COURSE_FILE ?= grader/examples/course.yaml
# The demo grades the example course's packages (bigsum, meanstd, spread); their
# labelled submissions, and every other bundled example's with the images of its own
# some need, are self-checked by `make test` (tests/integration/test_examples.py) and
# `make check-examples`.
# The demo grades into a database of its own, made empty each time, so that it really
# grades (results stored by earlier runs would otherwise be reused by content hash). A
# course from hand-in to final grades: the visible groups at hand-in, the full suite
# for each student's counting submission after the deadline (at bulk priority), then
# the grade sheets with the course file's late policy, and Canvas and Moodle imports.
# It installs and builds only what it needs (not the test tiers' browsers, web servers,
# accounting database or the other examples' images).
demo: deps-demo venv image slurm db
	$(BIN)/gradeline check-env || true
	rm -rf $(DEMO_DIR)
	$(BIN)/gradeline corpus $(DEMO_DIR) --count 240 --seed 1 --submit-to $(DEMO_DIR)/spool --course $(DEMO_COURSE)
	export GRADELINE_DB_URL=$$($(BIN)/gradeline db fresh gradeline_demo) \
	  GRADELINE_COURSE_FILE=$(CURDIR)/$(DEMO_COURSE_FILE) && \
	$(BIN)/gradeline run --spool $(DEMO_DIR)/spool && \
	$(BIN)/gradeline status --spool $(DEMO_DIR)/spool && \
	$(BIN)/gradeline deadline --spool $(DEMO_DIR)/spool && \
	$(BIN)/gradeline grades --out $(DEMO_DIR)/grades
	@db="$$($(BIN)/gradeline db url | sed 's|/gradeline?|/gradeline_demo?|')"; \
	env="GRADELINE_DB_URL='$$db' GRADELINE_COURSE_FILE=$(DEMO_COURSE_FILE)"; \
	echo; echo "demo: 240 hand-ins of course $(DEMO_COURSE) graded to final grades. Open:"; \
	echo "  $(DEMO_DIR)/grades/course.csv   final grades (late policy applied); canvas.csv" \
	  "and moodle.csv import them into an LMS; one sheet per assignment beside them"; \
	echo "Run next:"; \
	echo "  $$env $(BIN)/gradeline status --spool $(DEMO_DIR)/spool"; \
	echo "  $$env $(BIN)/gradeline web --spool $(DEMO_DIR)/spool --staff-socket $(DEMO_DIR)/staff.sock"; \
	echo "      then: curl --unix-socket $(DEMO_DIR)/staff.sock http://localhost/a/bigsum" \
	  "(or ssh -N -L 8470:$(CURDIR)/$(DEMO_DIR)/staff.sock HOST, http://localhost:8470/)"; \
	echo "  make test        every tier (installs the test tools; about 50 minutes)"; \
	echo "  the staff guide: docs/pages/staff/index.md"

# Every bundled example self-checked, building the images of its own some need
# (Gradescope, notebook, Maven): part of `make test` (tests/integration/test_examples.py).
check-examples: deps venv image
	$(BIN)/gradeline check $$($(BIN)/gradeline examples)

# The bundled notebook assignment's autograder, made again from its master notebook by
# Otter-Grader's own `otter assign` (in a venv of its own under build/tools/otter, from
# PyPI; offline otherwise). `NOTEBOOK_CHECK=--check` compares instead of writing.
OTTER_VENV := build/tools/otter
notebook-autograder: deps
	@[ -x $(OTTER_VENV)/bin/otter ] || { $(PYTHON) -m venv $(OTTER_VENV) && \
	  $(OTTER_VENV)/bin/pip install -q 'otter-grader[grading]==7.0.0'; }
	OTTER=$(CURDIR)/$(OTTER_VENV)/bin/otter grader/examples/notebook/master/assign.sh $(NOTEBOOK_CHECK)

# The scaling campaign (issue #5): about 6 minutes on 2 cores. Results: $(CAMPAIGN_DIR)/
# (tidy CSV, PostgreSQL tables campaign_*, report/index.html checked in headless Chromium).
CAMPAIGN_DIR ?= campaign
campaign: deps venv image db
	$(BIN)/gradeline metrics check
	$(BIN)/gradeline cache plan
	$(BIN)/gradeline campaign run --out $(CAMPAIGN_DIR) --count 40 --reps 3 --store --check

clean:
	rm -rf $(VENV) $(DEMO_DIR) $(CAMPAIGN_DIR) .pytest_cache .ruff_cache .mypy_cache
