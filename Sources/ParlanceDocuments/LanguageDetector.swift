/// Guesses a transcript's language: writing system first (Han, Kana, Hangul, Cyrillic,
/// Arabic, …), then stopword profiles for Latin-script text. Short or ambiguous text is
/// reported as English with low confidence.
public enum LanguageDetector {
    /// Languages whose short texts share their function words, Bokmål among them.
    static let scandinavian: Set<String> = ["nb", "da", "sv"]

    /// Scalars examined; a few thousand characters identify a language reliably.
    static let sampleLimit = 20_000

    public static func detect(_ text: String) -> (code: String, confidence: Double) {
        var script = ScriptCounts()
        var tokens: [String] = []
        var word = String.UnicodeScalarView()
        var hints: [String: Double] = [:]
        var seen = 0
        for c in text.unicodeScalars {
            seen += 1
            if seen > sampleLimit { break }
            script.add(c)
            if c.properties.isAlphabetic || c == "'" || c == "\u{2019}" {
                let lower = c.properties.lowercaseMapping.unicodeScalars
                word.append(contentsOf: c == "\u{2019}" ? "'".unicodeScalars : lower)
                if let l = lower.first, let lang = StopwordProfiles.letterHints[l] { hints[lang, default: 0] += 0.5 }
            } else if !word.isEmpty {
                tokens.append(String(word))
                word = String.UnicodeScalarView()
            }
        }
        if !word.isEmpty { tokens.append(String(word)) }

        if let fromScript = script.verdict() { return fromScript }
        return latin(tokens, hints: hints)
    }

    /// Stopword hits per profile (a token with an apostrophe also counts its parts).
    private static func latin(_ tokens: [String], hints: [String: Double]) -> (code: String, confidence: Double) {
        var scores = hints
        let index = StopwordProfiles.index
        for raw in tokens {
            let t = raw.trimmingQuotes()
            var matched = Set<Int>()
            if let hits = index[t] { matched.formUnion(hits) }
            if t.contains("'") {
                for part in t.split(separator: "'") { if let hits = index[String(part)] { matched.formUnion(hits) } }
            }
            for p in matched { scores[StopwordProfiles.profiles[p].code, default: 0] += 1 }
        }
        let ranked = StopwordProfiles.profiles.map { ($0.code, scores[$0.code] ?? 0) }
            .enumerated().sorted { $0.element.1 != $1.element.1 ? $0.element.1 > $1.element.1 : $0.offset < $1.offset }
            .map(\.element)
        guard let best = ranked.first, best.1 >= 2 else {
            return ("en", tokens.isEmpty ? 0.0 : 0.2)
        }
        let second = ranked.count > 1 ? ranked[1].1 : 0
        let margin = (best.1 - second) / best.1
        let support = min(1.0, best.1 / 8.0)
        let confidence = min(0.99, 0.25 + 0.75 * margin * support)
        if margin < 0.1, best.0 != "en" {
            // Bokmål, Danish and Swedish share most function words: a short Norwegian text
            // ties with Danish. Of the three Parlance writes Bokmål only, so a tie among them
            // that includes it is Bokmål, not English.
            let tied = Set(ranked.prefix { best.1 - $0.1 < 0.1 * best.1 }.map(\.0))
            if tied.contains("nb"), tied.isSubset(of: Self.scandinavian) { return ("nb", min(confidence, 0.4)) }
            return ("en", min(confidence, 0.3))
        }
        return (best.0, (confidence * 100).rounded() / 100)
    }
}

/// Letter counts per writing system.
struct ScriptCounts {
    var latin = 0, han = 0, kana = 0, hangul = 0, cyrillic = 0, arabic = 0, greek = 0, hebrew = 0
    var devanagari = 0, thai = 0
    var simplified = 0, traditional = 0, ukrainian = 0, persian = 0

    private static let simplifiedOnly = Set("这说们来时个会对为国学发经过还没么样开关让间问题电话见点东车长门语书机实现头里".unicodeScalars)
    private static let traditionalOnly = Set("這說們來時個會對為國學發經過還沒麼樣開關讓間問題電話見點東車長門語書機實現頭裡".unicodeScalars)
        .subtracting(simplifiedOnly)

    mutating func add(_ c: Unicode.Scalar) {
        let v = c.value
        switch v {
        case 0x41...0x5A, 0x61...0x7A, 0xC0...0x24F, 0x1E00...0x1EFF: latin += 1
        case 0x4E00...0x9FFF, 0x3400...0x4DBF, 0xF900...0xFAFF, 0x20000...0x2A6DF:
            han += 1
            if ScriptCounts.simplifiedOnly.contains(c) { simplified += 1 }
            if ScriptCounts.traditionalOnly.contains(c) { traditional += 1 }
        case 0x3040...0x30FF, 0x31F0...0x31FF, 0xFF66...0xFF9F: kana += 1
        case 0xAC00...0xD7AF, 0x1100...0x11FF, 0x3130...0x318F: hangul += 1
        case 0x0400...0x04FF:
            cyrillic += 1
            if "іїєґІЇЄҐ".unicodeScalars.contains(c) { ukrainian += 1 }
        case 0x0600...0x06FF, 0x0750...0x077F, 0xFB50...0xFDFF, 0xFE70...0xFEFF:
            arabic += 1
            if "پچژگ".unicodeScalars.contains(c) { persian += 1 }
        case 0x0370...0x03FF: greek += 1
        case 0x0590...0x05FF: hebrew += 1
        case 0x0900...0x097F: devanagari += 1
        case 0x0E00...0x0E7F: thai += 1
        default: break
        }
    }

    /// A language when a non-Latin script makes up at least 30% of the letters.
    func verdict() -> (code: String, confidence: Double)? {
        let cjk = han + kana
        let candidates: [(String, Int)] = [
            (kana > 0 && kana * 10 >= cjk ? "ja" : (traditional > simplified ? "zh-hant" : "zh-hans"), cjk),
            ("ko", hangul), (ukrainian > 0 ? "uk" : "ru", cyrillic), (persian > 0 ? "fa" : "ar", arabic),
            ("el", greek), ("he", hebrew), ("hi", devanagari), ("th", thai),
        ]
        let total = latin + candidates.reduce(0) { $0 + $1.1 }
        guard total > 0, let best = candidates.max(by: { $0.1 < $1.1 }), best.1 > 0,
              Double(best.1) >= 0.3 * Double(total) else { return nil }
        let share = Double(best.1) / Double(total)
        let size = min(1.0, Double(best.1) / 10.0)
        return (best.0, ((0.5 + 0.49 * share * size) * 100).rounded() / 100)
    }
}

extension String {
    func trimmingQuotes() -> String {
        var s = Substring(self)
        while s.first == "'" { s = s.dropFirst() }
        while s.last == "'" { s = s.dropLast() }
        return String(s)
    }
}
