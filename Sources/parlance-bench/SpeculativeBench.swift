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
    func r2(_ x: Double) -> JSONValue { .double((x * 100).rounded() / 100) }
    func median(_ xs: [Double]) -> Double { xs.isEmpty ? 0 : xs.sorted()[xs.count / 2] }
    let selection = """
        Hi team, the design review moves from Tuesday to Thursday at 3 pm in room 4B. Please bring the budget sheet (£1,150 for \
        the pilot) and the list of open questions. Priyanka will present the mobile mock-ups first, then Jonas walks us through \
        the test results from the Leeds store. We decide whether the pilot starts on 12 May or waits until June, so read the \
        two-page summary before the meeting and send me your questions by Wednesday noon.
        """
    let misspelt = """
        Hi team, the desing review moves from Tuesday to Thursday at 3 pm in room 4B. Please bring the budjet sheet (£1,150 for \
        the pilot) and the list of open questions. Priyanka will presnt the mobile mock-ups first, then Jonas walk us through \
        the test results from the Leeds store. We decide wether the pilot starts on 12 May or wait until June, so read the \
        two-page sumary before the meeting and send me you questions by Wednesday noon.
        """
    let transcript = """
        [00:00:05] Welcome back to the Local Loop. Today we talk about beekeeping on city roofs.
        [00:00:12] Our guest keeps eleven hives above a bakery in Leeds, and she started in 2016.
        [00:00:20] She says the hardest part is the wind: the hives sit behind a wall of straw bales.
        [00:00:31] In a good year the roof gives about forty kilos of honey, which the bakery sells by the jar.
        [00:00:44] The bees forage in the park across the river, about a mile away.
        [00:00:52] She checks the frames every nine days from April to September, always before noon.
        [00:01:03] Her advice for beginners is to start with two hives, never one, so you can compare them.
        """
    // The same conversation for both: instructions as the system message, then the request.
    let workloads: [(name: String, system: String, user: String)] = [
        ("rewrite", "You rewrite text in the tone asked for. Keep every fact, name, number and date.",
         "Rewrite this message in a formal tone. Reply with the rewritten message only.\n\n\(selection)"),
        ("fixSpelling", "You correct text. Change only what is wrong.",
         "Fix the spelling and grammar of this message. Reply with the corrected message only.\n\n\(misspelt)"),
        ("quotedAnswer", "You answer questions about a transcript, quoting it word for word.",
         "Transcript:\n\(transcript)\n\nQuestion: How often does she check the frames, and what is her advice for beginners? Quote the transcript's sentences."),
    ]
    let samplings: [(name: String, temperature: Double)] = [("greedy", 0), ("temperature0.7", 0.7)]
    let maxTokens = 200

    // llama-server, without speculation and in each n-gram mode, all started first (idle
    // servers wait on a condition variable: they cost nothing while another is measured).
    var servers: [(name: String, port: Int, process: Process)] = []
    defer { for s in servers { s.process.terminate(); s.process.waitUntilExit() } }
    if let serverPath {
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
            servers.append((name, port, p))
            var healthy = false
            for _ in 0..<600 {
                if let r = try? RawHTTP.exchange(port: port, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"), r.hasPrefix("HTTP/1.1 200") { healthy = true; break }
                Thread.sleep(forTimeInterval: 0.1)
            }
            guard healthy else { throw BenchError("\(name) did not start") }
        }
    }

    let d = try DaemonProcess(args: ["--model", modelPath, "--threads", String(threads), "--ctx", "4096"], binary: daemonPath)
    _ = d.initialize()
    _ = d.call("model/load")

    /// One request through Parlance: (generated tokens, wall seconds, usage).
    func parlance(_ w: (name: String, system: String, user: String), temperature: Double, speculative: Bool) throws -> (Int, Double, JSONValue) {
        let sid = d.call("session/create", ["instructions": .string(w.system)]).result?["sessionId"] ?? .null
        let t0 = Date()
        let r = d.call("session/respond", ["sessionId": sid, "prompt": .string(w.user),
                                           "options": ["maxTokens": .int(maxTokens), "temperature": .double(temperature), "seed": 1,
                                                       "speculative": .bool(speculative)]])
        let wall = Date().timeIntervalSince(t0)
        _ = d.call("session/close", ["sessionId": sid])
        guard let u = r.result?["usage"], let n = u["generatedTokens"]?.intValue, n > 0 else { throw BenchError("session/respond failed: \(r)") }
        return (n, wall, u)
    }
    /// The same request straight to a llama-server: (generated tokens, wall seconds, drafted, accepted).
    func server(_ port: Int, _ w: (name: String, system: String, user: String), temperature: Double) throws -> (Int, Double, Int, Int) {
        let body: JSONValue = [
            "messages": [["role": "system", "content": .string(w.system)], ["role": "user", "content": .string(w.user)]],
            "max_tokens": .int(maxTokens), "temperature": .double(temperature), "top_p": 0.9, "seed": 1,
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

    // Side by side: tokens per second of wall time, per workload and sampling.
    log("speculative: side by side with llama-server's n-gram modes (\(rounds) interleaved rounds)")
    var sideBySide = JSONObject()
    var holdsAgainstBest = true
    for w in workloads {
        for s in samplings {
            var rates: [String: [Double]] = [:]
            var drafts: [String: (Int, Int)] = [:]
            for round in 0..<rounds {
                var turns: [() throws -> Void] = [
                    { let (n, t, u) = try parlance(w, temperature: s.temperature, speculative: true)
                      rates["parlance", default: []].append(Double(n) / t)
                      let prev = drafts["parlance"] ?? (0, 0)
                      drafts["parlance"] = (prev.0 + (u["draftTokens"]?.intValue ?? 0), prev.1 + (u["acceptedDraftTokens"]?.intValue ?? 0)) },
                    { let (n, t, _) = try parlance(w, temperature: s.temperature, speculative: false)
                      rates["parlance, speculative off", default: []].append(Double(n) / t) },
                ]
                for srv in servers {
                    turns.append {
                        let (n, t, dn, da) = try server(srv.port, w, temperature: s.temperature)
                        rates[srv.name, default: []].append(Double(n) / t)
                        let prev = drafts[srv.name] ?? (0, 0)
                        drafts[srv.name] = (prev.0 + dn, prev.1 + da)
                    }
                }
                // Interleaved: each round starts one system later.
                for k in 0..<turns.count { try turns[(k + round) % turns.count]() }
            }
            let medians = rates.mapValues(median)
            let peers = medians.filter { $0.key.hasPrefix("llama-server") }
            let best = peers.max { $0.value < $1.value }
            let ours = medians["parlance"] ?? 0
            if let best, ours < best.value { holdsAgainstBest = false }
            var row = JSONObject()
            for (k, v) in medians.sorted(by: { $0.key < $1.key }) {
                var cell: JSONObject = ["tokPerSec": r2(v)]
                if let dr = drafts[k], dr.0 > 0 { cell["drafted"] = .int(dr.0); cell["accepted"] = .int(dr.1) }
                row[k] = .object(cell)
            }
            if let best {
                row["bestPeer"] = .string(best.key)
                row["parlanceVsBestPeer"] = r2(ours / max(best.value, 1e-9))
            }
            sideBySide["\(w.name), \(s.name)"] = .object(row)
        }
    }

    // Parlance on against off on its own methods (same seeds: the same text either way).
    func timed(_ method: String, _ params: JSONValue) -> (JSONValue?, Double) {
        let t0 = Date()
        let r = d.call(method, params)
        return (r.result, Date().timeIntervalSince(t0))
    }
    func tokens(_ r: JSONValue?) -> Double { r?["usage"]?["generatedTokens"]?.doubleValue ?? r?["variation"]?["usage"]?["generatedTokens"]?.doubleValue ?? 0 }
    /// "On" is the daemon's default (the request names no `speculative`): what users get,
    /// drafting only where the output copies text. "Off" is `speculative: false`.
    func defaultOr(_ p: JSONValue, _ spec: Bool) -> JSONValue {
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
                let (r, t) = timed(m, defaultOr(p, spec))
                if spec { on.append(tokens(r) / t) } else { off.append(tokens(r) / t) }
            }
        }
        return (median(on) / max(median(off), 1e-9), median(on), median(off))
    }
    let base = d.call("compose/variations", ["text": .string(selection), "tones": ["formal"], "seed": 4, "ephemeral": true]).result
    let variationId = base?["variations"]?.arrayValue?.first?["id"] ?? .null
    let copyHeavy = onOff("fix spelling and grammar (refine, verify on)") { spec, _ in
        ("compose/refine", ["variationId": variationId, "instruction": "Fix spelling and grammar.", "seed": 2, "speculative": .bool(spec), "ephemeral": true])
    }
    let oneTone = onOff("one-tone rewrite at the default temperature") { spec, round in
        ("compose/variations", ["text": .string(misspelt), "tones": ["formal"], "seed": .int(10 + round), "speculative": .bool(spec), "ephemeral": true])
    }
    let story = onOff("storytelling") { spec, round in
        let sid = d.call("session/create", ["instructions": "You are a storyteller."]).result?["sessionId"] ?? .null
        return ("session/respond", ["sessionId": sid, "prompt": "Tell a new story about a fox who builds a boat.",
                                    "options": ["maxTokens": 128, "temperature": 0.8, "seed": .int(20 + round), "speculative": .bool(spec)]])
    }
    // Five tones of one sentence against one tone, speculation on.
    log("speculative: five tones of one sentence against one")
    let sentence = "We cannot ship on Friday because two tests still fail, so the release moves to Tuesday."
    var five: [Double] = [], one: [Double] = []
    for round in 0..<rounds {
        one.append(timed("compose/variations", ["text": .string(sentence), "tones": ["formal"], "seed": .int(round), "ephemeral": true]).1)
        five.append(timed("compose/variations", ["text": .string(sentence), "seed": .int(round), "ephemeral": true]).1)
    }
    // Eight mixed requests at once: aggregate tokens per second, on against off.
    log("speculative: eight mixed requests at once, on against off")
    func eight(_ spec: Bool, _ round: Int) -> Double {
        let t0 = Date()
        let ids = (0..<8).map { i -> Int in
            if i % 2 == 0 {
                return d.start("compose/variations", defaultOr(["text": .string(selection), "tones": ["casual"], "seed": .int(100 * round + i),
                                                                "maxTokens": 96, "speculative": .bool(spec), "ephemeral": true], spec))
            }
            let sid = d.call("session/create", ["instructions": "You are a storyteller."]).result?["sessionId"] ?? .null
            return d.start("session/respond", defaultOr(["sessionId": sid, "prompt": .string("Tell a story about a harbour, version \(i)."),
                                                         "options": ["maxTokens": 96, "temperature": 0.8, "seed": .int(i), "speculative": .bool(spec)]], spec))
        }
        let total = ids.map { tokens(d.response($0)?.result) }.reduce(0, +)
        return total / Date().timeIntervalSince(t0)
    }
    var mixedOn: [Double] = [], mixedOff: [Double] = []
    for round in 0..<rounds {
        if round % 2 == 0 { mixedOn.append(eight(true, round)); mixedOff.append(eight(false, round)) } else { mixedOff.append(eight(false, round)); mixedOn.append(eight(true, round)) }
    }
    _ = d.call("shutdown")
    d.notify("exit")

    let fiveVsOne = median(five) / max(median(one), 1e-9)
    let mixed = median(mixedOn) / max(median(mixedOff), 1e-9)
    return [
        "rounds": .int(rounds), "maxTokens": .int(maxTokens), "threads": .int(threads),
        "sideBySide": .object(sideBySide),
        "copyHeavyRefine": ["onTokPerSec": r2(copyHeavy.on), "offTokPerSec": r2(copyHeavy.off), "onVsOff": r2(copyHeavy.ratio)],
        "oneToneRewrite": ["onTokPerSec": r2(oneTone.on), "offTokPerSec": r2(oneTone.off), "onVsOff": r2(oneTone.ratio)],
        "storytelling": ["onTokPerSec": r2(story.on), "offTokPerSec": r2(story.off), "onVsOff": r2(story.ratio)],
        "fiveTonesOneSentence": ["fiveSec": r2(median(five)), "oneSec": r2(median(one)), "fiveVsOne": r2(fiveVsOne)],
        "eightMixed": ["onTokPerSec": r2(median(mixedOn)), "offTokPerSec": r2(median(mixedOff)), "onVsOff": r2(mixed)],
        "targets": [
            "sideBySide>=1.0xBestPeer": servers.isEmpty ? .null : .bool(holdsAgainstBest),
            "copyHeavy>=1.5x": .bool(copyHeavy.ratio >= 1.5),
            "oneTone>=1.15x": .bool(oneTone.ratio >= 1.15),
            "fiveTones<=2.2xOne": .bool(fiveVsOne <= 2.2),
            "fiveTones<3s": .bool(median(five) < 3),
            "storytellingWithin3%": .bool(story.ratio >= 0.97),
            "eightMixedNotLower": .bool(mixed >= 1.0),
        ],
    ]
}
