"""README.md's shell examples, run as a person would run them, against the built daemon.

The rule (every fenced block of README.md is classified; one that cannot be is a failure):
- Only shell blocks (```sh, ```bash, ```shell) are candidates. Other languages (json, lua,
  elisp, toml) and untagged blocks are not run; an untagged block with a line that starts
  like a shell command (`printf `, `echo `, `cat `, `make `, `parlance -…`,
  `.build/release/parlance -…`) fails: tag it ```sh.
- A shell block is not run when the nearest non-blank line above its fence is
  `<!-- not run: REASON -->` (REASON not empty), or when every command in it is `make …`
  (optionally behind VAR=value): set-up, build and test entry points, which CI runs itself.
- A shell block whose every command runs the command line (`parlance COMMAND …`, COMMAND
  a word, optionally with input piped in: `echo … | parlance rewrite -`) runs with
  `bash -e -o pipefail` from the repository root as below; it must exit 0, write something
  to stdout, and write no `parlance:` error to stderr.
- Every other shell block must drive the daemon with its input piped in (`… | parlance`,
  or `… | .build/release/parlance`); it runs with `bash -e -o pipefail` from the
  repository root, stdin /dev/null, the built daemon's directory first on PATH, throwaway
  cache/data/config dirs. It must exit 0, print only JSON lines, and answer every request
  of the block (the single-quoted JSON objects with an id) exactly once with a result
  (analysis/summarize with a non-empty summary, shutdown with {}). A shell block that fits
  none of these fails the test: make it runnable or mark it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from conftest import ROOT, binary_path

README = ROOT / "README.md"
SHELL = {"sh", "bash", "shell"}
NOT_RUN = re.compile(r"^<!--\s*not run:\s*(\S.*?)\s*-->$")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^\s`]*)")
LOOKS_LIKE_SHELL = re.compile(r"^\s*(?:\$\s+)?(?:(?:printf|echo|cat|make)\s|(?:\S*/)?parlance\s+-)")
MAKE = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*=(?:\"[^\"]*\"|'[^']*'|\S*)\s+)*make(?:\s|$)")
CLI_COMMAND = re.compile(r"^(?:[^|]*\|\s*)?parlance\s+[a-z][a-z-]*(?:\s|$)")
PIPED_INTO_DAEMON = re.compile(r"\|\s*(?:\S*/)?parlance(?:\s|$)")
RUN_TIMEOUT = 600


@dataclass
class Block:
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    marker: Optional[str]  # the reason of a `<!-- not run: … -->` right above
    kind: str = ""  # run | skip | error
    why: str = ""
    requests: List[Dict[str, Any]] = field(default_factory=list)


def blocks(readme: str) -> List[Block]:
    lines = readme.splitlines()
    out: List[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang = m.group(2), m.group(3).lower()
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence[0] * len(fence)):
            j += 1
        above = next((lines[k].strip() for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        marker = NOT_RUN.match(above)
        out.append(Block(i + 1, lang, "\n".join(lines[i + 1:j]), marker.group(1) if marker else None))
        i = j + 1
    return out


def commands(text: str) -> List[str]:
    """The block's commands: lines joined at trailing backslashes, comments and blanks dropped."""
    joined = re.sub(r"\\\n", " ", text)
    return [c.strip() for c in joined.splitlines() if c.strip() and not c.strip().startswith("#")]


def block_requests(text: str) -> List[Dict[str, Any]]:
    """The JSON-RPC messages written in single quotes in the block."""
    found = []
    for s in re.findall(r"'([^']*)'", text):
        try:
            v = json.loads(s)
        except ValueError:
            continue
        if isinstance(v, dict) and "method" in v:
            found.append(v)
    return found


def classify(b: Block) -> Block:
    if b.lang not in SHELL:
        shellish = [c for c in b.text.splitlines() if not b.lang and LOOKS_LIKE_SHELL.match(c)]
        if shellish:
            b.kind, b.why = "error", f"```{b.lang or '(untagged)'} block looks like shell ({shellish[0].strip()!r}): tag it ```sh"
        else:
            b.kind, b.why = "skip", f"not a shell block (```{b.lang or '(untagged)'})"
    elif b.marker:
        b.kind, b.why = "skip", f"marked not run: {b.marker}"
    elif commands(b.text) and all(MAKE.match(c) for c in commands(b.text)):
        b.kind, b.why = "skip", "make commands (CI runs them)"
    elif commands(b.text) and all(CLI_COMMAND.match(c) for c in commands(b.text)):
        b.kind, b.why = "cli", "the command line"
    elif PIPED_INTO_DAEMON.search(re.sub(r"\\\n", " ", b.text)):
        b.requests = block_requests(b.text)
        if b.requests:
            b.kind, b.why = "run", "input piped into the daemon"
        else:
            b.kind, b.why = "error", "pipes into the daemon but no JSON-RPC request could be read from it"
    else:
        b.kind, b.why = "error", ("a shell block that is neither make commands nor input piped into the "
                                  "daemon: make it runnable as written, or put `<!-- not run: REASON -->` above it")
    return b


ALL = [classify(b) for b in blocks(README.read_text())]
RUNNABLE = [b for b in ALL if b.kind == "run"]
CLI_BLOCKS = [b for b in ALL if b.kind == "cli"]


def test_every_block_is_classified() -> None:
    errors = [f"README.md:{b.line}: {b.why}" for b in ALL if b.kind == "error"]
    assert not errors, "\n".join(errors)


def test_the_hand_driven_example_is_run() -> None:
    assert any(r.get("method") == "analysis/summarize" for b in RUNNABLE for r in b.requests), \
        "no runnable README block sends analysis/summarize (the \"Drive it by hand\" example)"


@pytest.mark.parametrize("block", RUNNABLE, ids=[f"README.md:{b.line}" for b in RUNNABLE])
def test_block_runs(block: Block, parlance_bin: Path, daemon_env: Dict[str, str]) -> None:
    if ".build/release/parlance" in block.text:
        assert (ROOT / ".build/release/parlance").is_file(), "the block runs .build/release/parlance: make build first"
    env = dict(daemon_env)
    env["PATH"] = f"{parlance_bin.parent}{os.pathsep}{env.get('PATH', '')}"
    p = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block.text], cwd=ROOT, env=env,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=RUN_TIMEOUT)
    out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    where = f"README.md:{block.line}\nstdout:\n{out}\nstderr (tail):\n" + "\n".join(err.splitlines()[-20:])
    assert p.returncode == 0, f"exit code {p.returncode}\n{where}"
    messages = []
    for line in out.splitlines():
        if line.strip():
            try:
                messages.append(json.loads(line))
            except ValueError:
                pytest.fail(f"not a JSON line: {line!r}\n{where}")
    for r in block.requests:
        if "id" not in r:
            continue
        answers = [m for m in messages if "method" not in m and m.get("id") == r["id"]]
        assert len(answers) == 1, f"{r['method']} (id {r['id']}): {len(answers)} answers\n{where}"
        assert "result" in answers[0], f"{r['method']} (id {r['id']}): {answers[0]}\n{where}"
        result = answers[0]["result"]
        if r["method"] == "analysis/summarize":
            assert isinstance(result.get("summary"), str) and result["summary"].strip(), f"no summary\n{where}"
        if r["method"] == "shutdown":
            assert result == {}, where


def test_the_command_line_examples_are_run() -> None:
    assert CLI_BLOCKS, "no README block runs the command line (the \"From the shell\" examples)"


@pytest.mark.parametrize("block", CLI_BLOCKS, ids=[f"README.md:{b.line}" for b in CLI_BLOCKS])
def test_command_line_block_runs(block: Block, parlance_bin: Path, daemon_env: Dict[str, str]) -> None:
    env = dict(daemon_env)
    env["PATH"] = f"{parlance_bin.parent}{os.pathsep}{env.get('PATH', '')}"
    for command in commands(block.text):
        p = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", command], cwd=ROOT, env=env,
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=RUN_TIMEOUT)
        out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
        where = f"README.md:{block.line}: {command}\nstdout:\n{out}\nstderr (tail):\n" + "\n".join(err.splitlines()[-20:])
        assert p.returncode == 0, f"exit code {p.returncode}\n{where}"
        assert out.strip(), f"nothing on stdout\n{where}"
        # A result that did not pass its checks is printed and says so in a warning line; any
        # other `parlance:` line on stderr is an error.
        errors = [l for l in err.splitlines() if "parlance:" in l and not re.match(r"parlance: warning: .* did not pass its checks", l)]
        assert not errors, f"an error on stderr\n{where}"
        assert "\x1b" not in out and "\r" not in out, f"decoration in piped output\n{where}"
        if "--json" in command.split():
            json.loads(out)


# -- placeholders ------------------------------------------------------------------------------
# No example in the READMEs or the spec holds a stand-in where its real text or value belongs:
# a `…_PLACEHOLDER` word or a TODO/FIXME/TBD anywhere in the file; in a fenced block or a spec
# example, a value that is only an angle-bracketed name ("<uri>", `"text": <TRANSCRIPT>`, a
# shell argument `<file>`). Angle brackets that are text (WebVTT's `<v Maya>` inside a cue,
# a model's `<tool_call>`, Vim's `<leader>`) are not values and pass. Runs without a daemon.

DOCUMENTS = [ROOT / "README.md", ROOT / "protocol" / "README.md"]
SPEC_FILE = ROOT / "protocol" / "parlance.openrpc.json"
PLACEHOLDER_WORD = re.compile(r"\b(?:[A-Z0-9]+_)*PLACEHOLDER(?:_[A-Z0-9]+)*\b|\b(?:TODO|FIXME|TBD)\b")
ANGLE_VALUE = re.compile(
    r"\"\s*<[A-Za-z_][^\"<>]*>\s*\""  # a JSON string that is only <name>
    r"|\"\s*:\s*<[A-Za-z_][^<>]*>"  # an unquoted <name> after a JSON key
    r"|\b[A-Za-z_]\w*=<[A-Za-z_][^<>]*>"  # a shell variable or flag set to <name>
)
ANGLE_ARGUMENT = re.compile(r"(?:^|\s)<[A-Za-z_][\w .:/-]*>(?=\s|$)")  # a shell argument that is only <name>


def placeholders(text: str, shell: bool = False) -> List[str]:
    found = [m.group(0) for m in PLACEHOLDER_WORD.finditer(text)]
    found += [m.group(0).strip() for m in ANGLE_VALUE.finditer(text)]
    if shell:
        found += [m.group(0).strip() for m in ANGLE_ARGUMENT.finditer(text)]
    return found


def test_the_placeholder_check_finds_placeholders() -> None:
    assert placeholders("→ {\"x\":1}\nTRANSCRIPT_PLACEHOLDER") == ["TRANSCRIPT_PLACEHOLDER"]
    assert placeholders('{"uri":"<uri>"}') == ['"<uri>"']
    assert placeholders('{"text": <TRANSCRIPT>}') == ['": <TRANSCRIPT>']
    assert placeholders("MODEL=<path> make eval", shell=True) == ["MODEL=<path>"]
    assert placeholders("parlance summarize <file>", shell=True) == ["<file>"]
    assert placeholders("# TODO: a real session") == ["TODO"]
    assert placeholders('{"text":"WEBVTT\\n\\n00:00:01.000 --> 00:00:04.000\\n<v Maya>Welcome back"}') == []
    assert placeholders("vim.keymap.set('x', '<leader>r', ':<C-u>lua f()<CR>')") == []
    assert placeholders("sort < list.txt; cat <<EOF", shell=True) == []


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_example_holds_a_placeholder(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    found = [f"{path.relative_to(ROOT)}:{text[:m.start()].count(chr(10)) + 1}: {m.group(0)}" for m in PLACEHOLDER_WORD.finditer(text)]
    for b in blocks(text):
        for i, line in enumerate(b.text.splitlines()):
            found += [f"{path.relative_to(ROOT)}:{b.line + 1 + i}: {p}" for p in placeholders(line, shell=b.lang in SHELL)
                      if not PLACEHOLDER_WORD.fullmatch(p)]
    assert not found, "placeholders where a real example belongs:\n" + "\n".join(found)


def test_no_spec_example_holds_a_placeholder() -> None:
    spec = json.loads(SPEC_FILE.read_text(encoding="utf-8"))
    found = []

    def walk(v: Any, where: str) -> None:
        if isinstance(v, str):
            if PLACEHOLDER_WORD.search(v) or re.fullmatch(r"\s*<[A-Za-z_][^<>]*>\s*", v):
                found.append(f"{where}: {v[:80]!r}")
        elif isinstance(v, dict):
            for k, x in v.items():
                walk(x, f"{where}.{k}")
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(x, f"{where}[{i}]")

    for m in spec["methods"]:
        walk(m.get("examples", []), m["name"])
    assert not found, "spec examples with placeholders:\n" + "\n".join(found)
