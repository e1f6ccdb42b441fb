import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import ParlanceClient
import ParlanceEngine
import ParlanceJSON

/// The lengths the main job reads, side by side with llama.cpp's llama-server (same build,
/// model and threads) and against raw llama.cpp through the shim, in interleaved rounds
/// (medians): prompt evaluation at 512, 2,048 and 4,000 tokens (and 8,000 with `--ctx
/// 8192`), decoding after 2,000 tokens of context, decoding at one and four streams (with
/// speculation at its default and off), the demo's summary on empty caches, and a
/// transcript past one context window. Every figure is wall-clock, from the request sent to
/// its answer. The 8,000-token row and the transcript past one window are taken in the
/// first round only (about five minutes between them).
func longPromptBench(daemonPath: String, modelPath: String, serverPath: String, threads: Int, rounds: Int = 3, streamRounds: Int = 7) throws -> JSONValue {
    func r2(_ x: Double) -> JSONValue { .double((x * 100).rounded() / 100) }
    func median(_ xs: [Double]) -> Double { xs.isEmpty ? 0 : xs.sorted()[xs.count / 2] }
    let daemonSettings = try Reference.Settings.daemonDefaults(modelPath: modelPath, contextSize: 4096)
    let lengths = [512, 2048, 4000], longLength = 8000

    // llama-server with its defaults (four slots sharing one unified cache) but for the
    // context, threads and port; one with a single slot for the analyses (parts one by one).
    let wide = try LlamaServer(path: serverPath, modelPath: modelPath, threads: threads, extra: ["-c", "8192"])
    defer { wide.stop() }
    let local = try DaemonProcess(args: ["--model", modelPath, "--threads", String(threads)], binary: daemonPath)
    let local8k = try DaemonProcess(args: ["--model", modelPath, "--threads", String(threads), "--ctx", "8192"], binary: daemonPath)
    for d in [local, local8k] {
        _ = d.initialize()
        _ = d.call("model/load")
    }

    // Unique text of about n tokens (as the server counts them), so nothing is cached.
    let vocab = ["river", "market", "engine", "garden", "signal", "harbor", "ledger", "canvas", "meadow", "orbit", "lantern", "quarry",
                 "thunder", "velvet", "cobalt", "summit", "timber", "crystal", "falcon", "mosaic", "the", "of", "and", "north"]
    let sample = (0..<2000).map { vocab[$0 * 7 % vocab.count] }.joined(separator: " ")
    let tokensPerWord = Double(try wide.tokenCount(sample)) / 2000
    func text(_ tokens: Int, salt: String) -> String {
        var g = SystemRandomNumberGenerator()
        return salt + " " + (0..<Int(Double(tokens) / tokensPerWord)).map { _ in vocab.randomElement(using: &g)! }.joined(separator: " ")
    }
    /// A session/respond on a daemon: (wall seconds, prompt tokens evaluated, usage).
    func respond(_ d: DaemonProcess, _ prompt: String, maxTokens: Int, temperature: Double = 0, seed: Int = 1, speculative: Bool? = nil) throws -> (Double, Int, JSONValue) {
        let sid = d.call("session/create", ["instructions": "Answer briefly."]).result?["sessionId"] ?? .null
        var options = JSONObject([("maxTokens", .int(maxTokens)), ("temperature", .double(temperature)), ("seed", .int(seed))])
        if let speculative { options["speculative"] = .bool(speculative) }
        let t0 = Date()
        let r = d.call("session/respond", ["sessionId": sid, "prompt": .string(prompt), "options": .object(options)])
        let wall = Date().timeIntervalSince(t0)
        _ = d.call("session/close", ["sessionId": sid])
        guard let u = r.result?["usage"], let p = u["promptTokens"]?.intValue, let c = u["cachedPromptTokens"]?.intValue else {
            throw BenchError("session/respond failed: \(r)")
        }
        return (wall, p - c, u)
    }

    // 1. Prompt evaluation, and decoding after 2,000 tokens of context.
    var prompt: [String: [Int: [Double]]] = ["llama-server": [:], "parlance": [:], "raw, daemon's settings": [:], "raw, llama.cpp's defaults": [:]]
    var decodeDeep: [String: [Double]] = [:]
    for round in 1...rounds {
        log("long prompts, round \(round) of \(rounds)")
        // 8,000 tokens (attention's cost grows with the square of the length) in the first round only.
        for n in lengths + (round == 1 ? [longLength] : []) {
            let body = text(n, salt: "round \(round) length \(n) \(UUID())")
            for which in (round % 2 == 0 ? [0, 1] : [1, 0]) {
                if which == 0 {
                    let t0 = Date()
                    let v = try wide.post("/completion", ["prompt": .string(body), "n_predict": 1, "cache_prompt": false, "temperature": 0])
                    let wall = Date().timeIntervalSince(t0)
                    guard let evaluated = v["timings"]?["prompt_n"]?.intValue else { throw BenchError("llama-server: no timings in \(v)") }
                    prompt["llama-server"]![n, default: []].append(Double(evaluated) / wall)
                } else {
                    let (wall, evaluated, _) = try respond(n == longLength ? local8k : local, body, maxTokens: 1)
                    prompt["parlance"]![n, default: []].append(Double(evaluated) / wall)
                }
            }
        }
        // Decoding after 2,000 tokens: the same text to both, 64 tokens.
        let deep = text(2000, salt: "deep \(round) \(UUID())") + "\n\nContinue the list of words."
        let v = try wide.post("/completion", ["prompt": .string(deep), "n_predict": 64, "cache_prompt": false, "temperature": 0, "ignore_eos": true])
        decodeDeep["llama-server", default: []].append(v["timings"]?["predicted_per_second"]?.doubleValue ?? 0)
        let (_, _, u) = try respond(local, deep, maxTokens: 64)
        decodeDeep["parlance", default: []].append(decodeRate(u))
        // Raw llama.cpp, the daemon idle meanwhile.
        for (name, s) in [("raw, daemon's settings", daemonSettings), ("raw, llama.cpp's defaults", Reference.Settings.llamaCppDefaults)] {
            let f = try Reference.atLengths(modelPath: modelPath, threads: threads, contextSize: 4096, settings: s, lengths: lengths, decodeDepth: 2000)
            for (n, r) in f.prompt { prompt[name]![n, default: []].append(r) }
            decodeDeep[name, default: []].append(f.decode ?? 0)
            if round == 1 {
                let g = try Reference.atLengths(modelPath: modelPath, threads: threads, contextSize: 8192, settings: s, lengths: [longLength])
                prompt[name]![longLength, default: []].append(g.prompt[longLength] ?? 0)
            }
        }
    }
    func promptRow(_ name: String) -> JSONValue {
        .object(JSONObject((lengths + [longLength]).map { ("\($0)", r2(median(prompt[name]![$0] ?? []))) }))
    }
    let promptMedians = (lengths + [longLength]).map { n in (n, median(prompt["parlance"]![n] ?? []), median(prompt["llama-server"]![n] ?? [])) }

    // 2. Decoding at one and four streams: 128-token stories at temperature 0.8, Parlance
    // with speculation at its default and off, llama-server (four slots), interleaved.
    var streams: [String: [Double]] = [:]
    let story = "Tell a long story about a lighthouse keeper and a storm."
    func parlanceStreams(_ n: Int, round: Int, speculative: Bool?) -> Double {
        let sids = (0..<n).map { _ in local.call("session/create", ["instructions": "You are a storyteller."]).result?["sessionId"] ?? .null }
        let t0 = Date()
        let ids = sids.enumerated().map { i, sid in
            var options = JSONObject([("maxTokens", 128), ("temperature", 0.8), ("seed", .int(round * 10 + i))])
            if let speculative { options["speculative"] = .bool(speculative) }
            return local.start("session/respond", ["sessionId": sid, "prompt": .string(story), "options": .object(options)])
        }
        let tokens = ids.compactMap { local.response($0)?.result?["usage"]?["generatedTokens"]?.doubleValue }.reduce(0, +)
        let wall = Date().timeIntervalSince(t0)
        for sid in sids { _ = local.call("session/close", ["sessionId": sid]) }
        return tokens / wall
    }
    func serverStreams(_ n: Int, round: Int) throws -> Double {
        let counts = Mutex<[Int]>([])
        let t0 = Date()
        DispatchQueue.concurrentPerform(iterations: n) { i in
            let v = try? wide.post("/v1/chat/completions", [
                "messages": [["role": "system", "content": "You are a storyteller."], ["role": "user", "content": .string(story)]],
                "max_tokens": 128, "temperature": 0.8, "top_p": 0.9, "top_k": 40, "min_p": 0.05, "repeat_penalty": 1.1,
                "seed": .int(round * 10 + i), "cache_prompt": false])
            counts.withLock { $0.append(v?["usage"]?["completion_tokens"]?.intValue ?? 0) }
        }
        let wall = Date().timeIntervalSince(t0)
        return Double(counts.withLock { $0.reduce(0, +) }) / wall
    }
    for round in 1...streamRounds {
        log("decoding streams, round \(round) of \(streamRounds)")
        for n in [1, 4] {
            var runs: [(String, () throws -> Double)] = [
                ("llama-server", { try serverStreams(n, round: round) }),
                ("parlance", { parlanceStreams(n, round: round, speculative: nil) }),
                ("parlance, speculative off", { parlanceStreams(n, round: round, speculative: false) }),
            ]
            if round % 2 == 0 { runs.reverse() }
            for (name, run) in runs { streams["\(name) x\(n)", default: []].append(try run()) }
        }
    }
    func streamRatio(_ a: String, _ b: String) -> Double { median(streams[a] ?? []) / max(median(streams[b] ?? []), 1e-9) }
    // Speculation's default against off, paired round by round (drift cancels within a pair).
    func pairedRatio(_ n: Int) -> Double {
        median(zip(streams["parlance x\(n)"] ?? [], streams["parlance, speculative off x\(n)"] ?? []).map { $0 / max($1, 1e-9) })
    }

    // 3. The demo's summary on empty caches, and a transcript past one context window: a
    // fresh daemon each round; llama-server's prompt time for the same prompts, taken from
    // its own counters (`/metrics`) while Parlance sends it the same analysis as a remote
    // engine (one slot, the same 4,096-token context: the same parts, one by one).
    let transcript = try String(contentsOfFile: "Samples/podcast-sample.srt", encoding: .utf8)
    let longTranscript = repeatedTranscript(transcript, times: 3)
    var summaries: [String: [String: [Double]]] = [:]
    var demoRSS: [Double] = []
    var demoMemory = JSONValue.null
    for round in 1...rounds {
        // The transcript past one window (minutes per run) in the first round only.
        for (label, body) in [("demo", transcript)] + (round == 1 ? [("pastOneWindow", longTranscript)] : []) {
            log("\(label) summary on empty caches, round \(round) of \(rounds)")
            let d = try DaemonProcess(args: ["--model", modelPath, "--threads", String(threads)], binary: daemonPath)
            _ = d.initialize()
            let loaded = d.call("model/load")
            let t0 = Date()
            let r = d.call("analysis/summarize", ["text": .string(body)], timeout: 900)
            let wall = Date().timeIntervalSince(t0)
            guard let u = r.result?["usage"], let first = u["firstTokenMs"]?.doubleValue, let p = u["promptTokens"]?.doubleValue else {
                throw BenchError("analysis/summarize failed: \(r)")
            }
            summaries[label, default: [:]]["firstTokenMs", default: []].append(first)
            summaries[label, default: [:]]["totalMs", default: []].append(wall * 1000)
            summaries[label, default: [:]]["promptTokens", default: []].append(p)
            if label == "demo" {
                demoRSS.append(Double(d.peakRSS ?? 0))
                demoMemory = memoryParts(pid: d.process.processIdentifier, loaded: loaded.result?["model"]?["memory"])
                // Raw llama.cpp: the same number of tokens through the shim, the daemon's settings.
                let raw = try Reference.atLengths(modelPath: modelPath, threads: threads, contextSize: 4096, settings: daemonSettings, lengths: [Int(p)])
                summaries[label, default: [:]]["rawPromptMs", default: []].append(p / (raw.prompt[Int(p)] ?? 1) * 1000)
            }
            _ = d.call("shutdown")
            d.notify("exit")

            let narrow = try LlamaServer(path: serverPath, modelPath: modelPath, threads: threads, extra: ["-c", "4096", "-np", "1", "--metrics"])
            defer { narrow.stop() }
            let remote = try DaemonProcess(args: ["--model", "r=openai:http://127.0.0.1:\(narrow.port)/v1"], binary: daemonPath)
            _ = remote.initialize()
            _ = remote.call("model/load", ["model": "r"])
            let before = try narrow.metrics()
            let rr = remote.call("analysis/summarize", ["text": .string(body), "model": "r"], timeout: 900)
            let after = try narrow.metrics()
            guard rr.result != nil else { throw BenchError("analysis/summarize through llama-server failed: \(rr)") }
            summaries[label, default: [:]]["llamaServerPromptMs", default: []].append(((after["llamacpp:prompt_seconds_total"] ?? 0) - (before["llamacpp:prompt_seconds_total"] ?? 0)) * 1000)
            summaries[label, default: [:]]["llamaServerPromptTokens", default: []].append((after["llamacpp:prompt_tokens_total"] ?? 0) - (before["llamacpp:prompt_tokens_total"] ?? 0))
            summaries[label, default: [:]]["llamaServerTotalMs", default: []].append((rr.result?["usage"]?["totalMs"]?.doubleValue ?? 0))
            _ = remote.call("shutdown")
            remote.notify("exit")
        }
    }
    func summaryRow(_ label: String) -> JSONValue {
        .object(JSONObject((summaries[label] ?? [:]).keys.sorted().map { ($0, r2(median(summaries[label]![$0]!))) }))
    }
    let demoFirst = median(summaries["demo"]?["firstTokenMs"] ?? [])
    let demoPeer = median(summaries["demo"]?["llamaServerPromptMs"] ?? [])
    let modelBytes = (try? FileManager.default.attributesOfItem(atPath: modelPath)[.size] as? Int) ?? 0
    let peakRSS = demoRSS.max() ?? 0

    var targets = JSONObject()
    for (n, ours, peer) in promptMedians where n != longLength { targets["prompt\(n)>=0.97xLlamaServer"] = .bool(ours >= 0.97 * peer) }
    targets["demoFirstToken<=1.1xLlamaServerPrompt"] = .bool(demoFirst <= 1.1 * demoPeer)
    targets["decode1>=0.98xLlamaServer"] = .bool(streamRatio("parlance x1", "llama-server x1") >= 0.98)
    targets["decode4>=1.0xLlamaServer"] = .bool(streamRatio("parlance x4", "llama-server x4") >= 1.0)
    targets["speculativeDefault1>=0.98xOff"] = .bool(pairedRatio(1) >= 0.98)
    targets["speculativeDefault4>=0.98xOff"] = .bool(pairedRatio(4) >= 0.98)
    return [
        "rounds": .int(rounds), "streamRounds": .int(streamRounds),
        "daemonSettings": .string(daemonSettings.description), "llamaCppDefaults": .string(Reference.Settings.llamaCppDefaults.description),
        "promptTokPerSec": [
            "parlance": promptRow("parlance"), "llamaServer": promptRow("llama-server"),
            "rawDaemonSettings": promptRow("raw, daemon's settings"), "rawLlamaCppDefaults": promptRow("raw, llama.cpp's defaults"),
            "parlanceVsLlamaServer": .object(JSONObject(promptMedians.map { ("\($0.0)", r2($0.1 / max($0.2, 1e-9))) })),
        ],
        "decodeAfter2000TokPerSec": .object(JSONObject(decodeDeep.keys.sorted().map { ($0, r2(median(decodeDeep[$0]!))) })),
        "streamsTokPerSec": .object(JSONObject(streams.keys.sorted().map { ($0, r2(median(streams[$0]!))) })),
        "streamsVsLlamaServer": ["one": r2(streamRatio("parlance x1", "llama-server x1")), "four": r2(streamRatio("parlance x4", "llama-server x4"))],
        "speculativeDefaultVsOff": ["one": .double((pairedRatio(1) * 1000).rounded() / 1000), "four": .double((pairedRatio(4) * 1000).rounded() / 1000)],
        "demoSummary": summaryRow("demo"),
        "pastOneWindowSummary": summaryRow("pastOneWindow"),
        "demoPeakRssBytes": .int(Int(peakRSS)), "demoMemory": demoMemory,
        "demoPeakRssOverModelBytes": .int(Int(peakRSS) - modelBytes),
        "targets": .object(targets),
    ]
}

/// Where a daemon's resident memory is: file-backed pages (the mapped weights and the
/// binaries) and anonymous ones (KV cache, compute buffers, logits, the Swift heap), beside
/// what llama.cpp said it allocated; the heap is what the anonymous pages hold beyond that.
func memoryParts(pid: Int32, loaded: JSONValue?) -> JSONValue {
    var status: [String: Int] = [:]
    if let s = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) {
        for line in s.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, let kb = parts[1].split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap({ Int($0) }) else { continue }
            status[String(parts[0])] = kb * 1024
        }
    }
    let kv = loaded?["kvCacheBytes"]?.intValue ?? 0, compute = loaded?["computeBytes"]?.intValue ?? 0, output = loaded?["outputBytes"]?.intValue ?? 0
    let anon = status["RssAnon"] ?? 0
    return [
        "peakRssBytes": .int(status["VmHWM"] ?? 0), "rssBytesAfter": .int(status["VmRSS"] ?? 0),
        "fileBackedBytes": .int(status["RssFile"] ?? 0), "anonymousBytes": .int(anon),
        "llamaWeightsBytes": .int(loaded?["weightsBytes"]?.intValue ?? 0), "llamaKVCacheBytes": .int(kv),
        "llamaComputeBytes": .int(compute), "llamaOutputBytes": .int(output),
        "anonymousBeyondLlamaBytes": .int(anon - kv - compute - output),
    ]
}

/// The sample transcript `times` times over, numbered and timed on (a longer episode).
func repeatedTranscript(_ srt: String, times: Int) -> String {
    let cues = srt.components(separatedBy: "\n\n").filter { !$0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }
    var out: [String] = []
    var number = 0
    for copy in 0..<times {
        for cue in cues {
            var lines = cue.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            guard lines.count >= 3 else { continue }
            number += 1
            lines[0] = String(number)
            lines[1] = lines[1].components(separatedBy: " --> ").map { shifted($0, by: copy * 450) }.joined(separator: " --> ")
            out.append(lines.joined(separator: "\n"))
        }
    }
    return out.joined(separator: "\n\n") + "\n"
}

private func shifted(_ stamp: String, by seconds: Int) -> String {
    let p = stamp.trimmingCharacters(in: .whitespaces).split(whereSeparator: { $0 == ":" || $0 == "," }).compactMap { Int($0) }
    guard p.count == 4 else { return stamp }
    let total = (p[0] * 3600 + p[1] * 60 + p[2] + seconds) * 1000 + p[3]
    return String(format: "%02d:%02d:%02d,%03d", total / 3_600_000, total / 60_000 % 60, total / 1000 % 60, total % 1000)
}

/// A llama-server on loopback, started and stopped by the bench.
final class LlamaServer: @unchecked Sendable {
    let process = Process()
    let port: Int
    private static let nextPort = Mutex(0)

    init(path: String, modelPath: String, threads: Int, extra: [String]) throws {
        port = LlamaServer.nextPort.withLock { $0 += 1; return 20_000 + Int(getpid() % 500) * 8 + $0 % 8 }
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["-m", modelPath, "--host", "127.0.0.1", "--port", "\(port)", "-t", "\(threads)", "--no-webui"] + extra
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // /health answers 503 while the model loads, 200 once it can serve.
        for _ in 0..<600 {
            if let r = try? RawHTTP.exchange(port: port, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"), r.hasPrefix("HTTP/1.1 200") { return }
            guard process.isRunning else { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        stop()
        throw BenchError("llama-server did not become healthy on port \(port)")
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    func post(_ path: String, _ body: JSONValue) throws -> JSONValue {
        let payload = body.serialized()
        let r = try RawHTTP.exchange(port: port, "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: \(payload.utf8.count)\r\n\r\n\(payload)")
        guard let split = r.range(of: "\r\n\r\n") else { throw BenchError("llama-server: no HTTP answer to \(path)") }
        return try JSONParser.parse(String(r[split.upperBound...]))
    }

    func tokenCount(_ text: String) throws -> Int {
        guard let n = try post("/tokenize", ["content": .string(text)])["tokens"]?.arrayValue?.count else { throw BenchError("llama-server: /tokenize failed") }
        return n
    }

    /// The Prometheus counters of `/metrics` (needs `--metrics`), by name.
    func metrics() throws -> [String: Double] {
        let r = try RawHTTP.exchange(port: port, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        guard let split = r.range(of: "\r\n\r\n") else { throw BenchError("llama-server: no /metrics") }
        var out: [String: Double] = [:]
        for line in r[split.upperBound...].split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            if parts.count >= 2, let v = Double(parts[1]) { out[String(parts[0])] = v }
        }
        return out
    }
}
