import Foundation
import ParlanceClient
import ParlanceEngine
import ParlanceJSON

/// `make bench`: starts the real daemon over pipes and prints one JSON object with every
/// figure, the same-build llama.cpp reference measured in this run, the ratios, and which
/// targets hold. Same model, threads and context for every figure.
var args = Array(CommandLine.arguments.dropFirst())
var daemonPath = ".build/release/parlance"
var threads = MachineDefaults.threads
var matrixOnly = false
var lspOnly = false
var modelsOnly = false
var remoteOnly = false
var cliOnly = false
var speculativeOnly = false
var mcpOnly = false
var longOnly = false
var poolsOnly = false
var matrixLengths = [512, 2048, 4000, 8000]
var matrixRounds = 2
var matrixKV: Set<String>? = nil
while !args.isEmpty {
    let a = args.removeFirst()
    if a == "--daemon", !args.isEmpty { daemonPath = args.removeFirst() }
    else if a == "--threads", !args.isEmpty { threads = Int(args.removeFirst()) ?? threads }
    else if a == "--reference-matrix" { matrixOnly = true }
    else if a == "--lengths", !args.isEmpty { matrixLengths = args.removeFirst().split(separator: ",").compactMap { Int($0) } }
    else if a == "--kv", !args.isEmpty { matrixKV = Set(args.removeFirst().split(separator: ",").map(String.init)) }
    else if a == "--rounds", !args.isEmpty { matrixRounds = max(1, Int(args.removeFirst()) ?? matrixRounds) }
    else if a == "--lsp-only" { lspOnly = true }
    else if a == "--models-only" { modelsOnly = true }
    else if a == "--remote-only" { remoteOnly = true }
    else if a == "--cli-only" { cliOnly = true }
    else if a == "--speculative-only" { speculativeOnly = true }
    else if a == "--mcp-only" { mcpOnly = true }
    else if a == "--long-only" { longOnly = true }
    else if a == "--pools-only" { poolsOnly = true }
}
let env = ProcessInfo.processInfo.environment
guard let modelPath = env["PARLANCE_MODEL"] ?? env["PARLANCE_DEFAULT_MODEL"] else {
    FileHandle.standardError.write(Data("parlance-bench: set PARLANCE_DEFAULT_MODEL (make bench does)\n".utf8))
    exit(2)
}
let contextSize = 4096
@Sendable func log(_ s: String) { FileHandle.standardError.write(Data("bench: \(s)\n".utf8)) }
func round2(_ x: Double) -> JSONValue { .double((x * 100).rounded() / 100) }

// llama.cpp's own log lines would bury the report: keep its warnings and errors only.
LlamaLog.install { level, line in
    let text = line.trimmingCharacters(in: .whitespacesAndNewlines)
    if level == 3 || level == 4, !text.isEmpty { log("llama.cpp: \(text)") }
}
// `--reference-matrix`: only the raw llama.cpp figures, at the lengths the main job reads
// (prompt evaluation at 512, 2,048, 4,000 and 8,000 tokens, decoding after 2,000), for
// every KV type, attention kernel and batch the daemon can be started with
// (`--cache-type-k`, `--cache-type-v`, `--flash-attn`, `--batch`/`--micro-batch`).
// `--lengths 512,2048`, `--rounds N` and `--kv f16/f16,q8_0/f16` (keys/values) shorten it.
if matrixOnly {
    var configs: [Reference.Settings] = []
    for (k, v, fa) in [(KVCacheTypes.Element.f16, KVCacheTypes.Element.f16, false), (.f16, .f16, true), (.q8_0, .f16, false), (.q8_0, .f16, true),
                       (.f16, .q8_0, true), (.q8_0, .q8_0, true)] where matrixKV?.contains("\(k)/\(v)") ?? true {
        for (b, u) in [(256, 256), (512, 512), (1024, 512), (2048, 512)] {
            configs.append(.init(cache: .init(keys: k, values: v), flashAttention: fa, batch: b, microBatch: u))
        }
    }
    var prompt = [[Int: Double]](repeating: [:], count: configs.count)
    var decode = [Double](repeating: 0, count: configs.count)
    // Interleaved rounds, best of each: the machine's drift hits every configuration alike.
    for round in 1...matrixRounds {
        for (i, c) in configs.enumerated() {
            log("reference matrix round \(round): \(c)")
            let f = try Reference.atLengths(modelPath: modelPath, threads: threads, contextSize: max(4096, (matrixLengths.max() ?? 0) + 192),
                                            settings: c, lengths: matrixLengths, decodeDepth: 2000)
            for (n, r) in f.prompt { prompt[i][n] = max(prompt[i][n] ?? 0, r) }
            decode[i] = max(decode[i], f.decode ?? 0)
        }
    }
    for (i, c) in configs.enumerated() {
        let row: JSONValue = ["cacheTypeK": .string(c.cache.keys.rawValue), "cacheTypeV": .string(c.cache.values.rawValue), "flashAttention": .bool(c.flashAttention),
                              "batch": .int(c.batch), "microBatch": .int(c.microBatch),
                              "promptTokPerSec": .object(JSONObject(matrixLengths.map { ("\($0)", round2(prompt[i][$0] ?? 0)) })),
                              "decodeAfter2000TokPerSec": round2(decode[i])]
        print(row.serialized(pretty: false))
    }
    exit(0)
}
// `--models-only`: only the registry's figures.
/// `object` with `key` set to `value`.
func adding(_ key: String, _ value: JSONValue, to object: JSONValue) -> JSONValue {
    guard case .object(var o) = object else { return object }
    o[key] = value
    return .object(o)
}
/// The loopback hub server the tests use (the pull is timed against curl on it).
let hubServerScript: String? = {
    let p = URL(fileURLWithPath: daemonPath).deletingLastPathComponent().appendingPathComponent("../../tests/hub_server.py").standardizedFileURL.path
    return FileManager.default.fileExists(atPath: p) ? p : FileManager.default.fileExists(atPath: "tests/hub_server.py") ? "tests/hub_server.py" : nil
}()
/// `--X-only`: prints that section's figures alone and exits.
func only(_ flag: Bool, _ figures: () throws -> JSONValue) rethrows {
    guard flag else { return }
    print(try figures().serialized(pretty: true))
    exit(0)
}
/// llama-server, for the sections that run it beside Parlance (PARLANCE_LLAMA_SERVER).
let llamaServer = env["PARLANCE_LLAMA_SERVER"]
func needServer() -> String {
    guard let llamaServer else { log("set PARLANCE_LLAMA_SERVER (scripts/setup-llama-server.sh)"); exit(2) }
    return llamaServer
}
try only(modelsOnly) {
    adding("stores", try storesBench(modelPath: modelPath, hubServer: hubServerScript),
           to: try modelsBench(daemonPath: daemonPath, modelPath: modelPath, threads: threads))
}
try only(remoteOnly) { try remoteBench(daemonPath: daemonPath, modelPath: modelPath, serverPath: needServer(), threads: threads) }
try only(poolsOnly) { try poolBench(daemonPath: daemonPath, modelPath: modelPath, serverPath: needServer(), standIn: standInScript(daemonPath: daemonPath)) }
// Speculative decoding, side by side with llama-server's n-gram modes (when set).
try only(speculativeOnly) { try speculativeBench(daemonPath: daemonPath, modelPath: modelPath, serverPath: llamaServer, threads: threads) }
// One MCP tool call's overhead against the same call through tool/call.
try only(mcpOnly) { try mcpBench(daemonPath: daemonPath, modelPath: modelPath, threads: threads) }
// The main job's lengths, side by side with llama-server.
try only(longOnly) { try longPromptBench(daemonPath: daemonPath, modelPath: modelPath, serverPath: needServer(), threads: threads) }
try only(cliOnly) { try cliBench(daemonPath: daemonPath, modelPath: modelPath, threads: threads) }
try only(lspOnly) { try lspBench(daemonPath: daemonPath, modelPath: modelPath, threads: threads) }
log("reference: llama.cpp through the shim (pp512, tg128, \(threads) threads)")
let reference = try Reference.measure(modelPath: modelPath, threads: threads, contextSize: contextSize)
// The same figures with the daemon's context settings (KV cache types, flash attention,
// batch), so what those settings cost is told apart from what the daemon costs.
let daemonConfig = try Reference.Settings.daemonDefaults(modelPath: modelPath, contextSize: contextSize)
let referenceSameConfig = try Reference.measure(modelPath: modelPath, threads: threads, contextSize: contextSize,
                                                batchSize: daemonConfig.batch, cache: daemonConfig.cache,
                                                flashAttention: daemonConfig.flashAttention)

// Raw batched decode: what llama.cpp itself reaches with n sequences decoding together
// (no sampling, no scheduler), with the daemon's KV settings. On a 2-core machine the
// matrix kernels are compute-bound already at one sequence, so this bounds what any
// scheduler can gain from batching.
log("reference: batched decode, 2/4/5/8 sequences")
var rawBatched: [Int: Double] = [1: referenceSameConfig.decodeTokensPerSecond]
for n in [2, 4, 5, 8] {
    rawBatched[n] = try Reference.batchedDecode(modelPath: modelPath, threads: threads, contextSize: contextSize, streams: n,
                                                cache: daemonConfig.cache, flashAttention: daemonConfig.flashAttention)
}

let d = try DaemonProcess(args: ["--model", modelPath, "--threads", String(threads), "--ctx", String(contextSize)], binary: daemonPath)
_ = d.initialize()
_ = d.call("model/load")  // models load on demand: load before measuring

/// A unique filler text of about n tokens (unique so nothing is cached).
func filler(_ words: Int, salt: String) -> String {
    let vocab = ["river", "market", "engine", "garden", "signal", "harbor", "ledger", "canvas", "meadow", "orbit", "lantern", "quarry",
                 "thunder", "velvet", "cobalt", "summit", "timber", "crystal", "falcon", "mosaic"]
    var g = SystemRandomNumberGenerator()
    return salt + " " + (0..<words).map { _ in vocab.randomElement(using: &g)! }.joined(separator: " ")
}

func session(_ instructions: String = "You are a storyteller.") -> String {
    d.call("session/create", ["instructions": .string(instructions)]).result?["sessionId"]?.stringValue ?? ""
}

func respond(_ sid: String, _ prompt: String, maxTokens: Int, token: String? = nil) -> JSONValue {
    let options: JSONValue = ["maxTokens": .int(maxTokens), "temperature": 0.8, "seed": 7]
    var p = JSONObject([("sessionId", .string(sid)), ("prompt", .string(prompt)), ("options", options)])
    if let token { p["workDoneToken"] = .string(token) }
    return d.call("session/respond", .object(p))
}

func decodeRate(_ usage: JSONValue?) -> Double {
    guard let u = usage, let g = u["generatedTokens"]?.doubleValue, let t = u["totalMs"]?.doubleValue, let f = u["firstTokenMs"]?.doubleValue, t > f, g > 1 else { return 0 }
    return (g - 1) / ((t - f) / 1000)
}

/// The reference's best figures over the run. It is measured again between the daemon's
/// own decode and prompt measurements (the daemon idle meanwhile), so a machine that speeds
/// up or slows down mid-run cannot flatter a ratio; the daemon's figures are best-of too.
var refPP = reference.promptTokensPerSecond, refTG = reference.decodeTokensPerSecond
@MainActor func remeasureReference() {
    guard let f = try? Reference.measure(modelPath: modelPath, threads: threads, contextSize: contextSize, repetitions: 1) else { return }
    refPP = max(refPP, f.promptTokensPerSecond)
    refTG = max(refTG, f.decodeTokensPerSecond)
}

// One-stream decode.
log("one-stream decode")
var single: [Double] = []
for i in 0..<3 {
    let r = respond(session(), "Tell a long story about a lighthouse keeper, part \(i).", maxTokens: 128)
    single.append(decodeRate(r.result?["usage"]))
    remeasureReference()
}
let oneStream = single.max() ?? 0

// Prompt throughput and TTFT: a cold prompt of about 512 new tokens, the reference's pp512.
// The rate counts only the tokens the daemon evaluated, over its time to first token.
log("prompt throughput")
var promptRate = 0.0, ttft = 0.0, promptEvaluated = 0
for i in 0..<3 {
    let r = respond(session(), filler(490, salt: "run \(i) \(UUID())") + "\nSummarize.", maxTokens: 1)
    if let u = r.result?["usage"], let p = u["promptTokens"]?.intValue, let c = u["cachedPromptTokens"]?.intValue, let f = u["firstTokenMs"]?.doubleValue {
        let rate = Double(p - c) / (f / 1000)
        if rate > promptRate { (promptRate, ttft, promptEvaluated) = (rate, f, p - c) }
    }
    remeasureReference()
}

// Concurrent streams.
log("concurrent streams")
var concurrency = JSONObject()
var aggregate: [Int: Double] = [:]
var spread4 = 0.0
for n in [1, 2, 4, 8] {
    let sids = (0..<n).map { _ in session() }
    // Prewarm the shared prompt so every stream starts decoding together.
    for s in sids { _ = d.call("session/prewarm", ["sessionId": .string(s)]) }
    let ids = sids.enumerated().map { i, s in
        d.start("session/respond", ["sessionId": .string(s), "prompt": .string("Tell a long story about a fox, version \(i)."),
                                    "options": ["maxTokens": 96, "temperature": 0.8, "seed": .int(i)]])
    }
    let t0 = Date()
    let results = ids.map { d.response($0) }
    let wall = Date().timeIntervalSince(t0)
    let rates = results.map { decodeRate($0?.result?["usage"]) }
    let tokens = results.compactMap { $0?.result?["usage"]?["generatedTokens"]?.doubleValue }.reduce(0, +)
    aggregate[n] = tokens / wall
    let mean = rates.reduce(0, +) / Double(max(1, rates.count))
    let spread = rates.map { abs($0 - mean) / max(mean, 1e-9) }.max() ?? 0
    if n == 4 { spread4 = spread }
    concurrency["\(n)"] = ["aggregateTokPerSec": round2(tokens / wall), "perStreamTokPerSec": .array(rates.map(round2)), "maxDeviationFromMean": round2(spread)]
}

// Second question on the same ~2,000-token document.
log("document prefix reuse")
let document = filler(1700, salt: "document \(UUID())")
let instructions = "Answer questions about the document."
func ask(_ q: String) -> JSONValue? {
    respond(session(instructions), "Document:\n\(document)\n\nQuestion: \(q)", maxTokens: 8).result?["usage"]
}
let first = ask("Which word appears most?")
let second = ask("Is the word river in it?")
let ttft1 = first?["firstTokenMs"]?.doubleValue ?? 0
let ttft2 = second?["firstTokenMs"]?.doubleValue ?? 0
let evaluated2 = (second?["promptTokens"]?.intValue ?? 0) - (second?["cachedPromptTokens"]?.intValue ?? 0)

// Cold 2,000-token prompt: progress cadence and cancel latency.
log("cancel a cold prompt")
let coldSession = session()
let cancelID = d.start("session/respond", ["sessionId": .string(coldSession), "prompt": .string(filler(1800, salt: "cold \(UUID())")),
                                          "workDoneToken": "cold", "options": ["maxTokens": 4]])
var reports: [Date] = []
let coldStart = Date()
while Date().timeIntervalSince(coldStart) < 30 {
    if d.waitFor(timeout: 5, { $0["method"] == "$/progress" && $0["params"]?["token"] == "cold" && $0["params"]?["value"]?["phase"] == "prompt" }) != nil {
        reports.append(Date())
        if reports.count == 3 { break }
    } else { break }
}
let cancelSent = Date()
d.notify("$/cancelRequest", ["id": .int(cancelID)])
let cancelled = d.response(cancelID, timeout: 10)
let cancelLatency = Date().timeIntervalSince(cancelSent)
let progressGaps = zip(reports.dropFirst(), reports).map { $0.timeIntervalSince($1) }
let coldCancelledOK = cancelled?.errorCode == -32800

// No-model round trips, pipelined: `ping` measures dispatch alone (it does nothing),
// `model/status` what editors poll.
log("round trips")
func roundTripRate(_ method: String, _ n: Int = 20_000) -> Double {
    d.discardMessages()
    let before = d.receivedCount
    let rtStart = Date()
    for _ in 0..<n { d.start(method) }
    _ = d.waitForReceived(before + n, timeout: 120)
    let rate = Double(d.receivedCount - before) / Date().timeIntervalSince(rtStart)
    d.discardMessages()
    return rate
}
let pingTrips = roundTripRate("ping")
let roundTrips = roundTripRate("model/status")

log("speculative decoding: side by side with llama-server's n-gram modes, on against off")
let speculative = try speculativeBench(daemonPath: daemonPath, modelPath: modelPath, serverPath: llamaServer, threads: threads)
log("the main job's lengths: long prompts, the demo's summary and a transcript past one window, side by side with llama-server")
let long: JSONValue = try llamaServer.map { try longPromptBench(daemonPath: daemonPath, modelPath: modelPath, serverPath: $0, threads: threads) }
    ?? ["skipped": "PARLANCE_LLAMA_SERVER not set"]
log("compose/variations: first-token latency and five tones against one")
let compose = composeBench(d, referencePromptTokPerSec: refPP, referenceDecodeTokPerSec: refTG,
                           referenceFiveStreamsTokPerSec: rawBatched[5] ?? 0)

let rss = d.peakRSS ?? 0
log("many long requests at once (8 on one transcript, 16 on four), against the same one at a time")
let manyAtOnce = try concurrencyBench(daemonPath: daemonPath, modelPath: modelPath, threads: threads)
log("the LSP surface: code-action menu, rewrite after the choice, keystrokes on 1 MB")
let lsp = try lspBench(daemonPath: daemonPath, modelPath: modelPath, threads: threads)
log("models: initialize with a model configured, a cold model's first token, RSS with one and two models")
log("models on disk: listing stores with 50 models, resolving a name, a pull against curl")
let models = adding("stores", try storesBench(modelPath: modelPath, hubServer: hubServerScript),
                    to: try modelsBench(daemonPath: daemonPath, modelPath: modelPath, threads: threads))
log("command line: parlance ask / rewrite, first token on a terminal, against --stdio")
let cli = try cliBench(daemonPath: daemonPath, modelPath: modelPath, threads: threads)
log("remote: the same completion straight to llama-server and through Parlance")
let remote: JSONValue = try llamaServer.map { try remoteBench(daemonPath: daemonPath, modelPath: modelPath, serverPath: $0, threads: threads) }
    ?? ["skipped": "PARLANCE_LLAMA_SERVER not set"]
log("pools: three llama-servers, cost routing against round-robin; the router's own cost")
let pools: JSONValue = try llamaServer.map { try poolBench(daemonPath: daemonPath, modelPath: modelPath, serverPath: $0, standIn: standInScript(daemonPath: daemonPath)) }
    ?? ["skipped": "PARLANCE_LLAMA_SERVER not set"]
log("MCP: one tool call to an MCP server against the same call through tool/call")
let mcpCalls = try mcpBench(daemonPath: daemonPath, modelPath: modelPath, threads: threads)
let modelBytes = (try? FileManager.default.attributesOfItem(atPath: modelPath)[.size] as? Int) ?? 0
_ = d.call("shutdown")
d.notify("exit")

let oneRatio = oneStream / refTG
let ppRatio = promptRate / refPP
let agg4 = (aggregate[4] ?? 0) / max(aggregate[1] ?? 1, 1e-9)
var out: JSONValue = [
    "model": .string((modelPath as NSString).lastPathComponent), "threads": .int(threads), "contextSize": .int(contextSize),
    "reference": ["promptTokPerSec": round2(refPP), "decodeTokPerSec": round2(refTG),
                  "firstMeasurement": ["promptTokPerSec": round2(reference.promptTokensPerSecond), "decodeTokPerSec": round2(reference.decodeTokensPerSecond)]],
    "referenceDaemonKVConfig": ["promptTokPerSec": round2(referenceSameConfig.promptTokensPerSecond),
                                "decodeTokPerSec": round2(referenceSameConfig.decodeTokensPerSecond),
                                "decodeVs": round2(oneStream / referenceSameConfig.decodeTokensPerSecond),
                                "promptVs": round2(promptRate / referenceSameConfig.promptTokensPerSecond)],
    "decodeTokPerSec": round2(oneStream), "decodeVsReference": round2(oneRatio),
    "promptTokPerSec": round2(promptRate), "promptVsReference": round2(ppRatio), "promptTokensEvaluated": .int(promptEvaluated),
    "timeToFirstTokenMs": round2(ttft),
    "concurrency": .object(concurrency), "aggregate4vs1": round2(agg4),
    "referenceBatched": .object(JSONObject(rawBatched.keys.sorted().map { n in
        ("\(n)", ["aggregateTokPerSec": round2(rawBatched[n]!), "vsOneSequence": round2(rawBatched[n]! / max(rawBatched[1]!, 1e-9)),
                   "daemonVsRaw": aggregate[n].map { round2($0 / rawBatched[n]!) } ?? .null])
    })),
    "document": ["firstQuestionTtftMs": round2(ttft1), "secondQuestionTtftMs": round2(ttft2),
                 "secondVsFirst": round2(ttft2 / max(ttft1, 1e-9)), "secondQuestionTokensEvaluated": .int(evaluated2)],
    "coldPrompt": ["maxProgressGapSec": round2(progressGaps.max() ?? 0), "cancelLatencySec": round2(cancelLatency), "cancelAnswered32800": .bool(coldCancelledOK)],
    "roundTripsPerSec": round2(roundTrips), "pingRoundTripsPerSec": round2(pingTrips),
    "speculative": speculative,
    "long": long,
    "compose": compose,
    "manyAtOnce": manyAtOnce,
    "lsp": lsp,
    "models": models,
    "remote": remote,
    "pools": pools,
    "cli": cli,
    "mcp": mcpCalls,
    "peakRssBytes": .int(rss), "modelFileBytes": .int(modelBytes),
    "targets": [
        "decode>=97%SameConfig": .bool(oneStream / referenceSameConfig.decodeTokensPerSecond >= 0.97), "prompt>=90%": .bool(ppRatio >= 0.90),
        "aggregate4>=1.15x": .bool(agg4 >= 1.15), "fairness4<=15%": .bool(spread4 <= 0.15),
        "progressEvery<=2s": .bool((progressGaps.max() ?? 0) <= 2), "cancel<=0.5s": .bool(coldCancelledOK && cancelLatency <= 0.5),
        "secondTtft<=10%": .bool(ttft2 <= 0.1 * ttft1), "modelStatusRoundTrips>=10000": .bool(roundTrips >= 10_000),
        "pingRoundTrips>=20000": .bool(pingTrips >= 20_000),
        "rss<=model+150MB": .bool(rss <= modelBytes + 150 << 20),
        "composeTtft<=1.2xIdeal+50ms": compose["targets"]?["composeTtft<=1.2xIdeal+50ms"] ?? false,
        "composeFiveTones<=2.5xOne": compose["targets"]?["fiveTones<=2.5xOne"] ?? false,
        "manyAtOnce8<=1.2xSerial": manyAtOnce["targets"]?["eight<=1.2xSerial"] ?? false,
        "manyAtOnceDocumentEvaluatedOnce": manyAtOnce["targets"]?["documentEvaluatedOnce"] ?? false,
        "manyAtOnce16<=1.2xSerial": manyAtOnce["targets"]?["sixteen<=1.2xSerial"] ?? false,
        "noMemorySlotFailures": manyAtOnce["targets"]?["noMemorySlotFailures"] ?? false,
        "lspCodeAction<=20ms": lsp["targets"]?["codeAction<=20ms"] ?? false,
        "lspFirstTokenAfterChoice<=200ms": lsp["targets"]?["firstTokenAfterChoice<=200ms"] ?? false,
        "lspRewrite<=composeOneTone+100ms": lsp["targets"]?["rewrite<=composeOneTone+100ms"] ?? false,
        "lspDidChange1MB<=1ms": lsp["targets"]?["didChange1MB<=1ms"] ?? false,
        "initialize<=50ms": models["targets"]?["initialize<=50ms"] ?? false,
        "storesList50<100ms": models["stores"]?["targets"]?["list50<100ms"] ?? false,
        "storesResolve<5ms": models["stores"]?["targets"]?["resolve<5ms"] ?? false,
        "pull>=0.9xCurl": models["stores"]?["targets"]?["pull>=0.9xCurl"] ?? false,
        "remoteAddedFirstToken<=10ms": remote["targets"]?["addedFirstToken<=10ms"] ?? false,
        "mcpOverhead<=5ms": mcpCalls["targets"]?["mcpOverhead<=5ms"] ?? false,
        "remoteThroughput>=97%": remote["targets"]?["throughput>=97%"] ?? false,
        "poolTokens<=0.5xRoundRobin": pools["targets"]?["tokens<=0.5xRoundRobin"] ?? false,
        "poolFollowUpFirstToken<=0.7xRoundRobin": pools["targets"]?["followUpFirstToken<=0.7xRoundRobin"] ?? false,
        "poolRouterOverhead<=2ms": pools["targets"]?["routerOverhead<=2ms"] ?? false,
        "cliAskFirstToken<=1.1xStdio": cli["targets"]?["askCli<=1.1xStdio"] ?? false,
        "cliRewriteFirstToken<=1.1xStdio": cli["targets"]?["rewriteCli<=1.1xStdio"] ?? false,
        "speculativeSideBySide>=1.0xBestPeer": speculative["targets"]?["sideBySide>=1.0xBestPeer"] ?? false,
        "speculativeCopyHeavy>=1.5x": speculative["targets"]?["copyHeavy>=1.5x"] ?? false,
        "speculativeOneTone>=1.15x": speculative["targets"]?["oneTone>=1.15x"] ?? false,
        "speculativeFiveTones<=2.2xOne": speculative["targets"]?["fiveTones<=2.2xOne"] ?? false,
        "speculativeFiveTones<3s": speculative["targets"]?["fiveTones<3s"] ?? false,
        "speculativeStorytellingWithin3%": speculative["targets"]?["storytellingWithin3%"] ?? false,
        "speculativeEightMixedNotLower": speculative["targets"]?["eightMixedNotLower"] ?? false,
    ],
]
// The long-prompt targets beside the others.
if case .object(var o) = out, case .object(var t)? = o["targets"] {
    for (k, v) in long["targets"]?.objectValue ?? JSONObject() { t[k] = v }
    o["targets"] = .object(t)
    out = .object(o)
}
print(out.serialized(pretty: true))
