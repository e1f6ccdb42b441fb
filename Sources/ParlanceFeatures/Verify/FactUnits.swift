import Foundation

/// What a number says it counts, where it stands: a currency ("£2", "2 pounds", "EUR 50",
/// "50 €"), a reference ("#48213", "order number 48213") or a clock time ("7am", "7:30 p.m.").
/// A rewrite keeps such a fact only with the same unit: "2750 days" does not keep "£2,750",
/// "48213 days from today" does not keep "#48213", "7 hours" does not keep "7am". A number
/// the selection writes bare is kept by its value, whatever stands beside it.
extension Facts {
    /// The numbers of `text` (as `numberSpans` finds them, in the same order) with their units.
    static func measuredNumbers(_ text: String) -> [(key: String, unit: String?)] {
        let ns = text as NSString
        var out: [(String, String?)] = []
        for m in numberPattern.matches(in: text, range: NSRange(location: 0, length: ns.length)) {
            let span = ns.substring(with: m.range)
            guard let key = numberSpans(span).first?.key else { continue }
            let before = ns.substring(to: m.range.location), after = ns.substring(from: m.range.location + m.range.length)
            out.append((key, unit(span: span, before: before, after: after)))
        }
        for t in WordDiff.tokens(text) where t.isWord {
            guard let n = numberWords[t.text.lowercased()] else { continue }
            out.append((n, unit(span: t.text, before: ns.substring(to: t.start), after: ns.substring(from: t.end))))
        }
        return out
    }

    /// The unit of a number written `span`, between `before` and `after`; nil when it has none.
    static func unit(span: String, before: String, after: String) -> String? {
        if let sign = span.first(where: { currencyWords.values.contains(String($0)) }) { return String(sign) }
        let next = after.drop { $0 == " " || $0 == "\u{A0}" || $0 == "\u{202F}" }.prefix(12).lowercased()
        let nextWord = String(next.prefix { $0.isLetter || "€£$¥".contains($0) })
        if let sign = currencyWords[nextWord] ?? next.first.flatMap({ currencyWords[String($0)] }) { return sign }
        // "7am", "7 pm", "7 a.m.", and "7:30 pm" (the minutes are a number of their own).
        let clock = after.hasPrefix(":") ? String(after.dropFirst().drop(while: \.isNumber)).drop(while: { $0 == " " }).lowercased()[...] : next[...]
        for (written, meridiem) in [("a.m.", "am"), ("p.m.", "pm"), ("am", "am"), ("pm", "pm")] where clock.hasPrefix(written) {
            if written.hasSuffix(".") || !(clock.dropFirst(written.count).first?.isLetter ?? false) { return meridiem }
        }
        let previous = before.reversed().drop { $0 == " " || $0 == "\u{A0}" }
        if previous.first == "#" || before.hasSuffix("#") { return "#" }
        let previousWord = String(previous.prefix { $0.isLetter || $0 == "." || $0 == "°" || $0 == "º" }.reversed()).lowercased()
        if let sign = currencyWords[previousWord] { return sign }
        if ["number", "no.", "nº", "n°", "ref", "ref."].contains(previousWord) { return "#" }
        return nil
    }

    /// Currency signs, codes and words (English, Spanish, French) and the sign each stands for.
    static let currencyWords: [String: String] = [
        "£": "£", "$": "$", "€": "€", "¥": "¥",
        "pound": "£", "pounds": "£", "quid": "£", "gbp": "£", "libras": "£", "livres": "£",
        "euro": "€", "euros": "€", "eur": "€",
        "dollar": "$", "dollars": "$", "usd": "$", "dólares": "$",
        "yen": "¥", "jpy": "¥",
    ]
}
