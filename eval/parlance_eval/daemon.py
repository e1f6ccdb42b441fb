"""The daemon's columns, "off" and "on" (or "default" for a daemon without `verify`): one
daemon each (`--stdio --no-history`, a fresh temporary `--cache-dir` and `--data-dir`), every
task's requests sent with up to --concurrency in flight, the results kept as they came (the
tasks' modules score them)."""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import compose, lists, qa
from .common import ACTIVE, ANALYSES, REFUSAL_CODES, STOPPING, log

from parlance_client import ConnectionClosed, ParlanceClient, RPCError  # on sys.path once .common is imported

Task = Tuple[str, Callable[[], Any]]


def method_params(binary: str) -> Dict[str, Dict[str, Any]]:
    out = subprocess.run([binary, "--print-spec"], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise RuntimeError(f"{binary} --print-spec exited {out.returncode}: {out.stderr[-500:]}")
    spec = json.loads(out.stdout)
    return {m["name"]: {p["name"]: p.get("schema", {}) for p in m.get("params", [])} for m in spec.get("methods", [])}


def daemon_defaults(binary: str) -> Dict[str, int]:
    """The daemon's default context size and threads, as its --help states them."""
    out = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=60)
    text = out.stdout + out.stderr
    ctx = re.search(r"--ctx N\s.*?\(default (\d+)\)", text)
    thr = re.search(r"--threads defaults to (\d+)", text)
    return {"contextSize": int(ctx.group(1)) if ctx else 4096,
            "threads": int(thr.group(1)) if thr else max(1, (os.cpu_count() or 2))}


class Column:
    """One daemon process and the requests of one column."""

    def __init__(self, name: str, verify: Optional[bool], args: argparse.Namespace, spec: Dict[str, Dict[str, Any]]):
        self.name = name
        self.verify = verify
        self.args = args
        self.spec = spec
        self.errors: List[Dict[str, Any]] = []
        self.fatal: List[str] = []
        self.warnings: List[str] = []
        self.lock = threading.Lock()
        self.done = 0
        self.total = 0
        self.broken = False

    def params(self, method: str, p: Dict[str, Any]) -> Dict[str, Any]:
        known = self.spec.get(method, {})
        p = {k: v for k, v in p.items() if k in known}
        if self.verify is not None and "verify" in known:
            p["verify"] = self.verify
            if self.args.max_attempts is not None and "maxAttempts" in known:
                p["maxAttempts"] = self.args.max_attempts
        return p

    def call(self, client: ParlanceClient, family: str, method: str, params: Dict[str, Any], label: str) -> Dict[str, Any]:
        """{"result"} or {"error"}, with "seconds" (send to response)."""
        t0 = time.monotonic()
        rec: Dict[str, Any] = {}
        if self.broken:  # the daemon died or stopped answering: do not wait on it again
            rec.update(error={"code": None, "name": "skipped", "message": "the daemon failed earlier in this column"}, seconds=0.0)
            with self.lock:
                self.errors.append({"family": family, "method": method, "item": label, "fatal": True, **rec["error"]})
                self.done += 1
            return rec
        try:
            rec["result"] = client.start(method, self.params(method, params)).result(self.args.timeout)
        except RPCError as e:
            rec["error"] = {"code": e.code, "name": e.name, "kind": e.kind, "message": e.message}
            fatal = e.code not in REFUSAL_CODES
            with self.lock:
                self.errors.append({"family": family, "method": method, "item": label, "fatal": fatal, **rec["error"]})
                if fatal:
                    self.fatal.append(f"{method} {label}: {e}")
        except (ConnectionClosed, TimeoutError, OSError) as e:
            rec["error"] = {"code": None, "name": type(e).__name__, "message": str(e)}
            with self.lock:
                self.errors.append({"family": family, "method": method, "item": label, "fatal": True, **rec["error"]})
                self.fatal.append(f"{method} {label}: {type(e).__name__}: {e}")
                self.broken = True
        rec["seconds"] = round(time.monotonic() - t0, 3)
        with self.lock:
            self.done += 1
            n = self.done
        status = "ok" if "result" in rec else f"error {rec['error'].get('code')} {rec['error'].get('kind') or rec['error']['name']}"
        log(f"[{self.name}] {n}/{self.total} {family} {label}: {status} ({rec['seconds']:.1f} s)")
        return rec


def run_column(name: str, verify: Optional[bool], args: argparse.Namespace, spec, data: Dict[str, Any]) -> Dict[str, Any]:
    col = Column(name, verify, args, spec)
    tmp = tempfile.mkdtemp(prefix=f"parlance-eval-{name}-")
    cache, datadir = os.path.join(tmp, "cache"), os.path.join(tmp, "data")
    os.makedirs(cache)
    os.makedirs(datadir)
    logpath = os.path.join(tmp, "daemon.log")
    logf = open(logpath, "w")
    load0 = os.getloadavg()[0]
    t0 = time.monotonic()
    model = ["--model", args.model] if args.model else []
    # An ablation column ("on-ID") runs with that check switched off (`Ablation` in the daemon).
    env = dict(os.environ, PARLANCE_DISABLE_CHECKS=name[3:]) if name.startswith("on-") else None
    client = ParlanceClient(args.daemon, ["--cache-dir", cache, "--data-dir", datadir, "--no-history", *model],
                            stderr=logf, default_timeout=args.timeout, env=env)
    ACTIVE.append(client)
    out: Dict[str, Any] = {"column": name, "verify": verify, "qa": [], "compose": [], "lists": []}
    try:
        init = client.initialize(client_name="eval/run.py")
        if init["model"].get("availability") != "available":
            raise RuntimeError(f"model unavailable: {init['model']}")
        out["serverVersion"] = init.get("serverInfo", {}).get("version")
        out["documents"] = open_documents(client, col, data)
        tasks = column_tasks(client, col, spec, data, out)
        col.total = len(tasks)
        out["familySpanSeconds"] = run_tasks(col, tasks, args.concurrency)
    except Exception as e:  # noqa: BLE001 - report, never hide
        col.fatal.append(f"{type(e).__name__}: {e}")
    finally:
        try:
            code = client.close(timeout=30)
        except Exception as e:  # noqa: BLE001
            code = f"close failed: {e}"
        logf.close()
        ACTIVE.remove(client)
        if STOPPING:
            shutil.rmtree(tmp, ignore_errors=True)
    if STOPPING:
        raise SystemExit(128 + STOPPING[0])
    out["wallSeconds"] = round(time.monotonic() - t0, 1)
    out["loadAverage"] = {"start": round(load0, 2), "end": round(os.getloadavg()[0], 2)}
    out["exitCode"] = code
    if code != 0:
        col.fatal.append(f"daemon exit code {code}")
    if col.fatal:
        with open(logpath, errors="replace") as f:
            tail = f.read()[-3000:]
        out["daemonLogTail"] = tail
        log(f"[{name}] daemon log, last lines:\n{tail}")
    shutil.rmtree(tmp, ignore_errors=True)  # caches and KV states of this column only
    out["errors"] = col.errors
    out["fatal"] = col.fatal
    out["warnings"] = col.warnings
    for w in col.warnings:
        log(f"[{name}] warning: {w}")
    sort_details(out, data)
    return out


def open_documents(client: ParlanceClient, col: Column, data: Dict[str, Any]) -> Dict[str, Any]:
    """document/open for every document this run needs; warns when the daemon's segments are
    not the labels' numbering."""
    docs: Dict[str, Dict[str, Any]] = {}
    for key, d in data["docs"].items():
        if key in data["needed"]:
            info = client.request("document/open", {"uri": d["uri"], "text": d["text"]})
            docs[key] = info
            if info["segments"] != len(d["segments"]):
                col.warnings.append(f"{key}: the daemon has {info['segments']} segments, the labels' numbering "
                                    f"{len(d['segments'])}: gold ids may not line up")
    return {k: {"segments": v["segments"], "tokens": v.get("tokens"), "format": v["format"],
                "language": v.get("language")} for k, v in docs.items()}


def column_tasks(client: ParlanceClient, col: Column, spec: Dict[str, Dict[str, Any]], data: Dict[str, Any],
                 out: Dict[str, Any]) -> List[Task]:
    """One task per request (the tasks' modules build the params); each appends its record to `out`."""
    tasks: List[Task] = []
    for q in data["qa"]:
        p = qa.daemon_params(q, data)
        tasks.append(("qa", lambda q=q, p=p: out["qa"].append({"item": q, **col.call(client, "qa", "ask/stream", p, q["id"])})))
    for c in data["compose"]:
        p = compose.daemon_params(c, spec)
        tasks.append(("compose", lambda c=c, p=p: out["compose"].append(
            {"item": c, **col.call(client, "compose", "compose/variations", p, c["id"])})))
    for key in data["lists"]:
        for m in ANALYSES:
            p = lists.daemon_params(key, data)
            tasks.append(("lists", lambda key=key, m=m, p=p: out["lists"].append(
                {"doc": key, "method": m, **col.call(client, "lists", m, p, f"{m.split('/')[1]} {key}")})))
    return tasks


def run_tasks(col: Column, tasks: List[Task], concurrency: int) -> Dict[str, float]:
    """Every task, one family after another (Q&A, compose, lists), each with up to
    `concurrency` of its requests in flight; the span of each family (first send to last
    answer). A family never shares the engine with another: a method's wall time is its own
    and not the retries of another method running beside it (summarize measured 1.10x
    verify-off alone and 1.37x beside compose's retries, 2026-12-01)."""
    fam_t: Dict[str, List[float]] = {}

    def execute(task: Task) -> None:
        fam, fn = task
        s = time.monotonic()
        fn()
        e = time.monotonic()
        with col.lock:
            span = fam_t.setdefault(fam, [s, e])
            span[0], span[1] = min(span[0], s), max(span[1], e)

    for family in dict.fromkeys(fam for fam, _ in tasks):
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
            for f in [pool.submit(execute, t) for t in tasks if t[0] == family]:
                f.result()
    return {k: round(v[1] - v[0], 1) for k, v in fam_t.items()}


def sort_details(out: Dict[str, Any], data: Dict[str, Any]) -> None:
    """keep the order of the data set in the details"""
    qi = {q["id"]: i for i, q in enumerate(data["qa"])}
    ci = {c["id"]: i for i, c in enumerate(data["compose"])}
    out["qa"].sort(key=lambda r: qi[r["item"]["id"]])
    out["compose"].sort(key=lambda r: ci[r["item"]["id"]])
    out["lists"].sort(key=lambda r: (data["lists"].index(r["doc"]), ANALYSES.index(r["method"])))
