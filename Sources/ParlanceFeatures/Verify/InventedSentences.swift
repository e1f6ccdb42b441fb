import ParlanceDocuments

/// A rewrite's sentences that say what the selection does not (an invented figure or name,
/// a figure copied from the prompt's example) taken out, instead of the whole rewrite
/// generated again: a regeneration dropped facts again as often as it mended the invention
/// (eval, 2026-11-30), while the sentences left keep theirs, and the facts the removed
/// sentences carried are put back by `FactInsertion`, a fraction of a regeneration's cost.
///
/// Only when enough is left to be the message: at least one whole sentence, and at most
/// `maxDroppedShare` of the words removed. Otherwise the rewrite stays as it is and its
/// findings decide (a new variation).
public enum InventedSentences {
    /// At most this share of a rewrite's words may go with its sentences.
    static let maxDroppedShare = 0.5

    /// `text` without the sentences (and lines, a greeting or a sign-off) holding any of
    /// `invented`, facts found in the whole of `text`; with a finding per sentence removed.
    /// With `original`, a sentence that also says the selection's own (one of its facts, or
    /// most of its content words) stays: its invented fact is reported, and another attempt
    /// decides. Removing it lost what it carried besides facts: on the Qwen2.5 0.5B model the
    /// removal cost 0.07 to 0.11 of the labeled key facts kept and prevented no invention
    /// (issue 77's ablation, `rewrite.invented`).
    public static func drop(_ invented: [Facts.Fact], from text: String, original: String? = nil) -> Repaired<String> {
        guard !invented.isEmpty else { return Repaired(text) }
        var kept: [String] = []
        var removed: [(sentence: String, facts: [String])] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var keptLine = ""
            for piece in Sentences.split(String(line)) {
                let held = invented.filter { holds($0, piece) }
                if held.isEmpty || original.map({ carriesSelection(piece, original: $0) }) == true {
                    keptLine += piece
                } else {
                    removed.append((piece, held.map(\.text)))
                }
            }
            kept.append(keptLine.trimmingCharacters(in: .whitespaces))
        }
        guard !removed.isEmpty else { return Repaired(text) }
        let result = tidy(kept)
        let words = TextChecks.wordCount(text)
        let removedWords = removed.reduce(0) { $0 + TextChecks.wordCount($1.sentence) }
        guard Double(removedWords) <= maxDroppedShare * Double(words),
              Sentences.split(result).contains(where: { TextChecks.wordCount($0) >= 3 && ".!?".contains($0.trimmingCharacters(in: .whitespaces).last ?? " ") })
        else { return Repaired(text) }
        return Repaired(result, findings: removed.map {
            Finding(.unsupportedFact, .inventedSentence($0.sentence.trimmingCharacters(in: .whitespaces), facts: $0.facts), action: .removed)
        })
    }

    /// `piece` says what the selection says: one of its facts, or half its content words or more.
    static func carriesSelection(_ piece: String, original: String) -> Bool {
        if Facts.extract(original).contains(where: { holds($0, piece) }) { return true }
        let own = Set(Lexicon.words(piece, .terms))
        guard !own.isEmpty else { return false }
        return Double(own.intersection(Lexicon.words(original, .terms)).count) / Double(own.count) >= 0.5
    }

    /// `piece` writes `fact`: the number by its value, the name as a word, letter for letter.
    static func holds(_ fact: Facts.Fact, _ piece: String) -> Bool {
        switch fact.kind {
        case .number: Facts.numberSpans(piece).contains { $0.key == fact.key }
        case .name: Lexicon.words(piece).contains(fact.text)
        }
    }

    /// The lines joined again: no run of blank lines longer than one, none at either end.
    static func tidy(_ lines: [String]) -> String {
        var out: [String] = []
        for line in lines where !(line.isEmpty && (out.last?.isEmpty ?? true)) { out.append(line) }
        while out.last?.isEmpty == true { out.removeLast() }
        return out.joined(separator: "\n")
    }
}
