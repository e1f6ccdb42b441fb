"""`make install`, `make uninstall`, `make dist` and `make deb`, checked by running what they
produce away from the checkout (``python3 -m pytest tests/test_install.py -q``).

Each installed tree is run from a copy in a fresh directory, under a bare environment (the
equivalent of ``env -i HOME=<fresh dir> PATH=/usr/bin:/bin``): no $PARLANCE_DEFAULT_MODEL,
no $PARLANCE_LLAMA_LIBDIR, no LD_LIBRARY_PATH, and a HOME whose ~/.cache has no
parlance-setup. `ldd` and the running daemon's /proc/PID/maps must then show every library
and the model coming from the copy, none from the checkout or the set-up cache. (The set-up
cache is not renamed away: other builds on the machine use it; the checks above show it is
not used.)

Slow parts, marked ``slow`` in their names and docstrings: `make install` runs `make build`
(a no-op after `make test`'s build, which it ships; a full release compile on a bare checkout);
each model run loads the 1.5B default model and generates at most 64-192 tokens. Every wait
is on a process exit or an output line; timeouts only bound a hung step.
"""

from __future__ import annotations

import gzip
import json
import os
import platform
import select
import shutil
import subprocess
import tarfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"   # the embedded default (scripts/setup-model.sh)
MAKE_TIMEOUT = 3600.0      # on a bare checkout the first make compiles the package (minutes on 2 cores)
RUN_TIMEOUT = 600.0        # bounds one model load and a short generation (seconds when the machine is idle)
# One llama.cpp thread: the tests share 2 cores with whatever else runs, and llama.cpp's
# threads spin-wait for each other, so more threads than free cores stall a run many times over.
DAEMON_ARGS = ["--threads", "1"]
TEXT = "Alice: the launch moves to March. Bob: then marketing needs the date by Friday."

pytestmark = pytest.mark.skipif(platform.system() != "Linux", reason="installing is Linux-only (ELF, patchelf)")


def setup_cache() -> Path:
    env = os.environ
    return Path(env.get("PARLANCE_SETUP_CACHE")
                or Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "parlance-setup").resolve()


def swift_runtime_dir() -> List[str]:
    """The toolchain directory the checkout's build takes libswiftCore from, if it links it."""
    out = subprocess.run(["ldd", str(ROOT / ".build" / "release" / "parlance")], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True).stdout
    return [os.path.dirname(os.path.realpath(line.split("=>", 1)[1].split("(", 1)[0].strip()))
            for line in out.splitlines() if line.strip().startswith("libswiftCore") and "=> /" in line]


# No path the installed parlance uses may start with these.
FORBIDDEN = [str(ROOT), str(setup_cache()), *swift_runtime_dir()]


def make(*args: str) -> str:
    """Runs make in the checkout; returns its stdout (fails with its output). Without the test
    suites' $PARLANCE_DEFAULT_MODEL (`make test` points it at SmolLM2-135M): installed as a user
    installs, the tree holds the embedded default the set-up recorded."""
    env = {k: v for k, v in os.environ.items() if k not in ("PARLANCE_DEFAULT_MODEL", "PARLANCE_TEST_MODEL")}
    p = subprocess.run(["make", "--no-print-directory", *args], cwd=ROOT, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=MAKE_TIMEOUT, env=env)
    assert p.returncode == 0, f"make {' '.join(args)} failed ({p.returncode}):\n{p.stdout[-6000:]}"
    return p.stdout


def bare_env(home: Path) -> Dict[str, str]:
    """What `env -i HOME=home PATH=/usr/bin:/bin` leaves."""
    home.mkdir(parents=True, exist_ok=True)
    return {"HOME": str(home), "PATH": "/usr/bin:/bin"}


def files_under(top: Path) -> List[str]:
    return sorted(str(p.relative_to(top)) for p in top.rglob("*") if p.is_file() or p.is_symlink())


def relocate(tree: Path, dest: Path) -> Path:
    shutil.copytree(tree, dest, symlinks=True)
    return dest


def check_ldd(prefix: Path, env: Dict[str, str]) -> None:
    """bin/parlance and lib/parlance/*: everything resolves, llama.cpp and the Swift runtime
    from the copy, nothing from the checkout, the set-up cache or the Swift toolchain."""
    objects = [prefix / "bin" / "parlance", *sorted((prefix / "lib" / "parlance").iterdir())]
    for obj in objects:
        out = subprocess.run(["ldd", str(obj)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, timeout=60).stdout
        assert "not found" not in out, f"ldd {obj}:\n{out}"
        for bad in FORBIDDEN:
            assert bad not in out, f"ldd {obj} resolves into {bad}:\n{out}"
        libdir = os.path.realpath(prefix / "lib" / "parlance")
        for line in out.splitlines():
            if any(k in line for k in ("libllama", "libggml", "libswift", "libFoundation")) and "=>" in line:
                path = os.path.realpath(line.split("=>", 1)[1].split("(", 1)[0].strip())
                assert os.path.dirname(path) == libdir, f"{obj}: {line.strip()} is not the installed copy"
    rpaths = {o.name: readelf_runpath(o) for o in objects}
    assert rpaths.pop("parlance") == "$ORIGIN/../lib/parlance"
    assert set(rpaths.values()) == {"$ORIGIN"}, rpaths


def readelf_runpath(obj: Path) -> str:
    out = subprocess.run(["readelf", "-d", str(obj)], stdout=subprocess.PIPE, text=True, check=True).stdout
    paths = [line.split("[", 1)[1].rstrip("]") for line in out.splitlines() if "(RUNPATH)" in line or "(RPATH)" in line]
    assert len(paths) == 1, f"{obj}: expected one RUNPATH, got {paths}"
    return paths[0]


# -- one NDJSON exchange with the installed daemon -----------------------------------------

def read_line(proc: subprocess.Popen, buf: bytearray, deadline: float) -> Optional[bytes]:
    """The next line of the daemon's stdout; None at end of output."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    while b"\n" not in buf:
        left = deadline - time.monotonic()
        assert left > 0, "the daemon wrote no complete line in time"
        ready, _, _ = select.select([fd], [], [], left)
        assert ready, "the daemon wrote no complete line in time"
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return None
        buf += chunk
    i = buf.index(b"\n")
    line = bytes(buf[:i])
    del buf[:i + 1]
    return line


def summarize_over_stdio(binary: Path, env: Dict[str, str], workdir: Path) -> Tuple[Dict, List[str]]:
    """slow: initialize, analysis/summarize (96 tokens at most), then — with the model loaded —
    the daemon's mapped files, then shutdown, exit and end of input. Returns (the summarize
    response, the paths in /proc/PID/maps)."""
    msgs = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "analysis/summarize", "params": {"text": TEXT, "maxTokens": 96}},
    ]
    log = open(workdir / "daemon.log", "wb")
    proc = subprocess.Popen([str(binary), "--stdio", *DAEMON_ARGS], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=log, env=env, cwd=workdir)
    try:
        assert proc.stdin is not None
        proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in msgs))
        proc.stdin.flush()
        buf = bytearray()
        deadline = time.monotonic() + RUN_TIMEOUT
        answer = None
        while answer is None:
            line = read_line(proc, buf, deadline)
            assert line is not None, f"end of output before the summary; log:\n{(workdir / 'daemon.log').read_text(errors='replace')[-3000:]}"
            m = json.loads(line)
            if m.get("id") == 2 and "method" not in m:
                answer = m
        maps = sorted({l.split(None, 5)[5] for l in Path(f"/proc/{proc.pid}/maps").read_text().splitlines()
                       if len(l.split(None, 5)) == 6 and l.split(None, 5)[5].startswith("/")})
        proc.stdin.write(b'{"jsonrpc":"2.0","id":3,"method":"shutdown"}\n{"jsonrpc":"2.0","method":"exit"}\n')
        proc.stdin.close()
        while read_line(proc, buf, deadline) is not None:
            pass
        assert proc.wait(60) == 0
        return answer, maps
    finally:
        if proc.poll() is None:
            proc.kill()  # this test's own daemon, by its pid
            proc.wait(30)
        log.close()


def check_runs(prefix: Path, tmp: Path) -> None:
    """slow: the relocated tree answers a summarize with nothing from the checkout or cache."""
    env = bare_env(tmp / "home")
    check_ldd(prefix, env)
    version = subprocess.run([str(prefix / "bin" / "parlance"), "--version"], env=env, stdout=subprocess.PIPE,
                             text=True, timeout=30, check=True).stdout
    assert version.startswith("parlance ")
    answer, maps = summarize_over_stdio(prefix / "bin" / "parlance", env, tmp)
    assert "result" in answer, answer
    assert isinstance(answer["result"].get("summary"), str) and answer["result"]["summary"].strip(), answer
    for path in maps:
        for bad in FORBIDDEN:
            assert not path.startswith(bad), f"the daemon mapped {path}"
    llama = [p for p in maps if any(k in p for k in ("/libllama", "/libggml", "/libswift", "/libFoundation"))]
    assert llama and all(p.startswith(str(prefix / "lib" / "parlance") + "/") for p in llama), llama
    models = [p for p in maps if p.endswith(".gguf")]
    assert all(p == str(prefix / "share" / "parlance" / "models" / MODEL_NAME) for p in models), models


# -- make install ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`make install PREFIX=<tmp>` (slow only on a checkout not yet built)."""
    prefix = tmp_path_factory.mktemp("install") / "prefix"
    make("install", f"PREFIX={prefix}")
    return prefix


def test_install_layout(installed: Path) -> None:
    p = installed
    for rel in ["bin/parlance", "lib/parlance/libllama.so.0", "lib/parlance/libggml.so.0",
                "lib/parlance/libggml-base.so.0", "lib/parlance/libggml-cpu.so.0",
                f"share/parlance/models/{MODEL_NAME}", "share/man/man1/parlance.1.gz",
                "share/bash-completion/completions/parlance", "share/zsh/site-functions/_parlance",
                "share/fish/vendor_completions.d/parlance.fish",
                "share/parlance/editors/vim/plugin/parlance.vim", "share/parlance/editors/vim/doc/tags",
                "share/parlance/editors/emacs/parlance.el", "share/parlance/editors/vscode/package.json",
                "share/doc/parlance/copyright", "share/doc/parlance/licenses/llama.cpp-MIT.txt",
                "share/doc/parlance/licenses/Qwen2.5-Coder-Apache-2.0.txt", "share/parlance/install-manifest.txt",
                # the Swift runtime, when the build links it (make build's does)
                *[f"lib/parlance/{lib}" for lib in ("libswiftCore.so", "libFoundationEssentials.so", "lib_FoundationICU.so")
                  if swift_runtime_dir()]]:
        assert (p / rel).is_file(), f"{rel} is not installed"
    assert os.access(p / "bin" / "parlance", os.X_OK)
    assert gzip.decompress((p / "share/man/man1/parlance.1.gz").read_bytes()).startswith(b".TH PARLANCE 1")
    assert "complete" in (p / "share/bash-completion/completions/parlance").read_text()
    assert (p / "share/zsh/site-functions/_parlance").read_text().startswith("#compdef parlance")
    files = files_under(p)
    assert not [f for f in files if "/test" in f or f.endswith("-test.el") or "/." in f], "editor tests were installed"
    # The manifest lists exactly the installed files.
    manifest = (p / "share/parlance/install-manifest.txt").read_text().splitlines()
    listed = sorted(l[2:] for l in manifest if l.startswith("f "))
    assert listed == files


def test_install_runs_relocated(installed: Path, tmp_path: Path) -> None:
    """slow: a copy of the install, elsewhere, under a bare environment."""
    check_runs(relocate(installed, tmp_path / "moved"), tmp_path)


def test_installed_cli_summarize(installed: Path, tmp_path: Path) -> None:
    """slow: `parlance summarize FILE` from the relocated install, on the first six cues of
    Samples/podcast-sample.srt (the whole episode takes minutes on 2 cores)."""
    prefix = relocate(installed, tmp_path / "moved")
    cues = (ROOT / "Samples" / "podcast-sample.srt").read_text(encoding="utf-8").strip().split("\n\n")
    sample = tmp_path / "podcast-start.srt"
    sample.write_text("\n\n".join(cues[:6]) + "\n", encoding="utf-8")
    # 192: room for the whole JSON object (a summary cut off at maxTokens is an error).
    p = subprocess.run([str(prefix / "bin" / "parlance"), "summarize", "--json", "--max-tokens", "192",
                        "--max-attempts", "1", *DAEMON_ARGS, str(sample)],
                       env=bare_env(tmp_path / "home"), cwd=tmp_path, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=RUN_TIMEOUT)
    assert p.returncode == 0, f"exit {p.returncode}\nstdout:\n{p.stdout[-2000:]}\nstderr:\n{p.stderr[-3000:]}"
    result = json.loads(p.stdout)
    assert isinstance(result.get("summary"), str) and result["summary"].strip(), result


def test_uninstall_removes_exactly_what_was_installed(tmp_path: Path) -> None:
    """Install into a fresh prefix and into one with other software; uninstall each."""
    fresh = tmp_path / "fresh"
    make("install", f"PREFIX={fresh}")
    make("uninstall", f"PREFIX={fresh}")
    assert fresh.is_dir() and list(fresh.iterdir()) == [], files_under(fresh)

    shared = tmp_path / "shared"
    (shared / "bin").mkdir(parents=True)
    (shared / "bin" / "other-tool").write_text("#!/bin/sh\n")
    (shared / "share" / "man" / "man1").mkdir(parents=True)   # an empty directory that was there before
    make("install", f"PREFIX={shared}")
    make("install", f"PREFIX={shared}")                       # again: idempotent, same manifest
    make("uninstall", f"PREFIX={shared}")
    left = sorted(str(p.relative_to(shared)) for p in shared.rglob("*"))
    assert left == ["bin", "bin/other-tool", "share", "share/man", "share/man/man1"], left


# -- make dist -------------------------------------------------------------------------------

def test_dist_archive_runs_where_unpacked(installed: Path, tmp_path: Path) -> None:
    """slow: the archive, unpacked elsewhere, runs from there; it holds the install's tree."""
    out = make("dist")
    version = subprocess.run([str(installed / "bin" / "parlance"), "--version"], stdout=subprocess.PIPE,
                             text=True, check=True).stdout.split()[1]
    name = f"parlance-{version}-linux-{platform.machine()}"
    archive = ROOT / ".build" / "dist" / f"{name}.tar.gz"
    assert archive.is_file(), out
    with tarfile.open(archive) as tar:
        members = tar.getmembers()
        assert all(m.name == name or m.name.startswith(name + "/") for m in members)
        assert all(m.uid == 0 and m.gid == 0 for m in members)
        tar.extractall(tmp_path / "unpacked")
    top = tmp_path / "unpacked" / name
    assert files_under(top) == files_under(installed)  # the same tree as make install (PREFIX is not /usr)
    check_runs(top, tmp_path)


# -- make deb --------------------------------------------------------------------------------

def test_deb_extracts_and_runs(installed: Path, tmp_path: Path) -> None:
    """slow: `make deb` (lintian runs inside it; errors fail it), then dpkg -x (never dpkg -i on
    a shared machine) and run /usr/bin/parlance from the extracted root."""
    out = make("deb")
    version = subprocess.run([str(installed / "bin" / "parlance"), "--version"], stdout=subprocess.PIPE,
                             text=True, check=True).stdout.split()[1]
    arch = subprocess.run(["dpkg", "--print-architecture"], stdout=subprocess.PIPE, text=True, check=True).stdout.strip()
    deb = ROOT / ".build" / "dist" / f"parlance_{version}_{arch}.deb"
    assert deb.is_file(), out
    info = subprocess.run(["dpkg-deb", "-I", str(deb)], stdout=subprocess.PIPE, text=True, check=True).stdout
    depends = [l for l in info.splitlines() if l.strip().startswith("Depends:")]
    assert depends and "libc6" in depends[0], info
    root = tmp_path / "root"
    subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
    usr = root / "usr"
    files = set(files_under(usr))
    for rel in ["share/doc/parlance/copyright", "share/doc/parlance/changelog.gz",
                "share/zsh/vendor-completions/_parlance", "share/lintian/overrides/parlance"]:
        assert rel in files, f"{rel} is not in the package"
    # The same tree as make install, but for what a .deb has instead: dpkg's file list for the
    # manifest, Debian's zsh directory, the changelog and lintian overrides.
    expected = {f.replace("share/zsh/site-functions/", "share/zsh/vendor-completions/") for f in files_under(installed)}
    expected -= {"share/parlance/install-manifest.txt"}
    expected |= {"share/doc/parlance/changelog.gz", "share/lintian/overrides/parlance"}
    assert files == expected, (sorted(files - expected), sorted(expected - files))
    check_runs(relocate(usr, tmp_path / "moved-usr"), tmp_path)


# -- the README, from "Install" to a rewrite in Neovim -------------------------------------

def readme_block(heading: str, lang: str) -> str:
    import re
    readme = (ROOT / "README.md").read_text()
    at = readme.index(heading)
    m = re.search(r"```" + lang + r"\n(.*?)```", readme[at:], re.S)
    assert m, f"no ```{lang} block under {heading!r} in README.md"
    return m.group(1)


def test_slow_readme_neovim_rewrite_with_only_parlance_on_path(installed: Path, tmp_path: Path) -> None:
    """slow: a newcomer's path. The installed tree, copied elsewhere; a bare environment whose
    PATH has that bin and the system's, a fresh HOME whose init.lua is the README's Neovim 0.7
    block as written, and an XDG_CACHE_HOME of its own (as Flatpak and snap editors have). The
    code-action menu is answered "Rewrite: formal" (vim.ui.select, as a person picks it); the
    selection must be replaced."""
    if shutil.which("nvim") is None:
        subprocess.run(["bash", "-c", "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq neovim"],
                       check=True, timeout=900, stdout=subprocess.DEVNULL)
    prefix = relocate(installed, tmp_path / "elsewhere")
    env = bare_env(tmp_path / "home")
    env["PATH"] = f"{prefix / 'bin'}:/usr/bin:/bin"
    env["XDG_CACHE_HOME"] = str(tmp_path / "another-cache")
    env["TERM"] = "dumb"
    (tmp_path / "home" / ".config" / "nvim").mkdir(parents=True)
    (tmp_path / "home" / ".config" / "nvim" / "init.lua").write_text(readme_block("### Neovim 0.7 (`init.lua`)", "lua"))
    note = tmp_path / "note.md"
    note.write_text("# Notes\nhey Sam, can u send the 14 slides by Thursday? thx\n")
    env["NOTE"], env["OUT"] = str(note), str(tmp_path / "result.txt")
    p = subprocess.run(["nvim", "--headless", "-c", f"luafile {ROOT / 'tests/fixtures/nvim-readme-rewrite.lua'}"], env=env,
                       cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=RUN_TIMEOUT)
    result = (tmp_path / "result.txt").read_text() if (tmp_path / "result.txt").exists() else ""
    assert result.startswith("BEFORE:"), f"nvim exit {p.returncode}: {result}\n{p.stdout.decode(errors='replace')[-3000:]}"
    after = result.split("AFTER:", 1)[1].strip()
    assert after and "hey Sam, can u" not in after, result
