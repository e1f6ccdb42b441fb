import Foundation

/// A deterministic lexical formality score in 0...1 (0 very casual, 1 very formal).
///
/// A logistic function of a weighted sum of features, each per word unless stated:
/// - contractions (`don't`, `we'll`, `it's`) −18
/// - casual markers (`hey`, `gonna`, `awesome`, `stuff`, `btw`, `lol`…) −14
/// - exclamation marks and emoji, per sentence −0.8
/// - first- and second-person singular pronouns (`I`, `me`, `you`) −2
/// - formal markers (`therefore`, `regarding`, `kindly`, `ensure`, `request`…) +14
/// - articles and prepositions (Heylighen & Dewaele's F-score without a tagger), +5 × (rate − 0.18)
/// - mean word length in letters, +1.1 × (mean − 4.4)
/// - mean sentence length in words, +0.06 × (mean − 14), capped at ±1.2
/// - sentences that start in lower case, per sentence −1
/// The weights were set so plain business prose lands near 0.5, a chatty message below
/// 0.3 and a formal letter above 0.7; the score compares texts, it does not grade them.
public enum Formality {
    public static func score(_ text: String) -> Double {
        let words = Lexicon.words(text)
        guard !words.isEmpty else { return 0.5 }
        let n = Double(words.count)
        let lower = words.map { $0.lowercased() }
        let sentences = Lexicon.sentences(text)
        let s = Double(max(1, sentences.count))

        let contractions = lower.filter(isContraction).count
        let casual = lower.filter { casualMarkers.contains($0) }.count
        let formal = lower.filter { formalMarkers.contains($0) }.count
        let personal = lower.filter { ["i", "me", "my", "you", "your", "u", "ya"].contains($0) }.count
        let structure = lower.filter { articlesAndPrepositions.contains($0) }.count
        let exclaims = text.filter { $0 == "!" }.count + text.unicodeScalars.filter { $0.properties.isEmojiPresentation }.count
        let lowerStarts = sentences.filter { $0.first.map { $0.isLetter && $0.isLowercase } ?? false }.count
        let letters = words.reduce(0) { $0 + $1.filter(\.isLetter).count }
        let meanWord = Double(letters) / n
        let meanSentence = n / s

        var z = 0.0
        z -= 18 * Double(contractions) / n
        z -= 14 * Double(casual) / n
        z -= 0.8 * Double(exclaims) / s
        z -= 2 * Double(personal) / n
        z += 14 * Double(formal) / n
        z += 5 * (Double(structure) / n - 0.18)
        z += 1.1 * (meanWord - 4.4)
        z += min(1.2, max(-1.2, 0.06 * (meanSentence - 14)))
        z -= 1 * Double(lowerStarts) / s
        let p = 1 / (1 + exp(-z))
        return (p * 100).rounded() / 100
    }

    static func isContraction(_ w: String) -> Bool {
        let w = w.replacingOccurrences(of: "\u{2019}", with: "'")
        guard let apostrophe = w.firstIndex(of: "'") else { return ["gonna", "wanna", "gotta", "dunno", "lemme", "gimme", "ain't"].contains(w) }
        let suffix = w[apostrophe...]
        // "n't" starts before the apostrophe: the suffix is "'t".
        if w.hasSuffix("n't") || ["'re", "'ll", "'ve", "'m", "'d"].contains(where: { suffix.hasSuffix($0) }) { return true }
        return suffix == "'s" && ["it", "that", "there", "here", "what", "let", "he", "she", "who", "where", "how"].contains(String(w[..<apostrophe]))
    }

    static let casualMarkers: Set<String> = [
        "hey", "hi", "hiya", "yeah", "yep", "yup", "nope", "gonna", "wanna", "gotta", "kinda", "sorta", "cool", "awesome", "stuff",
        "guys", "ok", "okay", "lol", "btw", "thx", "tbh", "fyi", "asap", "hmm", "oops", "wow", "folks", "chill", "cheers", "super",
        "totally", "basically", "anyway", "anyways", "literally", "pretty", "bunch", "grab", "heads-up", "no-brainer", "nope",
        "sure", "dude", "buddy", "yay", "ugh", "oh", "alright", "bummer", "crazy", "huge", "tons", "lots", "stoked", "ping",
    ]

    static let formalMarkers: Set<String> = [
        "therefore", "furthermore", "moreover", "however", "regarding", "accordingly", "consequently", "hereby", "kindly",
        "sincerely", "respectfully", "would", "shall", "ensure", "request", "requested", "require", "requires", "required",
        "appreciate", "additionally", "subsequently", "nevertheless", "thus", "hence", "pursuant", "inform", "notify",
        "approximately", "commence", "regards", "dear", "assist", "provide", "facilitate", "prior", "sincere", "apologize",
        "apologise", "acknowledge", "regret", "advise", "please", "whereas", "concerning", "receipt", "anticipate", "endeavour",
        "endeavor", "further", "accommodate", "obtain", "purchase", "indicate", "significant", "substantial", "sufficient",
        "objective", "objectives", "proceed", "rescheduled", "postponed", "enclosed", "attached", "aforementioned",
    ]

    static let articlesAndPrepositions: Set<String> = [
        "a", "an", "the", "of", "in", "on", "for", "with", "to", "by", "from", "at", "about", "into", "through", "during", "before",
        "after", "above", "below", "between", "under", "over", "within", "without", "upon", "among", "regarding", "concerning",
        "toward", "towards", "per", "via", "despite", "following",
    ]
}

/// Word, sentence and content-word helpers shared by the formality score and the analysis.
enum Lexicon {
    /// Words (letters and digits, with inner apostrophes and hyphens), in order.
    static func words(_ text: String) -> [String] {
        WordDiff.tokens(text).filter(\.isWord).map(\.text)
    }

    /// Sentences: split after . ! ? (before whitespace) and at line breaks; trimmed, non-empty.
    static func sentences(_ text: String) -> [String] {
        var out: [String] = []
        var current = ""
        let chars = Array(text)
        for (i, c) in chars.enumerated() {
            if c == "\n" {
                out.append(current)
                current = ""
                continue
            }
            current.append(c)
            if ".!?".contains(c), i + 1 == chars.count || chars[i + 1].isWhitespace {
                // Not after a single capital (an initial) or a common abbreviation.
                let lastWord = current.split(separator: " ").last.map(String.init) ?? ""
                if !["e.g.", "i.e.", "etc.", "vs.", "mr.", "mrs.", "ms.", "dr.", "approx."].contains(lastWord.lowercased()),
                   !(lastWord.count == 2 && lastWord.first!.isUppercase) {
                    out.append(current)
                    current = ""
                }
            }
        }
        out.append(current)
        return out.map { $0.trimmingCharacters(in: .whitespaces) }.filter { $0.contains(where: { $0.isLetter || $0.isNumber }) }
    }

    /// A crude English stem: lower case, no possessive, common suffixes off.
    static func stem(_ word: String) -> String {
        var w = word.lowercased().replacingOccurrences(of: "\u{2019}", with: "'")
        if w.hasSuffix("'s") { w.removeLast(2) }
        for (suffix, replacement) in [("ies", "y"), ("ied", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""), ("ly", ""), ("e", "")] {
            if w.count > suffix.count + 2, w.hasSuffix(suffix) {
                w = String(w.dropLast(suffix.count)) + replacement
                break
            }
        }
        return w
    }

    static let numberWords: [String: String] = [
        "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9",
        "ten": "10", "eleven": "11", "twelve": "12", "twice": "2", "once": "1", "first": "1", "second": "2", "third": "3",
    ]

    /// Digit runs in a word ("3pm" → "3", "2,500" stays one number after removing commas).
    static func numbers(in text: String) -> [String] {
        var out: [String] = []
        for w in words(text) {
            if let n = numberWords[w.lowercased()] { out.append(n); continue }
            let digits = w.replacingOccurrences(of: ",", with: "")
            var run = ""
            for c in digits {
                if c.isNumber { run.append(c) } else if !run.isEmpty { out.append(run); run = "" }
            }
            if !run.isEmpty { out.append(run) }
        }
        return out
    }

    static let stopwords: Set<String> = [
        "a", "an", "the", "and", "or", "but", "if", "then", "so", "of", "in", "on", "for", "with", "to", "by", "from", "at", "as",
        "is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did", "have", "has", "had", "having", "it", "its",
        "this", "that", "these", "those", "there", "here", "i", "me", "my", "we", "us", "our", "you", "your", "he", "him", "his",
        "she", "her", "they", "them", "their", "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "all",
        "any", "both", "each", "few", "more", "most", "other", "some", "such", "no", "nor", "not", "only", "own", "same", "than",
        "too", "very", "can", "will", "just", "should", "would", "could", "might", "must", "shall", "may", "also", "about",
        "into", "over", "after", "before", "up", "down", "out", "off", "again", "further", "once", "because", "while", "until",
        "get", "got", "just", "really", "hi", "hey", "hello", "thanks", "thank", "please", "let", "let's", "it's", "don't",
        "we're", "i'm", "you're", "that's", "we'll", "i'll", "can't", "won't", "isn't", "aren't", "didn't", "doesn't",
        "need", "needs", "make", "sure", "know", "think", "going", "want", "like", "well", "now", "new", "one", "two",
    ]

    /// The words of a text that carry its content: not stopwords, at least 3 letters.
    static func contentWords(_ text: String) -> [String] {
        words(text).filter { w in
            let l = w.lowercased()
            return !stopwords.contains(l) && l.filter(\.isLetter).count >= 3
        }
    }
}
