import Foundation
import ParlanceJSON
import XCTest

/// A deterministic long transcript (SRT, over 3,000 tokens at 150 cues) built from varied
/// sentences on ten topics, two speakers, four-second cues, and one planted fact whose cue
/// a question must retrieve. Generated in the test; nothing large is committed.
enum LongTranscript {
    struct Topic {
        var name: String
        var subjects: [String]
        var verbs: [String]
        var objects: [String]
        var tails: [String]
    }

    static let topics: [Topic] = [
        Topic(name: "beekeeping", subjects: ["The beekeeper", "A young queen", "The colony", "Every hive inspection", "The swarm"],
              verbs: ["protects", "depends on", "reshapes", "slowly fills", "carefully inspects"],
              objects: ["the brood frames", "the honey super", "the propolis seal", "the wax comb", "the varroa board"],
              tails: ["before the first frost", "during the clover bloom", "when the nectar flow peaks", "after a rainy week"]),
        Topic(name: "astronomy", subjects: ["The telescope", "An amateur astronomer", "The observatory dome", "A faint comet", "The star chart"],
              verbs: ["tracks", "reveals", "outshines", "calibrates", "photographs"],
              objects: ["the Andromeda galaxy", "a binary star", "the lunar terminator", "the Orion nebula", "Jupiter's moons"],
              tails: ["on a moonless night", "from a dark-sky park", "through thin cirrus clouds", "just before dawn"]),
        Topic(name: "sourdough", subjects: ["The starter", "A patient baker", "The dough", "Every loaf", "The proofing basket"],
              verbs: ["ferments", "absorbs", "develops", "rewards", "strengthens"],
              objects: ["the rye flour", "an open crumb", "the gluten network", "a blistered crust", "the levain"],
              tails: ["overnight in the fridge", "after four stretch-and-folds", "at seventy-eight degrees", "with a pinch of salt"]),
        Topic(name: "cycling", subjects: ["The cyclist", "A carbon frame", "The peloton", "Every mountain stage", "The rear derailleur"],
              verbs: ["climbs", "conserves", "punishes", "shifts", "accelerates past"],
              objects: ["the switchback road", "a steady cadence", "the breakaway group", "the cassette", "the final sprint"],
              tails: ["into a headwind", "on the cobbled section", "near the summit finish", "after the feed zone"]),
        Topic(name: "databases", subjects: ["The query planner", "A covering index", "The write-ahead log", "Every transaction", "The replica"],
              verbs: ["scans", "avoids", "flushes", "locks", "replays"],
              objects: ["the orders table", "a nested loop join", "the dirty pages", "a foreign key", "the checkpoint"],
              tails: ["under heavy load", "during the nightly backup", "when the cache is cold", "after a failover"]),
        Topic(name: "ocean shipping", subjects: ["The container ship", "A harbour pilot", "The port crane", "Every voyage", "The ballast tank"],
              verbs: ["unloads", "navigates", "stacks", "delays", "stabilizes"],
              objects: ["the refrigerated cargo", "a narrow channel", "the twenty-foot boxes", "the bunker fuel", "the bow thruster"],
              tails: ["at high tide", "through the strait", "during monsoon season", "before customs clearance"]),
        Topic(name: "chess", subjects: ["The grandmaster", "A hanging pawn", "The endgame", "Every opening", "The bishop pair"],
              verbs: ["sacrifices", "controls", "simplifies", "undermines", "defends"],
              objects: ["the long diagonal", "a passed pawn", "the weak back rank", "the open file", "the kingside"],
              tails: ["in time trouble", "after a quiet move", "with a clever zwischenzug", "in the Sicilian"]),
        Topic(name: "sleep science", subjects: ["The circadian rhythm", "A sleep researcher", "The brain", "Every night shift", "Deep sleep"],
              verbs: ["regulates", "measures", "consolidates", "disrupts", "restores"],
              objects: ["melatonin release", "the REM cycles", "long-term memory", "core body temperature", "the glymphatic system"],
              tails: ["in a dark bedroom", "after caffeine late in the day", "during adolescence", "with a regular schedule"]),
        Topic(name: "jazz history", subjects: ["The trumpeter", "A walking bass line", "The big band", "Every bebop solo", "The rhythm section"],
              verbs: ["reinvents", "anchors", "swings through", "quotes", "supports"],
              objects: ["the blues changes", "a modal vamp", "the Harlem ballroom", "the standard repertoire", "a tritone substitution"],
              tails: ["in the late forties", "on a smoky Friday", "during the encore", "at the Newport festival"]),
        Topic(name: "urban gardening", subjects: ["The rooftop garden", "A community plot", "The compost heap", "Every raised bed", "The drip line"],
              verbs: ["feeds", "shelters", "warms", "waters", "attracts"],
              objects: ["the heirloom tomatoes", "a row of kale", "the earthworms", "the pollinators", "the seedling trays"],
              tails: ["in early spring", "between tall buildings", "after the heat wave", "with rainwater from the barrel"]),
    ]

    /// The planted fact and a question only it answers.
    static let plantedFact = "The lighthouse keeper Ingrid Solberg counted exactly 412 storms on Vardo island."
    static let plantedQuestion = "How many storms did the lighthouse keeper Ingrid Solberg count on Vardo island?"
    static let cueCount = 150
    static let plantedCue = 137

    /// A small linear congruential generator: the same text on every run and platform.
    struct LCG {
        var state: UInt64
        mutating func next(_ n: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(n))
        }
    }

    static func cueText(_ i: Int, of n: Int, _ rng: inout LCG) -> String {
        if i == plantedCue { return plantedFact }
        let topic = topics[(i - 1) * topics.count / n]
        func pick(_ a: [String]) -> String { a[rng.next(a.count)] }
        var s = "\(pick(topic.subjects)) \(pick(topic.verbs)) \(pick(topic.objects)) \(pick(topic.tails))"
        if rng.next(3) == 0 { s += ", and that matters for \(topic.name)" }
        s += rng.next(5) == 0 ? "?" : "."
        if rng.next(2) == 0 { s += " \(pick(topic.subjects)) \(pick(topic.verbs)) \(pick(topic.objects))." }
        return s
    }

    /// The daemon's content-defined part boundary test (FNV-1a of the cue text, one in six).
    static func isBoundary(_ text: String) -> Bool {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in text.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return h % 6 == 0
    }

    static func timestamp(_ t: Double) -> String {
        let ms = Int((t * 1000).rounded())
        return String(format: "%02d:%02d:%02d,%03d", ms / 3_600_000, ms / 60000 % 60, ms / 1000 % 60, ms % 1000)
    }

    /// The SRT of `cues` cues; `edit` replaces one cue's text (for document/change tests).
    static func srt(cues: Int = cueCount, edit: (cue: Int, text: String)? = nil) -> String {
        var rng = LCG(state: 20_251_122)
        var out = ""
        out.reserveCapacity(cues * 140)
        for i in 1...cues {
            var text = cueText(i, of: cues, &rng)
            if let e = edit, e.cue == i { text = e.text }
            let speaker = (i / 7) % 2 == 0 ? "HOST" : "GUEST"
            let start = Double(i - 1) * 4 + 0.5
            out += "\(i)\n\(timestamp(start)) --> \(timestamp(start + 3.6))\n\(speaker): \(text)\n\n"
        }
        return out
    }
}

/// Cues of an SRT as a test reads them independently of the daemon: number, times, text
/// with lines joined by spaces and an upper-case speaker label removed.
struct TestCue: Equatable {
    var id: Int
    var start: Double
    var end: Double
    var speaker: String?
    var text: String
}

enum TestSRT {
    static func parse(_ srt: String) -> [TestCue] {
        var cues: [TestCue] = []
        var speaker: String? = nil
        for block in srt.components(separatedBy: "\n\n") {
            let lines = block.split(separator: "\n").map(String.init)
            guard lines.count >= 3, let id = Int(lines[0]), lines[1].contains("-->") else { continue }
            let times = lines[1].components(separatedBy: " --> ").map(seconds)
            var text = lines[2...].joined(separator: " ")
            if let colon = text.firstIndex(of: ":"), text[..<colon].count >= 2,
               text[..<colon].allSatisfy({ $0.isUppercase || $0 == " " }) {
                speaker = String(text[..<colon])
                text = String(text[text.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            }
            cues.append(TestCue(id: id, start: times[0], end: times[1], speaker: speaker, text: text))
        }
        return cues
    }

    static func seconds(_ s: String) -> Double {
        let p = s.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: ",", with: ".").split(separator: ":")
        return Double(p[0])! * 3600 + Double(p[1])! * 60 + Double(p[2])!
    }
}

extension XCTestCase {
    /// A reference into the transcript (segment id + times, maybe text/speaker) is a real
    /// cue: the id exists, the times are the cue's, the text is the cue's, verbatim.
    func assertGrounded(_ v: JSONValue, in cues: [TestCue], idKey: String = "segmentId", file: StaticString = #filePath, line: UInt = #line) {
        guard let id = v[idKey]?.intValue, let cue = cues.first(where: { $0.id == id }) else {
            return XCTFail("no cue for \(v)", file: file, line: line)
        }
        XCTAssertEqual(v["start"]?.doubleValue ?? -1, cue.start, accuracy: 0.002, "start of cue \(id)", file: file, line: line)
        XCTAssertEqual(v["end"]?.doubleValue ?? -1, cue.end, accuracy: 0.002, "end of cue \(id)", file: file, line: line)
        if let text = v["text"]?.stringValue { XCTAssertEqual(text, cue.text, "text of cue \(id)", file: file, line: line) }
        if let sp = v["speaker"]?.stringValue { XCTAssertEqual(sp, cue.speaker, "speaker of cue \(id)", file: file, line: line) }
    }

    /// A quote is the verbatim text of consecutive cues, with their times.
    func assertQuoteGrounded(_ q: JSONValue, in cues: [TestCue], file: StaticString = #filePath, line: UInt = #line) {
        let ids = q["segmentIds"]?.arrayValue?.compactMap(\.intValue) ?? []
        let parts = ids.compactMap { id in cues.first { $0.id == id } }
        XCTAssertFalse(ids.isEmpty, "quote without segments: \(q)", file: file, line: line)
        XCTAssertEqual(parts.count, ids.count, "unknown segment in \(q)", file: file, line: line)
        XCTAssertEqual(ids, Array((ids.first ?? 0)..<((ids.first ?? 0) + ids.count)), "segments not consecutive", file: file, line: line)
        XCTAssertEqual(q["text"]?.stringValue, parts.map(\.text).joined(separator: " "), "quote not verbatim", file: file, line: line)
        XCTAssertEqual(q["start"]?.doubleValue ?? -1, parts.first?.start ?? -2, accuracy: 0.002, file: file, line: line)
        XCTAssertEqual(q["end"]?.doubleValue ?? -1, parts.last?.end ?? -2, accuracy: 0.002, file: file, line: line)
    }
}
