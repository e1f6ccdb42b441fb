import Foundation

/// Checks on a piece of generated text, shared by every verifier: is it language at all,
/// does it refuse or talk about being an AI, does it repeat the prompt's own words, how
/// similar are two texts.
public enum TextChecks {
    /// `text`'s words (`Lexicon` normalized) without the fillers that say "you" of no one
    /// ("you know", "you see", "you guys", "mind you", "if you will"): whether a text speaks
    /// to a reader is read from what is left.
    static func wordsWithoutYouFillers(_ text: String) -> [String] {
        // A filler stands between commas or at a clause's edge ("into, you know, web
        // development"); "Do you know when he's back?" asks the reader.
        let fillers = #"(?i)(,\s*you (know|see)\b|\byou (know|see)\s*,|\bmind you\b|\bif you will\b)"#
        let rest = text.replacingOccurrences(of: fillers, with: ",", options: .regularExpression)
        return Lexicon.words(rest, .normalized)
    }

    /// Lower case, diacritics folded, punctuation to spaces, whitespace collapsed.
    public static func normalized(_ s: String) -> String {
        let folded = s.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
        let mapped = folded.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) ? Character($0) : " " }
        return String(mapped).split(separator: " ").joined(separator: " ")
    }

    /// Content terms as retrieval sees them (stopwords dropped, words stemmed), for overlap
    /// checks that agree with what BM25 ranks.
    public static func terms(_ s: String) -> Set<String> { Set(Lexicon.words(s, .terms)) }

    /// |a ∩ b| / |a ∪ b| over content terms.
    public static func jaccard(_ a: String, _ b: String) -> Double {
        let x = terms(a), y = terms(b)
        guard !x.isEmpty || !y.isEmpty else { return normalized(a) == normalized(b) ? 1 : 0 }
        return Double(x.intersection(y).count) / Double(x.union(y).count)
    }

    /// Prose: at least two words of two or more letters, letters the bulk of what is not
    /// space, and not a bare timestamp, number or piece of JSON. (`"]["`, `12:30`,
    /// `2018-03-15 19:47:46.300 +0000` are not answers.)
    public static func isLanguage(_ s: String) -> Bool {
        let t = s.trimmingCharacters(in: .whitespacesAndNewlines)
        let words = Lexicon.words(t).filter { $0.filter(\.isLetter).count >= 2 }
        guard words.count >= 2 else { return false }
        let visible = t.filter { !$0.isWhitespace }
        let letters = visible.filter(\.isLetter).count
        guard Double(letters) >= 0.6 * Double(visible.count) else { return false }
        // One word repeated ("Ben, Ben, Ben!") is not a sentence.
        let distinct = Set(words.map { $0.lowercased() })
        if words.count >= 3, distinct.count == 1 { return false }
        return true
    }

    /// Phrases by which a model refuses or talks about itself instead of doing the task.
    static let refusalPhrases = [
        "as an ai", "as a language model", "as a language ai", "as an artificial intelligence", "i am an ai", "i'm an ai",
        "language ai", "ai language model", "i don't have the capability", "i do not have the capability", "i don't have the ability",
        "i do not have the ability", "i'm not able to", "i am not able to", "i am unable to", "i'm unable to", "i cannot fulfill", "i can't fulfill", "i cannot assist",
        "i can't assist", "i can't help", "i cannot help", "i can not help", "i cannot provide", "i can't provide", "i cannot rewrite",
        "i can't rewrite", "i'm sorry, but i", "i am sorry, but i", "i apologize, but i", "i don't have access", "i do not have access",
        "i don't have personal", "i do not have personal", "my programming", "my training data", "openai", "chatgpt",
        "i cannot comply", "i can't comply", "i cannot do that", "i can't do that", "i won't help", "i won't assist", "i cannot write",
        "i can't write", "i cannot complete", "i can't complete", "i apologise, but", "a large language model", "an ai model",
        "como modelo de lenguaje", "como ia", "lo siento, pero no puedo", "lo siento, no puedo", "en tant qu'ia", "en tant que modèle",
        "désolé, mais je ne peux pas", "désolé, je ne peux pas", "je ne peux pas vous aider",
    ]

    /// An apology for what the writer cannot do: a refusal ("Sorry, I can't help with that"),
    /// unless the source apologises or says its writer cannot do something too ("I won't be
    /// able to make Friday" may become "Sorry, I can't make Friday"). Expanded spellings.
    static let apologisedInability = ["sorry, i cannot", "sorry, but i cannot", "sorry i cannot", "sorry, i can not", "sorry, i am unable",
                                      "sorry, but i am unable", "sorry, i am not able"]
    static let statedInability = ["i cannot", "i can not", "i am unable", "i am not able", "i will not be able", "i could not", "i couldn't",
                                  "sorry"]

    /// The refusal phrase `candidate` uses that `source` does not (a rewrite of an apology
    /// may say "I'm sorry, but I cannot attend" when the original did).
    public static func refusal(in candidate: String, source: String = "") -> String? {
        let c = Lexicon.expanded(candidate), s = Lexicon.expanded(source)
        if let phrase = refusalPhrases.first(where: { c.contains(Lexicon.expanded($0)) && !s.contains(Lexicon.expanded($0)) }) { return phrase }
        if let comment = commentary(in: candidate, source: source) { return comment }
        guard !statedInability.contains(where: s.contains) else { return nil }
        return apologisedInability.first(where: c.contains)
    }

    /// The model's comment on its own rewrite, which the selection does not make: "Here is
    /// the revised text with every fact added; we changed \"three things\" to …" came back as
    /// a rewrite, passed (issue 77). English only: the phrases are the 0.5B and 1.5B models'.
    static func commentary(in candidate: String, source: String) -> String? {
        let pattern = #"(?i)\b(here is|here's|below is) (the|my|a|your) (revised|rewritten|updated|new|edited|improved|formal|casual) (text|version|message)|\b(i|we) (have )?(changed|replaced|rewrote|rephrased|revised|adjusted) ("|“|the (text|tone|wording|phrase|sentence))|\b(revised|rewritten) (text|version)( is)?:"#
        guard let r = candidate.range(of: pattern, options: .regularExpression),
              source.range(of: pattern, options: .regularExpression) == nil else { return nil }
        return String(candidate[r])
    }

    /// A run of `n` words of the prompt's own instructions that `candidate` repeats and
    /// `source` (the user's text) does not contain: the model echoed its instructions.
    public static func echo(in candidate: String, instructions: [String], source: String, n: Int = 3) -> String? {
        let sourceGrams = grams(normalized(source), n)
        var instructionGrams: [String: Bool] = [:]
        for i in instructions {
            for g in grams(normalized(i), n) where !sourceGrams.contains(g) {
                // Runs of function words ("in the", "of the text") are in every text.
                let content = g.split(separator: " ").filter { $0.count >= 4 && !Lexicon.words(String($0), .terms).isEmpty }
                if !content.isEmpty { instructionGrams[g] = true }
            }
        }
        let c = Lexicon.words(candidate, .normalized)
        guard c.count >= n else {
            // A short output that is a prompt label ("Tone: formal", "Rewrite the text.").
            let whole = normalized(candidate)
            return !whole.isEmpty && instructions.contains { normalized($0).contains(whole) } && !normalized(source).contains(whole) && c.count >= 2
                ? candidate : nil
        }
        for i in 0...(c.count - n) {
            let g = c[i..<(i + n)].joined(separator: " ")
            if instructionGrams[g] != nil { return g }
        }
        return nil
    }

    nonisolated(unsafe) static let placeholderPattern = try! NSRegularExpression(pattern: #"\[[^\[\]\n]{1,30}\]"#)

    /// A bracketed placeholder ("[id]", "[date]", "[Your Name]") that `source` does not contain.
    public static func placeholder(in text: String, source: String) -> String? {
        let ns = text as NSString
        for m in placeholderPattern.matches(in: text, range: NSRange(location: 0, length: ns.length)) {
            let p = ns.substring(with: m.range)
            if !source.contains(p) { return p }
        }
        return nil
    }

    static func grams(_ normalizedText: String, _ n: Int) -> Set<String> {
        let w = normalizedText.split(separator: " ").map(String.init)
        guard w.count >= n else { return [] }
        return Set((0...(w.count - n)).map { w[$0..<($0 + n)].joined(separator: " ") })
    }

    /// Words (letters or digits) in a text.
    public static func wordCount(_ s: String) -> Int { Lexicon.words(s).count }
}
