# Two entry points: `make run` (install, launch the viewer) and `make test` (install, lint, every test; the
# GPU tests that make a kernel fault on purpose only with PYTEST_ARGS="-m gpu_fault", in a run of their own).
# Each sets itself up on a fresh Debian machine with python3: the virtual environment in .venv,
# and the few system packages it needs (installed with apt-get when missing; needs root or sudo).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT := DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get

# Runtime GL libraries, and for tests a virtual X server, xdotool and Mesa's software renderer.
RUN_PKGS := libgl1 libegl1 libglx-mesa0 libegl-mesa0 libgl1-mesa-dri
TEST_PKGS := $(RUN_PKGS) xvfb xauth xdotool

.PHONY: run test lint install system-run system-test clean

run: install system-run
	$(BIN)/python main.py

test: install system-test lint
	xvfb-run -a -s "-screen 0 1920x1080x24 -noreset" $(BIN)/python -m pytest -n auto -ra --durations=15 $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy sim/

install: $(STAMP)

$(BIN)/python:
	@$(PYTHON) -m venv $(VENV) 2>/dev/null || { \
	  echo "python3 has no working venv module: installing python3-venv"; rm -rf $(VENV); \
	  $(APT) update -qq && $(APT) install -y -qq python3-venv && $(PYTHON) -m venv $(VENV); }

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test,mpi]'
	rm -f $(VENV)/.installed-* && touch $@

# dpkg -s answers for installed packages; only the missing ones are fetched.
define ensure_packages
	@missing=$$(for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing system packages:" $$missing; \
	  $(APT) update -qq && $(APT) install -y -qq --no-install-recommends $$missing; \
	fi
endef

system-run:
	$(call ensure_packages,$(RUN_PKGS))

system-test:
	$(call ensure_packages,$(TEST_PKGS))

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache screenshots
