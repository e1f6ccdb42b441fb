import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ParlanceClient
import ParlanceHash
import ParlanceJSON
import XCTest

/// A helper process the tests start (llama-server, the fake server) and stop.
final class HelperProcess: @unchecked Sendable {
    let process = Process()
    let out = Pipe()
    init(_ path: String, _ args: [String]) throws {
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = args
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
    }
    /// The first line the process prints (the fake server's port).
    func firstLine() -> String {
        var bytes: [UInt8] = []
        while true {
            let b = out.fileHandleForReading.readData(ofLength: 1)
            if b.isEmpty || b[0] == 0x0A { break }
            bytes.append(b[0])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}

/// HTTP GET from the tests (llama-server's /health and /slots, the fake server's /calls).
func httpGet(_ url: String) -> (status: Int, body: JSONValue?) {
    let sem = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var result: (Int, JSONValue?) = (0, nil)
    var req = URLRequest(url: URL(string: url)!)
    req.timeoutInterval = 10
    URLSession.shared.dataTask(with: req) { data, response, _ in
        result = ((response as? HTTPURLResponse)?.statusCode ?? 0, data.flatMap { try? JSONParser.parse(Array($0)) })
        sem.signal()
    }.resume()
    sem.wait()
    return result
}

/// Remote engines through the real daemon: llama.cpp's own llama-server (built by the
/// set-up from the same sdist as libllama), started here on 127.0.0.1 with the default
/// model; and a fake OpenAI-compatible server that stalls, fails, rate-limits, cuts its
/// stream or sends garbage.
final class RemoteEngineTests: XCTestCase {
    static var model: String { ProcessInfo.processInfo.environment["PARLANCE_DEFAULT_MODEL"] ?? "" }

    /// Starts llama-server on a free port; waits for /health to answer 200 (an observable
    /// state, polled).
    static func startLlamaServer() throws -> (HelperProcess, Int) {
        guard let bin = ProcessInfo.processInfo.environment["PARLANCE_LLAMA_SERVER"], FileManager.default.isExecutableFile(atPath: bin) else {
            throw XCTSkip("PARLANCE_LLAMA_SERVER is not set (make test sets it: scripts/setup-llama-server.sh)")
        }
        let port = 18_000 + Int(getpid() % 1000)
        let p = try HelperProcess(bin, ["-m", model, "--host", "127.0.0.1", "--port", "\(port)", "-c", "8192", "-np", "4", "-t", "2", "--no-webui"])
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline {
            if httpGet("http://127.0.0.1:\(port)/health").status == 200 { return (p, port) }
            guard p.process.isRunning else { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        p.stop()
        XCTFail("llama-server did not become healthy on port \(port)")
        throw XCTSkip("llama-server did not start")
    }

    func slots(_ port: Int) -> [JSONValue] { httpGet("http://127.0.0.1:\(port)/slots").body?.arrayValue ?? [] }

    func testEveryFeatureThroughLlamaServer() throws {
        let (server, port) = try Self.startLlamaServer()
        defer { server.stop() }
        let d = try Daemon(args: ["--model", "r=openai:http://127.0.0.1:\(port)/v1", "--model", "local=\(Self.model)"])
        XCTAssertNotNil(d.call("initialize", ["clientInfo": ["name": "tests"], "capabilities": ["tools": true, "window": ["workDoneProgress": true]]]).result)
        d.notify("initialized", [:])

        // model/status checks the endpoint.
        let status = try XCTUnwrap(d.call("model/status", ["model": "r"]).result)
        XCTAssertEqual(status["availability"], "available", "\(status)")
        XCTAssertEqual(status["remote"]?["endpoint"]?.stringValue, "127.0.0.1:\(port)")
        XCTAssertEqual(status["remote"]?["tokenCounts"], "server", "llama-server has /tokenize")
        XCTAssertEqual(status["remote"]?["contextSize"], 2048, "llama-server's context per slot (/props)")
        XCTAssertEqual(status["remote"]?["servedModels"]?.arrayValue?.count, 1)

        // Summarize: streamed deltas, the server's usage, provenance naming the endpoint.
        let sum = d.call("analysis/summarize", ["text": "Alice: the launch moves to March. Bob: then marketing needs the date by Friday. Alice: I will send it Thursday.",
                                                "workDoneToken": "sum"])
        let s = try XCTUnwrap(sum.result, "\(sum)")
        XCTAssertGreaterThan(s["summary"]?.stringValue?.count ?? 0, 10)
        XCTAssertEqual(s["provenance"]?["endpoint"]?.stringValue, "127.0.0.1:\(port)")
        XCTAssertNotNil(s["provenance"]?["servedModel"]?.stringValue)
        XCTAssertEqual(s["provenance"]?["modelSha256"]?.stringValue, SHA256.hex("openai:127.0.0.1:\(port)/\(s["provenance"]?["servedModel"]?.stringValue ?? "")"),
                       "a remote result's model hash is of its endpoint and served name, not of a local file")
        XCTAssertGreaterThan(s["usage"]?["promptTokens"]?.intValue ?? 0, 50)
        XCTAssertNil(s["usage"]?["estimated"], "llama-server reports usage")
        XCTAssertFalse(streamedText(d.progress(token: "sum")).isEmpty, "deltas from the SSE stream reach $/progress")

        // A session: instructions, a schema turn (response_format json_schema), a follow-up.
        let sid = try XCTUnwrap(d.call("session/create", ["instructions": "You answer briefly.", "model": "r"]).result?["sessionId"])
        let schema: JSONValue = ["type": "object", "properties": ["city": ["type": "string", "maxLength": 40], "country": ["type": "string", "maxLength": 40]],
                                 "required": ["city", "country"], "additionalProperties": false]
        let turn1 = try XCTUnwrap(d.call("session/respond", ["sessionId": sid, "prompt": "Name the capital of France.", "schema": schema,
                                                              "options": ["maxTokens": 60]]).result)
        XCTAssertNotNil(turn1["content"]?["city"]?.stringValue, "\(turn1)")
        let turn2 = try XCTUnwrap(d.call("session/respond", ["sessionId": sid, "prompt": "And of Italy? One word.", "options": ["maxTokens": 20]]).result)
        XCTAssertFalse(turn2["text"]?.stringValue?.isEmpty ?? true)
        let transcript = try XCTUnwrap(d.call("session/transcript", ["sessionId": sid]).result)
        XCTAssertEqual(transcript["turns"]?.arrayValue?.count, 4)

        // Compose: three tones, called in parallel up to the endpoint's limit.
        let composed = try XCTUnwrap(d.call("compose/variations", ["text": "Can you send me the report by Friday? The third-quarter numbers are missing.",
                                                                    "tones": ["formal", "casual", "direct"], "maxTokens": 60, "ephemeral": true, "model": "r"]).result)
        let variations = composed["variations"]?.arrayValue ?? []
        XCTAssertEqual(variations.count, 3)
        XCTAssertTrue(variations.allSatisfy { !($0["text"]?.stringValue ?? "").isEmpty }, "\(variations)")
        XCTAssertEqual(composed["sharedPrefixTokens"], 0, "no local prefix to share on a remote model")

        // Ask with a follow-up on an open document.
        XCTAssertNotNil(d.call("document/open", ["uri": "file:///sample.srt", "text": .string(Daemon.sampleSRT)]).result)
        let a1 = try XCTUnwrap(d.call("ask/stream", ["uri": "file:///sample.srt", "question": "What is the podcast about?", "model": "r"]).result)
        let askSession = try XCTUnwrap(a1["sessionId"])
        XCTAssertFalse(a1["answer"]?.stringValue?.isEmpty ?? true)
        let a2 = try XCTUnwrap(d.call("ask/stream", ["uri": "file:///sample.srt", "question": "Who speaks first?", "sessionId": askSession]).result)
        XCTAssertEqual(a2["turn"], 2)
        XCTAssertEqual(a2["provenance"]?["endpoint"]?.stringValue, "127.0.0.1:\(port)")

        // Tool calls: the constrained-output loop as a JSON Schema (the server has no GBNF
        // here): a named tool must be called; the client answers tool/call; the answer follows.
        let tools: JSONValue = [["name": "get_weather", "description": "Current weather for a city.",
                                 "parameters": ["type": "object", "properties": ["city": ["type": "string", "maxLength": 40]], "required": ["city"]]]]
        let tsid = try XCTUnwrap(d.call("session/create", ["model": "r", "tools": tools, "toolChoice": ["name": "get_weather"], "maxToolCalls": 1,
                                                           "instructions": "You are a helpful assistant.", "options": ["temperature": 0, "maxTokens": 48]]).result?["sessionId"])
        let tid = d.start("session/respond", ["sessionId": tsid, "prompt": "What is the weather in Paris right now?"])
        let call = try XCTUnwrap(d.waitFor { $0["method"] == "tool/call" }, "no tool/call arrived")
        XCTAssertEqual(call["params"]?["name"], "get_weather")
        XCTAssertNotNil(call["params"]?["arguments"]?["city"]?.stringValue, "\(call)")
        d.send(["jsonrpc": "2.0", "id": call["id"]!, "result": ["content": ["tempC": 18, "sky": "cloudy"]]])
        let turn = d.response(tid)
        let answered = try XCTUnwrap(turn?["result"], "the turn ends with an answer: \(turn ?? .null)")
        XCTAssertEqual(answered["toolCalls"]?.arrayValue?.count, 1)
        XCTAssertFalse(answered["text"]?.stringValue?.isEmpty ?? true, "\(answered)")

        // A long transcript is summarized in parts planned for the server's 2,048-token context.
        let long = LongTranscript.srt(cues: 80)  // about 1,700 tokens: two parts
        XCTAssertNotNil(d.call("document/open", ["uri": "file:///long.srt", "text": .string(long)]).result)
        let longSum = try XCTUnwrap(d.call("analysis/summarize", ["uri": "file:///long.srt", "model": "r"], timeout: 1800).result)
        XCTAssertGreaterThan(longSum["chunks"]?.intValue ?? 0, 1, "\(longSum["chunks"] ?? .null)")
        XCTAssertGreaterThan(longSum["summary"]?.stringValue?.count ?? 0, 20)

        // Cancel mid-stream: the daemon closes the HTTP stream and llama-server frees its slot.
        let story = try XCTUnwrap(d.call("session/create", ["model": "r"]).result?["sessionId"])
        let id = d.start("session/respond", ["sessionId": story, "prompt": "Write a very long story about a lighthouse keeper, in many chapters.",
                                             "options": ["maxTokens": 1500, "temperature": 0.8], "workDoneToken": "story"])
        XCTAssertNotNil(d.waitFor(timeout: 300) { $0["method"] == "$/progress" && $0["params"]?["token"] == "story" && $0["params"]?["value"]?["delta"] != nil },
                        "no delta before the cancel")
        XCTAssertTrue(slots(port).contains { $0["is_processing"] == true }, "llama-server is generating")
        d.notify("$/cancelRequest", ["id": .int(id)])
        let cancelled = try XCTUnwrap(d.response(id, timeout: 60))
        XCTAssertEqual(cancelled.errorCode, -32800, "\(cancelled)")
        XCTAssertFalse(cancelled["error"]?["data"]?["partial"]?.stringValue?.isEmpty ?? true, "the partial text comes back")
        // Observable: every slot idle again, long before 1,500 tokens could have been written.
        let deadline = Date().addingTimeInterval(60)
        var freed = false
        while Date() < deadline {
            let all = slots(port)
            if !all.isEmpty && all.allSatisfy({ $0["is_processing"] == false }) { freed = true; break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        XCTAssertTrue(freed, "llama-server's slot is freed after the cancel: \(slots(port))")

        // The local model still serves beside the remote one.
        let local = d.call("compose/variations", ["text": "Send the report by Friday, please.", "tones": ["formal"], "maxTokens": 24, "ephemeral": true, "model": "local"])
        XCTAssertNotNil(local.result?["provenance"]?["modelSha256"], "\(local)")
    }

    func testFaultsOfARemoteServer() throws {
        let fake = try HelperProcess("/usr/bin/env", ["python3", Daemon.repoRoot.appendingPathComponent("Tests/Fixtures/fake-openai-server.py").path])
        defer { fake.stop() }
        let port = try XCTUnwrap(Int(fake.firstLine()), "the fake server prints its port")
        let base = "http://127.0.0.1:\(port)/v1"
        func remote(_ served: String, _ extra: JSONObject = [:]) -> JSONValue {
            var o: JSONObject = ["url": .string(base), "servedModel": .string(served)]
            for (k, v) in extra { o[k] = v }
            return .object(o)
        }
        let dir = NSTemporaryDirectory() + "parlance-remote-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config: JSONValue = ["models": [
            "local": ["path": .string(Self.model)],
            "ok": remote("ok", ["apiKeyEnv": "PARLANCE_TEST_REMOTE_KEY"]), "nousage": remote("nousage"),
            "silent": remote("silent", ["timeoutSeconds": 1]), "stall": remote("stall", ["timeoutSeconds": 1]),
            "error500": remote("error500"), "flaky500": remote("flaky500"), "ratelimit": remote("ratelimit", ["timeoutSeconds": 5]),
            "ratelimit1": remote("ratelimit1"), "cut": remote("cut"), "garbage": remote("garbage"), "badrequest": remote("badrequest"),
            "refused": ["url": "http://127.0.0.1:1/v1", "timeoutSeconds": 2],
            "tls": ["url": .string("https://127.0.0.1:\(port)/v1"), "timeoutSeconds": 5],
            "dns": ["url": "https://no-such-host.invalid/v1", "timeoutSeconds": 5],
            "gated": remote("gated", ["maxConcurrentRequests": 1]),
            "unserved": remote("no-such-model"),
        ], "defaultModel": "local"]
        try Data(config.serialized().utf8).write(to: URL(fileURLWithPath: dir + "/config.json"))
        let secret = "sk-test-\(UUID().uuidString)"
        let d = try Daemon(args: ["--config", dir + "/config.json"], env: ["PARLANCE_TEST_REMOTE_KEY": secret])
        _ = d.initialize()

        func respond(_ model: String, token: String? = nil) throws -> JSONValue {
            let sid = try XCTUnwrap(d.call("session/create", ["model": .string(model)]).result?["sessionId"], model)
            var p: JSONObject = ["sessionId": sid, "prompt": "Say hello.", "options": ["maxTokens": 16]]
            if let token { p["workDoneToken"] = .string(token) }
            return d.call("session/respond", .object(p), timeout: 120)
        }
        func fault(_ model: String, _ kind: String, file: StaticString = #filePath, line: UInt = #line) throws -> JSONValue {
            let r = try respond(model)
            XCTAssertEqual(r.errorCode, -32011, "\(model): \(r)", file: file, line: line)
            let data = try XCTUnwrap(r["error"]?["data"], file: file, line: line)
            XCTAssertEqual(data["error"]?.stringValue, kind, "\(model): \(r)", file: file, line: line)
            XCTAssertEqual(data["model"]?.stringValue, model, file: file, line: line)
            let endpoint = ["refused": "127.0.0.1:1", "dns": "no-such-host.invalid"][model] ?? "127.0.0.1:\(port)"
            XCTAssertEqual(data["endpoint"]?.stringValue, endpoint, file: file, line: line)
            return data
        }

        let ok = try XCTUnwrap(try respond("ok", token: "ok").result)
        XCTAssertEqual(ok["text"], "Hello from the fake server.")
        XCTAssertEqual(ok["usage"]?["promptTokens"], 11)
        XCTAssertEqual(ok["usage"]?["generatedTokens"], 6)
        XCTAssertNil(ok["usage"]?["estimated"])
        XCTAssertEqual(streamedText(d.progress(token: "ok")), "Hello from the fake server.")
        let nousage = try XCTUnwrap(try respond("nousage").result)
        XCTAssertEqual(nousage["usage"]?["estimated"], true, "no usage from the server: counts are estimates and say so")

        let silent = try fault("silent", "remoteTimeout")
        XCTAssertTrue(silent["message"]?.stringValue?.contains("no answer") ?? false, "\(silent)")
        let stall = try fault("stall", "remoteTimeout")
        XCTAssertTrue(stall["message"]?.stringValue?.contains("stalled") ?? false, "\(stall)")
        XCTAssertEqual(stall["attempts"], 1, "text already streamed is never sent twice")
        let e500 = try fault("error500", "remoteError")
        XCTAssertEqual(e500["status"], 500)
        XCTAssertEqual(e500["serverMessage"], "the model crashed (fake)")
        XCTAssertEqual(e500["attempts"], 3, "a 5xx before the first token is retried twice with backoff")
        XCTAssertEqual(try XCTUnwrap(try respond("flaky500").result)["text"], "Hello from the fake server.", "one 500, then served")
        let limited = try fault("ratelimit", "rateLimited")
        XCTAssertEqual(limited["retryAfterMs"], 30000)
        XCTAssertEqual(limited["attempts"], 1, "Retry-After beyond the request's budget: no retry, the wait is reported")
        XCTAssertEqual(try XCTUnwrap(try respond("ratelimit1").result)["text"], "Hello from the fake server.", "429 with Retry-After: 0, then served")
        let cut = try fault("cut", "remoteProtocol")
        XCTAssertTrue(cut["message"]?.stringValue?.contains("ended before") ?? false, "\(cut)")
        _ = try fault("garbage", "remoteProtocol")
        let bad = try fault("badrequest", "remoteError")
        XCTAssertEqual(bad["status"], 400)
        XCTAssertEqual(bad["attempts"], 1, "a 4xx is not retried")
        _ = try fault("refused", "remoteUnavailable")
        let tls = try fault("tls", "remoteUnavailable")
        XCTAssertTrue(tls["message"]?.stringValue?.contains("TLS") ?? false, "https:// to a plain-HTTP port fails its handshake: \(tls)")
        let dns = try fault("dns", "remoteUnavailable")
        XCTAssertTrue(dns["message"]?.stringValue?.contains("resolve") ?? false, "\(dns)")

        // maxConcurrentRequests 1: a second call waits its turn (progress phase queued), in
        // arrival order, and runs once the first is through.
        let ga = try XCTUnwrap(d.call("session/create", ["model": "gated"]).result?["sessionId"])
        let gb = try XCTUnwrap(d.call("session/create", ["model": "gated"]).result?["sessionId"])
        let first = d.start("session/respond", ["sessionId": ga, "prompt": "Say hello.", "options": ["maxTokens": 16], "workDoneToken": "ga"])
        let inFlight = Date().addingTimeInterval(60)
        while httpGet("http://127.0.0.1:\(port)/calls").body?["gated"] != 1, Date() < inFlight { Thread.sleep(forTimeInterval: 0.02) }
        XCTAssertEqual(httpGet("http://127.0.0.1:\(port)/calls").body?["gated"], 1, "the first call reached the server")
        let second = d.start("session/respond", ["sessionId": gb, "prompt": "Say hello.", "options": ["maxTokens": 16], "workDoneToken": "gb"])
        let queued = d.waitFor { $0["method"] == "$/progress" && $0["params"]?["token"] == "gb" && $0["params"]?["value"]?["phase"] == "queued" }
        XCTAssertEqual(queued?["params"]?["value"]?["queuePosition"], 1, "the second call waits: \(queued ?? .null)")
        XCTAssertEqual(httpGet("http://127.0.0.1:\(port)/calls").body?["gated"], 1, "…without reaching the server")
        _ = httpGet("http://127.0.0.1:\(port)/release")
        XCTAssertEqual(d.response(first)?["result"]?["text"], "Hello from the fake server.")
        _ = httpGet("http://127.0.0.1:\(port)/release")
        XCTAssertEqual(d.response(second)?["result"]?["text"], "Hello from the fake server.")
        XCTAssertEqual(httpGet("http://127.0.0.1:\(port)/calls").body?["gated"], 2)
        let unserved = try fault("unserved", "remoteError")
        XCTAssertTrue(unserved["message"]?.stringValue?.contains("does not serve 'no-such-model'") ?? false, "\(unserved)")

        let calls = try XCTUnwrap(httpGet("http://127.0.0.1:\(port)/calls").body)
        XCTAssertEqual(calls["error500"], 3)
        XCTAssertEqual(calls["flaky500"], 2)
        XCTAssertEqual(calls["ratelimit1"], 2)
        XCTAssertEqual(calls["authorization"]?.stringValue, "Bearer \(secret)", "the key is sent as a bearer token")

        // model/status checks the endpoint and says why it cannot be used.
        let down = try XCTUnwrap(d.call("model/status", ["model": "refused"]).result)
        XCTAssertEqual(down["availability"], "unavailable")
        XCTAssertEqual(down["reason"], "remoteUnavailable")
        let up = try XCTUnwrap(d.call("model/status", ["model": "ok"]).result)
        XCTAssertEqual(up["availability"], "available")
        XCTAssertEqual(up["remote"]?["apiKey"], true)
        XCTAssertEqual(up["remote"]?["tokenCounts"], "estimated", "the fake server has no /tokenize")

        // The key never appears in anything the daemon sent.
        let list = try XCTUnwrap(d.call("model/list").result)
        XCTAssertFalse(list.serialized().contains(secret))
        for r in [ok, nousage, silent, stall, e500, limited, cut, bad, unserved, tls, dns, down, up] {
            XCTAssertFalse(r.serialized().contains(secret), "the API key leaked: \(r)")
        }
        XCTAssertFalse(d.stderrText.contains(secret), "the API key leaked into the log")

        // Every fault left the daemon serving: the local model answers.
        let local = d.call("compose/variations", ["text": "Send the report by Friday, please.", "tones": ["formal"], "maxTokens": 24, "ephemeral": true])
        XCTAssertNotNil(local.result?["variations"], "\(local)")
    }
}
