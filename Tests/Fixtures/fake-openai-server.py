#!/usr/bin/env python3
"""A misbehaving OpenAI-compatible server for Parlance's remote-engine fault tests.

Listens on 127.0.0.1 (port 0: the OS picks; the port is printed as the first stdout line).
The served model named in each /v1/chat/completions request picks the behaviour:
  ok           streams "Hello from the fake server." with usage, then [DONE]
  nousage      the same without a usage chunk (Parlance reports usage.estimated)
  silent       accepts the request and never answers (timeout before the first byte)
  stall        sends the head and one delta, then nothing (a stalled stream)
  error500     HTTP 500 with an OpenAI error object, every time
  flaky500     HTTP 500 on its first call, then "ok" (retried and served)
  ratelimit    HTTP 429 with Retry-After: 30, every time
  ratelimit1   HTTP 429 with Retry-After: 0 on the first call, then "ok"
  cut          one delta, then the connection closes (no finish_reason, no [DONE])
  garbage      an event whose data is not JSON
  badrequest   HTTP 400 {"error": {"message": "unsupported parameter: frobnicate"}}
  gated        waits until GET /release lets it through, then "ok"
GET /v1/models lists them all; GET /calls returns {"model": calls so far}.
"""
import json, socketserver, sys, threading, time
from http.server import BaseHTTPRequestHandler, HTTPServer

MODELS = ["ok", "nousage", "silent", "stall", "error500", "flaky500", "ratelimit", "ratelimit1", "cut", "garbage", "badrequest", "gated"]
gate = threading.Semaphore(0)
calls = {}
lock = threading.Lock()


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
        if self.path.rstrip("/") == "/v1/models":
            self.json(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in MODELS]})
        elif self.path == "/release":
            gate.release()
            self.json(200, {"released": True})
        elif self.path == "/calls":
            with lock:
                self.json(200, dict(calls))
        else:
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
        body = json.loads(self.rfile.read(length) or b"{}")
        if self.path.rstrip("/") != "/v1/chat/completions":
            return self.json(404, {"error": {"message": f"no route {self.path}"}})
        model = body.get("model", "ok")
        with lock:
            calls[model] = calls.get(model, 0) + 1
            n = calls[model]
            if model == "ok":
                calls["authorization"] = self.headers.get("Authorization")
        if model == "gated":
            gate.acquire()
        if model == "silent":
            time.sleep(3600)
            return
        if model == "error500" or (model == "flaky500" and n == 1):
            return self.json(500, {"error": {"message": "the model crashed (fake)", "type": "server_error"}})
        if model == "ratelimit":
            return self.json(429, {"error": {"message": "slow down (fake)"}}, headers=[("Retry-After", "30")])
        if model == "ratelimit1" and n == 1:
            return self.json(429, {"error": {"message": "slow down (fake)"}}, headers=[("Retry-After", "0")])
        if model == "badrequest":
            return self.json(400, {"error": {"message": "unsupported parameter: frobnicate"}})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        if model == "garbage":
            self.event("{this is not json")
            return
        self.event(self.chunk("Hello"))
        if model == "stall":
            time.sleep(3600)
            return
        if model == "cut":
            self.wfile.flush()
            return  # HTTP/1.0: the connection closes here, mid-completion
        self.event(self.chunk(" from the fake server."))
        self.event(self.chunk(None, "stop"))
        if model != "nousage":
            self.event({"id": "x", "object": "chat.completion.chunk", "choices": [],
                        "usage": {"prompt_tokens": 11, "completion_tokens": 6, "total_tokens": 17}})
        self.event("[DONE]")


class Server(socketserver.ThreadingMixIn, HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


if __name__ == "__main__":
    server = Server(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()
