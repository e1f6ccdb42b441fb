import Foundation
import ParlanceDocuments

/// The facts of a text that a faithful rewrite or answer must not change: numbers and
/// amounts (compared by value: "1,150" = "1150", "three" = "3"), and names, months and
/// weekdays (capitalised words that are not only capitalised because they start a sentence).
/// Compared exactly, not by overlap: "£1,150" → "£1,200" and "Priyanka" → "Priya" are misses.
public enum Facts {
    public struct Fact: Hashable, Sendable {
        public enum Kind: String, Sendable { case number, name }
        public var kind: Kind
        /// As written in the text ("£1,150", "Priyanka").
        public var text: String
        /// What is compared: the value without separators, or the folded name.
        public var key: String
        /// A number's unit where it stands (`FactUnits`): "£" for "£2,750", "#" for "#48213",
        /// "am" for "7am"; nil for a bare number and a name.
        public var unit: String? = nil
    }

    /// The facts of `text`, in order of first appearance, each once.
    public static func extract(_ text: String) -> [Fact] {
        var out: [Fact] = []
        var seen = Set<String>()
        let measured = measuredNumbers(text)
        for (span, key) in numberSpans(text) where seen.insert("n" + key).inserted {
            out.append(Fact(kind: .number, text: span, key: key, unit: measured.first { $0.key == key }?.unit))
        }
        let midSentence = capitalisedMidSentence(text)
        for (w, sentenceStart) in capitalisedWords(text) {
            let key = nameKey(w)
            guard !notNames.contains(key), w.count >= 2 else { continue }
            // Sentence-initial: capitalised anyway, so a name only when it is capitalised
            // mid-sentence elsewhere, or starts a run of capitalised words ("Canal House"),
            // or is not a common opening word and is followed by a verb-like word (is, will, said…),
            // or is a weekday or a month ("Tuesdays are our in-office day").
            if sentenceStart && !midSentence.contains(key) && !startsName(w, in: text) && !isCalendar(key) { continue }
            if seen.insert("w" + key).inserted { out.append(Fact(kind: .name, text: w, key: key)) }
        }
        // Weekdays and months are facts however they are written ("moving it to friday"; Spanish
        // and French write them in lower case), but for the words that are also verbs.
        for w in Lexicon.words(text) where w.first?.isLowercase == true {
            let key = nameKey(w)
            if lowercaseCalendar.contains(key), seen.insert("w" + key).inserted { out.append(Fact(kind: .name, text: w, key: key)) }
        }
        return out
    }

    /// Who a greeting may address without naming anyone ("Dear Team", "Hi all"): not a name.
    static let addressees: Set<String> = ["team", "all", "everyone", "colleagues", "residents", "customers", "sir", "madam", "parents", "there"]

    /// Month and weekday names that are facts in lower case too (not "may", "march", "mars").
    static let lowercaseCalendar = Set(Lexicon.months.values.joined()).union(Lexicon.weekdays.values.joined()).subtracting(["may", "march", "mars"])

    /// The spans of `text` an output must copy letter for letter once it begins them
    /// (`FactGuard`): its facts as written, and every word that mixes digits with letters
    /// or signs (an identifier "1Z999AA10123456784", a number with its unit "3pm", "10kg").
    public static func exactSpans(_ text: String) -> [String] {
        var out = extract(text).map(\.text)
        let edges = CharacterSet(charactersIn: ".,;:!?()[]{}\"'«»“”‘’")
        for word in text.split(whereSeparator: \.isWhitespace) {
            let w = String(word).trimmingCharacters(in: edges)
            guard w.count >= 3, w.contains(where: \.isNumber), w.contains(where: { !$0.isNumber }) else { continue }
            if !out.contains(w) { out.append(w) }
        }
        return out
    }

    /// Weekdays and months, in the singular or the plural, but for "May", "March" and "Mars".
    static func isCalendar(_ key: String) -> Bool {
        lowercaseCalendar.contains(key) || weekdayOfPlural(key) != nil
    }

    /// The facts that `candidate` does not contain. A number with a unit is contained only
    /// with that unit (`FactUnits`).
    public static func missing(_ facts: [Fact], in candidate: String) -> [Fact] {
        let numbersThere = Set(numberSpans(candidate).map(\.key))
        let measured = facts.contains { $0.unit != nil } ? measuredNumbers(candidate) : []
        let namesThere = nameKeys(candidate)
        return facts.filter { f in
            switch f.kind {
            case .number:
                if let unit = f.unit { !measured.contains { $0.key == f.key && $0.unit == unit } } else { !numbersThere.contains(f.key) }
            // A weekday the source writes in the plural is kept by the weekday.
            case .name: !namesThere.contains(f.key) && !(weekdayOfPlural(f.key).map(namesThere.contains) ?? false)
            }
        }
    }

    /// The facts of `candidate` that occur nowhere in `sources` (an answer's invented
    /// figures and names). A name is supported when it occurs in the sources in any case.
    public static func unsupported(in candidate: String, by sources: [String]) -> [Fact] {
        let all = sources.joined(separator: "\n")
        let numbersThere = Set(numberSpans(all).map(\.key))
        let wordsThere = nameKeys(all)
        return extract(candidate).filter { f in
            switch f.kind {
            case .number: !numbersThere.contains(f.key)
            case .name: !wordsThere.contains(f.key)
            }
        }
    }

    nonisolated(unsafe) static let numberPattern = try! NSRegularExpression(
        pattern: #"[£$€¥]?\d{1,3}(?:,\d{3})+(?:\.\d+)?%?|[£$€¥]?\d+(?:[.,]\d+)?%?"#)

    /// Facts of `examples` (a prompt's worked examples) that `candidate` contains and
    /// `original` does not: the output copied the example. Names compare case-sensitively
    /// here, and only where the candidate writes them as names, so neither the verb "may" nor
    /// a sentence opening "May you find a way" is the month "May".
    public static func borrowed(from examples: [String], in candidate: String, original: String) -> [Fact] {
        // A name as `extract` finds them, or any word not opening a sentence (or a line).
        let names = Set(extract(candidate).filter { $0.kind == .name }.map(\.text))
            .union(candidate.split(separator: "\n").flatMap { Sentences.split(String($0)).flatMap { Lexicon.words($0).dropFirst() } })
        let numbersThere = Set(numberSpans(candidate).map(\.key))
        return extract(examples.joined(separator: "\n")).filter { f in
            let there = f.kind == .number ? numbersThere.contains(f.key) : names.contains(f.text)
            return there && !missing([f], in: original).isEmpty
        }
    }

    /// Numbers as written (with a currency sign or %) and their values: separators removed,
    /// decimals kept ("2.5"; "2,5" as written in French or Spanish), number words as digits.
    /// A percentage is its own value: "12%", "12 %" and "12 percent" are "12%", which neither
    /// "12" nor the "2" of "2pm" is ("the 2% drop" for "the 12% drop" is a fact changed).
    static func numberSpans(_ text: String) -> [(span: String, key: String)] {
        var out: [(String, String)] = []
        let ns = text as NSString
        for m in numberPattern.matches(in: text, range: NSRange(location: 0, length: ns.length)) {
            let span = ns.substring(with: m.range)
            var digits = span.filter { $0.isNumber || $0 == "." || $0 == "," }
            // "1,150" → 1150; "2,5" (a decimal comma) → 2.5
            if digits.contains(","), !digits.contains("."), digits.split(separator: ",").last?.count != 3 {
                digits = digits.replacingOccurrences(of: ",", with: ".")
            }
            let percent = span.hasSuffix("%") || isPercent(ns.substring(from: m.range.location + m.range.length))
            out.append((span, trimmed(digits.replacingOccurrences(of: ",", with: "")) + (percent ? "%" : "")))
        }
        for w in Lexicon.words(text) {
            if let n = numberWords[w.lowercased()] { out.append((w, n)) }
        }
        return out
    }

    /// What follows a number makes it a percentage: "%" after a space, or "percent", "per
    /// cent", "por ciento", "pour cent".
    static func isPercent(_ after: String) -> Bool {
        let rest = after.drop { $0 == " " || $0 == "\u{A0}" || $0 == "\u{202F}" }
        if rest.first == "%" { return true }
        let words = rest.prefix(12).lowercased().split(whereSeparator: { !$0.isLetter }).prefix(2).map(String.init)
        return words.first == "percent" || words.count == 2 && ["per", "por", "pour"].contains(words[0]) && ["cent", "ciento"].contains(words[1])
    }

    /// "07" = "7", "2.50" = "2.5".
    static func trimmed(_ n: String) -> String {
        var s = n
        if s.contains(".") {
            while s.hasSuffix("0") { s.removeLast() }
            if s.hasSuffix(".") { s.removeLast() }
        }
        while s.count > 1, s.hasPrefix("0"), !s.hasPrefix("0.") { s.removeFirst() }
        return s
    }

    /// Capitalised words and whether each starts a sentence (or a line).
    static func capitalisedWords(_ text: String) -> [(String, Bool)] {
        var out: [(String, Bool)] = []
        for line in text.split(whereSeparator: \.isNewline) {
            var sentenceStart = true
            var previous = ""
            for t in WordDiff.tokens(String(line)) {
                guard t.isWord else {
                    // The full stop of a title ("Dr. Okafor") ends no sentence.
                    let titleStop = titles.contains(previous) && t.text.trimmingCharacters(in: .whitespaces) == "."
                    if t.text.contains(where: { ".!?:;\"“(¿¡".contains($0) }), !titleStop { sentenceStart = true }
                    continue
                }
                previous = t.text
                // Contractions ("We're", "Don't") are not names; a possessive ("Ana's") is.
                let apostrophe = t.text.contains { $0 == "'" || $0 == "\u{2019}" }
                let possessive = t.text.hasSuffix("'s") || t.text.hasSuffix("\u{2019}s")
                if let f = t.text.first, f.isUppercase, !t.text.contains(where: \.isNumber), !apostrophe || possessive {
                    out.append((t.text, sentenceStart))
                }
                sentenceStart = false
            }
        }
        return out
    }

    /// Titles written with a full stop before a name.
    static let titles: Set<String> = ["Dr", "Mr", "Mrs", "Ms", "Prof"]

    static func capitalisedMidSentence(_ text: String) -> Set<String> {
        Set(capitalisedWords(text).filter { !$0.1 }.map { nameKey($0.0) })
    }

    static func nameKey(_ w: String) -> String {
        var k = w.lowercased().replacingOccurrences(of: "\u{2019}", with: "'")
        if k.hasSuffix("'s") { k.removeLast(2) }
        return k.folding(options: [.diacriticInsensitive], locale: nil)
    }

    static let weekdays = Set(Lexicon.weekdays.values.joined())

    /// The weekday a plural names ("tuesdays" → "tuesday"); nil for any other key.
    static func weekdayOfPlural(_ key: String) -> String? {
        key.hasSuffix("s") && weekdays.contains(String(key.dropLast())) ? String(key.dropLast()) : nil
    }

    /// Name keys of `text`, with the weekday of each weekday in the plural: "Tuesdays are
    /// our in-office day" names Tuesday (not the other way: "Saturday 12 April" is not "Saturdays").
    static func nameKeys(_ text: String) -> Set<String> {
        let keys = Set(Lexicon.words(text).map(nameKey))
        return keys.union(keys.compactMap(weekdayOfPlural))
    }

    /// The weekdays and months (English, Spanish, French) that `text` does not name, as
    /// they are written: what a rewrite of it may not invent (`WordGuard`). "May", "March"
    /// and "Mars" stay writable: they are verbs too.
    public static func absentCalendarWords(_ text: String) -> [String] {
        let named = nameKeys(text)
        return (Array(Lexicon.weekdays.values.joined()) + Array(Lexicon.months.values.joined())).sorted()
            .filter { !named.contains($0) && !["may", "march", "mars"].contains($0) }
            .map { accented[$0] ?? $0 }
    }

    /// The calendar words whose folded form (`Lexicon`) is not how they are written.
    static let accented = ["miercoles": "miércoles", "sabado": "sábado", "fevrier": "février", "aout": "août", "decembre": "décembre"]

    /// Number words as values: English 2–99 (with compounds such as "twenty-three"),
    /// Spanish and French to ten and their tens.
    static let numberWords: [String: String] = {
        var m: [String: String] = ["twice": "2", "dozen": "12"]
        let units = ["two", "three", "four", "five", "six", "seven", "eight", "nine"]
        let teens = ["ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
        let tens = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
        for (i, u) in units.enumerated() { m[u] = String(i + 2) }
        for (i, t) in teens.enumerated() { m[t] = String(i + 10) }
        for (i, t) in tens.enumerated() {
            m[t] = String((i + 2) * 10)
            for (j, u) in (["one"] + units).enumerated() { m[t + "-" + u] = String((i + 2) * 10 + j + 1) }
        }
        for (w, n) in [("dos", 2), ("tres", 3), ("cuatro", 4), ("cinco", 5), ("seis", 6), ("siete", 7), ("ocho", 8), ("nueve", 9), ("diez", 10),
                       ("veinte", 20), ("treinta", 30), ("cuarenta", 40), ("cincuenta", 50), ("cien", 100),
                       ("deux", 2), ("trois", 3), ("quatre", 4), ("cinq", 5), ("sept", 7), ("huit", 8), ("neuf", 9), ("dix", 10),
                       ("vingt", 20), ("trente", 30), ("quarante", 40), ("cinquante", 50), ("cent", 100)] {
            m[w] = String(n)
        }
        return m
    }()

    /// A sentence-initial word that is a name by its neighbours: "Canal House", "Tom will",
    /// "Ana's". Common opening words ("The", "Unfortunately") never are.
    static func startsName(_ word: String, in text: String) -> Bool {
        let key = nameKey(word)
        if starters.contains(key) || key.hasSuffix("ly") || key.hasSuffix("mente") || key.hasSuffix("ing") { return false }
        if word.hasSuffix("'s") || word.hasSuffix("\u{2019}s") { return true }
        let tokens = Lexicon.words(text)
        for (i, t) in tokens.enumerated() where t == word && i + 1 < tokens.count {
            let next = tokens[i + 1]
            if next.first?.isUppercase ?? false, !starters.contains(nameKey(next)) { return true }
            if nameVerbs.contains(next.lowercased()) { return true }
        }
        return false
    }

    static let nameVerbs: Set<String> = ["will", "said", "says", "asked", "wants", "thinks", "called", "wrote", "sent", "dijo", "dice"]

    /// Words that open sentences without being names (English, Spanish, French).
    static let starters: Set<String> = Set("""
        a an the this that these those there here it its we you they he she i me my our your their his her what when where why how who \
        which whose if as since because while although though after before until unless once so but and or yet for with without in on at \
        by from to of about over under during following given due thanks thank sorry apologies dear hi hello hey best kind warm regards \
        cheers yes no okay ok well also still even only instead otherwise just quick any every each some all both either neither many most \
        few several please let can could would should will shall may might must do does did is are was were be been have has had get got \
        note remember check make send keep call join bring see find take give tell ask feel hope happy welcome good great glad today \
        tomorrow tonight yesterday again finally first second next then now however meanwhile therefore thus hence besides moreover \
        furthermore overall sadly luckily unfortunately fortunately regrettably currently recently soon later earlier another other new \
        old more less much none nothing everyone everybody someone anyone nobody something anything everything whatever whenever \
        attached enclosed attention reminder update important urgent notice hopefully actually basically \
        el la los las un una unos unas le les des du de del al y o pero si que como cuando donde este esta estos estas ese esa nuestro \
        nuestra nuestros su sus mi mis tu hola gracias buenos buenas estimado estimada querido querida por para con sin hoy manana tambien \
        lamentablemente desafortunadamente hay es son fue ya lo nos les por favor bonjour merci cher chere pour avec sans aujourd'hui \
        demain mais et ou ce cette ces notre nos votre vos mon ma mes je il elle nous vous ils elles est sont malheureusement aussi bien \
        salut madame monsieur il y
        """.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init))

    /// Capitalised words that are not facts: pronouns, greetings, sign-offs.
    static let notNames: Set<String> = [
        "i", "i'm", "i'll", "i've", "i'd", "ok", "okay", "hi", "hey", "hello", "dear", "thanks", "thank", "best", "regards",
        "cheers", "kind", "sincerely", "yours", "please", "sorry", "yes", "no", "the", "a", "an", "we", "our", "you", "your",
        "it", "this", "that", "as", "so", "but", "and", "or", "if", "also", "just", "all", "re", "fyi", "ps", "asap", "hola", "bonjour",
        "am", "pm", "q", "ok",
    ]
}
