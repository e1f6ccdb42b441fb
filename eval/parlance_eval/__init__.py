"""Parlance quality eval: run the labeled set in eval/data through the real daemon and model,
and through llama.cpp's own llama-server as the peer to beat.

    make eval                                      # off, on and peer, the core set
    python3 eval/run.py --only qa --limit 5        # a quick look at one family
    python3 eval/run.py --columns on,peer --concurrency 2

Columns run one after another (never two model processes at once):
  off, on   one daemon each (`--stdio --no-history`, a fresh temporary `--cache-dir` and
            `--data-dir`), the families one after another (Q&A, compose, lists: a method's
            wall time is never another's retries running beside it), up to --concurrency
            requests of a family in flight: "off" sends `verify: false` (the daemon's checks are only
            reported), "on" sends `verify: true`. A daemon whose spec (`parlance --print-spec`)
            has no `verify` param gets one daemon column, "default", with the params it knows.
  peer      llama-server from scripts/setup-llama-server.sh (or --llama-server) on a free
            port: the same model file, the daemon's default context and threads (from
            `parlance --help`), `-np 1`, requests one at a time, the daemon's default
            temperature per task and the same seed. Plain hand-written prompts, not
            Parlance's: Q&A gets the transcript's segments numbered "[1] ..." (the whole
            transcript when it fits the context, else the first N segments that fit: no
            retrieval), the question and an instruction, with JSON-schema output {answer,
            citations:[int], found}; compose asks for one tone per request; summarize and
            highlights ask for the daemon's result fields as JSON. Its text is scored by the
            same functions; formality by the daemon's own Formality.score (--print-formality), and
            badButPassed counts every bad output (nothing checks them).
Every metric is computed here from the answers and the labels, independently of the daemon's
own `verification`.

Items with `"heldOut": true` in the data are scored apart from the rest (the tuning part);
the targets are judged on the held-out part of the verify-on column (on the tuning part for a
family without held-out items, e.g. the list documents), and every figure also has the target
"better than peer". Q&A calibration: expected calibration error (10 equal-width bins) and
Brier score of the answers' `confidenceScore` (n/a when results have none) against
correctness: answerable, found, a gold citation and not degenerate; or unanswerable and
found false.

Prints the tables (every figure per column for the held-out and the tuning part, targets,
better than peer, cost per method: attempts, wall time, on/off ratio) on stdout, or with
--json the JSON summary; writes the summary with the per-question, per-variation and per-list
details of every column (the peer's prompts, settings and raw replies included) to
eval/last-run.json. Exit code 0 even when targets are missed (this is a measurement); 1 when
the run itself failed: the daemon or llama-server crashed or exited badly, a request timed
out, or answered a JSON-RPC error other than a documented generation refusal (-32010).

Data (eval/data, or --data DIR):
  transcripts/*.srt|*.vtt|*.txt   segments numbered 1, 2, 3... in document order
  qa.json        [{"id","doc","question","answerable","gold":[ids],"evidence","answer","heldOut"?}]
  compose.json   [{"id","kind","text","facts":[substrings of text],"audience","language"?,"heldOut"?}]
Lists (analysis/summarize + analysis/highlights) run on Samples/podcast-sample.srt and
transcripts/clinic.txt.
"""
