import Foundation
import ParlanceDocuments
import ParlanceProtocol

/// Does the document answer the question? A small model answers almost anything it is asked,
/// and its own yes/no judgement is no better than chance (measured: AUC 0.41 on the labeled
/// set), so the evidence is read from the text: the question's *focus* (its content words
/// without the words that only say what is asked: "how much", "cost", "name") must meet,
/// in one passage (a segment or two consecutive ones), an answer of the *type* the question
/// asks for: an amount for "how much does it cost", a number next to the unit for "how
/// many tonnes", a date for "when", a name for "who" or "what is the name of". A passage
/// that talks about the thing and never gives what is asked is a near miss, not an answer.
///
/// `probability` turns the evidence and the model's own answer into a calibrated
/// probability that the document answers the question: a logistic model fitted on the
/// labeled set's tuning part (`eval/fit_abstention.py`), one profile per model file
/// (`AnswerabilityProfile`, from `eval/fitted/answerability.json`), over the
/// features that fit chooses by cross-validated log loss (now the evidence's focus, sentence
/// and missing type alone: the model's answer weighs nothing, so where the evidence says no,
/// `ceiling`, the model is not asked).
public enum Answerability {
    public typealias AnswerType = AskStream.AnswerType
    /// What `probability` reads: the evidence, and what the model's answer did (the result's `answerability`).
    public typealias Features = AskStream.Answerability

    public struct Evidence: Sendable, Hashable {
        /// What the question asks for, when its wording says.
        public var expects: AnswerType?
        /// Best share of the focus words found in one passage.
        public var focusCoverage: Double
        /// Best share of the focus words in a passage that also holds an answer of the
        /// expected type (`focusCoverage` when the question expects no type).
        public var typedCoverage: Double
        /// Best share of the focus words in a sentence holding an answer of the expected type
        /// (any sentence when the question expects none) together with the sentence before it
        /// and its speaker (`sentenceCoverage`).
        public var sentenceCoverage = 0.0
        /// The segment ids of that passage (the extractive answer's candidates).
        public var passage: [Int]
        /// The segments of `passage` that hold the answer on their own, what the extractive
        /// answer quotes: of a pair, only the one with the figure, not the line before it
        /// that named the subject; the whole passage when the answer straddles the two.
        public var quote: [Int] = []
        /// The question names what it asks the value of ("price", the unit of "how many"),
        /// passages hold an answer of the expected type, and none of them in that relation
        /// (the head noun or a form of it in the answer's sentence): a near miss.
        public var relationMissing = false
    }

    // MARK: Evidence

    /// `language` is the document's (a BCP 47 tag or its language): outside English a focus
    /// word meets its other forms by their shared root ("abrió", "abrimos", "abristeis").
    /// `openings`: each transcript's first segment (one per document asked about), which the
    /// best sentence's segment never is (a welcome names the topic; the extractive answer never quotes it).
    public static func evidence(question: String, segments: [Segment], language: String = "en", openings: Set<Int> = []) -> Evidence {
        let expects = AnswerType.asked(by: question)
        let focus = focusTerms(question)
        let forms = FocusForms(language: language)
        let questionWords = Set(Lexicon.words(question, .normalized))
        // A sentence-initial word is a name when it is someone's name elsewhere in the passages
        // shown: a speaker, or a word written capitalised inside a sentence ("Ines is on call").
        let names = Set(segments.compactMap { $0.speaker.map(Facts.nameKey) } + segments.flatMap { Facts.capitalisedMidSentence($0.text) })
        let units = expects == .quantity ? unitTerms(question) : []
        // Each segment's terms and typed answer are found once; a window of two merges them.
        let terms = segments.map { Set(Lexicon.words($0.text + " " + ($0.speaker ?? ""), .terms)) }
        let holding = { (type: AnswerType, text: String) in holds(type, in: text, units: units, questionWords: questionWords, names: names) }
        let typedIn = segments.map { s in expects.map { holding($0, s.text) } ?? true }
        var bestFocus = 0.0
        var bestTyped = (coverage: 0.0, ids: [Int]())
        // The same, among the passages where the answer is in the asked relation (`related`).
        let head = headNoun(question, expects: expects)
        var bestRelated = (coverage: 0.0, ids: [Int]())
        for i in segments.indices {
            var windows = [[i]]
            if i + 1 < segments.count, segments[i + 1].id == segments[i].id + 1 { windows.append([i, i + 1]) }
            for w in windows {
                let cov = forms.share(of: focus, in: w.reduce(into: Set<String>()) { $0.formUnion(terms[$1]) })
                bestFocus = max(bestFocus, cov)
                // A typed answer may straddle the two segments ("it cost" | "£48,000"): a pair is read whole.
                let typed = w.count == 1 ? typedIn[i]
                    : typedIn[i] || typedIn[i + 1] || expects.map { holding($0, segments[i].text + " " + segments[i + 1].text) } ?? true
                // A single segment is preferred to a pair at equal coverage (the tighter quote).
                if typed, cov > bestTyped.coverage || (cov == bestTyped.coverage && bestTyped.ids.count > w.count) {
                    bestTyped = (cov, w.map { segments[$0].id })
                }
                if typed, let head, let type = expects, cov > 0,
                   cov > bestRelated.coverage || (cov == bestRelated.coverage && bestRelated.ids.count > w.count),
                   related(type, head: head, in: w.map { segments[$0].text }.joined(separator: " "), holds: holding) {
                    bestRelated = (cov, w.map { segments[$0].id })
                }
            }
        }
        // The passage quoted is one where the answer stands in the asked relation when there is
        // one ("the price" of "what price did they settle on", not the launch budget beside it),
        // else the segment whose sentence states an answer of the kind asked beside the most of
        // the question's words (not the segment where they are merely near it), else the passage
        // with the most; the coverages, which the probability reads, are unchanged.
        let sentence = bestSentence(focus: focus, expects: expects, sentences: sentencesInContext(segments), forms: forms, openings: openings,
                                    holds: holding)
        let passage = !bestRelated.ids.isEmpty ? bestRelated.ids : sentence.segment.map { [$0] } ?? bestTyped.ids
        let index = Dictionary(segments.indices.map { (segments[$0].id, $0) }, uniquingKeysWith: { a, _ in a })
        let quoted = passage.filter { index[$0].map { typedIn[$0] } ?? false }
        return Evidence(expects: expects, focusCoverage: bestFocus, typedCoverage: bestTyped.coverage, sentenceCoverage: sentence.coverage,
                        passage: passage, quote: quoted.isEmpty ? passage : quoted,
                        relationMissing: head != nil && !bestTyped.ids.isEmpty && bestRelated.ids.isEmpty)
    }

    /// The noun the question asks the value of: "price" in "what price did they settle on",
    /// "budget" in "what is the budget for", the unit of "how many downloads"; nil when the
    /// question names none of these.
    static func headNoun(_ question: String, expects: AnswerType?) -> String? {
        guard let expects, expects == .amount || expects == .quantity else { return nil }
        if expects == .quantity { return unitTerm(question).flatMap { $0 == durationUnit ? nil : $0 } }
        let nouns = Set(["price", "budget", "fee", "salary", "charge", "cost", "rent", "fine", "deposit", "insurance", "fare", "wage", "bill",
                         "precio", "presupuesto", "prix", "budget"].flatMap { Lexicon.words($0, .terms) })
        return Lexicon.words(question, .terms).first { nouns.contains($0) }
    }

    /// Whether `text` holds an answer of `type` in a sentence that also names `head` (or a
    /// word form of it).
    static func related(_ type: AnswerType, head: String, in text: String, holds: (AnswerType, String) -> Bool) -> Bool {
        Sentences.split(text).contains { sentence in
            Lexicon.words(sentence, .terms).contains { sameWord($0, head) || type == .quantity && countNouns.contains($0) } && holds(type, sentence)
        }
    }

    /// Does `text` hold an answer of this type that the question does not already give?
    /// `names` (name keys) are names wherever they stand, a sentence's first word included.
    /// `units`: what a quantity counts (any number counts when empty).
    static func holds(_ type: AnswerType, in text: String, units: [String], questionWords: Set<String>, names: Set<String> = []) -> Bool {
        let numbers = numberSpans(text).filter { !questionWords.contains($0.key) && !questionWords.contains(TextChecks.normalized($0.span)) }
        switch type {
        case .amount:
            let ws = Lexicon.words(text, .normalized)
            return numbers.contains { n in
                n.span.contains { "£$€¥%".contains($0) } || n.span.lowercased().hasSuffix("p") || n.span.lowercased().hasSuffix("k")
            } || ws.indices.contains { i in
                numberSpans(ws[i]).contains { !questionWords.contains($0.key) }
                    && ws[(i + 1)..<min(ws.count, i + 3)].contains { currencyWords.contains($0) }
            } || ws.contains { freeWords.contains($0) }
        case .quantity:
            guard !units.isEmpty else { return !numbers.isEmpty }
            // "how many colonies": a number within three words before the unit, or before a
            // word that counts whatever is discussed ("2,400 of the 2,500 units"); a number
            // that is part of a name ("the Aero 2 headphones") counts nothing.
            let ws = Lexicon.words(withoutNameNumbers(text), .normalized)
            return ws.indices.contains { i in
                (units.contains { sameWord(stemmed(ws[i]), $0) || $0 == durationUnit && durationWords.contains(ws[i]) } || countNouns.contains(stemmed(ws[i])))
                    && ws[max(0, i - 3)..<i].contains { w in numberSpans(w).contains { !questionWords.contains($0.key) } || w == "dozen" }
            }
        case .time:
            return AnswerType.time.isGiven(in: text) && !numbers.isEmpty
                || !Set(Lexicon.words(text, .normalized)).subtracting(questionWords).isDisjoint(with: Lexicon.timeWords)
        case .name:
            return Facts.capitalisedWords(text).contains { w, start in
                (!start || names.contains(Facts.nameKey(w))) && !questionWords.contains(Facts.nameKey(w)) && !Facts.notNames.contains(Facts.nameKey(w))
                    && !Lexicon.timeWords.contains(TextChecks.normalized(w))
            }
        }
    }

    /// The numbers of `text` as the evidence reads them: `Facts.numberSpans`, and the Spanish
    /// and French number words it leaves out (teens, tens, "mil", "mille") and French
    /// hyphenated numbers ("dix-neuf" 19, "vingt-et-un", "quatre-vingt-dix"). Facts keeps
    /// to its own list: its numbers constrain decoding, where "mil" begins "million".
    static func numberSpans(_ text: String) -> [(span: String, key: String)] {
        Facts.numberSpans(text) + Lexicon.words(text).compactMap { w in
            let l = w.lowercased()
            return (moreNumberWords[l] ?? compoundNumber(l)).map { (w, $0) }
        }
    }

    static let moreNumberWords: [String: String] = [
        "doce": "12", "trece": "13", "catorce": "14", "quince": "15", "sesenta": "60", "setenta": "70", "ochenta": "80", "noventa": "90",
        "mil": "1000", "onze": "11", "douze": "12", "treize": "13", "quatorze": "14", "quinze": "15", "soixante": "60", "mille": "1000",
    ]

    /// A number written as hyphenated number words in French ("dix-neuf", "quarante-deux",
    /// "vingt-et-un", "quatre-vingt-dix"): its value; nil for any other word.
    static func compoundNumber(_ w: String) -> String? {
        guard w.contains("-") else { return nil }
        let parts = w.split(separator: "-").map(String.init).filter { $0 != "et" }
        var values: [Int] = []
        for p in parts {
            guard let v = (Facts.numberWords[p] ?? moreNumberWords[p]).flatMap(Int.init) ?? (p == "vingts" ? 20 : p == "un" || p == "une" ? 1 : nil) else { return nil }
            values.append(v)
        }
        guard values.count >= 2 else { return nil }
        // "quatre-vingt(s)": four twenties.
        if values[0] == 4, values[1] == 20 { return String(80 + values.dropFirst(2).reduce(0, +)) }
        return String(values.reduce(0, +))
    }

    /// Stems of the nouns that count whatever is being discussed: "units" of the headphones.
    static let countNouns: Set<String> = Set(["units", "pieces", "items", "copies", "unidades", "piezas", "unités", "pièces"].flatMap { Lexicon.words($0, .terms) })

    /// `text` without the numbers that follow a capitalised word inside a sentence: a model or
    /// a name ("the Aero 2 headphones", "Route 9"), not a count.
    static func withoutNameNumbers(_ text: String) -> String {
        var out: [Substring] = []
        let tokens = text.split(separator: " ", omittingEmptySubsequences: false)
        for (i, t) in tokens.enumerated() {
            let isNumber = !t.isEmpty && t.allSatisfy { $0.isNumber || ",.;:!?".contains($0) } && t.first!.isNumber
            if isNumber, i >= 2, let name = tokens[i - 1].first, name.isUppercase,
               let before = tokens[i - 2].last, !".!?:\"“".contains(before) {
                continue
            }
            out.append(t)
        }
        return out.joined(separator: " ")
    }

    /// The question's content words without the words that only say what kind of answer is wanted.
    public static func focusTerms(_ question: String) -> Set<String> {
        Set(Lexicon.words(question, .terms)).subtracting(cueTerms)
    }

    /// "how many tonnes of salt" → the stem of "tonnes" (the first word after "how many":
    /// `unitTerms` adds the next); "combien de temps", "how long did it take" → `durationUnit`.
    static func unitTerm(_ question: String) -> String? {
        let ws = Lexicon.words(question, .normalized)
        // "How long did it take" asks for a duration; "how long is the bridge" for a length.
        if let i = ws.firstIndex(of: "long"), i > 0, ws[i - 1] == "how",
           i + 1 < ws.count && ["did", "does", "do", "will", "has", "have", "had"].contains(ws[i + 1]) || ws.contains("take") || ws.contains("took") {
            return durationUnit
        }
        for (i, w) in ws.enumerated() where ["many", "cuantos", "cuantas", "cuanto", "combien"].contains(w) && i + 1 < ws.count {
            var j = i + 1
            if ws[j] == "de" || ws[j] == "d", j + 1 < ws.count { j += 1 }
            if ["temps", "tiempo"].contains(ws[j]) { return durationUnit }
            return stemmed(ws[j])
        }
        return nil
    }

    /// What a "how many" question counts: its unit (`unitTerm`), and in English the word after
    /// it when that is not a stopword ("how many support tickets": "support", "tickets").
    static func unitTerms(_ question: String) -> [String] {
        guard let unit = unitTerm(question) else { return [] }
        let ws = Lexicon.words(question, .normalized)
        guard let i = ws.firstIndex(of: "many"), i + 2 < ws.count, !Lexicon.stopwords.contains(ws[i + 2]) else { return [unit] }
        return [unit, stemmed(ws[i + 2])]
    }

    /// The unit of a question asking how long something took: any word of `durationWords`.
    static let durationUnit = "(duration)"
    static let durationWords: Set<String> = [
        "years", "year", "months", "month", "weeks", "week", "days", "day", "hours", "hour", "minutes", "minute", "decades",
        "anos", "ano", "meses", "mes", "semanas", "semana", "dias", "dia", "horas", "hora", "minutos",
        "ans", "an", "annees", "annee", "mois", "semaines", "semaine", "jours", "jour", "heures", "heure",
    ]

    static func stemmed(_ w: String) -> String { Lexicon.words(w, .terms).first ?? w }

    /// Whether two stems are forms of one word: the same, or one the start of the other and at
    /// least four letters long ("roof" of "rooftops", "insur" of "insurer"; not "fee" of "feedback").
    static func sameWord(_ a: String, _ b: String) -> Bool {
        a == b || min(a.count, b.count) >= 4 && (a.hasPrefix(b) || b.hasPrefix(a))
    }

    static let currencyWords: Set<String> = [
        "pounds", "pound", "euros", "euro", "dollars", "dollar", "pence", "cents", "quid", "grand", "libras", "dolares", "francs", "crowns", "kroner", "krone",
        "centimos", "pesetas", "pesos", "sous", "sou", "centimes", "livres", "franc",
    ]
    static let freeWords: Set<String> = ["free", "gratis", "gratuit", "gratuite", "nothing"]

    /// Stems of the words that say what is asked, not about what.
    static let cueTerms: Set<String> = Set(([
        "much", "many", "cost", "costs", "price", "budget", "fee", "salary", "charge", "charges", "pay", "paid", "spend", "spent", "name", "called",
        "number", "phone", "tracking", "reference", "year", "date", "time", "day", "long", "often", "exactly", "each", "per", "total", "amount",
        "cuanto", "cuantos", "cuantas", "cuesta", "costado", "precio", "nombre", "llama", "combien", "coute", "coutent", "prix", "nom", "appelait",
        "quel", "quelle", "quels", "quelles", "sont", "est", "fecha", "hora", "dia", "año", "heure", "jour", "année", "tarif",
    ] as [String]).flatMap { Lexicon.words($0, .terms) })

    // MARK: Calibrated probability

    /// The probability that the document answers the question, by `profile`'s weights.
    public static func probability(_ f: Features, _ profile: AnswerabilityProfile = .fallback) -> Double {
        1 / (1 + exp(-profile.logit(f)))
    }

    /// The highest probability an answer of the model could reach on this evidence: `f` with
    /// what the model's answer sets (passed, no answer, support) each the way its weight
    /// raises the probability. Below the profile's threshold no answer the model writes is returned.
    public static func ceiling(_ f: Features, _ profile: AnswerabilityProfile = .fallback) -> Double {
        var best = f
        best.modelPassed = profile.weight("modelPassed") > 0
        best.modelSaysNotFound = profile.weight("modelSaysNotFound") > 0
        best.answerSupport = profile.weight("answerSupport") > 0 ? 1 : 0
        return probability(best, profile)
    }

    /// Share of the answer's content terms that are not the question's and occur in
    /// `segments` (the feature `answerSupport`).
    public static func answerTermsFound(answer: String, question: String, segments: [Segment]) -> Double {
        let own = Set(Lexicon.words(answer, .terms)).subtracting(Lexicon.words(question, .terms))
        guard !own.isEmpty else { return 0 }
        let there = Set(segments.flatMap { Lexicon.words($0.text + " " + ($0.speaker ?? ""), .terms) })
        return Double(own.intersection(there).count) / Double(own.count)
    }
}
