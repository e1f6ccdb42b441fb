/// Words for BM25: Unicode word split, folded case and diacritics, function words removed
/// (English, and those of the other Latin-script output languages that are no English word),
/// French and Italian elisions cut ("l'ingénieur" → "ingenieur"), light suffix stemming
/// (-s, -es, -ies, -ing, -ed, final -e).
enum Tokenizer {
    static let stopwords: Set<String> = Set("""
        a about above after again against all am an and any are as at be because been before being below between \
        both but by can could did do does doing down during each few for from further had has have having he her \
        here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not \
        now of off on once only or other our ours ourselves out over own same she should so some such than that the \
        their theirs them themselves then there these they this those through to too under until up very was we \
        were what when where which while who whom why will with would you your yours yourself yourselves s t don \
        doesn didn isn wasn aren weren won can't don't it's i'm you're we're they're that's let's also
        """.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init))

    /// The function words of French, Spanish, Italian, Portuguese, German and Norwegian
    /// (`StopwordProfiles`, with the question words and auxiliaries a question opens with),
    /// folded, less those that are also English words a question may ask about ("die", "war",
    /// "men", "son", "mit", "plus", vitamin "c"). Without them a French question matched on "qui",
    /// "du" and "en": "Qui était l'ingénieur du pont en pierre ?" ranked "Elle a été reconstruite
    /// en béton en 1949, ce qui explique…" above "L'ingénieur s'appelait Étienne Lacombe."
    static let otherLanguages: Set<String> = {
        let profiles = StopwordProfiles.profiles.filter { ["fr", "es", "it", "pt", "de", "nb"].contains($0.code) }.flatMap(\.words)
        let asking = """
            quel quelle quels quelles quand pourquoi combien etait etaient avait ont ete sont cual cuales cuando donde quien quienes \
            cuanto cuanta cuantos cuantas fue fueron han ha sido quale quali dove chi quanto quanti quante wann wer welche welcher
            """.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
        let english: Set<String> = [
            "c", "d", "e", "j", "n", "o", "al", "als", "aus", "bare", "ci", "come", "com", "con", "den", "die", "eu", "est", "hat", "han", "hay",
            "io", "med", "meg", "men", "mi", "mit", "mon", "os", "per", "plus", "son", "var", "vi", "war", "dove",
        ]
        return Set((profiles + asking).map { Folding.fold($0) }).subtracting(english)
    }()

    /// What an elided article or pronoun leaves before the apostrophe: "l'", "d'", "qu'"…
    static let elisions: Set<String> = ["l", "d", "j", "c", "n", "s", "m", "t", "qu", "jusqu", "lorsqu", "puisqu", "quoiqu"]

    static func terms(_ text: String) -> [String] {
        words(text).compactMap { w in stopwords.contains(w) || otherLanguages.contains(w) ? nil : WordForms.canonical[w] ?? stem(w) }
    }

    /// Folded words; apostrophes inside a word are kept only long enough to test stopwords
    /// ("don't"), then removed ("o'brien" → "obrien").
    static func words(_ text: String) -> [String] {
        var out: [String] = []
        var word = String.UnicodeScalarView()
        let folded = Folding.fold(text).unicodeScalars
        var it = folded.makeIterator()
        var pending: Unicode.Scalar? = it.next()
        func flush() {
            if !word.isEmpty {
                let w = String(word)
                out.append(stopwords.contains(w) ? w : w.replacingApostrophes())
                word = String.UnicodeScalarView()
            }
        }
        var previousWasWord = false
        while let c = pending {
            pending = it.next()
            if Folding.isIdeographic(c) {
                flush()
                out.append(String(c))
                previousWasWord = false
            } else if Folding.isWordScalar(c) {
                word.append(c)
                previousWasWord = true
            } else if c == "'", previousWasWord, let n = pending, Folding.isWordScalar(n), !Folding.isIdeographic(n) {
                // "l'ingénieur" is "ingénieur" after an article; "o'brien" and "don't" are one word.
                if elisions.contains(String(word)) { word = String.UnicodeScalarView() } else { word.append(c) }
            } else {
                flush()
                previousWasWord = false
            }
        }
        flush()
        return out
    }

    static func stem(_ w: String) -> String {
        var s = Array(w.unicodeScalars)
        func ends(_ suffix: String) -> Bool {
            let x = Array(suffix.unicodeScalars)
            return s.count > x.count && Array(s.suffix(x.count)) == x
        }
        if s.count > 4, ends("ies") { s.removeLast(3); s.append("y") }
        else if s.count > 4, ends("sses") { s.removeLast(2) }
        else if s.count > 3, ends("es"), let p = s.dropLast(2).last, "sxz".unicodeScalars.contains(p) || ends("ches") || ends("shes") {
            s.removeLast(2)
        }
        else if s.count > 3, ends("s"), !ends("ss"), !ends("us"), !ends("is") { s.removeLast() }
        if s.count > 5, ends("ing") { s.removeLast(3); undouble(&s) }
        else if s.count > 4, ends("ed") { s.removeLast(2); undouble(&s) }
        if s.count > 4, ends("e") { s.removeLast() }
        // British and American verb endings and -y nouns meet: apologise/apologize/apology → apolog.
        if s.count > 5, ends("is") || ends("iz") { s.removeLast(2) }
        else if s.count > 4, ends("y") { s.removeLast() }
        return String(String.UnicodeScalarView(s))
    }

    private static func undouble(_ s: inout [Unicode.Scalar]) {
        guard s.count >= 3, let last = s.last, s[s.count - 2] == last, !"lsz".unicodeScalars.contains(last),
              last.properties.isAlphabetic, !"aeiou".unicodeScalars.contains(last) else { return }
        s.removeLast()
    }
}

extension String {
    func replacingApostrophes() -> String {
        guard unicodeScalars.contains("'") else { return self }
        return String(String.UnicodeScalarView(unicodeScalars.filter { $0 != "'" }))
    }
}
