#!/usr/bin/env python3
"""A loopback stand-in for the Hugging Face hub and an Ollama (OCI distribution) registry,
for Tests/ModelStoresTests/PullTests.swift. Standard library only (Python 3.11).

    python3 tests/hub_server.py ROOT [--port-file FILE] [--log FILE] [--exit-on-eof]

Two threading HTTP/1.1 servers on 127.0.0.1, ports chosen by the system: the hub/registry,
whose port is the first line printed on stdout (and written to --port-file), and a "CDN",
to which file downloads redirect (its port is the second line, "cdn PORT").

Content: each folder ROOT/<repo>/ is a model, served
  - as the Hugging Face repository <org>/<repo> for ANY <org>:
      GET  /api/models/<org>/<repo>/tree/<rev>?recursive=true   the file list, two entries a page
                                                                (Link: <...>; rel="next"), LFS
                                                                entries with lfs.oid = sha256
      HEAD|GET /<org>/<repo>/resolve/<rev>/<file>               302 to the CDN, with X-Repo-Commit,
                                                                X-Linked-Etag (sha256), X-Linked-Size;
                                                                <rev> is main or the commit
    (a README.md that is not LFS is listed too; the commit is a hash of the folder's files)
  - as the Ollama model <ns>/<repo>:<tag> for ANY <ns>:
      GET /v2/                                   {}
      GET /v2/<ns>/<repo>/manifests/<tag>        the image manifest: a config blob, the model
                                                 layer (tag "latest": the first .gguf; a tag
                                                 naming a quantization, e.g. q4_1, that file),
                                                 a template and a params layer
      GET /v2/<ns>/<repo>/tags/list              {"name", "tags"}
      GET /v2/<ns>/<repo>/blobs/sha256:<hex>     blobs over 1 MiB: 307 to the CDN; smaller: served
The CDN: GET|HEAD /cdn/<sha256>?... serves the bytes, honouring Range: bytes=N- with 206
(416 past the end), through sendfile when no fault applies.

Faults are asked for by the name itself: the <org> (Hugging Face) or <ns> (Ollama) is read as
"-"-separated words; words that are not faults are ignored, so a test adds a unique word to
get fresh counters (counters are per org/ns, repo and file):
  drop         the first body transfer of each file stops halfway: the connection is closed
  drop<N>      the first N body transfers stop halfway
  dropall      every body transfer stops halfway
  ignorerange  a Range request is answered 200 with the whole body
  badsum       a model file's bytes differ from the announced sha256 (one byte flipped;
               the registry's small synthetic config/template/params blobs stay right)
  gated        401 (X-Error-Code: GatedRepo; OCI: UNAUTHORIZED) unless the request has
               "Authorization: Bearer hub-test-token"
  missing      resolve and blobs answer 404 (EntryNotFound, BLOB_UNKNOWN) although the file
               is listed
  trickle      the first body transfer of each file trickles: 16 KiB every 25 ms
  trickleall   every body transfer trickles
  insecure     resolve redirects to http://hub.invalid/... (plain http to another host)
  loop         resolve redirects to itself, forever
  error<N>     the first N resolve GETs (per file) answer 500
A repository folder that does not exist answers 404 (X-Error-Code: RepoNotFound; OCI:
MANIFEST_UNKNOWN).

--exit-on-eof: end when stdin reaches its end (the parent's pipe closed: it exited).

--log FILE gets one JSON object a line per request, written before the answer is sent:
{"server": "hub"|"cdn", "method", "path", "status", "range": N or null, "auth": bool (an
Authorization header came), and for a file's requests "key": "<org>/<repo>/<file>" (Ollama:
"<ns>/<repo>/sha256:<hex>"); a body's also "bytes" (announced), "drop", "trickle"}.
"""

import hashlib
import json
import os
import signal
import socket
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOKEN = "hub-test-token"
PAGE = 2
TRICKLE = (16 * 1024, 0.025)
REDIRECT_OVER = 1 << 20

ROOT = ""
LOG = None
LOG_LOCK = threading.Lock()
CDN_PORT = 0

_lock = threading.Lock()
_sha_cache = {}  # (path, dev, ino, size, mtime_ns) -> sha256 hex
_counters = {}   # (kind, key) -> count
_blobs = {}      # sha256 hex -> ("file", path) | ("bytes", data)
_signature = [0]


def log(entry):
    if LOG is None:
        return
    line = json.dumps(entry) + "\n"
    with LOG_LOCK:
        with open(LOG, "a") as f:
            f.write(line)
            f.flush()


def bump(kind, key):
    with _lock:
        n = _counters.get((kind, key), 0) + 1
        _counters[(kind, key)] = n
        return n


def sha256_of(path):
    st = os.stat(path)
    k = (path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    with _lock:
        if k in _sha_cache:
            return _sha_cache[k]
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            b = f.read(8 << 20)
            if not b:
                break
            h.update(b)
    hexd = h.hexdigest()
    with _lock:
        _sha_cache[k] = hexd
        _blobs[hexd] = ("file", path)
    return hexd


def repo_files(repo):
    """[(name, path, size, sha256)] of ROOT/<repo>, sorted; None when there is no such repo."""
    if not repo or "/" in repo or repo.startswith("."):
        return None
    d = os.path.join(ROOT, repo)
    if not os.path.isdir(d):
        return None
    out = []
    for name in sorted(os.listdir(d)):
        p = os.path.join(d, name)
        if os.path.isfile(p) and not name.startswith("."):
            out.append((name, p, os.path.getsize(p), sha256_of(p)))
    return out


def commit_of(files):
    h = hashlib.sha1()
    for name, _, size, sha in files:
        h.update(f"{name}\0{size}\0{sha}\n".encode())
    return h.hexdigest()


def faults_of(label):
    words = set(label.lower().split("-"))
    f = {"words": words}
    for w in words:
        if w.startswith("drop") and w[4:].isdigit():
            f["dropN"] = int(w[4:])
        if w.startswith("error") and w[5:].isdigit():
            f["errorN"] = int(w[5:])
    if "drop" in words:
        f["dropN"] = max(f.get("dropN", 0), 1)
    return f


def quant_of(name):
    stem = name[:-5] if name.lower().endswith(".gguf") else name
    for tok in reversed(stem.replace(".", "-").split("-")):
        u = tok.upper()
        if u in ("F16", "BF16", "F32") or (u[:1] == "Q" and u[1:2].isdigit()) or (u[:2] == "IQ" and u[2:3].isdigit()):
            return u
    return None


def register_bytes(data):
    hexd = hashlib.sha256(data).hexdigest()
    with _lock:
        _blobs[hexd] = ("bytes", data)
    return hexd


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "hub-test/1"
    role = "hub"

    def log_message(self, format, *args):  # quiet
        pass

    # -- helpers ---------------------------------------------------------------------------
    def auth(self):
        return self.headers.get("Authorization")

    def range_start(self):
        r = self.headers.get("Range")
        if not r or not r.startswith("bytes="):
            return None
        first = r[6:].split(",")[0]
        start = first.split("-")[0]
        return int(start) if start.isdigit() else None

    def note(self, status, **extra):
        entry = {"server": self.role, "method": self.command, "path": self.path, "status": status,
                 "range": self.range_start(), "auth": self.auth() is not None}
        entry.update(extra)
        log(entry)

    def reply(self, status, body=b"", ctype="application/json", headers=None, **extra):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        self.note(status, **extra)  # (before the answer: a client that has it finds it logged)
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD" and body:
            self.wfile.write(body)

    def send_bytes(self, key, source, size, faults):
        """The body of a file, with Range, and the faults asked for."""
        start = self.range_start()
        status = 200
        if start is not None and "ignorerange" not in faults["words"]:
            if start >= size:
                self.reply(416, b"", headers={"Content-Range": f"bytes */{size}"}, key=key)
                return
            status = 206
        else:
            start = 0
        length = size - start
        head = self.command == "HEAD"
        n = 0 if head else bump("body", key)
        drop = not head and ("dropall" in faults["words"] or n <= faults.get("dropN", 0))
        trickle = not head and ("trickleall" in faults["words"] or ("trickle" in faults["words"] and n == 1))
        badsum = "badsum" in faults["words"] and source[0] == "file"
        self.note(status, key=key, bytes=length, drop=drop, trickle=trickle)
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(length))
        self.send_header("Accept-Ranges", "bytes")
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{size - 1}/{size}")
        self.end_headers()
        if head:
            return
        send = length // 2 if drop else length
        if source[0] == "file" and not (trickle or badsum):
            with open(source[1], "rb") as f:
                self.wfile.flush()
                sent = 0
                while sent < send:
                    k = self.connection.sendfile(f, offset=start + sent, count=send - sent)
                    if not k:
                        break
                    sent += k
        else:
            data = None
            f = None
            if source[0] == "bytes":
                data = source[1]
            else:
                f = open(source[1], "rb")
                f.seek(start)
            try:
                pos = start
                end = start + send
                step = TRICKLE[0] if trickle else 1 << 20
                flip = size // 2
                while pos < end:
                    k = min(step, end - pos)
                    chunk = bytearray(data[pos:pos + k] if data is not None else f.read(k))
                    if not chunk:
                        break
                    if badsum and pos <= flip < pos + len(chunk):
                        chunk[flip - pos] ^= 0xFF
                    self.wfile.write(chunk)
                    pos += len(chunk)
                    if trickle:
                        time.sleep(TRICKLE[1])
            finally:
                if f:
                    f.close()
        if drop:
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    # -- routes ----------------------------------------------------------------------------
    def do_HEAD(self):
        self.route()

    def do_GET(self):
        self.route()

    def route(self):
        try:
            url = urllib.parse.urlsplit(self.path)
            parts = [urllib.parse.unquote(p) for p in url.path.split("/")[1:]]
            query = urllib.parse.parse_qs(url.query)
            if self.role == "cdn":
                return self.cdn(parts, query)
            if parts[:2] == ["api", "models"] and len(parts) >= 6 and parts[4] == "tree":
                return self.tree(parts[2], parts[3], parts[5], query)
            if len(parts) >= 5 and parts[2] == "resolve":
                return self.resolve(parts[0], parts[1], parts[3], "/".join(parts[4:]))
            if parts and parts[0] == "v2":
                return self.registry(parts[1:])
            self.reply(404, {"error": "no such route"})
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    # Hugging Face
    def tree(self, org, repo, rev, query):
        files = repo_files(repo)
        if files is None:
            return self.reply(404, {"error": "Repository not found"}, headers={"X-Error-Code": "RepoNotFound"})
        entries = [{"type": "file", "oid": hashlib.sha1(b"readme").hexdigest(), "size": 6, "path": "README.md"}]
        for name, _, size, sha in files:
            entries.append({"type": "file", "oid": hashlib.sha1(sha.encode()).hexdigest(), "size": size, "path": name,
                            "lfs": {"oid": sha, "size": size, "pointerSize": 134}})
        entries.sort(key=lambda e: e["path"])
        cursor = int(query.get("cursor", ["0"])[0])
        page = entries[cursor:cursor + PAGE]
        headers = {}
        if cursor + PAGE < len(entries):
            nxt = f"/api/models/{org}/{repo}/tree/{rev}?recursive=true&cursor={cursor + PAGE}"
            headers["Link"] = f'<http://127.0.0.1:{self.server.server_address[1]}{nxt}>; rel="next"'
        self.reply(200, page, headers=headers)

    def resolve(self, org, repo, rev, path):
        faults = faults_of(org)
        words = faults["words"]
        files = repo_files(repo)
        if files is None:
            return self.reply(404, {"error": "Repository not found"}, headers={"X-Error-Code": "RepoNotFound"})
        if "gated" in words and self.auth() != f"Bearer {TOKEN}":
            return self.reply(401, {"error": f"Access to model {org}/{repo} is restricted. You must have access to it and be authenticated to access it. Please log in."},
                              headers={"X-Error-Code": "GatedRepo"})
        commit = commit_of(files)
        if rev not in ("main", commit):
            return self.reply(404, {"error": "Revision not found"}, headers={"X-Error-Code": "RevisionNotFound"})
        found = [f for f in files if f[0] == path]
        if not found or "missing" in words:
            return self.reply(404, {"error": "Entry not found"}, headers={"X-Error-Code": "EntryNotFound"})
        name, p, size, sha = found[0]
        key = f"{org}/{repo}/{name}"
        if self.command == "GET" and bump("resolve", key) <= faults.get("errorN", 0):
            return self.reply(500, {"error": "Internal Error - We're working hard to fix this as soon as possible!"}, key=key)
        meta = {"X-Repo-Commit": commit, "X-Linked-Etag": f'"{sha}"', "X-Linked-Size": str(size),
                "ETag": f'"{hashlib.sha1(sha.encode()).hexdigest()}"'}
        if "loop" in words:
            location = self.path
        elif "insecure" in words:
            location = f"http://hub.invalid/cdn/{sha}"
        else:
            with _lock:
                _signature[0] += 1
                sig = _signature[0]
            q = urllib.parse.urlencode({"key": key, "faults": org, "sig": sig})
            location = f"http://127.0.0.1:{CDN_PORT}/cdn/{sha}?{q}"
        meta["Location"] = location
        self.reply(302, b"", ctype="text/plain", headers=meta, key=key)

    # The CDN
    def cdn(self, parts, query):
        if len(parts) != 2 or parts[0] != "cdn":
            return self.reply(404, {"error": "no such route"})
        with _lock:
            source = _blobs.get(parts[1])
        if source is None:
            return self.reply(404, {"error": "no such object"})
        size = os.path.getsize(source[1]) if source[0] == "file" else len(source[1])
        key = query.get("key", [parts[1]])[0]
        self.send_bytes(key, source, size, faults_of(query.get("faults", [""])[0]))

    # Ollama / OCI
    def manifest_for(self, repo, tag):
        files = repo_files(repo)
        if files is None:
            return None, None
        ggufs = [f for f in files if f[0].lower().endswith(".gguf")]
        if not ggufs:
            return None, []
        tags = ["latest"] + sorted({q.lower() for q in (quant_of(f[0]) for f in ggufs) if q})
        if tag == "latest":
            chosen = ggufs[0]
        else:
            chosen = next((f for f in ggufs if (quant_of(f[0]) or "").lower() == tag.lower()), None)
            if chosen is None:
                return None, tags
        name, path, size, sha = chosen
        template = b"{{ .System }}\n{{ .Prompt }}"
        params = json.dumps({"stop": ["<|im_end|>"], "temperature": 0.2}).encode()
        t_sha, p_sha = register_bytes(template), register_bytes(params)
        config = json.dumps({"model_format": "gguf", "model_family": "llama", "file_type": quant_of(name) or "unknown",
                             "architecture": "amd64", "os": "linux",
                             "rootfs": {"type": "layers", "diff_ids": [f"sha256:{sha}", f"sha256:{t_sha}", f"sha256:{p_sha}"]}}).encode()
        c_sha = register_bytes(config)
        manifest = {"schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
                    "config": {"mediaType": "application/vnd.docker.container.image.v1+json", "digest": f"sha256:{c_sha}", "size": len(config)},
                    "layers": [{"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{sha}", "size": size},
                               {"mediaType": "application/vnd.ollama.image.template", "digest": f"sha256:{t_sha}", "size": len(template)},
                               {"mediaType": "application/vnd.ollama.image.params", "digest": f"sha256:{p_sha}", "size": len(params)}]}
        return manifest, tags

    def registry(self, parts):
        if parts in ([], [""]):
            return self.reply(200, {})
        if len(parts) != 4:
            return self.reply(404, {"errors": [{"code": "NAME_UNKNOWN", "message": "repository name not known to registry"}]})
        ns, repo, kind, ref = parts
        faults = faults_of(ns)
        if "gated" in faults["words"] and self.auth() != f"Bearer {TOKEN}":
            return self.reply(401, {"errors": [{"code": "UNAUTHORIZED", "message": "authentication required"}]})
        if kind == "tags" and ref == "list":
            _, tags = self.manifest_for(repo, "latest")
            if tags is None:
                return self.reply(404, {"errors": [{"code": "NAME_UNKNOWN", "message": "repository name not known to registry"}]})
            return self.reply(200, {"name": f"{ns}/{repo}", "tags": tags})
        if kind == "manifests":
            manifest, _ = self.manifest_for(repo, ref)
            if manifest is None:
                return self.reply(404, {"errors": [{"code": "MANIFEST_UNKNOWN", "message": "manifest unknown"}]})
            body = json.dumps(manifest, indent=2).encode()
            return self.reply(200, body, ctype="application/vnd.docker.distribution.manifest.v2+json",
                              headers={"Docker-Content-Digest": "sha256:" + hashlib.sha256(body).hexdigest()})
        if kind == "blobs" and ref.startswith("sha256:"):
            self.manifest_for(repo, "latest")  # registers the synthetic blobs
            hexd = ref[7:]
            with _lock:
                source = _blobs.get(hexd)
            if source is None or "missing" in faults["words"]:
                return self.reply(404, {"errors": [{"code": "BLOB_UNKNOWN", "message": "blob unknown to registry"}]})
            size = os.path.getsize(source[1]) if source[0] == "file" else len(source[1])
            key = f"{ns}/{repo}/{ref}"
            if size > REDIRECT_OVER:
                q = urllib.parse.urlencode({"key": key, "faults": ns})
                return self.reply(307, b"", ctype="text/plain", headers={"Location": f"http://127.0.0.1:{CDN_PORT}/cdn/{hexd}?{q}"}, key=key)
            return self.send_bytes(key, source, size, faults)
        self.reply(404, {"errors": [{"code": "UNSUPPORTED", "message": "unsupported"}]})


class CDNHandler(Handler):
    role = "cdn"


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64


def main():
    global ROOT, LOG, CDN_PORT
    args = sys.argv[1:]
    port_file = None
    rest = []
    i = 0
    while i < len(args):
        if args[i] == "--port-file":
            port_file = args[i + 1]
            i += 2
        elif args[i] == "--exit-on-eof":
            i += 1
        elif args[i] == "--log":
            LOG = args[i + 1]
            i += 2
        else:
            rest.append(args[i])
            i += 1
    if len(rest) != 1 or not os.path.isdir(rest[0]):
        sys.exit("usage: hub_server.py ROOT [--port-file FILE] [--log FILE] [--exit-on-eof]")
    ROOT = os.path.abspath(rest[0])
    # A parent may have spawned this with signals blocked (Foundation's Process does):
    # unblock them so that SIGTERM ends the server; and end when stdin closes (the parent
    # is gone), so that a crashed test run leaves no server behind.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, signal.valid_signals())
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    if "--exit-on-eof" in sys.argv:
        def watch_stdin():
            while sys.stdin.buffer.read(1 << 16):
                pass
            os._exit(0)
        threading.Thread(target=watch_stdin, daemon=True).start()
    cdn = Server(("127.0.0.1", 0), CDNHandler)
    CDN_PORT = cdn.server_address[1]
    threading.Thread(target=cdn.serve_forever, daemon=True).start()
    hub = Server(("127.0.0.1", 0), Handler)
    port = hub.server_address[1]
    # Hash what is there now, so that the first request does not wait for it.
    for repo in sorted(os.listdir(ROOT)):
        repo_files(repo)
    if port_file:
        with open(port_file + ".tmp", "w") as f:
            f.write(f"{port}\n")
        os.replace(port_file + ".tmp", port_file)
    print(port, flush=True)
    print(f"cdn {CDN_PORT}", flush=True)
    try:
        hub.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
