import Foundation
import ParlanceEngine
import ParlanceHash
import ParlanceJSON
import Synchronization

/// Results keyed by what was analysed, how, and by which model (`Key`), in memory (LRU,
/// byte-bounded) and on disk under the user cache dir, so a repeated request answers at
/// once, even after a restart. Every entry carries the checks version it was made under,
/// and an entry of another version is a miss: a result the checks and repairs of an older
/// (or newer) daemon shaped is never served as this one's. Disk writes are atomic (temp
/// file + rename, mode 0600); a corrupt file is ignored, replaced, and logged.
public actor AnalysisCache {
    /// Raised whenever the checks and repairs change what a result holds.
    /// 5: the rewrite, list and answer checks of round two.
    /// 6: round three: an answer cites the segment its facts come from (an answer cached
    /// before it kept its old citations).
    /// 7: an answer is written as prose, then its fields (a cached answer was JSON).
    /// 8: an answer that echoes the question under a label is degenerate, "how much" asks
    /// for money only beside a money word, and the extractive answer quotes only the
    /// segments that hold the answer.
    /// 9: a string the grammar closed where the model meant to go on is reopened (`SpillGuard`).
    /// 10: answerability reads `sentenceCoverage` (an answer's `answerability` gained it, and
    /// the weights were refitted).
    /// 11: a weekday the source writes in the plural supports the weekday ("Tuesdays",
    /// "Tuesday").
    /// 12: a percentage is its own number ("12%" is not "12", "2%" not the "2" of "2pm").
    /// 13: retrieval's terms leave out the function words of French, Spanish, Italian,
    /// Portuguese, German and Norwegian, and cut elisions ("l'ingénieur" → "ingénieur").
    /// 14: an answer that opens with a shown line's number and speaker ("1) Claire Martin:
    /// Bonjour à tous…") is the transcript continued, not an answer (`transcriptLine`).
    /// 15: answerability reads word forms (a Spanish or French verb in another person), number
    /// words ("dix-neuf"), durations, compound units and sentence-initial names; refitted.
    /// 16: a name after a title's full stop ("Dr. Okafor") is a name mid-sentence, a fact.
    /// 17: ask's "not found" threshold 0.49 → 0.46 (chosen on cross-validated probabilities).
    /// 18: summaries' and worthIt's lists hold no more items than the transcript has sentences.
    /// 19: a transcript shorter than a list's usual size: its sentences as takeaways, its phrases as topics.
    /// 20: those takeaways without a second speaker's label, those topics never opening with a
    /// stopword; summaries, tags and content write only the transcript's numbers, and no
    /// analysis a weekday or month it does not name.
    /// 21: a plain-text line of several turns ("Maya: … Theo: …") is a segment per turn.
    /// 22: an answer that opens with a shown speaker's label ("Renata: …") is the transcript
    /// continued; answerability reads an answer that restates the question as no answer
    /// (`modelSaysNotFound`), refitted.
    /// 23: answerability reads a sentence with its speaker and quotes no opening segment,
    /// refitted; a variation written under the facts grammar gets the facts it left out put
    /// back, after its last sentence is ended.
    /// 24: a number written with a unit (£, #, am/pm) is kept only with it, and a weekday
    /// opening a sentence is a fact.
    /// 25: more refusals are refusals ("I apologise, but", "I won't help", "lo siento, no puedo").
    /// 26: an apology for what the writer cannot do ("Sorry, I can't …") is a refusal where the
    /// selection says nothing of the kind.
    /// 27: answerability reads three features (threshold 0.5), and where no answer could reach
    /// the threshold the model is not asked.
    /// 28 (issue 77): a summary's sentence is supported when the transcript says (nearly) all
    /// its words, not only when one passage does; a summary must name the transcript's
    /// subject; failing prose is generated again before an outline of the transcript's parts
    /// stands in for it; tags are lowercase, one per item, and no name; an answer that loops
    /// fails; the extractive answer quotes only a passage that holds an answer; a rewrite's
    /// comment on itself is a refusal, and the examples' subjects ("quarterly review") are
    /// neither written nor passed.
    /// 29 (issues 77, 80): the prompt's markup ("Part 1 (5:)", "Transcript:") is no title,
    /// topic or summary; an audience is one description, not a sentence; an extractive quote
    /// says more than the question, and for a question asking no kind of value does not pass;
    /// chapter titles echoing the part notes' preamble, or as long as the grammar allows (cut), fail.
    /// 30 (issues 77, 80): a chapter title may take 80 characters and fails as a piece of a
    /// sentence; no talk ("Didn't know", a sentence said of oneself, or begun in the cue
    /// before) stands in for a topic or takeaway; "unspecified" answers are not-found; a
    /// rewrite that turns "he" into "you" fails; a quote gets no sentence addressed to a reader.
    public static let checksVersion = 30

    /// An entry as stored: the value and the checks version it was made under, what it is
    /// (`label`) and when it was made (seconds since 1970). Entries written before labels
    /// existed have neither.
    struct Entry<T: Codable>: Codable {
        var checks: Int
        var value: T
        var label: Label? = nil
        var created: Double? = nil
    }

    /// Entries by name (the SHA-256 of their key), as stored; the index reads them too
    /// (`AnalysisCacheIndex.swift`).
    var memory: [String: (data: Data, tick: UInt64)] = [:]
    var bytes = 0
    private var tick: UInt64 = 0
    public let maxBytes: Int
    public let directory: String?
    public let onWarning: @Sendable (String) -> Void

    public init(directory: String?, maxBytes: Int = 32 << 20, onWarning: @escaping @Sendable (String) -> Void = { _ in }) {
        self.directory = directory
        self.maxBytes = maxBytes
        self.onWarning = onWarning
        if let directory { try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]) }
    }

    /// Entries and bytes held in memory, read in one hop (`model/status`).
    public var usage: (entries: Int, bytes: Int) { (memory.count, bytes) }

    public func get<T: Codable>(_ key: Key) -> T? {
        let name = SHA256.hex(key.text)
        if let hit = memory[name] {
            tick += 1
            memory[name]!.tick = tick
            return current(try? JSONDecoder().decode(Entry<T>.self, from: hit.data))
        }
        guard let path = path(for: name), let data = FileManager.default.contents(atPath: path) else { return nil }
        do {
            let entry = try JSONDecoder().decode(Entry<T>.self, from: data)
            remember(name, data)
            return current(entry)
        } catch {
            onWarning("ignoring corrupt cache file \(path): \(error)")
            try? FileManager.default.removeItem(atPath: path)
            return nil
        }
    }

    /// The entry's value when it was made under this daemon's checks.
    private func current<T>(_ entry: Entry<T>?) -> T? {
        guard let entry, entry.checks == AnalysisCache.checksVersion else { return nil }
        return entry.value
    }

    public func put<T: Codable>(_ key: Key, _ value: T) {
        let entry = Entry(checks: AnalysisCache.checksVersion, value: value, label: key.label, created: Date().timeIntervalSince1970)
        guard let data = try? JSONEncoder().encode(entry) else { return }
        let name = SHA256.hex(key.text)
        remember(name, data)
        if let path = path(for: name) {
            do { try AtomicFile.write(data, to: path) } catch { onWarning("could not write cache file \(path): \(error)") }
        }
    }

    /// Drops every entry held in memory (disk entries are content-addressed, so changed
    /// content simply misses).
    public func clearMemory() {
        memory = [:]
        bytes = 0
    }

    private func remember(_ name: String, _ data: Data) {
        if let old = memory[name] { bytes -= old.data.count }
        tick += 1
        memory[name] = (data, tick)
        bytes += data.count
        while bytes > maxBytes, let victim = memory.min(by: { $0.value.tick < $1.value.tick }) {
            bytes -= victim.value.data.count
            memory[victim.key] = nil
        }
    }

    func path(for name: String) -> String? {
        directory.map { "\($0)/\(name).json" }
    }
}

extension AnalysisCache {
    /// A cached result object, marked `cached: true` (progress says so).
    static func cachedResult<R: Decodable>(_ key: Key, ctx: RequestContext) async -> R? {
        guard let hit: JSONValue = await ctx.services.analysisCache.get(key), case .object(var o) = hit else { return nil }
        o["cached"] = true
        ctx.progress.report("served from the analysis cache", 100, phase: .done)
        return try? JSONValue.object(o).decode()
    }
}

/// Crash-safe file writes: a reader sees the old file or the new one, never half of one.
public enum AtomicFile {
    public static func write(_ data: Data, to path: String) throws {
        let dir = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let tmp = "\(path).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        guard FileManager.default.createFile(atPath: tmp, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown)
        }
        if rename(tmp, path) != 0 {
            try? FileManager.default.removeItem(atPath: tmp)
            throw CocoaError(.fileWriteUnknown)
        }
    }
}
