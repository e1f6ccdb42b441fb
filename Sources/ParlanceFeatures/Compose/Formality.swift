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
///
/// In a language with its own markers (`FormalityMarkers`: Spanish, French, German,
/// Italian, Portuguese, Norwegian), its formal words (+14) and its casual words (−14, the informal
/// address among them), per word, replace contractions, English's markers, pronouns and
/// articles and prepositions; exclamations, sentence length and lower-case starts count as
/// in English, and word length not at all (German's compounds are not formality).
public enum Formality {
    public static func score(_ text: String, language: String = "en") -> Double {
        let words = Lexicon.words(text)
        guard !words.isEmpty else { return 0.5 }
        if let markers = FormalityMarkers.of(language) { return score(text, words: words, markers: markers) }
        let n = Double(words.count)
        let lower = words.map { $0.lowercased() }
        let sentences = Lexicon.sentences(text)
        let s = Double(max(1, sentences.count))

        let contractions = lower.filter(Lexicon.isContraction).count
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

    /// `score` in a language with its own markers.
    static func score(_ text: String, words: [String], markers: FormalityMarkers) -> Double {
        let n = Double(words.count)
        let sentences = Lexicon.sentences(text)
        let s = Double(max(1, sentences.count))
        var starts: Set<Int> = [], k = 0
        for sentence in sentences {
            starts.insert(k)
            k += Lexicon.words(sentence).count
        }
        let (formal, casual) = markers.count(words, sentenceStarts: starts)
        let exclaims = text.filter { $0 == "!" }.count + text.unicodeScalars.filter { $0.properties.isEmojiPresentation }.count
        let lowerStarts = sentences.filter { $0.first.map { $0.isLetter && $0.isLowercase } ?? false }.count
        var z = 0.0
        z += 14 * Double(formal) / n
        z -= 14 * Double(casual) / n
        z -= 0.8 * Double(exclaims) / s
        z += min(1.2, max(-1.2, 0.06 * (n / s - 14)))
        z -= 1 * Double(lowerStarts) / s
        let p = 1 / (1 + exp(-z))
        return (p * 100).rounded() / 100
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
