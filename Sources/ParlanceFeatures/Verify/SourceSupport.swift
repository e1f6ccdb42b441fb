import Foundation
import ParlanceDocuments

/// How well the transcript supports a generated list item (a takeaway, a topic): the share
/// of the item's content terms found in one passage of three consecutive segments
/// (`passageCoverage`). An item said nowhere in the episode ("AI can improve
/// everything from healthcare to education") has little; one that restates a passage has
/// most. Also the transcript's central sentences, to stand in for an unsupported takeaway.
public struct SourceSupport: Sendable {
    private let windows: [Set<String>]
    let segments: [Segment]
    /// The transcript's text (what an item may repeat without echoing the prompt).
    let text: String

    public init(segments: [Segment]) {
        self.segments = segments
        text = segments.map(\.text).joined(separator: "\n")
        let terms = segments.map { Set(Lexicon.words($0.text, .terms)) }
        windows = terms.indices.map { i in terms[i..<min(terms.count, i + 3)].reduce(into: Set<String>()) { $0.formUnion($1) } }
    }

    /// Items supported below this share are not the transcript's.
    static let minimum = 0.5

    /// The share of `item`'s content terms found in the passage of three consecutive
    /// segments that has most of them (1 for an item without content terms).
    public func passageCoverage(of item: String) -> Double {
        let own = Set(Lexicon.words(item, .terms))
        guard !own.isEmpty, !windows.isEmpty else { return 1 }
        return windows.map { Double($0.intersection(own).count) }.max()! / Double(own.count)
    }

    public func supported(_ item: String) -> Bool { passageCoverage(of: item) >= SourceSupport.minimum }

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
    /// rewritten (a speaker's fillers dropped, a capital, a full stop).
    public func centralSentences() -> [String] {
        var df: [String: Int] = [:]
        for s in segments { for t in Set(Lexicon.words(s.text, .terms)) { df[t, default: 0] += 1 } }
        var scored: [(String, Double)] = []
        for s in segments {
            for raw in Lexicon.sentences(s.text, .tiled) {
                let sentence = SourceSupport.tidy(raw)
                let words = TextChecks.wordCount(sentence)
                guard (8...30).contains(words), !sentence.hasSuffix("?") else { continue }
                let terms = Set(Lexicon.words(sentence, .terms))
                guard terms.count >= 4 else { continue }
                let score = terms.reduce(0.0) { $0 + log(1 + Double(df[$1, default: 0])) } / Double(terms.count).squareRoot()
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
                      !Lexicon.words(a, .terms).isEmpty, !Lexicon.words(b, .terms).isEmpty, !SourceSupport.fillers.contains(a) else { continue }
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

    static let fillers = ["so", "and", "but", "well", "yeah", "yes", "oh", "um", "uh", "right", "okay", "ok", "i mean", "you know", "like", "look", "honestly", "basically"]
}
