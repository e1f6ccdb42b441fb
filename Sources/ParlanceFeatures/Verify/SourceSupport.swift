import Foundation
import ParlanceDocuments

/// How well the transcript supports generated text (a takeaway, a topic, a summary's
/// sentence). Two measures, because a summary restates and an invention does not:
/// - `passageCoverage`: the share of the item's content terms found in one passage of three
///   consecutive segments. An item that restates a passage has most.
/// - `documentCoverage`: the share found anywhere in the transcript, words that describe a
///   document ("discusses", "speaker", "talk") aside. A sentence about the whole ("Jutta
///   Treviranus discusses the impact of disability on data") draws on many passages, so no
///   one passage holds it, and every word of it is the transcript's; an invention
///   ("researchers at the University of Edinburgh … quantum-resistant encryption") brings
///   words the transcript never says.
/// An item is supported when either holds (`supported`). Until issue 77 only the passage
/// measure counted: it could not tell a capable model's restating summary from the 135M
/// model's invention, and replaced both.
/// Also the transcript's central sentences and subject terms, and an outline of its parts
/// (`outlineSummary`) to stand in for a summary that fails.
public struct SourceSupport: Sendable {
    private let windows: [Set<String>]
    /// Every content term of the transcript, and the first `prefixLength` letters of the
    /// longer ones (so "discrimination" meets "discriminate").
    private let allTerms: Set<String>
    private let prefixes: Set<String>
    /// Content terms by the number of segments that say them.
    private let segmentFrequency: [String: Int]
    let segments: [Segment]
    /// The transcript's text (what an item may repeat without echoing the prompt).
    let text: String

    public init(segments: [Segment]) {
        self.segments = segments
        text = segments.map(\.text).joined(separator: "\n")
        let terms = segments.map { Set(Lexicon.words(($0.speaker ?? "") + " " + $0.text, .terms)) }
        windows = terms.indices.map { i in terms[i..<min(terms.count, i + 3)].reduce(into: Set<String>()) { $0.formUnion($1) } }
        allTerms = terms.reduce(into: Set<String>()) { $0.formUnion($1) }
        prefixes = Set(allTerms.filter { $0.count >= SourceSupport.prefixLength }.map { String($0.prefix(SourceSupport.prefixLength)) })
        var df: [String: Int] = [:]
        for t in terms { for w in t { df[w, default: 0] += 1 } }
        segmentFrequency = df
    }

    /// Items supported below this share are not the transcript's.
    static let minimum = 0.5
    /// A sentence whose content terms are the transcript's at this share or more restates it.
    static let documentMinimum = 0.8
    static let prefixLength = 6

    /// Words a summary uses to describe its document, not to say what is in it.
    static let describing: Set<String> = Set(BM25Index.terms("""
        transcript discuss discusses discussion speaker speakers talk talks episode podcast host hosts guest guests \
        conversation explain explains highlight highlights emphasize emphasizes share shares describe describes \
        overall focus mention mentions present presents presentation lecture video audience listener topic topics \
        cover covers explore explores various several including key main point points insight insights interview
        """))

    /// The share of `item`'s content terms the transcript says anywhere (exactly, or a word
    /// of the same first six letters), words that describe a document aside (1 for an item
    /// with no other content terms).
    public func documentCoverage(of item: String) -> Double {
        let own = Set(Lexicon.words(item, .terms)).subtracting(SourceSupport.describing)
        guard !own.isEmpty, !allTerms.isEmpty else { return 1 }
        return Double(own.filter(said).count) / Double(own.count)
    }

    /// Whether the transcript says `term` or a word of its first six letters.
    func said(_ term: String) -> Bool {
        allTerms.contains(term) || (term.count >= SourceSupport.prefixLength && prefixes.contains(String(term.prefix(SourceSupport.prefixLength))))
    }

    /// What the transcript is about: content terms of four letters or more that recur across
    /// the most segments (names included), words that describe a document aside.
    public func subjectTerms(_ n: Int = 20) -> [String] {
        segmentFrequency.filter { $0.key.count >= 4 && $0.value >= 2 && !SourceSupport.describing.contains($0.key) && !SourceSupport.talkWords.contains($0.key) }
            .sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.prefix(n).map(\.key)
    }

    /// Prose names the transcript's subject when it says at least two of its subject terms
    /// (one, for a transcript with fewer than six). "Here's the episode." names none.
    public func namesSubject(_ prose: String) -> Bool {
        let subject = subjectTerms()
        guard !subject.isEmpty else { return true }
        let own = Set(Lexicon.words(prose, .terms))
        let hits = subject.filter { t in own.contains(t) || own.contains { $0.count >= SourceSupport.prefixLength && t.hasPrefix($0.prefix(SourceSupport.prefixLength)) } }
        return hits.count >= (subject.count < 6 ? 1 : 2)
    }

    /// The share of `item`'s content terms found in the passage of three consecutive
    /// segments that has most of them (1 for an item without content terms).
    public func passageCoverage(of item: String) -> Double {
        let own = Set(Lexicon.words(item, .terms))
        guard !own.isEmpty, !windows.isEmpty else { return 1 }
        return windows.map { Double($0.intersection(own).count) }.max()! / Double(own.count)
    }

    /// Said in one passage, or every word of it (nearly) the transcript's (`documentCoverage`).
    public func supported(_ item: String) -> Bool {
        passageCoverage(of: item) >= SourceSupport.minimum || documentCoverage(of: item) >= SourceSupport.documentMinimum
    }

    /// `item` ends inside a word of the transcript: its last word, of one or two letters, is
    /// no word of the transcript but begins one ("Priya's work at F" for Fernhill: a topic cut
    /// at its fitted length under a tight `maxTokens`).
    public func endsMidWord(_ item: String) -> Bool {
        guard let last = Lexicon.words(item, .letters).last, (1...2).contains(last.count), last.lowercased() != "i",
              item.trimmingCharacters(in: .whitespaces).last?.isLetter == true else { return false }
        let word = NSRegularExpression.escapedPattern(for: last)
        let opts: String.CompareOptions = [.regularExpression, .caseInsensitive]
        return text.range(of: "\\b\(word)\\b", options: opts) == nil && text.range(of: "\\b\(word)\\p{L}", options: opts) != nil
    }

    /// Sentences of the transcript that state something (8 to 30 words, not a question),
    /// most central first: those whose words recur across the most segments, lightly
    /// rewritten (a speaker's fillers dropped, a capital, a full stop). `statementsOnly`:
    /// none a speaker says of themselves or to the listener (`spoken`), which cannot stand
    /// for a takeaway.
    public func centralSentences(statementsOnly: Bool = false) -> [String] {
        var df: [String: Int] = [:]
        for s in segments { for t in Set(Lexicon.words(s.text, .terms)) { df[t, default: 0] += 1 } }
        var scored: [(String, Double)] = []
        for (k, s) in segments.enumerated() {
            let pieces = Lexicon.sentences(s.text, .tiled)
            for (j, raw) in pieces.enumerated() {
                let sentence = SourceSupport.tidy(raw)
                let words = TextChecks.wordCount(sentence)
                guard (8...30).contains(words), !sentence.hasSuffix("?"), !statementsOnly || !SourceSupport.spoken(sentence) else { continue }
                // A statement begins and ends in its segment: not the end of a sentence the
                // segment before began ("Thing goes for people who have been working for
                // years.", a takeaway of the 1.5B's podcast summary), nor cut where the cue ends.
                if statementsOnly {
                    let prior = j > 0 ? pieces[j - 1] : k > 0 ? segments[k - 1].text : ""
                    let opensSentence = prior.isEmpty || prior.trimmingCharacters(in: .whitespaces).last.map { ".!?:\u{2026}".contains($0) } ?? true
                    let ends = raw.trimmingCharacters(in: .whitespaces).last.map { ".!?\u{2026}\"\u{201D}".contains($0) } ?? false
                    guard opensSentence, ends else { continue }
                }
                let terms = Set(Lexicon.words(sentence, .terms))
                guard terms.count >= 4 else { continue }
                let score = SourceSupport.centrality(terms, df)
                scored.append((sentence, score))
            }
        }
        return scored.sorted { $0.1 > $1.1 }.map(\.0)
    }

    /// The `sentences` most central sentences (`centralSentences`), in the order they were
    /// said, as one paragraph: a summary that holds only what the transcript says (nil when
    /// it has no sentence fit to stand in). A note whose sentences are all too short to be
    /// central ("Maya: the release moves to May. Theo: then docs need an update by Friday.")
    /// is summarized by its first `n` statements of three words or more.
    public func extractiveSummary(sentences n: Int) -> String? {
        var central = centralSentences()
        if central.isEmpty {
            central = segments.flatMap { Lexicon.sentences($0.text, .tiled).map(SourceSupport.tidy) }
                .filter { TextChecks.wordCount($0) >= 3 && !$0.hasSuffix("?") }
        }
        let chosen = Set(central.prefix(n))
        guard !chosen.isEmpty else { return nil }
        var seen = Set<String>()
        let ordered = segments.flatMap { Lexicon.sentences($0.text, .tiled).map(SourceSupport.tidy) }.filter { chosen.contains($0) && seen.insert($0).inserted }
        return ordered.joined(separator: " ")
    }

    /// A summary of the whole transcript when the model's fails its checks: its parts in
    /// order, each by its most central statement, with who says it and when ("At 02:56 Priya
    /// says: “…”"). Two central sentences of the whole (`extractiveSummary`) said neither
    /// what the episode was about nor who spoke: on a 13-minute talk, "Machine learning may
    /// help us amplify the opportunities. That recommend things liked by people like us."
    /// nil when no part has a statement fit to stand in.
    /// What stands in for a summary that failed every attempt: the outline of the parts, or,
    /// for a note of fewer than six segments (too short to have parts), its central
    /// statements (`extractiveSummary`).
    public func fallbackSummary() -> String? {
        segments.count >= 6 ? outlineSummary() ?? extractiveSummary(sentences: 2) : extractiveSummary(sentences: 2)
    }

    /// `parts`: three, and one more for each further 150 segments (a 44-minute podcast of 935
    /// cues has six), at most six.
    public func outlineSummary(parts: Int? = nil) -> String? {
        guard !segments.isEmpty else { return nil }
        let n = parts ?? min(6, max(3, segments.count / 150))
        let count = min(n, max(1, segments.count / 2))
        let size = (segments.count + count - 1) / count
        var lines: [String] = []
        for start in stride(from: 0, to: segments.count, by: size) {
            let part = Array(segments[start..<min(segments.count, start + size)])
            guard let (sentence, segment) = central(in: part) else { continue }
            var opening = segment.start.map { "At " + SourceSupport.clock($0) } ?? (lines.isEmpty ? "First" : "Then")
            if let speaker = segment.speaker { opening += " " + speaker + " says" }
            lines.append(opening + ": \u{201C}" + sentence + "\u{201D}")
        }
        return lines.isEmpty ? nil : lines.joined(separator: " ")
    }

    /// The most central statement of `part` (as `centralSentences` scores them, by how many
    /// segments of the whole say its words), with the segment it begins in. A speaker's
    /// consecutive segments are read as one text: captions cut sentences into cues ("and the
    /// title of my contribution" / "to this important discussion").
    private func central(in part: [Segment]) -> (String, Segment)? {
        var best: (String, Segment, Double)?
        var run: [Segment] = []
        func score(_ run: [Segment]) {
            var joined = "", starts: [(Int, Segment)] = []
            for s in run {
                if !joined.isEmpty { joined += " " }
                starts.append((joined.count, s))
                joined += s.text
            }
            var offset = 0
            for raw in Lexicon.sentences(joined, .tiled) {
                defer { offset += raw.count }
                let sentence = SourceSupport.tidy(raw)
                guard (6...35).contains(TextChecks.wordCount(sentence)), !sentence.hasSuffix("?") else { continue }
                let terms = Set(Lexicon.words(sentence, .terms))
                guard terms.count >= 3 else { continue }
                let value = SourceSupport.centrality(terms, segmentFrequency)
                let lead = raw.prefix { $0.isWhitespace }.count
                let segment = starts.last { $0.0 <= offset + lead }?.1 ?? run[0]
                if best == nil || value > best!.2 { best = (sentence, segment, value) }
            }
        }
        for s in part {
            if let last = run.last, last.speaker != s.speaker { score(run); run = [] }
            run.append(s)
        }
        if !run.isEmpty { score(run) }
        return best.map { ($0.0, $0.1) }
    }

    /// How central a sentence's `terms` are: the log of how many segments say each, summed and
    /// scaled by the square root of their number (`centralSentences` and the outline's parts).
    static func centrality(_ terms: Set<String>, _ df: [String: Int]) -> Double {
        terms.reduce(0.0) { $0 + log(1 + Double(df[$1, default: 0])) } / Double(terms.count).squareRoot()
    }

    /// Seconds as "MM:SS", or "H:MM:SS" from an hour on.
    static func clock(_ seconds: Double) -> String {
        let t = Int(seconds.rounded(.down))
        return t >= 3600 ? String(format: "%d:%02d:%02d", t / 3600, t / 60 % 60, t % 60) : String(format: "%02d:%02d", t / 60, t % 60)
    }

    /// What takes the place of a topic dropped from a list of at least `minItems`: the key
    /// phrases, and when there are fewer of them than that (a note too short for its words to
    /// recur) its own phrases after them (`ListSize.phraseChoices`, what such a note's topics
    /// are chosen from). Asked for two topics of a two-line note, the model chose one phrase
    /// twice, three attempts of three, and there was nothing to put in its place.
    public func topicFill(minItems: Int, excluding names: Set<String>) -> [String] {
        let key = keyPhrases(excluding: names)
        guard key.count < minItems else { return key }
        var seen = Set(key.map(TextChecks.normalized))
        let own = ListSize.phraseChoices(segments, length: 1...120, words: 2...4)
        return key + own.filter { !names.contains(TextChecks.normalized($0)) && seen.insert(TextChecks.normalized($0)).inserted }
    }

    /// Key phrases of the transcript for a topic list: pairs of adjacent content words
    /// ("on-device inference", "tokens per second" → "tokens second" is not one: only
    /// adjacent words) said at least twice, most frequent first, then phrases said once whose
    /// words recur; none of them a name.
    public func keyPhrases(excluding names: Set<String>) -> [String] {
        var counts: [String: Int] = [:]
        var order: [String] = []
        for s in segments {
            let words = Lexicon.words(s.text, .letters)
            for i in words.indices.dropLast() {
                let a = words[i], b = words[i + 1]
                guard a.count >= 3, b.count >= 3, a.first?.isLowercase ?? false, b.first?.isLowercase ?? false,
                      !Lexicon.words(a, .terms).isEmpty, !Lexicon.words(b, .terms).isEmpty, !SourceSupport.fillers.contains(a),
                      !SourceSupport.conversational(a + " " + b) else { continue }
                let phrase = a + " " + b
                guard !names.contains(TextChecks.normalized(phrase)) else { continue }
                if counts[phrase, default: 0] == 0 { order.append(phrase) }
                counts[phrase, default: 0] += 1
            }
        }
        // Then, for a short transcript, phrases said once whose two words both recur (in two
        // segments or more), the most recurrent first.
        var df: [String: Int] = [:]
        for s in segments { for t in Set(Lexicon.words(s.text, .terms)) { df[t, default: 0] += 1 } }
        func recurrence(_ phrase: String) -> Int {
            let ws = phrase.split(separator: " ").map { df[Lexicon.words(String($0), .terms).first ?? "", default: 0] }
            return ws.min() ?? 0 >= 2 ? ws.reduce(0, +) : 0
        }
        let often = order.filter { counts[$0]! >= 2 }.sorted { counts[$0]! > counts[$1]! }
        let once = order.filter { counts[$0]! == 1 && recurrence($0) > 0 }.sorted { recurrence($0) > recurrence($1) }
        return (often + once).map { $0.prefix(1).uppercased() + $0.dropFirst() }
    }

    /// A spoken sentence as a written one: leading fillers and hedges dropped, first letter
    /// capitalised, ending in a full stop.
    public static func tidy(_ raw: String) -> String {
        var s = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        var changed = true
        while changed {
            changed = false
            for f in fillers where s.lowercased().hasPrefix(f) {
                let rest = s.dropFirst(f.count)
                guard let next = rest.first, next == " " || next == "," else { continue }
                s = String(rest).trimmingCharacters(in: CharacterSet(charactersIn: " ,"))
                changed = true
            }
        }
        guard let first = s.first else { return s }
        s = first.uppercased() + s.dropFirst()
        if let last = s.last, !".!?".contains(last) { s += "." }
        return s
    }

    /// Words of talk, not of a subject: a phrase made only of them ("little bit", "pretty
    /// much", "feel like", "kind of stuff", "didn't know": the 0.5B's topics of a real
    /// podcast were "repaired" with that one) is no topic. A 44-minute podcast's topics were
    /// "Little bit", "Pretty much" and "Feel like" (issue 77): the most frequent pairs of
    /// words in a conversation are these.
    static let talkWords: Set<String> = Set(BM25Index.terms("""
        little bit pretty much feel felt like kind sort really actually lot lots thing things stuff yeah gonna wanna gotta \
        know mean think thought guess maybe probably right okay definitely totally super cool awesome great good nice \
        sure stuff whatever basically literally honestly obviously course time times way ways today talk talking said say \
        saying going get got getting make made doing done want wanted need needed come came start started \
        didn't don't doesn't isn't wasn't aren't weren't can't won't couldn't wouldn't shouldn't haven't hasn't
        """))

    /// Whether every content word of `phrase` is a word of talk (`talkWords`).
    static func conversational(_ phrase: String) -> Bool {
        let terms = Lexicon.words(phrase, .terms)
        return !terms.isEmpty && terms.allSatisfy { talkWords.contains($0) }
    }

    /// A sentence of talk, not a statement a takeaway can be: said in the first person
    /// singular or to "you", with a filler mid-sentence ("like,", "you know", "kind of"), a
    /// quotation or a broken-off word ("--"). A real podcast's takeaways were "repaired" with
    /// "See like, "Hey, I did this thing today and now I know something." (the 0.5B, issue 80).
    static func spoken(_ sentence: String) -> Bool {
        let words = Lexicon.words(sentence, .normalized)
        let lower = " " + sentence.lowercased() + " "
        return words.contains { ["i", "me", "my", "you", "your", "im", "ive", "youre"].contains($0) }
            || [" like,", ", like ", " you know", " kind of", " sort of", " i mean", "--", "\"", "\u{201C}"].contains { lower.contains($0) }
    }

    static let fillers = ["so", "and", "but", "well", "yeah", "yes", "oh", "um", "uh", "right", "okay", "ok", "i mean", "you know", "like", "look", "honestly", "basically"]
}
