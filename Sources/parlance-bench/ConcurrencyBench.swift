import Foundation
import ParlanceClient
import ParlanceJSON

/// Many long requests at once, against the same requests one at a time (each set on a
/// fresh daemon, so neither reuses the other's cached answers or prefixes):
/// - 8 `ask/stream` on one ~1,200-token transcript sent together: all answered, total
///   ≤ 1.2 × serial, and the transcript evaluated once (at most one answer evaluated it);
/// - 16 `ask/stream` on four transcripts sent together: all answered, none with a false
///   context overflow, total ≤ 1.2 × serial;
/// - no "failed to find a memory slot" line in any daemon's log.
func concurrencyBench(daemonPath: String, modelPath: String, threads: Int) throws -> JSONValue {
    let logDir = NSTemporaryDirectory() + "parlance-bench-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: logDir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: logDir) }
    var logs: [String] = []
    func daemon() throws -> DaemonProcess {
        let path = "\(logDir)/\(logs.count).log"
        logs.append(path)
        let d = try DaemonProcess(args: ["--model", modelPath, "--threads", String(threads), "--log-file", path], binary: daemonPath)
        _ = d.initialize()
        _ = d.call("model/load")  // models load on demand: load before measuring
        return d
    }
    let questions = episodeSubjects.flatMap { ["How often did they review the \($0) plan?", "What results did \($0) show?"] }

    let one = ["file:///episode.srt": episode(0)]
    let eight = questions.prefix(8).map { (uri: "file:///episode.srt", question: $0) }
    let serial8 = try asks(eight, docs: one, together: false, on: daemon())
    let together8 = try asks(eight, docs: one, together: true, on: daemon())
    let evaluatedDocument = together8.results.filter {
        ($0?.result?["usage"]?["cachedPromptTokens"]?.intValue ?? 0) < together8.documentTokens / 2
    }.count

    let four = Dictionary(uniqueKeysWithValues: (0..<4).map { ("file:///episode-\($0).srt", episode($0)) })
    let sixteen = (0..<16).map { (uri: "file:///episode-\($0 % 4).srt", question: questions[$0]) }
    let serial16 = try asks(sixteen, docs: four, together: false, on: daemon())
    let together16 = try asks(sixteen, docs: four, together: true, on: daemon())

    let slotLines = logs.reduce(0) { n, path in
        n + ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").components(separatedBy: "failed to find a memory slot").count - 1
    }
    let ratio8 = together8.wall / serial8.wall
    let ratio16 = together16.wall / serial16.wall
    return [
        "eightOnOneDocument": ["serialSec": round2(serial8.wall), "togetherSec": round2(together8.wall), "togetherVsSerial": round2(ratio8),
                               "answered": .int(together8.answered), "answersThatEvaluatedTheDocument": .int(evaluatedDocument)],
        "sixteenOnFourDocuments": ["serialSec": round2(serial16.wall), "togetherSec": round2(together16.wall), "togetherVsSerial": round2(ratio16),
                                   "answered": .int(together16.answered), "contextOverflows": .int(together16.overflows)],
        "memorySlotFailuresLogged": .int(slotLines),
        "targets": [
            "eight<=1.2xSerial": .bool(ratio8 <= 1.2 && together8.answered == 8),
            "documentEvaluatedOnce": .bool(evaluatedDocument <= 1),
            "sixteen<=1.2xSerial": .bool(ratio16 <= 1.2 && together16.answered == 16 && together16.overflows == 0),
            "noMemorySlotFailures": .bool(slotLines == 0),
        ],
    ]
}

/// What the episodes talk about, and the questions ask.
private let episodeSubjects = ["beekeeping", "astronomy", "sourdough", "cycling", "databases", "shipping", "chess", "sleep", "jazz", "gardening"]

/// A 39-cue episode, two speakers, a figure in every cue: about 1,200 prompt tokens.
private func episode(_ variant: Int) -> String {
    let subjects = episodeSubjects
    return (1...39).map { i in
        let s = subjects[(i / 4 + variant * 3) % subjects.count]
        let who = (i / 5) % 2 == 0 ? "MAYA" : "BEN"
        let t = (i - 1) * 4
        let stamp = { (s: Int) in String(format: "00:%02d:%02d,000", s / 60, s % 60) }
        return "\(i)\n\(stamp(t)) --> \(stamp(t + 3))\n\(who): In \(s), we reviewed the plan every \(2 + (i * 7 + variant) % 8) weeks "
            + "and saw \(10 + (i * 13 + variant * 5) % 80) percent better results this season.\n"
    }.joined(separator: "\n")
}

/// One set of questions on a fresh daemon: how long it took, each answer, and the
/// document's token count.
private struct AskRun {
    var wall: Double
    var results: [JSONValue?]
    var documentTokens: Int
    var answered: Int { results.filter { $0?.result != nil }.count }
    var overflows: Int { results.filter { $0?["error"]?["data"]?["error"] == "exceededContextWindowSize" }.count }
}

/// Opens `docs` on `d`, then asks `requests` all together or one after another, and stops `d`.
private func asks(_ requests: [(uri: String, question: String)], docs: [String: String], together: Bool, on d: DaemonProcess) throws -> AskRun {
    var documentTokens = 0
    for (uri, text) in docs {
        documentTokens = d.call("document/open", ["uri": .string(uri), "text": .string(text)]).result?["tokens"]?.intValue ?? 0
    }
    let t0 = Date()
    var results: [JSONValue?] = []
    if together {
        let rs = requests.map { d.request("ask/stream", ["uri": .string($0.uri), "question": .string($0.question)]) }
        d.send(together: rs.map(\.message))
        results = rs.map { d.response($0.id, timeout: 900) }
    } else {
        results = requests.map { d.call("ask/stream", ["uri": .string($0.uri), "question": .string($0.question)], timeout: 900) }
    }
    let wall = Date().timeIntervalSince(t0)
    _ = d.call("shutdown")
    d.notify("exit")
    return AskRun(wall: wall, results: results, documentTokens: documentTokens)
}
