import Foundation
import ParlanceClient
import ParlanceJSON
import XCTest

/// The model registry against the real daemon: several named models (the set-up's model
/// under several names), routes and the `model` param, load on demand, keep-alive unload
/// with the KV prefixes saved and restored, and the memory budget.
final class ModelRegistryTests: XCTestCase {
    var model: String { ProcessInfo.processInfo.environment["PARLANCE_DEFAULT_MODEL"] ?? "" }

    /// The set-up's model copied under another file name: a second model file for the
    /// registry (same weights, its own path, size and KV state directory).
    static let copy: String = {
        let path = NSTemporaryDirectory() + "parlance-registry-copy.gguf"
        let source = ProcessInfo.processInfo.environment["PARLANCE_DEFAULT_MODEL"] ?? ""
        if !FileManager.default.fileExists(atPath: path) { try? FileManager.default.copyItem(atPath: source, toPath: path) }
        return path
    }()

    func list(_ d: Daemon) throws -> [String: JSONValue] {
        let r = try XCTUnwrap(d.call("model/list").result, "model/list answers")
        var byName: [String: JSONValue] = [:]
        for m in r["models"]?.arrayValue ?? [] { byName[m["name"]?.stringValue ?? ""] = m }
        return byName
    }

    /// Waits for an observable state (model/list polled), never for a duration.
    func waitForState(_ d: Daemon, _ name: String, _ state: String, timeout: TimeInterval = 120) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try list(d)[name]?["state"]?.stringValue == state { return }
            _ = d.waitFor(timeout: 0.2) { _ in false }
        }
        XCTFail("model \(name) never became \(state): \(try list(d)[name] ?? .null)")
    }

    func compose(_ d: Daemon, _ params: JSONObject = [:]) -> JSONValue {
        var p: JSONObject = ["text": "Can you send me the report by Friday, please? The numbers for the third quarter are still missing.",
                             "tones": ["formal"], "maxTokens": 32, "seed": 1, "ephemeral": true]
        for (k, v) in params { p[k] = v }
        return d.call("compose/variations", .object(p))
    }

    func testRoutesTheModelParamAndUnknownNames() throws {
        let dir = NSTemporaryDirectory() + "parlance-config-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config: JSONValue = [
            "models": ["fast": ["path": .string(model), "contextSize": 2048], "big": ["path": .string(Self.copy)]],
            "defaultModel": "fast",
            "routes": ["analysis": "big", "session": "big"],
            "keepAlive": 0,
        ]
        try Data(config.serialized().utf8).write(to: URL(fileURLWithPath: dir + "/config.json"))
        let d = try Daemon(args: ["--config", dir + "/config.json"])
        let initialized = try XCTUnwrap(d.initialize().result?["model"])
        XCTAssertEqual(initialized["name"], "fast")
        XCTAssertEqual(initialized["state"], "unloaded", "initialize does not load")
        XCTAssertEqual(initialized["availability"], "available")
        var models = try list(d)
        XCTAssertEqual(models["fast"]?["state"], "unloaded")
        XCTAssertEqual(models["big"]?["state"], "unloaded")
        XCTAssertEqual(models["fast"]?["contextSize"], 2048)
        XCTAssertEqual(models["big"]?["routes"], ["analysis", "session"])
        XCTAssertEqual(models["fast"]?["isDefault"], true)

        // A route: analysis → big, loaded by this first request (phase loading reported).
        let s = d.call("analysis/summarize", ["text": "The meeting moved to Thursday. Anna will send the agenda.", "workDoneToken": "sum"])
        XCTAssertEqual(s.result?["provenance"]?["model"], "big", "\(s)")
        XCTAssertTrue(d.progress(token: "sum").contains { $0["phase"] == "loading" && $0["message"] == "loading model big" })
        models = try list(d)
        XCTAssertEqual(models["big"]?["state"], "ready")
        XCTAssertEqual(models["big"]?["loads"], 1)
        XCTAssertEqual(models["fast"]?["state"], "unloaded", "a model nobody asked for stays unloaded")

        // No route: the default model.
        XCTAssertEqual(compose(d).result?["provenance"]?["model"], "fast")
        // The model param beats the route, and a session keeps the model it was created on.
        let onBig = compose(d, ["model": "big", "ephemeral": false])
        XCTAssertEqual(onBig.result?["provenance"]?["model"], "big")
        // A refinement on another model starts from the text (the tokens are big's).
        let variation = try XCTUnwrap(onBig.result?["variations"]?.arrayValue?.first?["id"])
        let refined = d.call("compose/refine", ["variationId": variation, "instruction": "shorter", "model": "fast", "maxTokens": 32, "seed": 1])
        XCTAssertEqual(refined.result?["provenance"]?["model"], "fast", "\(refined)")
        let routed = try XCTUnwrap(d.call("session/create", [:]).result?["sessionId"])
        let named = try XCTUnwrap(d.call("session/create", ["model": "fast"]).result?["sessionId"])
        for (sid, expected) in [(routed, "big"), (named, "fast")] {
            let r = d.call("session/respond", ["sessionId": sid, "prompt": "Say hi.", "options": ["maxTokens": 4, "temperature": 0]])
            XCTAssertEqual(r.result?["provenance"]?["model"], .string(expected), "\(r)")
        }
        // ask/stream: a conversation stays on its model; a follow-up naming another is refused.
        let asked = d.call("ask/stream", ["text": "Anna moved the meeting to Thursday.", "question": "When is the meeting?", "model": "fast",
                                          "maxTokens": 64, "temperature": 0])
        XCTAssertEqual(asked.result?["provenance"]?["model"], "fast", "\(asked)")
        let conversation = try XCTUnwrap(asked.result?["sessionId"])
        let mismatch = d.call("ask/stream", ["sessionId": conversation, "question": "Who moved it?", "model": "big"])
        XCTAssertEqual(mismatch.errorCode, -32602)
        XCTAssertEqual(mismatch["error"]?["data"]?["error"], "modelMismatch")
        XCTAssertEqual(mismatch["error"]?["data"]?["sessionModel"], "fast")
        let status = try XCTUnwrap(d.call("model/status", ["model": "fast"]).result)
        XCTAssertEqual(status["state"], "ready")
        XCTAssertEqual(status["model"]?["contextSize"], 2048, "the config file's per-model settings")

        // Unknown names: -32602 listing the registry, for a request and for model/status.
        for (method, params) in [("analysis/summarize", ["text": "Hello there.", "model": "nope"] as JSONValue),
                                 ("session/create", ["model": "nope"]), ("model/status", ["model": "nope"]), ("model/load", ["model": "nope"])] {
            let e = d.call(method, params)
            XCTAssertEqual(e.errorCode, -32602, method)
            XCTAssertEqual(e["error"]?["data"]?["error"], "unknownModel", method)
            XCTAssertEqual(e["error"]?["data"]?["models"], ["big", "fast"], method)
        }
        XCTAssertEqual(d.call("model/list").result?["routes"], [["route": "analysis", "model": "big"], ["route": "session", "model": "big"]])
    }

    /// A model idle past --keep-alive is unloaded: its KV prefixes are saved first, RSS drops
    /// by at least its weights, and the next request reloads it and restores the prefix.
    func testKeepAliveUnloadsSavesPrefixesAndReloads() throws {
        let cache = NSTemporaryDirectory() + "parlance-keepalive-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: cache) }
        let d = try Daemon(args: ["--model", "solo=\(model)", "--keep-alive", "2"], env: ["PARLANCE_CACHE_DIR": cache], isolatedCaches: false)
        _ = d.initialize()
        // A long selection: the compose prompt passes the 256 tokens a state file needs,
        // at normal cache priority (not saved when the request ends, only at unload).
        let text = String(repeating: "The quarterly numbers are late because the finance team moved offices last week. ", count: 12)
        // The first prompt evaluation of a request (its first `prompt` progress report) can
        // find cached tokens only in memory or on disk; usage sums every evaluation.
        func firstEvaluation(_ progress: [JSONValue]) -> JSONValue? {
            progress.first { $0["phase"] == "prompt" && $0["cachedTokens"] != nil }
        }
        // One attempt each: a retry asked without the prompt's worked examples would leave a
        // shorter prompt in the sequence saved at unload, and the next request would not find
        // its own there.
        let first = compose(d, ["text": .string(text), "workDoneToken": "first", "maxAttempts": 1])
        XCTAssertNotNil(first.result, "\(first)")
        let cold = try XCTUnwrap(firstEvaluation(d.progress(token: "first")))
        XCTAssertEqual(cold["cachedTokens"], 0, "\(cold)")
        XCTAssertGreaterThan(cold["promptTokens"]?.intValue ?? 0, 300, "a prompt worth a state file: \(cold)")
        XCTAssertEqual(stateFiles(cache), [], "a normal-priority prompt is not saved when its request ends")
        let loaded = try XCTUnwrap(d.call("model/list").result)
        let rssLoaded = try XCTUnwrap(loaded["residentBytes"]?.intValue)
        let weights = try XCTUnwrap(loaded["models"]?.arrayValue?.first?["memory"]?["weightsBytes"]?.intValue)

        try waitForState(d, "solo", "unloaded")
        let unloaded = try XCTUnwrap(d.call("model/list").result)
        let rssUnloaded = try XCTUnwrap(unloaded["residentBytes"]?.intValue)
        XCTAssertGreaterThanOrEqual(rssLoaded - rssUnloaded, weights,
                                    "RSS \(rssLoaded) → \(rssUnloaded) bytes: the drop covers the \(weights) bytes of weights")
        XCTAssertEqual(unloaded["loadedBytes"], 0)
        XCTAssertEqual(stateFiles(cache).filter { $0.hasSuffix(".kv") }.count, 1, "the prefix was saved at unload: \(stateFiles(cache))")

        let again = compose(d, ["text": .string(text), "workDoneToken": "again", "maxAttempts": 1])
        let progress = d.progress(token: "again")
        XCTAssertTrue(progress.contains { $0["phase"] == "loading" }, "reloaded on demand")
        XCTAssertNotNil(again.result, "\(again)")
        let warm = try XCTUnwrap(firstEvaluation(progress))
        XCTAssertGreaterThan(warm["cachedTokens"]?.intValue ?? 0, 256, "the prefix came back from disk: "
                             + progress.filter { $0["phase"] != "generating" }.map { "\($0["part"]?.stringValue ?? "-"): \($0["message"]?.stringValue ?? "")" }
                                 .joined(separator: " | "))
        XCTAssertEqual(try list(d)["solo"]?["loads"], 2)
    }

    func stateFiles(_ cache: String) -> [String] {
        let root = cache + "/kv"
        let dirs = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        return dirs.flatMap { dir in ((try? FileManager.default.contentsOfDirectory(atPath: "\(root)/\(dir)")) ?? []).map { "\(root)/\(dir)/\($0)" } }.sorted()
    }

    /// --max-loaded-models: the least recently used idle model makes room; a model whose
    /// request is running is never unloaded, so the newcomer is refused with the numbers.
    func testBudgetEvictsTheIdleAndRefusesWhenAllAreBusy() throws {
        let d = try Daemon(args: ["--model", "a=\(model)", "--model", "b=\(Self.copy)", "--model", "c=\(model)",
                                  "--max-loaded-models", "2", "--keep-alive", "0"])
        _ = d.call("initialize", ["clientInfo": ["name": "registry-tests"], "capabilities": ["tools": true]])
        XCTAssertEqual(d.call("model/load", ["model": "a"]).result?["state"], "ready")
        XCTAssertEqual(d.call("model/load", ["model": "b"]).result?["state"], "ready")
        XCTAssertEqual(compose(d, ["model": "a"]).result?["provenance"]?["model"], "a")  // b is now the least recently used
        XCTAssertEqual(compose(d, ["model": "c"]).result?["provenance"]?["model"], "c")
        var models = try list(d)
        XCTAssertEqual(models["b"]?["state"], "unloaded", "the least recently used idle model was unloaded")
        XCTAssertEqual(models["a"]?["state"], "ready")
        XCTAssertEqual(models["c"]?["state"], "ready")

        // a and c busy (each request waits for its tool/call to be answered), b refused;
        // both requests then complete on the models they kept.
        let tool: JSONValue = ["name": "lookup", "description": "Looks a word up.",
                               "parameters": ["type": "object", "properties": ["word": ["type": "string", "maxLength": 20]], "required": ["word"]]]
        var calls: [JSONValue] = []
        var requests: [Int] = []
        for name in ["a", "c"] {
            let sid = try XCTUnwrap(d.call("session/create", ["model": .string(name), "tools": [tool], "toolChoice": "required", "maxToolCalls": 1,
                                                               "options": ["maxTokens": 8, "temperature": 0]]).result?["sessionId"])
            requests.append(d.start("session/respond", ["sessionId": sid, "prompt": "Look up the word harbor."]))
            calls.append(try XCTUnwrap(d.waitFor { $0["method"] == "tool/call" && $0["params"]?["sessionId"] == sid }, "\(name) is waiting for its tool"))
        }
        let refused = compose(d, ["model": "b"])
        XCTAssertEqual(refused.errorCode, -32001, "\(refused)")
        let data = try XCTUnwrap(refused["error"]?["data"])
        XCTAssertEqual(data["reason"], "memoryBudget")
        XCTAssertEqual(data["model"], "b")
        XCTAssertEqual(data["maxLoadedModels"], 2)
        XCTAssertEqual(data["busy"], ["a", "c"])
        XCTAssertGreaterThan(data["neededBytes"]?.intValue ?? 0, 0)
        XCTAssertTrue(refused["error"]?["message"]?.stringValue?.contains("in use") == true, "\(refused)")
        for call in calls {
            d.send(["jsonrpc": "2.0", "id": call["id"] ?? .null, "result": ["content": "a place where ships shelter"]])
        }
        for id in requests {
            let r = try XCTUnwrap(d.response(id))
            XCTAssertNotNil(r.result?["text"]?.stringValue, "a running request keeps its model: \(r)")
        }
        XCTAssertEqual(compose(d, ["model": "b"]).result?["provenance"]?["model"], "b", "room once a model is idle")
        models = try list(d)
        XCTAssertEqual(models.values.filter { $0["state"] == "ready" }.count, 2)
    }

    /// --max-model-bytes below what one model needs: refused with the numbers, never loaded.
    func testByteBudgetRefusesAModelThatCannotFit() throws {
        let d = try Daemon(args: ["--max-model-bytes", "50000000"])
        _ = d.initialize()
        let e = d.call("model/load")
        XCTAssertEqual(e.errorCode, -32001)
        let data = try XCTUnwrap(e["error"]?["data"])
        XCTAssertEqual(data["reason"], "memoryBudget")
        XCTAssertEqual(data["maxModelBytes"], 50_000_000)
        XCTAssertGreaterThan(data["neededBytes"]?.intValue ?? 0, 50_000_000)
        XCTAssertEqual(try list(d).values.first?["state"], "unloaded")
        XCTAssertTrue(d.isRunning)
    }

    func testBadRegistryConfigurationIsRefusedAtStart() throws {
        let dir = NSTemporaryDirectory() + "parlance-badconfig-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cases: [(String, [String], String)] = [
            (#"{"models": {"x": {"path": "m.gguf", "contextSize": "big"}}}"#, [], "models.x.contextSize"),
            (#"{"models": {"x": {"path": "m.gguf"}}, "routes": {"compose": "y"}}"#, [], "route 'compose' names model 'y'"),
            (#"{"modelz": {}}"#, [], "modelz"),
            ("not json", [], "not valid JSON"),
            ("{}", ["--default-model", "nope"], "default model 'nope'"),
            ("{}", ["--keep-alive", "soon"], "--keep-alive must be seconds"),
            ("{}", ["--keep-alive", "1e20"], "--keep-alive must be seconds"),
            ("{}", ["--model", "/a/m.gguf", "--model", "/b/m.gguf"], "two models named 'm'"),
        ]
        for (text, extra, expected) in cases {
            let path = dir + "/config.json"
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            let d = try Daemon(args: ["--config", path] + extra)
            XCTAssertEqual(d.waitExit(timeout: 30), 2, text)
            XCTAssertTrue(d.stderrText.contains(expected), "\(text): \(d.stderrText)")
        }
    }
}
