import Foundation
import ParlanceClient
import ParlanceJSON

/// compose/variations targets, measured through the daemon as an editor would see them:
/// - time to the first streamed token of the first variation for a 60-word selection,
///   with the compose prompt prewarmed by an earlier request, against
///   1.2 x (uncached prompt tokens / llama.cpp prompt tok/s) + 50 ms, where the uncached
///   tokens are every token the request evaluated before that first token (the selection's
///   prefix once, plus each variation's tone tail);
/// - five tones in one request against one tone alone, each on a fresh 60-word selection
///   (so each evaluates its own selection, as an editor's new selection would); the
///   one-tone requests use the seeds the tones get inside the five-tone request.
///   Beside it, the ratio raw llama.cpp would reach doing the same work (the same uncached
///   prompt tokens at its pp rate; the same generated tokens at its one-sequence tg rate,
///   and for five tones at its five-sequence batched rate): the floor no scheduler beats.
func composeBench(_ d: DaemonProcess, referencePromptTokPerSec: Double, referenceDecodeTokPerSec: Double,
                  referenceFiveStreamsTokPerSec: Double) -> JSONValue {
    let tones = ["formal", "casual", "empathetic", "direct", "diplomatic"]

    // Prewarm: a first composition evaluates (and leaves cached) the system prompt and
    // the instruction line every composition shares.
    let salt = String(UUID().uuidString.prefix(6))
    _ = timedVariations(d, composeSelection("Warmup-\(salt)"), tones: tones, seed: 1, token: "cb-warm")

    // TTFT, five tones, a selection never seen.
    let text = composeSelection("Falcon-\(salt)")
    let words = text.split(separator: " ").count
    let (five, ttft, fiveWall) = timedVariations(d, text, tones: tones, seed: 100, token: "cb-five")
    let usage = five?["usage"]
    let uncached = (usage?["promptTokens"]?.intValue ?? 0) - (usage?["cachedPromptTokens"]?.intValue ?? 0)
    let ideal = Double(uncached) / max(referencePromptTokPerSec, 1e-9) * 1000
    let ttftLimit = 1.2 * ideal + 50

    // One tone at a time, each on a selection of its own never seen before, as the five
    // were: on the five's selection its prompt would already be cached and flatter one tone.
    var oneWalls: [Double] = []
    var oneTtfts: [Double] = []
    var oneRawMs: [Double] = []
    func generated(_ r: JSONValue?) -> Int { r?["usage"]?["generatedTokens"]?.intValue ?? 0 }
    func rawMs(promptTokens: Int, generatedTokens: Int, decodeTokPerSec: Double) -> Double {
        (Double(promptTokens) / max(referencePromptTokPerSec, 1e-9) + Double(generatedTokens) / max(decodeTokPerSec, 1e-9)) * 1000
    }
    for (i, tone) in tones.enumerated() {
        let (one, t, wall) = timedVariations(d, composeSelection("Falcon-\(salt)-\(i)"), tones: [tone], seed: 100 + i, token: "cb-one-\(i)")
        oneWalls.append(wall)
        oneTtfts.append(t)
        let u = one?["usage"]
        oneRawMs.append(rawMs(promptTokens: (u?["promptTokens"]?.intValue ?? 0) - (u?["cachedPromptTokens"]?.intValue ?? 0),
                              generatedTokens: generated(one), decodeTokPerSec: referenceDecodeTokPerSec))
    }
    let oneMean = oneWalls.reduce(0, +) / Double(max(1, oneWalls.count))
    let ratio = fiveWall / max(oneMean, 1e-9)
    let variations = five?["variations"]?.arrayValue ?? []
    let fiveRawMs = rawMs(promptTokens: uncached, generatedTokens: generated(five), decodeTokPerSec: referenceFiveStreamsTokPerSec)
    let rawRatio = fiveRawMs / max(oneRawMs.reduce(0, +) / Double(max(1, oneRawMs.count)), 1e-9)

    return [
        "selectionWords": .int(words),
        "fiveTones": [
            "firstVariationFirstTokenMs": round2(ttft), "serverFirstTokenMs": usage?["firstTokenMs"] ?? .null,
            "uncachedPromptTokens": .int(uncached), "sharedPrefixTokens": five?["sharedPrefixTokens"] ?? .null,
            "cachedPromptTokensPerVariation": .array(variations.map { $0["usage"]?["cachedPromptTokens"] ?? .null }),
            "generatedTokensPerVariation": .array(variations.map { $0["usage"]?["generatedTokens"] ?? .null }),
            "wallMs": round2(fiveWall),
        ],
        "oneTone": ["meanWallMs": round2(oneMean), "maxWallMs": round2(oneWalls.max() ?? 0), "firstTokenMs": .array(oneTtfts.map(round2))],
        "ttftLimitMs": round2(ttftLimit), "idealPromptMs": round2(ideal),
        "fiveVsOneTone": round2(ratio),
        "rawLlamaFiveVsOneTone": round2(rawRatio),
        "targets": [
            "composeTtft<=1.2xIdeal+50ms": .bool(ttft >= 0 && ttft <= ttftLimit),
            "fiveTones<=2.5xOne": .bool(ratio <= 2.5),
        ],
    ]
}

/// A 60-word selection, new for every `salt`.
private func composeSelection(_ salt: String) -> String {
    "Update on project \(salt): we have to move the customer launch from February to March because the battery tests failed "
        + "twice last week. Marketing needs the new date by Friday so they can update the campaign, and support should prepare "
        + "a short FAQ for customers. Engineering will run the full test suite again on Monday and report the results to everyone."
}

/// One compose/variations request (96 tokens at most per variation); returns (result, ms
/// to the first delta of variation .1, wall ms).
private func timedVariations(_ d: DaemonProcess, _ text: String, tones: [String], seed: Int, token: String) -> (JSONValue?, Double, Double) {
    let t0 = Date()
    let id = d.start("compose/variations", ["text": .string(text), "tones": .array(tones.map { .string($0) }), "seed": .int(seed),
                                            "maxTokens": 96, "ephemeral": true, "workDoneToken": .string(token)])
    let first = d.waitFor(timeout: 300) { m in
        m["method"] == "$/progress" && m["params"]?["token"] == .string(token) && m["params"]?["value"]?["delta"] != nil
            && (m["params"]?["value"]?["part"]?.stringValue?.hasSuffix(".1") ?? false)
    }
    let ttft = first == nil ? -1 : milliseconds(since: t0)
    let response = d.response(id, timeout: 600)
    let wall = milliseconds(since: t0)
    _ = d.progress(token: .string(token))
    return (response?.result, ttft, wall)
}
