/// The words that mark formal and casual writing in the languages other than English that
/// Parlance rewrites: above all the address (usted / tú, vous / tu, Sie / du, Lei / tu,
/// o senhor / tu), then greetings, sign-offs and the vocabulary of letters and of chat.
/// English's markers (contractions, "you", slang) say nothing about these languages: a
/// formal Spanish letter scored 0.18 by them, below the casual one it was asked to differ
/// from (eval, 2026-12-01).
public struct FormalityMarkers: Sendable {
    /// Lower-case words of formal writing.
    public let formal: Set<String>
    /// Lower-case words of casual writing, the informal address first among them.
    public let casual: Set<String>
    /// Words formal only as written, with a capital, where they do not open a sentence
    /// (German "Sie", "Ihnen"; Italian "Lei"): lower case they are "she", "they", "her".
    public let capitalizedFormal: Set<String>
    /// Word beginnings of casual writing ("t'" of French "t'inquiète").
    public let casualPrefixes: [String]

    /// The markers of `language` (BCP-47; its first subtag is what counts), nil for
    /// English (its own markers are `Formality`'s) and for languages without a table.
    public static func of(_ language: String) -> FormalityMarkers? {
        let code = language.split(separator: "-").first.map { $0.lowercased() } ?? language.lowercased()
        return table[code]
    }

    static func words(_ s: String) -> Set<String> { Set(s.split(separator: " ").map(String.init)) }

    static let table: [String: FormalityMarkers] = [
        "es": FormalityMarkers(
            formal: words("""
                usted ustedes estimado estimada estimados estimadas atentamente cordialmente señor señora señores sírvase \
                agradeceríamos agradecemos agradecería rogamos ruego solicitamos solicitar disculpe disculpen lamentamos \
                informarle comunicarle indicarle notificarle asimismo obstante consiguiente mediante quisiera quisiéramos \
                dicho dicha adjunto adjunta
                """),
            casual: words("""
                tú tu tus te ti contigo hola oye vale genial guay chicos chicas porfa vaya jaja ok okey besos abrazo \
                cuídate perdona mira venga súper chao chau tranqui
                """),
            capitalizedFormal: [], casualPrefixes: []),
        "fr": FormalityMarkers(
            formal: words("""
                vous votre vos madame monsieur mesdames messieurs cordialement veuillez prions salutations sincèrement \
                respectueusement distinguées agréer souhaiterions regrettons néanmoins toutefois conséquent afin ci-joint \
                concernant informer
                """),
            casual: words("tu te toi ton ta tes salut coucou super cool ouais bises bisous sympa génial ok truc bref hé hey"),
            capitalizedFormal: [], casualPrefixes: ["t'", "t’"]),
        "de": FormalityMarkers(
            formal: words("""
                geehrte geehrter geehrten freundlichen grüßen hochachtungsvoll mitteilen bezüglich hiermit gemäß \
                diesbezüglich bedauern bitten möchten
                """),
            casual: words("""
                du dich dir dein deine deinen deinem deiner euch euer eure hallo hey hi tschüss ciao servus moin lg super \
                cool klar okay ok echt mega krass
                """),
            capitalizedFormal: ["Sie", "Ihnen", "Ihr", "Ihre", "Ihrer", "Ihrem", "Ihren", "Ihres"], casualPrefixes: []),
        "it": FormalityMarkers(
            formal: words("""
                gentile gentili egregio egregia cordiali distinti saluti porgo comunichiamo informiamo desideriamo \
                preghiamo cortesemente cortese spettabile pertanto tuttavia
                """),
            casual: words("tu ti te tuo tua tuoi tue ciao ehi dai ragazzi raga super figo ok okay vabbè boh bacioni baci"),
            capitalizedFormal: ["Lei", "Sua", "Suo", "Suoi", "Sue"], casualPrefixes: []),
        "pt": FormalityMarkers(
            formal: words("""
                senhor senhora senhores senhoras prezado prezada prezados prezadas atenciosamente cordialmente informamos \
                solicitamos gostaríamos agradecemos lamentamos vossa ilustríssimo contudo todavia
                """),
            casual: words("tu te ti contigo teu tua teus tuas oi valeu beijos beijo abraço galera tá né pra legal beleza tchau"),
            capitalizedFormal: [], casualPrefixes: []),
        // Norwegian (Bokmål): "du" is everyone's address, so it marks nothing; the formal
        // "De"/"Dem"/"Deres" is capitalised, and letters' words and chat words carry the register.
        "nb": FormalityMarkers(
            formal: words("""
                vennlig vennligst hilsen ærbødigst herved vedrørende angående henvendelse anmode anmoder beklager informere \
                opplyse vedlagt imidlertid følgelig
                """),
            casual: words("hei heisann hallo halla kult digg fett ass liksom lissom okei ok jepp snakkes klem gutta"),
            capitalizedFormal: ["De", "Dem", "Deres"], casualPrefixes: []),
    ]

    /// Whether `word` (as written) is one of casual writing.
    public func isCasual(_ word: String) -> Bool {
        let lower = word.lowercased()
        return casual.contains(lower) || casualPrefixes.contains { lower.hasPrefix($0) }
    }

    /// How many of `words` (as written) mark each register; `sentenceStarts` are the
    /// indices of words that open a sentence (a capital there marks nothing).
    func count(_ words: [String], sentenceStarts: Set<Int>) -> (formal: Int, casual: Int) {
        var f = 0, c = 0
        for (i, w) in words.enumerated() {
            let lower = w.lowercased()
            if formal.contains(lower) || (!sentenceStarts.contains(i) && capitalizedFormal.contains(w)) { f += 1 }
            if isCasual(w) { c += 1 }
        }
        return (f, c)
    }
}
