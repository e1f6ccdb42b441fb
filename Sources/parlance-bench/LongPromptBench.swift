import Foundation
import Synchronization
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
    let daemonSettings = try Reference.Settings.daemonDefaults(modelPath: modelPath, contextSize: 4096)

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
    let run = try LongPromptRuns(daemonPath: daemonPath, modelPath: modelPath, serverPath: serverPath, threads: threads,
                                 daemonSettings: daemonSettings, wide: wide, local: local, local8k: local8k)
    let prompts = try run.promptsAndDeepDecoding(rounds: rounds)
    let streams = try run.streams(rounds: streamRounds)
    let summaries = try run.summaries(rounds: rounds)
    return run.report(prompts, streams: streams, summaries: summaries, rounds: rounds, streamRounds: streamRounds)
}

/// The long-prompt bench's measurements: its daemons and llama-server, and each step.
private struct LongPromptRuns {
    let daemonPath: String
    let modelPath: String
    let serverPath: String
    let threads: Int
    let daemonSettings: Reference.Settings
    /// llama-server with four slots and an 8,192-token context.
    let wide: LlamaServer
    /// The daemon at its default context, and one at 8,192 tokens.
    let local: DaemonProcess
    let local8k: DaemonProcess
    /// Tokens per word of `vocab`, as the server counts them.
    let tokensPerWord: Double

    static let lengths = [512, 2048, 4000], longLength = 8000
    static let vocab = ["river", "market", "engine", "garden", "signal", "harbor", "ledger", "canvas", "meadow", "orbit", "lantern", "quarry",
                        "thunder", "velvet", "cobalt", "summit", "timber", "crystal", "falcon", "mosaic", "the", "of", "and", "north"]
    static let story = "Tell a long story about a lighthouse keeper and a storm."

    /// Counts `tokensPerWord` on `wide`.
    init(daemonPath: String, modelPath: String, serverPath: String, threads: Int, daemonSettings: Reference.Settings,
         wide: LlamaServer, local: DaemonProcess, local8k: DaemonProcess) throws {
        self.daemonPath = daemonPath
        self.modelPath = modelPath
        self.serverPath = serverPath
        self.threads = threads
        self.daemonSettings = daemonSettings
        self.wide = wide
        self.local = local
        self.local8k = local8k
        let vocab = Self.vocab
        let sample = (0..<2000).map { vocab[$0 * 7 % vocab.count] }.joined(separator: " ")
        tokensPerWord = Double(try wide.tokenCount(sample)) / 2000
    }

    /// Unique text of about n tokens (as the server counts them), so nothing is cached.
    func text(_ tokens: Int, salt: String) -> String {
        var g = SystemRandomNumberGenerator()
        return salt + " " + (0..<Int(Double(tokens) / tokensPerWord)).map { _ in Self.vocab.randomElement(using: &g)! }.joined(separator: " ")
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

    // MARK: 1. Prompt evaluation, and decoding after 2,000 tokens of context

    /// Prompt tokens per second by system and length, and decoding rates after 2,000 tokens by system.
    struct PromptFigures {
        var prompt: [String: [Int: [Double]]] = ["llama-server": [:], "parlance": [:], "raw, daemon's settings": [:], "raw, llama.cpp's defaults": [:]]
        var decodeDeep: [String: [Double]] = [:]
    }

    /// Prompt evaluation at every length and decoding after 2,000 tokens, for llama-server,
    /// Parlance and raw llama.cpp, `rounds` rounds.
    func promptsAndDeepDecoding(rounds: Int) throws -> PromptFigures {
        var f = PromptFigures()
        for round in 1...rounds {
            log("long prompts, round \(round) of \(rounds)")
            try promptRound(round, into: &f)
            try deepDecodeRound(round, into: &f)
            try rawRound(round, into: &f)
        }
        return f
    }

    /// Every length once to llama-server and once to Parlance (which first alternates by
    /// round); 8,000 tokens (attention's cost grows with the square of the length) in the
    /// first round only.
    private func promptRound(_ round: Int, into f: inout PromptFigures) throws {
        for n in Self.lengths + (round == 1 ? [Self.longLength] : []) {
            let body = text(n, salt: "round \(round) length \(n) \(UUID())")
            for which in (round % 2 == 0 ? [0, 1] : [1, 0]) {
                if which == 0 {
                    let t0 = Date()
                    let v = try wide.post("/completion", ["prompt": .string(body), "n_predict": 1, "cache_prompt": false, "temperature": 0])
                    let wall = Date().timeIntervalSince(t0)
                    guard let evaluated = v["timings"]?["prompt_n"]?.intValue else { throw BenchError("llama-server: no timings in \(v)") }
                    f.prompt["llama-server"]![n, default: []].append(Double(evaluated) / wall)
                } else {
                    let (wall, evaluated, _) = try respond(n == Self.longLength ? local8k : local, body, maxTokens: 1)
                    f.prompt["parlance"]![n, default: []].append(Double(evaluated) / wall)
                }
            }
        }
    }

    /// Decoding after 2,000 tokens: the same text to both, 64 tokens.
    private func deepDecodeRound(_ round: Int, into f: inout PromptFigures) throws {
        let deep = text(2000, salt: "deep \(round) \(UUID())") + "\n\nContinue the list of words."
        let v = try wide.post("/completion", ["prompt": .string(deep), "n_predict": 64, "cache_prompt": false, "temperature": 0, "ignore_eos": true])
        f.decodeDeep["llama-server", default: []].append(v["timings"]?["predicted_per_second"]?.doubleValue ?? 0)
        let (_, _, u) = try respond(local, deep, maxTokens: 64)
        f.decodeDeep["parlance", default: []].append(decodeRate(u))
    }

    /// Raw llama.cpp, the daemon idle meanwhile: with the daemon's settings and with llama.cpp's defaults.
    private func rawRound(_ round: Int, into f: inout PromptFigures) throws {
        for (name, s) in [("raw, daemon's settings", daemonSettings), ("raw, llama.cpp's defaults", Reference.Settings.llamaCppDefaults)] {
            let r = try Reference.atLengths(modelPath: modelPath, threads: threads, contextSize: 4096, settings: s, lengths: Self.lengths, decodeDepth: 2000)
            for (n, rate) in r.prompt { f.prompt[name]![n, default: []].append(rate) }
            f.decodeDeep[name, default: []].append(r.decode ?? 0)
            if round == 1 {
                let g = try Reference.atLengths(modelPath: modelPath, threads: threads, contextSize: 8192, settings: s, lengths: [Self.longLength])
                f.prompt[name]![Self.longLength, default: []].append(g.prompt[Self.longLength] ?? 0)
            }
        }
    }

    // MARK: 2. Decoding at one and four streams

    /// 128-token stories at temperature 0.8, Parlance with speculation at its default and
    /// off, llama-server (four slots), interleaved: tokens per second by system and streams.
    func streams(rounds streamRounds: Int) throws -> [String: [Double]] {
        var streams: [String: [Double]] = [:]
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
        return streams
    }

    /// `n` stories at once through the daemon: tokens per second of wall time.
    private func parlanceStreams(_ n: Int, round: Int, speculative: Bool?) -> Double {
        let sids = (0..<n).map { _ in local.call("session/create", ["instructions": "You are a storyteller."]).result?["sessionId"] ?? .null }
        let t0 = Date()
        let ids = sids.enumerated().map { i, sid in
            var options = JSONObject([("maxTokens", 128), ("temperature", 0.8), ("seed", .int(round * 10 + i))])
            if let speculative { options["speculative"] = .bool(speculative) }
            return local.start("session/respond", ["sessionId": sid, "prompt": .string(Self.story), "options": .object(options)])
        }
        let tokens = ids.compactMap { local.response($0)?.result?["usage"]?["generatedTokens"]?.doubleValue }.reduce(0, +)
        let wall = Date().timeIntervalSince(t0)
        for sid in sids { _ = local.call("session/close", ["sessionId": sid]) }
        return tokens / wall
    }

    /// `n` stories at once through llama-server: tokens per second of wall time.
    private func serverStreams(_ n: Int, round: Int) throws -> Double {
        let wide = self.wide, story = Self.story
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

    // MARK: 3. Summaries on empty caches

    /// Each summary's figures by transcript (`demo`, `pastOneWindow`) and name, and the demo daemon's memory.
    struct SummaryFigures {
        var summaries: [String: [String: [Double]]] = [:]
        var demoRSS: [Double] = []
        var demoMemory = JSONValue.null
    }

    /// The demo's summary on empty caches, and a transcript past one context window: a
    /// fresh daemon each round; llama-server's prompt time for the same prompts, taken from
    /// its own counters (`/metrics`) while Parlance sends it the same analysis as a remote
    /// engine (one slot, the same 4,096-token context: the same parts, one by one).
    func summaries(rounds: Int) throws -> SummaryFigures {
        let transcript = try String(contentsOfFile: "Samples/podcast-sample.srt", encoding: .utf8)
        let longTranscript = repeatedTranscript(transcript, times: 3)
        var f = SummaryFigures()
        for round in 1...rounds {
            // The transcript past one window (minutes per run) in the first round only.
            for (label, body) in [("demo", transcript)] + (round == 1 ? [("pastOneWindow", longTranscript)] : []) {
                log("\(label) summary on empty caches, round \(round) of \(rounds)")
                try summaryOnEmptyCaches(label, body, into: &f)
                try summaryThroughLlamaServer(label, body, into: &f)
            }
        }
        return f
    }

    /// analysis/summarize on a fresh daemon: first token, total and prompt tokens; for the
    /// demo also its memory and raw llama.cpp's time for the same number of prompt tokens.
    private func summaryOnEmptyCaches(_ label: String, _ body: String, into f: inout SummaryFigures) throws {
        let d = try DaemonProcess(args: ["--model", modelPath, "--threads", String(threads)], binary: daemonPath)
        _ = d.initialize()
        let loaded = d.call("model/load")
        let t0 = Date()
        let r = d.call("analysis/summarize", ["text": .string(body)], timeout: 900)
        let wall = Date().timeIntervalSince(t0)
        guard let u = r.result?["usage"], let first = u["firstTokenMs"]?.doubleValue, let p = u["promptTokens"]?.doubleValue else {
            throw BenchError("analysis/summarize failed: \(r)")
        }
        f.summaries[label, default: [:]]["firstTokenMs", default: []].append(first)
        f.summaries[label, default: [:]]["totalMs", default: []].append(wall * 1000)
        f.summaries[label, default: [:]]["promptTokens", default: []].append(p)
        if label == "demo" {
            f.demoRSS.append(Double(d.peakRSS ?? 0))
            f.demoMemory = memoryParts(pid: d.process.processIdentifier, loaded: loaded.result?["model"]?["memory"])
            // Raw llama.cpp: the same number of tokens through the shim, the daemon's settings.
            let raw = try Reference.atLengths(modelPath: modelPath, threads: threads, contextSize: 4096, settings: daemonSettings, lengths: [Int(p)])
            f.summaries[label, default: [:]]["rawPromptMs", default: []].append(p / (raw.prompt[Int(p)] ?? 1) * 1000)
        }
        _ = d.call("shutdown")
        d.notify("exit")
    }

    /// The same analysis through a daemon whose engine is a one-slot llama-server: the
    /// server's prompt seconds and tokens from its counters, and the daemon's total.
    private func summaryThroughLlamaServer(_ label: String, _ body: String, into f: inout SummaryFigures) throws {
        let narrow = try LlamaServer(path: serverPath, modelPath: modelPath, threads: threads, extra: ["-c", "4096", "-np", "1", "--metrics"])
        defer { narrow.stop() }
        let remote = try DaemonProcess(args: ["--model", "r=openai:http://127.0.0.1:\(narrow.port)/v1"], binary: daemonPath)
        _ = remote.initialize()
        _ = remote.call("model/load", ["model": "r"])
        let before = try narrow.metrics()
        let rr = remote.call("analysis/summarize", ["text": .string(body), "model": "r"], timeout: 900)
        let after = try narrow.metrics()
        guard rr.result != nil else { throw BenchError("analysis/summarize through llama-server failed: \(rr)") }
        f.summaries[label, default: [:]]["llamaServerPromptMs", default: []].append(((after["llamacpp:prompt_seconds_total"] ?? 0) - (before["llamacpp:prompt_seconds_total"] ?? 0)) * 1000)
        f.summaries[label, default: [:]]["llamaServerPromptTokens", default: []].append((after["llamacpp:prompt_tokens_total"] ?? 0) - (before["llamacpp:prompt_tokens_total"] ?? 0))
        f.summaries[label, default: [:]]["llamaServerTotalMs", default: []].append((rr.result?["usage"]?["totalMs"]?.doubleValue ?? 0))
        _ = remote.call("shutdown")
        remote.notify("exit")
    }

    // MARK: The report

    /// The medians, the ratios to llama-server and the targets.
    func report(_ prompts: PromptFigures, streams: [String: [Double]], summaries s: SummaryFigures, rounds: Int, streamRounds: Int) -> JSONValue {
        let lengths = Self.lengths, longLength = Self.longLength
        let prompt = prompts.prompt, decodeDeep = prompts.decodeDeep, summaries = s.summaries
        func promptRow(_ name: String) -> JSONValue {
            .object(JSONObject((lengths + [longLength]).map { ("\($0)", round2(upperMedian(prompt[name]![$0] ?? []))) }))
        }
        let promptMedians = (lengths + [longLength]).map { n in (n, upperMedian(prompt["parlance"]![n] ?? []), upperMedian(prompt["llama-server"]![n] ?? [])) }
        func streamRatio(_ a: String, _ b: String) -> Double { upperMedian(streams[a] ?? []) / max(upperMedian(streams[b] ?? []), 1e-9) }
        // Speculation's default against off, paired round by round (drift cancels within a pair).
        func pairedRatio(_ n: Int) -> Double {
            upperMedian(zip(streams["parlance x\(n)"] ?? [], streams["parlance, speculative off x\(n)"] ?? []).map { $0 / max($1, 1e-9) })
        }
        func summaryRow(_ label: String) -> JSONValue {
            .object(JSONObject((summaries[label] ?? [:]).keys.sorted().map { ($0, round2(upperMedian(summaries[label]![$0]!))) }))
        }
        let demoFirst = upperMedian(summaries["demo"]?["firstTokenMs"] ?? [])
        let demoPeer = upperMedian(summaries["demo"]?["llamaServerPromptMs"] ?? [])
        let modelBytes = (try? FileManager.default.attributesOfItem(atPath: modelPath)[.size] as? Int) ?? 0
        let peakRSS = s.demoRSS.max() ?? 0

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
                "parlanceVsLlamaServer": .object(JSONObject(promptMedians.map { ("\($0.0)", round2($0.1 / max($0.2, 1e-9))) })),
            ],
            "decodeAfter2000TokPerSec": .object(JSONObject(decodeDeep.keys.sorted().map { ($0, round2(upperMedian(decodeDeep[$0]!))) })),
            "streamsTokPerSec": .object(JSONObject(streams.keys.sorted().map { ($0, round2(upperMedian(streams[$0]!))) })),
            "streamsVsLlamaServer": ["one": round2(streamRatio("parlance x1", "llama-server x1")), "four": round2(streamRatio("parlance x4", "llama-server x4"))],
            "speculativeDefaultVsOff": ["one": .double((pairedRatio(1) * 1000).rounded() / 1000), "four": .double((pairedRatio(4) * 1000).rounded() / 1000)],
            "demoSummary": summaryRow("demo"),
            "pastOneWindowSummary": summaryRow("pastOneWindow"),
            "demoPeakRssBytes": .int(Int(peakRSS)), "demoMemory": s.demoMemory,
            "demoPeakRssOverModelBytes": .int(Int(peakRSS) - modelBytes),
            "targets": .object(targets),
        ]
    }
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
