"""The command line (`parlance COMMAND …`), against the real binary and model, through
pipes and through pseudo-terminals.

Promised (`parlance --help`, README "From the shell"):
- on a terminal, text streams as the model writes it (`rewrite` here), and text a retry
  replaces is erased (the screen only ever shows one attempt, then the result's text);
  piped, the final text is written once;
- a progress bar (percent, ETA) goes to stderr only when stderr is a terminal; piped, the
  output carries no decoration (no carriage returns, no escape codes);
- `--json` prints the method's result exactly as JSON-RPC returns it (compared with the
  same request through `parlance --stdio`, and validated against the method's result
  schema in protocol/parlance.openrpc.json);
- exit status: 0 success; 1 a failed request (message, then `data:` on stderr) or a file
  that cannot be read; 2 a usage error (unknown option, bad --tone, a value the method's
  schema refuses, missing arguments); 130 interrupted: the first Ctrl-C cancels the
  request and the process ends promptly and cleanly;
- FILE may be `-` (stdin), and `rewrite -` reads its text from stdin;
- `models` lists the registry, `models NAME` shows one model's status;
- `chat` answers one prompt per stdin line; `--schema FILE` makes each answer JSON of it;
- the man page renders without warnings; the bash, zsh and fish completions are valid
  scripts and complete the commands.

A pseudo-terminal run gives the command one pty for stdin and stdout (its controlling
terminal: Ctrl-C is typed there) and another for stderr, so the two streams stay apart;
output post-processing and echo are off, so the bytes read are the bytes written.
Every wait is on an event (output, end of output, process exit); timeouts only bound a
hung test. Commands that use the model run one after another (2 cores; llama.cpp's
threads spin), each with its own throwaway cache, data and config directories, and
generate little: a short transcript (the sample's first cues), --max-tokens 64 where the
method allows it, one attempt (--max-attempts 1) unless retries are the point. Comparisons
between two runs use --deterministic and at most 2 attempts (whether a third attempt starts
depends on how long the first two took).
"""

from __future__ import annotations

import copy
import errno
import fcntl
import json
import os
import re
import select
import shutil
import struct
import subprocess
import termios
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import jsonschema
import pytest

from conftest import GENERATION_TIMEOUT, QUICK_TIMEOUT, ROOT, Daemon, request

SAMPLE = ROOT / "Samples" / "podcast-sample.srt"
SPEC = ROOT / "protocol" / "parlance.openrpc.json"
COMMANDS = ["summarize", "ask", "rewrite", "analyze", "compare", "segments", "cache", "chat", "models"]
TONES = ["formal", "casual", "empathetic", "direct", "diplomatic"]
QUESTION = "Where does Priya Raman work?"  # answered by the sample (cue 4)
CRASH_MARKERS = [b"Fatal error", b"Backtrace", b"Stack dump", b"Segmentation fault", b"SIGSEGV", b"Illegal instruction"]
COLUMNS = 100  # the pseudo-terminals' width
INTERRUPT_TIMEOUT = 20.0  # the process must be gone this long after Ctrl-C (it should take well under a second)


# -- helpers ---------------------------------------------------------------------------------

def small_transcript(cues: int = 12) -> str:
    """The sample's first cues: a short, real transcript (fast to analyze)."""
    blocks = SAMPLE.read_text().strip().split("\n\n")
    return "\n\n".join(blocks[:cues]) + "\n"


def result_schema(method: str) -> Dict[str, Any]:
    spec = json.loads(SPEC.read_text())
    for m in spec["methods"]:
        if m["name"] == method:
            return m["result"]["schema"]
    raise AssertionError(f"{method} is not in {SPEC}")


def validate(value: Any, schema: Dict[str, Any], what: str) -> None:
    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as e:
        raise AssertionError(f"{what} does not match its schema: {e.message} at {list(e.absolute_path)}\n"
                             f"{json.dumps(value)[:2000]}") from None


def json_values(text: str) -> List[Any]:
    """Every JSON value in `text`, one after another (whitespace between)."""
    dec = json.JSONDecoder()
    out, i = [], 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return out
        v, i = dec.raw_decode(text, i)
        out.append(v)


def data_of(stderr: str) -> Dict[str, Any]:
    """The JSON after `data:` in a failed request's message."""
    m = re.search(r"^\s*data: (.*)$", stderr, re.M)
    assert m, f"no 'data:' line in stderr:\n{stderr}"
    return json.loads(m.group(1))


def processes_in_session(sid: int) -> List[str]:
    """Processes (other than zombies already reaped) in session `sid`: a command started
    with its own session leaves nothing behind when this is empty."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()  # state ppid pgrp session …
        if int(fields[3]) == sid:
            found.append(f"{d} {stat[:stat.rfind(')') + 1]} state {fields[0]}")
    return found


@dataclass
class Run:
    args: List[str]
    code: int
    stdout: bytes
    stderr: bytes

    @property
    def out(self) -> str:
        return self.stdout.decode(errors="replace")

    @property
    def err(self) -> str:
        return self.stderr.decode(errors="replace")

    def __str__(self) -> str:
        return (f"parlance {' '.join(self.args)}\nexit code: {self.code}\n"
                f"stdout:\n{self.out[-3000:]}\nstderr:\n{self.err[-3000:]}")


class PtyRun:
    """`parlance ARGS` with stdin and stdout on one pseudo-terminal (its controlling
    terminal) and stderr on another. `chunks` holds every read, in order: ("out"|"err", bytes)."""

    def __init__(self, binary: Path, args: List[str], env: Dict[str, str]) -> None:
        self.args = args
        self.out_master, out_slave = os.openpty()
        self.err_master, err_slave = os.openpty()
        for fd in (out_slave, err_slave):
            attrs = termios.tcgetattr(fd)
            attrs[1] &= ~termios.OPOST  # no \n -> \r\n: the bytes as the command wrote them
            attrs[3] &= ~termios.ECHO   # a typed ^C is not echoed into the output
            termios.tcsetattr(fd, termios.TCSANOW, attrs)
            fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, COLUMNS, 0, 0))

        def controlling_terminal() -> None:  # in the child, after setsid (start_new_session)
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.proc = subprocess.Popen([str(binary), *args], stdin=out_slave, stdout=out_slave, stderr=err_slave,
                                     env=env, cwd=ROOT, start_new_session=True, preexec_fn=controlling_terminal)
        os.close(out_slave)
        os.close(err_slave)
        self.open: Dict[int, str] = {self.out_master: "out", self.err_master: "err"}
        self.chunks: List[Tuple[str, bytes]] = []

    @property
    def stdout(self) -> bytes:
        return b"".join(d for s, d in self.chunks if s == "out")

    @property
    def stderr(self) -> bytes:
        return b"".join(d for s, d in self.chunks if s == "err")

    def _read_some(self, deadline: float) -> bool:
        left = deadline - time.monotonic()
        if left <= 0 or not self.open:
            return False
        ready, _, _ = select.select(list(self.open), [], [], left)
        if not ready:
            return False
        for fd in ready:
            try:
                data = os.read(fd, 1 << 16)
            except OSError as e:  # EIO: every slave end is closed (the command exited)
                if e.errno != errno.EIO:
                    raise
                data = b""
            if data:
                self.chunks.append((self.open[fd], data))
            else:
                del self.open[fd]
        return True

    def read_until(self, predicate: Callable[["PtyRun"], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not predicate(self):
            if not self.open:
                raise AssertionError(f"output ended before {what}\n{self}")
            if not self._read_some(deadline):
                raise AssertionError(f"no {what} within {timeout:.0f} s\n{self}")

    def type(self, data: bytes) -> None:
        """Types `data` on the command's terminal (b"\\x03": Ctrl-C)."""
        os.write(self.out_master, data)

    def finish(self, timeout: float) -> int:
        """Reads to the end of both outputs and waits for the exit; the exit code."""
        deadline = time.monotonic() + timeout
        while self.open:
            if not self._read_some(deadline):
                raise AssertionError(f"output still open after {timeout:.0f} s\n{self}")
        try:
            return self.proc.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            raise AssertionError(f"still running after {timeout:.0f} s (outputs closed)\n{self}") from None

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()  # this test's own command, by its pid
            self.proc.wait(30)
        for fd in (self.out_master, self.err_master):
            try:
                os.close(fd)
            except OSError:
                pass

    def __str__(self) -> str:
        return (f"parlance {' '.join(self.args)} (on a pty)\nexit code: {self.proc.poll()}\n"
                f"stdout: {self.stdout[-2000:]!r}\nstderr: {self.stderr[-2000:]!r}")


# -- fixtures --------------------------------------------------------------------------------

@pytest.fixture
def cli_env(daemon_env: Dict[str, str], tmp_path: Path) -> Dict[str, str]:
    """The environment of a command: throwaway dirs (its own analysis cache, apart from the
    `daemon` fixture's) and no PARLANCE_LOG_LEVEL (a command's stderr is then its own)."""
    env = dict(daemon_env)
    env["PARLANCE_CACHE_DIR"] = str(tmp_path / "cli-cache")
    env.pop("PARLANCE_LOG_LEVEL", None)
    return env


@pytest.fixture
def cli(parlance_bin: Path, cli_env: Dict[str, str]) -> Iterator[Callable[..., Run]]:
    """cli(*args, input=None, timeout=GENERATION_TIMEOUT) -> Run: the command on pipes."""
    started: List[subprocess.Popen] = []

    def run(*args: Any, input: Optional[bytes] = None, timeout: float = GENERATION_TIMEOUT) -> Run:
        argv = [str(a) for a in args]
        p = subprocess.Popen([str(parlance_bin), *argv], stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env, cwd=ROOT)
        started.append(p)
        try:
            out, err = p.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            raise AssertionError(f"parlance {' '.join(argv)} still running after {timeout:.0f} s\n"
                                 f"stdout: {out[-2000:]!r}\nstderr: {err[-2000:]!r}") from None
        return Run(argv, p.returncode, out, err)

    yield run
    for p in started:
        if p.poll() is None:
            p.kill()
            p.wait(30)


@pytest.fixture
def pty_cli(parlance_bin: Path, cli_env: Dict[str, str]) -> Iterator[Callable[..., PtyRun]]:
    """pty_cli(*args) -> a running PtyRun; killed (by its pid) at the end of the test if still running."""
    started: List[PtyRun] = []

    def start(*args: Any) -> PtyRun:
        r = PtyRun(parlance_bin, [str(a) for a in args], cli_env)
        started.append(r)
        return r

    yield start
    for r in started:
        r.stop()


def no_decoration(r: Run) -> None:
    """Piped output: no escape codes anywhere, no carriage returns (a redrawn bar) on stderr."""
    assert b"\x1b" not in r.stdout, f"escape codes on a piped stdout\n{r}"
    assert b"\x1b" not in r.stderr and b"\r" not in r.stderr, f"terminal decoration on a piped stderr\n{r}"


def no_crash(output: bytes, what: str) -> None:
    for marker in CRASH_MARKERS:
        assert marker not in output, f"{marker.decode()} in the output of {what}:\n{output[-3000:]!r}"


# -- help, usage errors, failed requests (no model needed) ---------------------------------

def test_help_lists_every_command(cli: Callable[..., Run]) -> None:
    r = cli("--help", timeout=QUICK_TIMEOUT)
    assert r.code == 0, r
    assert "usage: parlance COMMAND" in r.out, r
    for c in COMMANDS:
        assert re.search(rf"^\s+{c}\s+\S", r.out, re.M), f"--help does not list {c}\n{r}"


@pytest.mark.parametrize("command", COMMANDS)
def test_command_help(cli: Callable[..., Run], command: str) -> None:
    r = cli(command, "--help", timeout=QUICK_TIMEOUT)
    assert r.code == 0, r
    assert r.out.startswith(f"usage: parlance {command} "), r
    assert "--json" in r.out, r
    assert r.stderr == b"", r


def test_summarize_help_lists_the_method_flags(cli: Callable[..., Run]) -> None:
    r = cli("summarize", "--help", timeout=QUICK_TIMEOUT)
    assert r.code == 0, r
    for flag in ["--max-tokens N", "--temperature N", "--seed N", "--language", "--deterministic", "--verify"]:
        assert flag in r.out, f"{flag} missing from summarize --help\n{r}"


def test_print_formality_scores_each_line_as_the_daemon_does(cli: Callable[..., Run]) -> None:
    """The eval scores its peer's rewrites with this (eval/parlance_eval/formality.py): a
    chat message scores casual, a letter formal, Spanish by Spanish markers, and a line that
    is no object is an error line and exit 1, the lines after it still scored."""
    lines = [{"text": "hey guys, gonna be late lol, grab me a coffee?"},
             {"text": "Dear Ms Okoro, we regret to inform you that the appointment has been postponed. Kindly confirm receipt."},
             {"text": "Estimado señor Ruiz, le ruego que disculpe el retraso.", "language": "es"},
             {"text": "oye tío, ¿vienes o qué? jaja", "language": "es"}]
    stdin = "".join(json.dumps(x) + "\n" for x in lines) + "not json\n" + json.dumps(lines[0]) + "\n"
    r = cli("--print-formality", input=stdin.encode(), timeout=QUICK_TIMEOUT)
    assert r.code == 1, r
    out = r.out.splitlines()
    assert len(out) == 6 and out[4].startswith("error: "), r
    chat, letter, es_formal, es_casual, _, again = out
    assert float(chat) < 0.3 < 0.7 < float(letter), r
    assert float(es_casual) < float(es_formal), r
    assert again == chat, r


def test_no_arguments_is_a_usage_error(cli: Callable[..., Run]) -> None:
    r = cli(timeout=QUICK_TIMEOUT)
    assert r.code == 2, r
    assert "parlance --help" in r.err and r.stdout == b"", r


def test_unknown_option_is_a_usage_error(cli: Callable[..., Run]) -> None:
    r = cli("summarize", "--bogus", SAMPLE, timeout=QUICK_TIMEOUT)
    assert r.code == 2, r
    assert "--bogus" in r.err and "summarize --help" in r.err, r


def test_missing_arguments_are_a_usage_error(cli: Callable[..., Run]) -> None:
    r = cli("ask", SAMPLE, timeout=QUICK_TIMEOUT)
    assert r.code == 2, r
    assert "ask --help" in r.err, r


def test_bad_tone_is_a_usage_error_listing_the_tones(cli: Callable[..., Run]) -> None:
    r = cli("rewrite", "--tone", "rude", "hello there", timeout=QUICK_TIMEOUT)
    assert r.code == 2, r
    assert "rude" in r.err, r
    for tone in TONES:
        assert tone in r.err, f"the message does not list {tone}\n{r}"


def test_value_the_schema_refuses_is_a_usage_error(cli: Callable[..., Run]) -> None:
    r = cli("summarize", "--max-tokens", "10", SAMPLE, timeout=QUICK_TIMEOUT)
    assert r.code == 2, r
    assert "-32602" in r.err and "maxTokens" in r.err, r
    assert data_of(r.err).get("keyword") == "minimum", r


def test_missing_file_fails_naming_it(cli: Callable[..., Run], tmp_path: Path) -> None:
    missing = tmp_path / "no-such-talk.srt"
    r = cli("summarize", missing, timeout=QUICK_TIMEOUT)
    assert r.code == 1, r
    assert str(missing) in r.err, r
    assert r.stdout == b"", r


def test_unknown_model_fails_with_model_not_found(cli: Callable[..., Run]) -> None:
    r = cli("summarize", "--model", "nope=/does/not/exist.gguf", SAMPLE, timeout=QUICK_TIMEOUT)
    assert r.code == 1, r
    assert r.err.startswith("parlance: "), r
    data = data_of(r.err)
    assert data.get("reason") == "modelNotFound", r
    assert "/does/not/exist.gguf" in r.err, r


# -- models -----------------------------------------------------------------------------------

def default_model_name(cli: Callable[..., Run]) -> str:
    r = cli("models", "--json", timeout=QUICK_TIMEOUT)
    assert r.code == 0, r
    listed = json.loads(r.out)
    validate(listed, result_schema("model/list"), "models --json")
    return listed["defaultModel"]


def test_models_lists_the_default_model(cli: Callable[..., Run]) -> None:
    name = default_model_name(cli)
    r = cli("models", timeout=QUICK_TIMEOUT)
    assert r.code == 0, r
    rows = [line for line in r.out.splitlines() if line.startswith("* ")]
    assert len(rows) == 1 and rows[0].split()[1] == name, f"the default model {name} is not the one starred\n{r}"
    no_decoration(r)


def test_models_name_shows_its_status(cli: Callable[..., Run]) -> None:
    name = default_model_name(cli)
    r = cli("models", name, timeout=QUICK_TIMEOUT)
    assert r.code == 0, r
    assert re.search(r"^State: (unloaded|loading|ready|unloading|failed)$", r.out, re.M), r
    assert f"Name: {name}" in r.out, r
    j = cli("models", name, "--json", timeout=QUICK_TIMEOUT)
    assert j.code == 0, j
    status = json.loads(j.out)
    validate(status, result_schema("model/status"), f"models {name} --json")
    assert status["name"] == name and status["availability"] == "available", j


def test_models_unknown_name_is_refused(cli: Callable[..., Run]) -> None:
    r = cli("models", "no-such-model", timeout=QUICK_TIMEOUT)
    assert r.code == 2, r  # -32602: the name the user gave is not in the registry
    assert data_of(r.err).get("error") == "unknownModel", r


# -- man page and completions ------------------------------------------------------------------

def test_man_page_renders_without_warnings(cli: Callable[..., Run], tmp_path: Path) -> None:
    r = cli("--print-man", timeout=QUICK_TIMEOUT)
    assert r.code == 0 and r.stdout.startswith(b".TH PARLANCE 1"), r
    if shutil.which("groff"):
        g = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z"], input=r.stdout, capture_output=True, timeout=60)
        assert g.returncode == 0 and g.stderr == b"", f"groff warnings:\n{g.stderr.decode(errors='replace')}"
    if shutil.which("man"):
        m = subprocess.run(["man", "--warnings", "-l", "-"], input=r.stdout, capture_output=True, timeout=60,
                           env={**os.environ, "MANWIDTH": "80", "MANPAGER": "cat", "PAGER": "cat"})
        assert m.returncode == 0 and m.stderr == b"", f"man -l -: exit {m.returncode}\n{m.stderr.decode(errors='replace')}"
        text = m.stdout.decode(errors="replace")
        text = re.sub(r".\x08", "", text)  # overstrikes, if any
        assert "NAME" in text and "EXIT STATUS" in text, text[:2000]
        for c in COMMANDS:
            assert c in text, f"the man page does not mention {c}"
    if not shutil.which("groff") and not shutil.which("man"):
        pytest.skip("neither groff nor man is installed (apt-get install man-db groff)")


def bash_complete(script: Path, words: List[str]) -> List[str]:
    """COMPREPLY of the bash completion for the command line `words` (the last one being completed)."""
    quoted = " ".join("'" + w.replace("'", "'\\''") + "'" for w in words)
    code = f'source "$1"; COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; _parlance; printf "%s\\n" "${{COMPREPLY[@]}}"'
    p = subprocess.run(["bash", "-c", code, "bash", str(script)], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and p.stderr == "", f"completion of {words}: exit {p.returncode}\n{p.stderr}"
    return [w for w in p.stdout.splitlines() if w]


def test_bash_completion(cli: Callable[..., Run], tmp_path: Path) -> None:
    r = cli("--print-completion", "bash", timeout=QUICK_TIMEOUT)
    assert r.code == 0, r
    script = tmp_path / "parlance.bash"
    script.write_bytes(r.stdout)
    n = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, timeout=30)
    assert n.returncode == 0 and n.stderr == "", n.stderr
    assert bash_complete(script, ["parlance", "su"]) == ["summarize"]
    assert set(COMMANDS) <= set(bash_complete(script, ["parlance", ""]))
    assert bash_complete(script, ["parlance", "summarize", "--max-t"]) == ["--max-tokens"]
    assert sorted(bash_complete(script, ["parlance", "rewrite", "--tone", ""])) == sorted(TONES)
    assert bash_complete(script, ["parlance", "analyze", "wo"]) == ["worth-it"]


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_completions(cli: Callable[..., Run], tmp_path: Path, shell: str) -> None:
    r = cli("--print-completion", shell, timeout=QUICK_TIMEOUT)
    assert r.code == 0 and r.out.strip(), r
    for c in COMMANDS:
        assert re.search(rf"\b{c}\b", r.out), f"the {shell} completion does not mention {c}"
    script = tmp_path / f"parlance.{shell}"
    script.write_bytes(r.stdout)
    if not shutil.which(shell):
        return  # the syntax check needs the shell (apt-get install zsh fish); the content was checked
    n = subprocess.run([shell, "-n", str(script)], capture_output=True, text=True, timeout=30)
    assert n.returncode == 0 and n.stderr == "", f"{shell} -n: exit {n.returncode}\n{n.stderr}"
    if shell == "fish":
        c = subprocess.run(["fish", "--no-config", "-c", f"source {script}; complete -C 'parlance su'"],
                           capture_output=True, text=True, timeout=30)
        assert c.returncode == 0 and [l.split("\t")[0] for l in c.stdout.splitlines()] == ["summarize"], c


# -- --json is the JSON-RPC result --------------------------------------------------------------

def comparable(result: Dict[str, Any]) -> Dict[str, Any]:
    """A result without what legitimately differs between two runs: timings and `cached`."""
    r = copy.deepcopy(result)
    r.pop("cached", None)
    usage = r.get("usage")
    if isinstance(usage, dict):
        for k in ["firstTokenMs", "totalMs"]:
            usage.pop(k, None)
    return r


def test_segments_prints_one_line_per_segment_and_its_json(cli: Callable[..., Run]) -> None:
    """`parlance segments` needs no model: the sample's 108 cues, one line each, then the
    method's result with --json, a part with --offset/--limit, and stdin."""
    r = cli("segments", SAMPLE, timeout=QUICK_TIMEOUT)
    assert r.code == 0 and r.err == "", r
    lines = r.out.splitlines()
    assert len(lines) == 108, len(lines)
    assert lines[0] == "[1] 00:00:01 MAYA: Welcome back to The Local Loop, the show about software that runs on the machine in front of you.", lines[0]
    assert all(re.match(r"^\[\d+\] \d\d:\d\d:\d\d [A-Z]+: \S", l) for l in lines), lines[:3]
    part = cli("segments", "--offset", "3", "--limit", "2", SAMPLE, timeout=QUICK_TIMEOUT)
    assert [l.split("]")[0] for l in part.out.splitlines()] == ["[4", "[5"], part
    j = json.loads(cli("segments", "--json", SAMPLE, timeout=QUICK_TIMEOUT).out)
    assert j["total"] == 108 and len(j["segments"]) == 108 and "nextOffset" not in j, {k: j[k] for k in ("total", "offset")}
    assert [s["name"] for s in j["speakers"]] == ["MAYA", "THEO", "PRIYA"]
    assert j["text"].splitlines()[0] == j["segments"][0]["text"]
    piped = cli("segments", "-", input="Maya: We ship Friday.\n\nTheo: Then we test.\n".encode(), timeout=QUICK_TIMEOUT)
    assert piped.out == "[1] Maya: We ship Friday.\n[2] Theo: Then we test.\n", piped
    past = cli("segments", "--offset", "500", SAMPLE, timeout=QUICK_TIMEOUT)
    assert past.code == 2 and "offset 500 is past the last segment: the document has 108" in past.err, past


def test_cache_lists_and_clears_entries(cli: Callable[..., Run], cli_env: Dict[str, str]) -> None:
    """`parlance cache` needs no model: entries written as the daemon writes them (a label
    beside the value) are listed, a file's are cleared by its text, then all."""
    import hashlib
    folder = Path(cli_env["PARLANCE_CACHE_DIR"]) / "analysis"
    folder.mkdir(parents=True, exist_ok=True)
    sample_hash = hashlib.sha256(SAMPLE.read_bytes()).hexdigest()
    # The daemon's checks version now (an empty cache still says it): its entries are served.
    current = json.loads(cli("cache", "list", "--json", timeout=QUICK_TIMEOUT).out)["checksVersion"]
    assert isinstance(current, int) and current > 1, current
    for i, (method, docs, checks) in enumerate([("analysis/summarize", [sample_hash], current), ("analysis/tags", [sample_hash], 1),
                                                ("analysis/content", ["f" * 64], current)]):
        entry = {"checks": checks, "value": {}, "created": 1_800_000_000 + i,
                 "label": {"method": method, "documents": docs, "model": "tiny", "modelIdentity": "abc", "language": "en"}}
        (folder / (f"{i}" * 64 + ".json")).write_text(json.dumps(entry))
    listed = cli("cache", "list", "--json", timeout=QUICK_TIMEOUT)
    r = json.loads(listed.out)
    assert [e["method"] for e in r["entries"]] == ["analysis/content", "analysis/tags", "analysis/summarize"], r
    assert r["checksVersion"] == current and [e["current"] for e in r["entries"]] == [True, False, True], r
    text = cli("cache", "list", SAMPLE, timeout=QUICK_TIMEOUT).out
    assert "analysis/tags (checks 1, not served)" in text and "analysis/content" not in text and "2 entries" in text, text
    assert cli("cache", "clear", SAMPLE, timeout=QUICK_TIMEOUT).out == "removed 2 entries\n"
    assert cli("cache", "clear", "--all", timeout=QUICK_TIMEOUT).out == "removed 1 entry\n"
    assert not list(folder.glob("*.json"))
    bare = cli("cache", "clear", timeout=QUICK_TIMEOUT)
    assert bare.code == 2 and "cache clear takes FILE, --all or --content-hash HASH" in bare.err, bare


def test_json_output_is_the_json_rpc_result(cli: Callable[..., Run], daemon: Callable[..., Daemon], tmp_path: Path) -> None:
    text = small_transcript()
    transcript = tmp_path / "talk.srt"
    transcript.write_text(text)
    # One attempt: whether a retry starts also depends on how long the first attempt took.
    params = {"seed": 1, "temperature": 0, "deterministic": True, "maxAttempts": 1}

    # The daemon first (its own fresh cache), ended before the command runs: one model user at a time.
    d = daemon()
    d.send(request(1, "initialize", {}), request(2, "analysis/tags", {"text": text, **params}))
    answer = d.response(2)
    assert "result" in answer, f"analysis/tags failed over --stdio: {answer}\n{d.diagnostics()}"
    d.close_stdin()
    d.read_to_eof(QUICK_TIMEOUT)
    assert d.wait_exit(QUICK_TIMEOUT) == 0, d.diagnostics()
    rpc = answer["result"]

    r = cli("analyze", "tags", transcript, "--json", "--seed", "1", "--temperature", "0", "--deterministic", "--max-attempts", "1")
    assert r.code == 0, r
    assert r.out.endswith("\n") and r.out.count("\n") == 1, f"--json is not one line\n{r}"
    mine = json.loads(r.out)
    validate(mine, result_schema("analysis/tags"), "analyze tags --json")
    assert mine.get("cached") is False and rpc.get("cached") is False, "a fresh cache answered from the cache"
    assert comparable(mine) == comparable(rpc), (
        f"--json differs from the JSON-RPC result\n--json:  {json.dumps(comparable(mine), sort_keys=True)}\n"
        f"--stdio: {json.dumps(comparable(rpc), sort_keys=True)}")
    no_decoration(r)


# -- streaming and the progress bar on a terminal ----------------------------------------------

class Screen:
    """What a terminal shows for the bytes written to it: text, \n (a terminal's output
    processing makes it a new line), \r, ESC[nA (up), ESC[J (erase below), ESC[K (erase the
    rest of the line); lines wrap at COLUMNS (the cursor waits at the last column, as xterm's does)."""

    def __init__(self) -> None:
        self.rows: List[List[str]] = [[]]
        self.wrapped: List[bool] = [False]  # row i continues on row i + 1
        self.row = self.col = 0
        self.pending_wrap = False

    def feed(self, data: str) -> "Screen":
        i = 0
        while i < len(data):
            c = data[i]
            if c == "\x1b":
                m = re.match(r"\x1b\[(\d*)([A-Za-z])", data[i:])
                if not m:
                    break  # an incomplete sequence at the end
                n, op = int(m.group(1) or 1), m.group(2)
                if op == "A":
                    self.row = max(0, self.row - n)
                elif op == "J":
                    del self.rows[self.row][self.col:]
                    del self.rows[self.row + 1:]
                    del self.wrapped[self.row + 1:]
                    self.wrapped[self.row] = False
                elif op == "K":
                    del self.rows[self.row][self.col:]
                self.pending_wrap = False
                i += m.end()
                continue
            if c == "\r":
                self.col, self.pending_wrap = 0, False
            elif c == "\n":
                self._down(wrap=False)
            else:
                if self.pending_wrap:
                    self._down(wrap=True)
                line = self.rows[self.row]
                line.extend(" " * (self.col - len(line)))
                if self.col < len(line):
                    line[self.col] = c
                else:
                    line.append(c)
                if self.col == COLUMNS - 1:
                    self.pending_wrap = True
                else:
                    self.col += 1
            i += 1
        return self

    def _down(self, wrap: bool) -> None:
        self.wrapped[self.row] = wrap
        self.row += 1
        self.col, self.pending_wrap = 0, False
        if self.row == len(self.rows):
            self.rows.append([])
            self.wrapped.append(False)

    @property
    def text(self) -> str:
        """The logical text on the screen (wrapped rows joined)."""
        return "".join("".join(r) + ("" if w else "\n") for r, w in zip(self.rows, self.wrapped))[:-1]


def streamed_attempts(d: Daemon, token: Any, skip: List[str]) -> Tuple[List[str], str]:
    """The text of each attempt streamed for the first part not in `skip` (a `restart` of
    that part, or of the whole result, starts a new attempt), and that part's name."""
    attempts: List[str] = []
    part = None
    for m in d.messages:
        p = m.get("params") or {}
        if m.get("method") != "$/progress" or p.get("token") != token:
            continue
        v = p.get("value") or {}
        vp = v.get("part")
        if v.get("delta") and part is None and vp not in skip:
            part = vp
        if v.get("restart") and attempts and (vp is None or vp == part):
            attempts.append("")
        if v.get("delta") and vp == part:
            if not attempts:
                attempts.append("")
            attempts[-1] += v["delta"]
    return attempts, part


def test_rewrite_streams_on_a_terminal(pty_cli: Callable[..., PtyRun], daemon: Callable[..., Daemon]) -> None:
    """The rewrite appears as the model writes it, and the screen only ever shows one
    attempt: text a retry replaces is erased (what the daemon streamed for the same
    deterministic request says what each attempt wrote)."""
    text = "hey team, we're moving the design review to friday, bring your mockups"
    # At most 2 attempts: the second always starts when the first fails (a third depends on
    # how long the first two took), so both runs make the same attempts.
    params = {"text": text, "tones": ["formal"], "maxTokens": 64, "seed": 1, "deterministic": True, "maxAttempts": 2}

    d = daemon()
    d.send(request(1, "initialize", {}), request(2, "compose/variations", {**params, "workDoneToken": "w"}))
    answer = d.response(2)
    assert "result" in answer, f"compose/variations failed over --stdio: {answer}\n{d.diagnostics()}"
    d.close_stdin()
    d.read_to_eof(QUICK_TIMEOUT)
    assert d.wait_exit(QUICK_TIMEOUT) == 0, d.diagnostics()
    final = answer["result"]["variations"][0]["text"]
    attempts, part = streamed_attempts(d, "w", ["analysis", "prefix"])
    assert attempts and all(attempts), f"the daemon streamed no text for the variation (part {part})\n{d.diagnostics()}"

    r = pty_cli("rewrite", "--tone", "formal", "--max-tokens", "64", "--seed", "1", "--deterministic", "--max-attempts", "2", text)
    r.read_until(lambda r: r.stdout.strip() != b"", GENERATION_TIMEOUT, "rewritten text on stdout")
    first = r.stdout.decode(errors="replace")  # all that was written when the first text was read
    code = r.finish(GENERATION_TIMEOUT)
    assert code == 0, r
    reads = [data for s, data in r.chunks if s == "out"]
    # Not streamed, the text would be written whole, at once: the first read would hold all of it.
    assert len(first.strip()) < len(attempts[0].strip()), (
        f"not streamed: the first read already held {first!r}; the first attempt wrote {attempts[0]!r}\n{r}")
    assert len(reads) >= 2, r
    # After every read the screen holds one attempt's text so far (or the final text).
    candidates = [a.strip() for a in attempts] + [final.strip()]
    shown = b""
    for data in reads:
        shown += data
        screen = Screen().feed(shown.decode(errors="replace")).text.strip()
        assert any(c.startswith(screen) for c in candidates), (
            f"the screen shows {screen!r}, which is no attempt's text (attempts: {attempts!r}, final: {final!r})\n"
            f"stdout: {shown!r}")
    assert Screen().feed(r.stdout.decode(errors="replace")).text.strip() == final.strip(), (
        f"the screen does not end with the result's text {final!r}\nstdout: {r.stdout!r}")
    no_crash(r.stdout + r.stderr, "rewrite")


def test_summarize_on_a_terminal_draws_a_bar_then_clears_it(pty_cli: Callable[..., PtyRun], tmp_path: Path) -> None:
    """A whole run on a terminal (a short transcript): the bar on stderr, gone at the end;
    the summary on stdout, plain."""
    transcript = tmp_path / "talk.srt"
    transcript.write_text(small_transcript())
    r = pty_cli("summarize", transcript, "--max-attempts", "1")
    code = r.finish(GENERATION_TIMEOUT)
    assert code == 0, r
    err = r.stderr
    assert b"\r" in err and re.search(rb"\[[#-]{10,}\] +\d{1,3}%", err), f"no progress bar on a terminal's stderr\n{r}"
    # A summary that did not pass its checks says so after the bar is gone (one line each).
    bar_end = re.sub(rb"(parlance: warning: [^\n]* did not pass its checks[^\n]*\r?\n)+$", b"", err)
    assert bar_end.endswith(b"\r\x1b[K"), f"the bar is left on the screen at the end\n{r}"
    out = r.stdout.decode(errors="replace")
    assert "Main topics:" in out or "Key takeaways:" in out, r
    assert b"\x1b" not in r.stdout and b"\r" not in r.stdout, f"stdout is not plain text\n{r}"
    no_crash(r.stdout + err, "summarize")


# -- piped: plain output, stdin as - -------------------------------------------------------------

def test_summarize_stdin_piped_is_plain(cli: Callable[..., Run]) -> None:
    r = cli("summarize", "-", "--max-attempts", "1", input=small_transcript().encode())
    assert r.code == 0, r
    assert "Main topics:" in r.out or "Key takeaways:" in r.out, r
    no_decoration(r)
    # Nothing on stderr but, when the result did not pass its checks, the line that says so.
    assert re.fullmatch(rb"(parlance: warning: [^\n]* did not pass its checks[^\n]*\n)*", r.stderr), \
        f"a successful piped run wrote to stderr\n{r}"


def test_ask_stdin_piped(cli: Callable[..., Run]) -> None:
    r = cli("ask", "-", QUESTION, "--max-tokens", "64", "--max-attempts", "1", "--seed", "1", input=small_transcript().encode())
    assert r.code == 0, r
    assert r.out.strip(), r
    no_decoration(r)


def test_ask_several_files_names_each_citations_file(cli: Callable[..., Run], tmp_path: Path) -> None:
    """`parlance ask FILE FILE QUESTION` asks across both files (ask/stream's uris): each
    source line starts with the name of the file its segment is from."""
    episode = tmp_path / "local-loop.srt"
    episode.write_text(small_transcript())
    bakery = tmp_path / "bakery-hour.srt"
    bakery.write_text("1\n00:00:01,000 --> 00:00:04,000\nLEO: Welcome to the Bakery Hour.\n\n"
                      "2\n00:00:04,500 --> 00:00:09,000\nINES: On Saturdays we bake four hundred loaves.\n")
    args = ("ask", episode, bakery, QUESTION, "--max-tokens", "64", "--max-attempts", "1", "--seed", "1")
    r = cli(*args, "--json")
    assert r.code == 0, r
    result = json.loads(r.out)
    assert [d["uri"] for d in result["retrieval"]["documents"]] == [episode.resolve().as_uri(), bakery.resolve().as_uri()], result
    assert all(c["uri"] in (episode.resolve().as_uri(), bakery.resolve().as_uri()) for c in result["citations"]), result
    text = cli(*args)
    assert text.code == 0, text
    no_decoration(text)
    if result["citations"]:
        lines = text.out.split("Sources:\n", 1)[1].splitlines()
        assert lines and all(l.startswith(("  local-loop.srt [", "  bakery-hour.srt [")) for l in lines if l.strip()), text
    usage = cli("ask", *([episode] * 17), QUESTION, timeout=QUICK_TIMEOUT)
    assert usage.code == 2 and "2 to 17 arguments" in usage.err, usage


def test_rewrite_stdin_piped(cli: Callable[..., Run]) -> None:
    text = b"hey team, we're moving the design review to friday, bring your mockups\n"
    r = cli("rewrite", "--tone", "formal", "--max-tokens", "64", "--max-attempts", "1", "--seed", "1", "-", input=text)
    assert r.code == 0, r
    out = r.out.strip()
    assert out and not out.startswith("[formal"), f"one tone: the rewrite alone, without a heading\n{r}"
    no_decoration(r)


def test_a_result_that_did_not_pass_says_so_and_strict_exits_3(cli: Callable[..., Run]) -> None:
    """A rewrite cut to 16 tokens cannot keep 0.3 of a 70-word selection's length: it does not
    pass. It is still printed; stderr says which check failed, in one line; --strict exits 3."""
    text = ("The quarterly budget review has moved from Tuesday to Thursday afternoon because the finance team "
            "needs two more days to reconcile the vendor invoices, and every department head should bring a "
            "one-page summary of planned spending, open purchase orders and any risks to the delivery schedule. "
            "Please also send the slides to the office manager by noon so that she can print them for everyone.")
    args = ("rewrite", "--tone", "formal", "--max-tokens", "16", "--max-attempts", "1", "--seed", "1", text)
    r = cli(*args)
    assert r.code == 0, r
    assert r.out.strip(), f"the result is printed even when it did not pass\n{r}"
    lines = r.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("parlance: warning: the formal rewrite did not pass its checks after 1 attempt: "), r
    assert "words for" in lines[0], f"the failed check is named (length)\n{r}"
    strict = cli(*args[:1], "--strict", *args[1:])
    assert strict.code == 3, strict
    assert strict.stderr.decode().startswith("parlance: warning: the formal rewrite did not pass its checks"), strict


# -- a long summary on a terminal: the bar, then Ctrl-C ------------------------------------------

@dataclass
class Interrupted:
    run: PtyRun
    code: int
    seconds: float  # from Ctrl-C to the exit
    before: bytes   # stderr when Ctrl-C was typed


@pytest.fixture(scope="module")
def interrupted_summary(parlance_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Interrupted]:
    """`summarize Samples/podcast-sample.srt` on a terminal, interrupted by Ctrl-C once the
    bar shows the model at work (past 0%, with an ETA). Shared by the tests below."""
    tmp = tmp_path_factory.mktemp("interrupted")
    env = dict(os.environ)
    env.update({"PARLANCE_CACHE_DIR": str(tmp / "cache"), "PARLANCE_DATA_DIR": str(tmp / "data"),
                "XDG_CONFIG_HOME": str(tmp / "config")})
    for k in ["PARLANCE_LOG_LEVEL", "PARLANCE_LOG_FILE"]:
        env.pop(k, None)
    r = PtyRun(parlance_bin, ["summarize", str(SAMPLE)], env)
    try:
        r.read_until(lambda r: re.search(rb"\] +[1-9]\d*% ETA", r.stderr) is not None, GENERATION_TIMEOUT,
                     "a progress bar past 0% with an ETA")
        assert r.proc.poll() is None, f"the summary ended before Ctrl-C\n{r}"
        before = r.stderr
        t0 = time.monotonic()
        r.type(b"\x03")
        code = r.finish(INTERRUPT_TIMEOUT)
        yield Interrupted(r, code, time.monotonic() - t0, before)
    finally:
        r.stop()


def test_summarize_on_a_terminal_shows_a_progress_bar(interrupted_summary: Interrupted) -> None:
    r, err = interrupted_summary.run, interrupted_summary.before
    assert b"\r" in err and b"%" in err, f"no progress bar on a terminal's stderr\n{r}"
    assert re.search(rb"\[[#-]{10,}\] +\d{1,3}%", err), f"no '[###---]  NN%' bar\n{r}"
    assert b"ETA " in err, f"the bar shows no ETA\n{r}"
    assert b"\x1b" not in r.stdout and b"\r" not in r.stdout, f"the bar reached stdout\n{r}"


def test_ctrl_c_during_a_summary_exits_130_promptly(interrupted_summary: Interrupted) -> None:
    r = interrupted_summary.run
    assert interrupted_summary.code == 130, f"exit code {interrupted_summary.code} after Ctrl-C\n{r}"
    assert interrupted_summary.seconds < INTERRUPT_TIMEOUT, r
    # The message is on a line of its own: the bar is cleared first.
    last = r.stderr.rsplit(b"\r\x1b[K", 1)[-1]
    assert b"cancelled" in last and b"%" not in last, f"no word of the cancellation on a clean line\n{r}"
    no_crash(r.stdout + r.stderr, "summarize after Ctrl-C")
    # Nothing left behind: the pid is reaped and no process remains in its session.
    with pytest.raises(ProcessLookupError):
        os.kill(r.proc.pid, 0)
    left = processes_in_session(r.proc.pid)
    assert not left, f"processes left after Ctrl-C: {left}"


# -- chat ---------------------------------------------------------------------------------------

def test_chat_answers_each_line(cli: Callable[..., Run]) -> None:
    prompts = b"What is the capital of France?\nAnd what is the capital of Italy?\n"
    r = cli("chat", "--json", "--max-tokens", "64", "--instructions", "Answer in one short sentence.", input=prompts)
    assert r.code == 0, r
    answers = [json.loads(line) for line in r.out.splitlines() if line.strip()]
    assert len(answers) == 2, f"{len(answers)} answers to 2 prompts\n{r}"
    schema = result_schema("session/respond")
    for a in answers:
        validate(a, schema, "chat --json")
        assert isinstance(a.get("text"), str) and a["text"].strip(), f"an empty answer\n{r}"
    # One session: the second turn's prompt holds the first exchange.
    assert answers[1]["usage"]["promptTokens"] > answers[0]["usage"]["promptTokens"], r
    no_decoration(r)


def test_chat_schema_answers_json_of_the_schema(cli: Callable[..., Run], tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string", "maxLength": 40}, "country": {"type": "string", "maxLength": 40}},
        "required": ["city", "country"],
        "additionalProperties": False,
    }
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema))
    prompts = b"Name the capital of France.\nName the capital of Italy.\n"
    r = cli("chat", "--schema", path, "--max-tokens", "64", "--instructions", "Answer in one short sentence.", input=prompts)
    assert r.code == 0, r
    try:
        values = json_values(r.out)
    except ValueError as e:
        raise AssertionError(f"the answers are not JSON: {e}\n{r}") from None
    assert len(values) == 2, f"{len(values)} JSON answers to 2 prompts\n{r}"
    for v in values:
        validate(v, schema, "a chat --schema answer")
    no_decoration(r)
