import ParlanceProtocol

/// What a question asks for, read from its wording (English, Spanish, French), and whether a
/// text gives it. Two readings, for two uses:
/// - `asked(by:)`, the evidence's: an amount ("how much does it cost"), a name ("who",
///   "which company"), a time ("when") or a quantity ("how many tonnes", "what number");
/// - `figure(askedBy:)`, the answer check's, coarser: any figure wanted, a quantity ("how
///   much", "how long", "how often": an amount is a quantity here) or a time; nil for names
///   (a "when" in a question that asks who is not a time asked for).
extension AskStream.AnswerType {
    /// The type the question's wording asks for (nil: it does not say).
    public static func asked(by question: String) -> Self? {
        let q = cueText(question)
        if has(q, amountCues) { return .amount }
        if has(q, nameCues) { return .name }
        switch figure(askedBy: question) {
        case .time?: return .time
        case .quantity?: return .quantity
        default: return has(q, numberCues) ? .quantity : nil
        }
    }

    /// The figure the question wants: `.quantity` (answered by a number) or `.time` (a
    /// number, a month, a weekday or a time word); nil when it wants none.
    public static func figure(askedBy question: String) -> Self? {
        let q = cueText(question)
        if has(q, quantityCues) { return .quantity }
        // "Who cooked when it opened?" asks for a name; the time only places it.
        if asksWhen(q), !has(q, nameCues) { return .time }
        return nil
    }

    /// The question asks for a time: a time cue ("what year", "since when"), or "when" as its
    /// question word. A "when" after the question word is a clause that places something:
    /// "What happened when Jutta retested the more mature models?" asks what happened (its
    /// extractive answer quoted an unrelated line as a time's passage, and passed).
    private static func asksWhen(_ q: String) -> Bool {
        if has(q, timeCues.filter { !clauseWords.contains($0) }) { return true }
        return clauseWords.contains { q.hasPrefix(" \($0) ") }
    }

    /// Time cues that are also conjunctions: a time is asked only when the question opens with one.
    static let clauseWords: Set<String> = ["when", "cuando", "quand"]

    /// Whether `answer` gives a figure of this type: any number; for a time, also a time
    /// word ("March", "tomorrow", "lundi").
    public func isGiven(in answer: String) -> Bool {
        if !Facts.numberSpans(answer).isEmpty { return true }
        guard self == .time else { return false }
        return !Set(Lexicon.words(answer, .normalized)).isDisjoint(with: Lexicon.timeWords)
    }

    /// The question normalised, with a space each side, for whole-word cue matching.
    private static func cueText(_ question: String) -> String { " " + TextChecks.normalized(question) + " " }
    private static func has(_ q: String, _ cues: [String]) -> Bool { cues.contains { q.contains(" \($0) ") } }

    /// Money words. "How much" alone is not one: "how much did the colony make" asks for
    /// kilos; it asks for money beside one of these ("how much does it cost", "sell for").
    static let amountCues = [
        "sell for", "sells for", "sold for", "selling for", "cost", "costs", "costed", "price", "prices", "priced", "budget", "fee", "fees", "salary", "charge", "charges", "charged", "pay", "paid",
        "spend", "spent", "worth", "suing for", "sued for", "sue for", "sues for", "fined",
        "cuanto cuesta", "cuanto costo", "cuanto ha costado", "cuanto cuestan", "precio", "presupuesto", "coste", "costo",
        "combien coute", "combien a coute", "combien coutent", "prix", "cout", "budget", "payer", "payait", "coutait", "pagar", "pagaba", "pagan",
    ]
    static let nameCues = [
        "who", "whom", "whose", "name of", "the name", "called", "which company", "which contractor", "which supplier", "which vendor",
        "which podcasts", "which journalists", "which practices", "which two", "which three", "which bakery", "quien", "quienes", "como se llama",
        "nombre", "qui", "comment s appelait", "comment s appelle", "le nom", "quels sont les", "quelles sont les",
        // A place is a name: "Which country is Reda from?" ("Where is Reda from?" got "Reda is
        // from an unspecified location.", the 1.5B, passed: `AnswerVerifier.notFoundPhrases`).
        "which country", "which city", "what country", "what city",
    ]
    static let numberCues = ["phone number", "tracking number", "reference number", "number of", "what number", "how many"]
    static let quantityCues = [
        "how much", "how many", "how long", "how old", "how far", "how big", "how large", "how tall", "what price", "what is the price",
        "what percentage", "what share", "how often", "what size", "what number", "how heavy",
        "cuanto", "cuantos", "cuantas", "cuanta", "que precio", "combien", "quel prix", "quel est le prix", "quel pourcentage",
    ]
    static let timeCues = [
        "when", "what year", "which year", "in which year", "what date", "what time", "since when", "until when", "by when", "cuando", "desde cuando",
        "hasta cuando", "que ano", "en que ano",
        "en que fecha", "que fecha", "a que hora", "quand", "quelle annee", "en quelle annee", "depuis quand", "quelle date",
    ]
}
