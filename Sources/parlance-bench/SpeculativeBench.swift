import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ParlanceClient
import ParlanceJSON

/// Speculative decoding drafted from the text, side by side with llama-server's n-gram
/// modes (same build, model, threads, prompt and sampling; every system answers the same
/// request in turn, rounds interleaved, medians), then Parlance on against off on the
/// work it drafts for and the work it must not slow.
func speculativeBench(daemonPath: String, modelPath: String, serverPath: String?, threads: Int, rounds: Int = 3) throws -> JSONValue {
    // llama-server, without speculation and in each n-gram mode, all started first (idle
    // servers wait on a condition variable: they cost nothing while another is measured).
    var servers: [NgramServer] = []
    defer { for s in servers { s.process.terminate(); s.process.waitUntilExit() } }
    if let serverPath { try startNgramServers(serverPath, modelPath: modelPath, threads: threads, into: &servers) }

    let d = try DaemonProcess(args: ["--model", modelPath, "--threads", String(threads), "--ctx", "4096"], binary: daemonPath)
    _ = d.initialize()
    _ = d.call("model/load")
    let runs = SpeculativeRuns(d: d, rounds: rounds)
    let (sideBySide, holdsAgainstBest) = try runs.sideBySide(servers)
    let base = d.call("compose/variations", ["text": .string(SpeculativeTexts.selection), "tones": ["formal"], "seed": 4, "ephemeral": true]).result
    let variationId = base?["variations"]?.arrayValue?.first?["id"] ?? .null
    let copyHeavy = runs.onOff("fix spelling and grammar (refine, verify on)") { spec, _ in
        ("compose/refine", ["variationId": variationId, "instruction": "Fix spelling and grammar.", "seed": 2, "speculative": .bool(spec), "ephemeral": true])
    }
    let oneTone = runs.onOff("one-tone rewrite at the default temperature") { spec, round in
        ("compose/variations", ["text": .string(SpeculativeTexts.misspelt), "tones": ["formal"], "seed": .int(10 + round), "speculative": .bool(spec), "ephemeral": true])
    }
    let story = runs.onOff("storytelling") { spec, round in
        let sid = d.call("session/create", ["instructions": "You are a storyteller."]).result?["sessionId"] ?? .null
        return ("session/respond", ["sessionId": sid, "prompt": "Tell a new story about a fox who builds a boat.",
                                    "options": ["maxTokens": 128, "temperature": 0.8, "seed": .int(20 + round), "speculative": .bool(spec)]])
    }
    let (five, one) = runs.fiveTonesAgainstOne()
    let (mixedOn, mixedOff) = runs.eightMixed()
    _ = d.call("shutdown")
    d.notify("exit")

    let fiveVsOne = upperMedian(five) / max(upperMedian(one), 1e-9)
    let mixed = upperMedian(mixedOn) / max(upperMedian(mixedOff), 1e-9)
    return [
        "rounds": .int(rounds), "maxTokens": .int(SpeculativeRuns.maxTokens), "threads": .int(threads),
        "sideBySide": .object(sideBySide),
        "copyHeavyRefine": ["onTokPerSec": round2(copyHeavy.on), "offTokPerSec": round2(copyHeavy.off), "onVsOff": round2(copyHeavy.ratio)],
        "oneToneRewrite": ["onTokPerSec": round2(oneTone.on), "offTokPerSec": round2(oneTone.off), "onVsOff": round2(oneTone.ratio)],
        "storytelling": ["onTokPerSec": round2(story.on), "offTokPerSec": round2(story.off), "onVsOff": round2(story.ratio)],
        "fiveTonesOneSentence": ["fiveSec": round2(upperMedian(five)), "oneSec": round2(upperMedian(one)), "fiveVsOne": round2(fiveVsOne)],
        "eightMixed": ["onTokPerSec": round2(upperMedian(mixedOn)), "offTokPerSec": round2(upperMedian(mixedOff)), "onVsOff": round2(mixed)],
        "targets": [
            "sideBySide>=1.0xBestPeer": servers.isEmpty ? .null : .bool(holdsAgainstBest),
            "copyHeavy>=1.5x": .bool(copyHeavy.ratio >= 1.5),
            "oneTone>=1.15x": .bool(oneTone.ratio >= 1.15),
            "fiveTones<=2.2xOne": .bool(fiveVsOne <= 2.2),
            "fiveTones<3s": .bool(upperMedian(five) < 3),
            "storytellingWithin3%": .bool(story.ratio >= 0.97),
            "eightMixedNotLower": .bool(mixed >= 1.0),
        ],
    ]
}

/// The texts the speculative bench rewrites, corrects and quotes.
private enum SpeculativeTexts {
    static let selection = """
        Hi team, the design review moves from Tuesday to Thursday at 3 pm in room 4B. Please bring the budget sheet (£1,150 for \
        the pilot) and the list of open questions. Priyanka will present the mobile mock-ups first, then Jonas walks us through \
        the test results from the Leeds store. We decide whether the pilot starts on 12 May or waits until June, so read the \
        two-page summary before the meeting and send me your questions by Wednesday noon.
        """
    static let misspelt = """
        Hi team, the desing review moves from Tuesday to Thursday at 3 pm in room 4B. Please bring the budjet sheet (£1,150 for \
        the pilot) and the list of open questions. Priyanka will presnt the mobile mock-ups first, then Jonas walk us through \
        the test results from the Leeds store. We decide wether the pilot starts on 12 May or wait until June, so read the \
        two-page sumary before the meeting and send me you questions by Wednesday noon.
        """
    static let transcript = """
        [00:00:05] Welcome back to the Local Loop. Today we talk about beekeeping on city roofs.
        [00:00:12] Our guest keeps eleven hives above a bakery in Leeds, and she started in 2016.
        [00:00:20] She says the hardest part is the wind: the hives sit behind a wall of straw bales.
        [00:00:31] In a good year the roof gives about forty kilos of honey, which the bakery sells by the jar.
        [00:00:44] The bees forage in the park across the river, about a mile away.
        [00:00:52] She checks the frames every nine days from April to September, always before noon.
        [00:01:03] Her advice for beginners is to start with two hives, never one, so you can compare them.
        """
}

/// One conversation of the side-by-side comparison: instructions as the system message,
/// then the request (the same for every system).
private struct Workload {
    var name: String
    var system: String
    var user: String

    static let all: [Workload] = [
        Workload(name: "rewrite", system: "You rewrite text in the tone asked for. Keep every fact, name, number and date.",
                 user: "Rewrite this message in a formal tone. Reply with the rewritten message only.\n\n\(SpeculativeTexts.selection)"),
        Workload(name: "fixSpelling", system: "You correct text. Change only what is wrong.",
                 user: "Fix the spelling and grammar of this message. Reply with the corrected message only.\n\n\(SpeculativeTexts.misspelt)"),
        Workload(name: "quotedAnswer", system: "You answer questions about a transcript, quoting it word for word.",
                 user: "Transcript:\n\(SpeculativeTexts.transcript)\n\nQuestion: How often does she check the frames, and what is her advice for beginners? Quote the transcript's sentences."),
    ]
    static let samplings: [(name: String, temperature: Double)] = [("greedy", 0), ("temperature0.7", 0.7)]
}

/// A llama-server the bench started, in one speculation mode.
private struct NgramServer {
    var name: String
    var port: Int
    var process: Process
}

/// Starts llama-server without speculation and in each n-gram mode, each one healthy
/// before the next starts; appended to `servers` as they start (so the caller stops those
/// started when one fails).
private func startNgramServers(_ serverPath: String, modelPath: String, threads: Int, into servers: inout [NgramServer]) throws {
    let modes: [(String, [String])] = [("llama-server", []), ("llama-server ngram-simple", ["--spec-type", "ngram-simple"]),
                                       ("llama-server ngram-mod", ["--spec-type", "ngram-mod"]),
                                       ("llama-server ngram-map-k", ["--spec-type", "ngram-map-k"])]
    for (i, (name, extra)) in modes.enumerated() {
        let port = 19_500 + Int(getpid() % 400) + i
        let p = Process()
        p.executableURL = URL(fileURLWithPath: serverPath)
        p.arguments = ["-m", modelPath, "--host", "127.0.0.1", "--port", "\(port)", "-c", "4096", "-np", "1", "-t", "\(threads)", "--no-webui"] + extra
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        servers.append(NgramServer(name: name, port: port, process: p))
        var healthy = false
        for _ in 0..<600 {
            if let r = try? RawHTTP.exchange(port: port, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"), r.hasPrefix("HTTP/1.1 200") { healthy = true; break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        guard healthy else { throw BenchError("\(name) did not start") }
    }
}

/// The speculative bench's measurements through one daemon, `rounds` interleaved rounds each.
private struct SpeculativeRuns {
    let d: DaemonProcess
    let rounds: Int
    static let maxTokens = 200

    /// One request through Parlance: (generated tokens, wall seconds, usage).
    func parlance(_ w: Workload, temperature: Double, speculative: Bool) throws -> (Int, Double, JSONValue) {
        let sid = d.call("session/create", ["instructions": .string(w.system)]).result?["sessionId"] ?? .null
        let t0 = Date()
        let r = d.call("session/respond", ["sessionId": sid, "prompt": .string(w.user),
                                           "options": ["maxTokens": .int(Self.maxTokens), "temperature": .double(temperature), "seed": 1,
                                                       "speculative": .bool(speculative)]])
        let wall = Date().timeIntervalSince(t0)
        _ = d.call("session/close", ["sessionId": sid])
        guard let u = r.result?["usage"], let n = u["generatedTokens"]?.intValue, n > 0 else { throw BenchError("session/respond failed: \(r)") }
        return (n, wall, u)
    }

    /// The same request straight to a llama-server: (generated tokens, wall seconds, drafted, accepted).
    func server(_ port: Int, _ w: Workload, temperature: Double) throws -> (Int, Double, Int, Int) {
        let body: JSONValue = [
            "messages": [["role": "system", "content": .string(w.system)], ["role": "user", "content": .string(w.user)]],
            "max_tokens": .int(Self.maxTokens), "temperature": .double(temperature), "top_p": 0.9, "seed": 1,
            "top_k": 40, "min_p": 0.05, "repeat_penalty": 1.1,
        ]
        let payload = body.serialized()
        let t0 = Date()
        let raw = try RawHTTP.exchange(port: port, "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: \(payload.utf8.count)\r\n\r\n\(payload)")
        let wall = Date().timeIntervalSince(t0)
        guard let start = raw.range(of: "\r\n\r\n"), let v = try? JSONParser.parse(String(raw[start.upperBound...])),
              let n = v["usage"]?["completion_tokens"]?.intValue, n > 0 else { throw BenchError("llama-server answered no completion") }
        return (n, wall, v["timings"]?["draft_n"]?.intValue ?? 0, v["timings"]?["draft_n_accepted"]?.intValue ?? 0)
    }

    /// Side by side: tokens per second of wall time, per workload and sampling; and whether
    /// Parlance kept up with the best llama-server mode in every row.
    func sideBySide(_ servers: [NgramServer]) throws -> (rows: JSONObject, holdsAgainstBest: Bool) {
        log("speculative: side by side with llama-server's n-gram modes (\(rounds) interleaved rounds)")
        var sideBySide = JSONObject()
        var holdsAgainstBest = true
        for w in Workload.all {
            for s in Workload.samplings {
                let (rates, drafts) = try measure(w, temperature: s.temperature, servers)
                let (row, holds) = Self.row(rates: rates, drafts: drafts)
                if !holds { holdsAgainstBest = false }
                sideBySide["\(w.name), \(s.name)"] = .object(row)
            }
        }
        return (sideBySide, holdsAgainstBest)
    }

    /// Every system answers `w` in turn, each round starting one system later: tokens per
    /// second by system, and (drafted, accepted) tokens summed where a system drafts.
    private func measure(_ w: Workload, temperature: Double, _ servers: [NgramServer]) throws -> (rates: [String: [Double]], drafts: [String: (Int, Int)]) {
        var rates: [String: [Double]] = [:]
        var drafts: [String: (Int, Int)] = [:]
        for round in 0..<rounds {
            var turns: [() throws -> Void] = [
                { let (n, t, u) = try parlance(w, temperature: temperature, speculative: true)
                  rates["parlance", default: []].append(Double(n) / t)
                  let prev = drafts["parlance"] ?? (0, 0)
                  drafts["parlance"] = (prev.0 + (u["draftTokens"]?.intValue ?? 0), prev.1 + (u["acceptedDraftTokens"]?.intValue ?? 0)) },
                { let (n, t, _) = try parlance(w, temperature: temperature, speculative: false)
                  rates["parlance, speculative off", default: []].append(Double(n) / t) },
            ]
            for srv in servers {
                turns.append {
                    let (n, t, dn, da) = try server(srv.port, w, temperature: temperature)
                    rates[srv.name, default: []].append(Double(n) / t)
                    let prev = drafts[srv.name] ?? (0, 0)
                    drafts[srv.name] = (prev.0 + dn, prev.1 + da)
                }
            }
            // Interleaved: each round starts one system later.
            for k in 0..<turns.count { try turns[(k + round) % turns.count]() }
        }
        return (rates, drafts)
    }

    /// One side-by-side row: each system's median rate (and drafts), the best peer, and
    /// whether Parlance held against it.
    private static func row(rates: [String: [Double]], drafts: [String: (Int, Int)]) -> (row: JSONObject, holds: Bool) {
        let medians = rates.mapValues(upperMedian)
        let peers = medians.filter { $0.key.hasPrefix("llama-server") }
        let best = peers.max { $0.value < $1.value }
        let ours = medians["parlance"] ?? 0
        var row = JSONObject()
        for (k, v) in medians.sorted(by: { $0.key < $1.key }) {
            var cell: JSONObject = ["tokPerSec": round2(v)]
            if let dr = drafts[k], dr.0 > 0 { cell["drafted"] = .int(dr.0); cell["accepted"] = .int(dr.1) }
            row[k] = .object(cell)
        }
        if let best {
            row["bestPeer"] = .string(best.key)
            row["parlanceVsBestPeer"] = round2(ours / max(best.value, 1e-9))
        }
        return (row, !(best.map { ours < $0.value } ?? false))
    }

    /// `method` with `params`: (result, wall seconds).
    func timed(_ method: String, _ params: JSONValue) -> (JSONValue?, Double) {
        let t0 = Date()
        let r = d.call(method, params)
        return (r.result, Date().timeIntervalSince(t0))
    }

    /// Tokens a result generated (a session's usage, or a refined variation's).
    static func tokens(_ r: JSONValue?) -> Double { r?["usage"]?["generatedTokens"]?.doubleValue ?? r?["variation"]?["usage"]?["generatedTokens"]?.doubleValue ?? 0 }

    /// "On" is the daemon's default (the request names no `speculative`): what users get,
    /// drafting only where the output copies text. "Off" is `speculative: false`.
    static func defaultOr(_ p: JSONValue, _ spec: Bool) -> JSONValue {
        guard spec, case .object(var o) = p else { return p }
        o["speculative"] = nil
        if case .object(var opts)? = o["options"] { opts["speculative"] = nil; o["options"] = .object(opts) }
        return .object(o)
    }

    /// Median of on/off tokens-per-second ratios over interleaved rounds.
    func onOff(_ name: String, _ request: (Bool, Int) -> (String, JSONValue)) -> (ratio: Double, on: Double, off: Double) {
        log("speculative: \(name), on against off")
        var on: [Double] = [], off: [Double] = []
        for round in 0..<rounds {
            for spec in (round % 2 == 0 ? [true, false] : [false, true]) {
                let (m, p) = request(spec, round)
                let (r, t) = timed(m, Self.defaultOr(p, spec))
                if spec { on.append(Self.tokens(r) / t) } else { off.append(Self.tokens(r) / t) }
            }
        }
        return (upperMedian(on) / max(upperMedian(off), 1e-9), upperMedian(on), upperMedian(off))
    }

    /// Five tones of one sentence against one tone, speculation on: wall seconds of each, per round.
    func fiveTonesAgainstOne() -> (five: [Double], one: [Double]) {
        log("speculative: five tones of one sentence against one")
        let sentence = "We cannot ship on Friday because two tests still fail, so the release moves to Tuesday."
        var five: [Double] = [], one: [Double] = []
        for round in 0..<rounds {
            one.append(timed("compose/variations", ["text": .string(sentence), "tones": ["formal"], "seed": .int(round), "ephemeral": true]).1)
            five.append(timed("compose/variations", ["text": .string(sentence), "seed": .int(round), "ephemeral": true]).1)
        }
        return (five, one)
    }

    /// Eight mixed requests at once (rewrites and stories), on against off: aggregate
    /// tokens per second, per round.
    func eightMixed() -> (on: [Double], off: [Double]) {
        log("speculative: eight mixed requests at once, on against off")
        var mixedOn: [Double] = [], mixedOff: [Double] = []
        for round in 0..<rounds {
            if round % 2 == 0 { mixedOn.append(eight(true, round)); mixedOff.append(eight(false, round)) } else { mixedOff.append(eight(false, round)); mixedOn.append(eight(true, round)) }
        }
        return (mixedOn, mixedOff)
    }

    /// Four one-tone rewrites and four stories sent together: tokens per second of wall time.
    private func eight(_ spec: Bool, _ round: Int) -> Double {
        let t0 = Date()
        let ids = (0..<8).map { i -> Int in
            if i % 2 == 0 {
                return d.start("compose/variations", Self.defaultOr(["text": .string(SpeculativeTexts.selection), "tones": ["casual"], "seed": .int(100 * round + i),
                                                                     "maxTokens": 96, "speculative": .bool(spec), "ephemeral": true], spec))
            }
            let sid = d.call("session/create", ["instructions": "You are a storyteller."]).result?["sessionId"] ?? .null
            return d.start("session/respond", Self.defaultOr(["sessionId": sid, "prompt": .string("Tell a story about a harbour, version \(i)."),
                                                              "options": ["maxTokens": 96, "temperature": 0.8, "seed": .int(i), "speculative": .bool(spec)]], spec))
        }
        let total = ids.map { Self.tokens(d.response($0)?.result) }.reduce(0, +)
        return total / Date().timeIntervalSince(t0)
    }
}
