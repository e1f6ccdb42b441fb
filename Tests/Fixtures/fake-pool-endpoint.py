#!/usr/bin/env python3
"""Stand-in endpoints for Parlance's pool tests: one OpenAI-compatible server per behaviour,
each on its own loopback port (the OS picks them), so a pool can list several.

The first stdout line is a JSON object {behaviour: port}. Behaviours:
  ok         streams "Hello from the stand-in." with usage, then [DONE]
  busy       every chat call: HTTP 503 with Retry-After: 1 (overloaded, not broken)
  busyonce   HTTP 503 with Retry-After: 1 on its first chat call, then "ok"
  limited    every chat call: HTTP 429 with Retry-After: 1
  broken     streams "Partial answer" in two deltas, then closes the connection
             (no finish_reason, no [DONE])
  hold       waits until GET /release (on any port) lets it through, then "ok"
  loading    /health and every call: 503 "Loading model", as llama-server while it loads
  crowded    as ok, but its /props says 2 slots and its /slots says both are busy (with
             other clients' requests)
  cut        (with --upstream PORT) a proxy to the llama-server on PORT that passes its
             stream through and closes the connection after three content deltas
GET /health is 200 (but for loading); GET /v1/models lists "stand-in" (cut: the
upstream's list); GET /calls (any port) returns {behaviour: chat calls so far}; GET /last
(any port) {behaviour: the last chat request's body}; GET /cut (any port) the text the
cut proxy passed before it closed.
"""
import http.client, json, socketserver, sys, threading
from http.server import BaseHTTPRequestHandler, HTTPServer

UPSTREAM = int(sys.argv[sys.argv.index("--upstream") + 1]) if "--upstream" in sys.argv else None
BEHAVIOURS = ["ok", "busy", "busyonce", "limited", "broken", "hold", "loading", "crowded"] + (["cut"] if UPSTREAM else [])
gate = threading.Semaphore(0)
calls = {b: 0 for b in BEHAVIOURS}
last = {}
cut_text = {"text": ""}
lock = threading.Lock()
LOADING = {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}


def handler(behaviour):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def log_message(self, *a):
            pass

        def json(self, status, obj, headers=()):
            body = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for k, v in headers:
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            path = self.path.rstrip("/")
            if path == "/release":
                gate.release()
                return self.json(200, {"released": True})
            if path == "/calls":
                with lock:
                    return self.json(200, dict(calls))
            if path == "/last":
                with lock:
                    return self.json(200, dict(last))
            if path == "/cut":
                with lock:
                    return self.json(200, dict(cut_text))
            if behaviour == "cut":
                return self.forward_get(path)
            if behaviour == "loading":
                return self.json(503, LOADING)
            if path == "/health":
                return self.json(200, {"status": "ok"})
            if behaviour == "crowded" and path == "/props":
                return self.json(200, {"total_slots": 2})
            if behaviour == "crowded" and path == "/slots":
                return self.json(200, [{"id": 0, "is_processing": True}, {"id": 1, "is_processing": True}])
            if path == "/v1/models":
                return self.json(200, {"object": "list", "data": [{"id": "stand-in", "object": "model"}]})
            self.json(404, {"error": {"message": "not found"}})

        def event(self, obj):
            data = obj if isinstance(obj, str) else json.dumps(obj)
            self.wfile.write(f"data: {data}\n\n".encode())
            self.wfile.flush()

        def chunk(self, content=None, finish=None):
            return {"id": "x", "object": "chat.completion.chunk", "choices": [
                {"index": 0, "delta": {} if content is None else {"content": content}, "finish_reason": finish}]}

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            if self.path.rstrip("/") != "/v1/chat/completions":
                return self.json(404, {"error": {"message": f"no route {self.path}"}})
            with lock:
                calls[behaviour] += 1
                n = calls[behaviour]
                last[behaviour] = json.loads(body or b"{}")
            if behaviour == "cut":
                return self.forward_cut(body)
            if behaviour == "loading":
                return self.json(503, LOADING)
            if behaviour == "busy" or (behaviour == "busyonce" and n == 1):
                return self.json(503, {"error": {"message": "server busy (stand-in)"}}, headers=[("Retry-After", "1")])
            if behaviour == "limited":
                return self.json(429, {"error": {"message": "slow down (stand-in)"}}, headers=[("Retry-After", "1")])
            if behaviour == "hold":
                gate.acquire()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            if behaviour == "broken":
                self.event(self.chunk("Partial "))
                self.event(self.chunk("answer"))
                return  # HTTP/1.0: the connection closes here, mid-completion
            self.event(self.chunk("Hello from"))
            self.event(self.chunk(" the stand-in."))
            self.event(self.chunk(None, "stop"))
            self.event({"id": "x", "object": "chat.completion.chunk", "choices": [],
                        "usage": {"prompt_tokens": 11, "completion_tokens": 6, "total_tokens": 17,
                                  "prompt_tokens_details": {"cached_tokens": 0}}})
            self.event("[DONE]")

        def forward_get(self, path):
            c = http.client.HTTPConnection("127.0.0.1", UPSTREAM, timeout=30)
            c.request("GET", path)
            r = c.getresponse()
            self.json(r.status, json.loads(r.read() or b"{}"))

        def forward_cut(self, body):
            c = http.client.HTTPConnection("127.0.0.1", UPSTREAM, timeout=120)
            c.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
            r = c.getresponse()
            self.send_response(r.status)
            self.send_header("Content-Type", r.getheader("Content-Type", "text/event-stream"))
            self.end_headers()
            deltas, text = 0, ""
            while deltas < 3:
                line = r.readline()
                if not line:
                    break
                self.wfile.write(line)
                if line.startswith(b"data: {"):
                    for ch in json.loads(line[6:]).get("choices", []):
                        piece = (ch.get("delta") or {}).get("content")
                        if piece:
                            deltas += 1
                            text += piece
                elif line.strip() == b"":
                    self.wfile.flush()
            self.wfile.write(b"\n")
            self.wfile.flush()
            with lock:
                cut_text["text"] = text
            c.close()  # HTTP/1.0: the connection to the client closes here, mid-completion

    return Handler


class Server(socketserver.ThreadingMixIn, HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


if __name__ == "__main__":
    servers = {b: Server(("127.0.0.1", 0), handler(b)) for b in BEHAVIOURS}
    print(json.dumps({b: s.server_address[1] for b, s in servers.items()}), flush=True)
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in servers.values()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
