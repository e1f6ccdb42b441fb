#!/usr/bin/env python3
"""Parlance quality eval: the entry point of `make eval`.

    make eval                                      # off, on and peer, the core set
    python3 eval/run.py --only qa --limit 5        # a quick look at one family
    python3 eval/run.py --columns on,peer --concurrency 2

What the eval runs and measures (the columns off, on and peer, the figures, the held-out
part, the targets, what it prints and writes, the exit code, the data) is told in the
docstring of eval/parlance_eval/__init__.py. The package, one job a module:

  cli.py         the flags; one run: the daemon snapshot, the columns one after another, the
                 summary written to --out, the tables (or --json) printed
  data.py        the labeled set (eval/data, or --data) and this run's selection of it
  daemon.py      the daemon columns (off, on): one daemon each, the requests, the raw results
  peer.py        the peer column: llama-server, the same model, plain hand-written prompts
  qa.py          Q&A (ask/stream): its figures, its request, its scoring (and calibration)
  compose.py     compose/variations: its figures, its request, its scoring
  lists.py       analysis/summarize and analysis/highlights: their figures, request, scoring
  judges.py      the checks of one answer, variation or list item (on text.py's helpers)
  formality.py   the daemon's own Formality.score (parlance --print-formality), to score the peer's text
  text.py        folding, tokens, transcript segmentation, the numbers in a text
  summary.py     the JSON summary: held-out and tuning parts, cost, targets, better than peer
  report.py      the printed tables
  common.py      shared settings (seed, tones, methods), logging, the processes a signal stops

A new figure is a row in its task's FIGURES (qa.py, compose.py or lists.py) and its value in
that module's score function; the summary, the targets and the tables follow from the row.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from parlance_eval.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
