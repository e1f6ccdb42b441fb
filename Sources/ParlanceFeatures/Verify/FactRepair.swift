import Foundation

/// Puts back, without the model, the facts a rewrite changed in place: the rewrite is
/// aligned word by word with the selection (the longest common subsequence `WordDiff`
/// uses), and where a number, amount or name of the selection was replaced by another of
/// the same kind at the same place ("£1,150" → "£1,200", "Priyanka" → "Priya"), the
/// selection's text goes back in. A date written another way ("3 March" → "March 3rd") and
/// a number written another way ("£1150", "6" for "six") get the selection's spelling.
///
/// Only unambiguous repairs are made: the changed span must sit where the fact was
/// (between the same matching words), or be the only fact of that kind the rewrite
/// invented; and each repair is kept only when it leaves fewer facts missing (or, for a
/// respelling, the same) and nothing newly invented. A fact the rewrite dropped altogether
/// is left for the next attempt.
public enum FactRepair {
    /// A fact the rewrite wrote differently, put back.
    public struct Change: Hashable, Sendable {
        /// What the rewrite had ("£1,200", "March 3rd").
        public var changed: String
        /// What it has now: the selection's text ("£1,150", "3 March").
        public var restored: String
        public init(changed: String, restored: String) {
            self.changed = changed
            self.restored = restored
        }
    }

    /// The rewrite with the selection's facts put back where that is unambiguous: one
    /// finding (`factMissing`, restored) per fact put back.
    public static func repair(original: String, rewrite: String) -> Repaired<String> {
        let facts = Facts.extract(original)
        var text = rewrite
        var findings: [Finding] = []
        func accept(_ candidate: String, _ c: Change, respelling: Bool) {
            let before = Facts.missing(facts, in: text).count, after = Facts.missing(facts, in: candidate).count
            let inventedBefore = Facts.unsupported(in: text, by: [original]).count
            let inventedAfter = Facts.unsupported(in: candidate, by: [original]).count
            guard after < before || (respelling && after == before), inventedAfter <= inventedBefore else { return }
            text = candidate
            findings.append(Finding(.factMissing, .factChanged(c), action: .restored))
        }
        // Dates first: "March 3rd" → "3 March" (a date is several facts at once).
        for (range, replacement) in dateRespellings(original: original, rewrite: text).reversed() {
            let changed = (text as NSString).substring(with: range)
            accept((text as NSString).replacingCharacters(in: range, with: replacement), Change(changed: changed, restored: replacement), respelling: true)
        }
        // Facts changed in place, one at a time (each alignment on the text as repaired so far).
        for fact in facts {
            guard !Facts.missing([fact], in: text).isEmpty,
                  let (range, changed) = replacedSpan(of: fact, original: original, rewrite: text, facts: facts) else { continue }
            var restored = fact.text
            if fact.kind == .number, changed.contains(" "), let span = factRange(fact, in: original),
               let next = WordDiff.tokens(original).first(where: { $0.start >= span.location + span.length }), next.isWord {
                restored = (original as NSString).substring(with: NSRange(location: span.location, length: next.end - span.location))
            }
            if fact.kind == .name, changed.hasSuffix("'s") || changed.hasSuffix("\u{2019}s"), !restored.hasSuffix("s") { restored += String(changed.suffix(2)) }
            accept((text as NSString).replacingCharacters(in: range, with: restored), Change(changed: changed, restored: restored), respelling: false)
        }
        // Numbers of the same value written differently: the selection's spelling.
        for (range, replacement) in numberRespellings(original: original, rewrite: text).reversed() {
            let changed = (text as NSString).substring(with: range)
            accept((text as NSString).replacingCharacters(in: range, with: replacement), Change(changed: changed, restored: replacement), respelling: true)
        }
        return Repaired(text, findings: findings)
    }

    // MARK: Changed in place

    /// The span of `rewrite` that replaced `fact` (and what it says), when there is exactly one.
    static func replacedSpan(of fact: Facts.Fact, original: String, rewrite: String, facts: [Facts.Fact]) -> (NSRange, String)? {
        let ta = WordDiff.tokens(original), tb = WordDiff.tokens(rewrite)
        let numberKeys = Set(facts.filter { $0.kind == .number }.map(\.key))
        let nameKeys = Set(facts.filter { $0.kind == .name }.map(\.key))
        let originalWords = Set(ta.filter(\.isWord).map { Facts.nameKey($0.text) })
        // Candidates in the rewrite: numbers and names the selection does not have.
        func candidates(in window: Range<Int>?) -> [NSRange] {
            switch fact.kind {
            case .number:
                return numberRanges(rewrite).filter { r in
                    !numberKeys.contains(r.key) && window.map { w in r.range.location < w.upperBound && r.range.location + r.range.length > w.lowerBound } ?? true
                }.map(\.range)
            case .name:
                let nameTokens = Set(Facts.capitalisedWords(rewrite).map { Facts.nameKey($0.0) })
                return tb.filter { t in
                    let key = Facts.nameKey(t.text)
                    guard t.isWord, t.text.first?.isUppercase ?? false, !t.text.contains(where: \.isNumber), nameTokens.contains(key),
                          !nameKeys.contains(key), !Facts.notNames.contains(key), !Facts.starters.contains(key),
                          !originalWords.contains(key) else { return false }
                    return window.map { w in t.start >= w.lowerBound && t.end <= w.upperBound } ?? true
                }.map { NSRange(location: $0.start, length: $0.end - $0.start) }
            }
        }
        let ns = rewrite as NSString
        // 1. Aligned: the fact's unmatched words and the candidate sit in the same gap between matched words.
        if let span = factRange(fact, in: original) {
            let pairs = WordDiff.matches(ta, tb)
            let matchedA = Set(pairs.map(\.0))
            let factTokens = ta.indices.filter { ta[$0].start < span.location + span.length && ta[$0].end > span.location }
            let loose = factTokens.filter { !matchedA.contains($0) }
            if let first = loose.first {
                // The gap: between the last pair before `first` and the first pair after it.
                let before = pairs.last { $0.0 < first }, after = pairs.first { $0.0 > first }
                let aRange = (before.map { $0.0 + 1 } ?? 0)..<(after?.0 ?? ta.count)
                let bRange = (before.map { $0.1 + 1 } ?? 0)..<(after?.1 ?? tb.count)
                let aWords = ta[aRange].filter(\.isWord).count, bWords = tb[bRange].filter(\.isWord).count
                let factWords = factTokens.filter { ta[$0].isWord }.count
                if loose.allSatisfy({ aRange.contains($0) }), !bRange.isEmpty, aWords <= factWords + 3, bWords <= factWords + 4 {
                    let window = tb[bRange.lowerBound].start..<tb[bRange.upperBound - 1].end
                    let found = candidates(in: window)
                    if found.count == 1 {
                        // "within 3 weeks" for "within 10 days": the unit word changed with the
                        // number, so both go back ("10 weeks" would be wrong).
                        let end = found[0].location + found[0].length
                        if fact.kind == .number, let nb = tb.firstIndex(where: { $0.start >= end }), bRange.contains(nb), tb[nb].isWord,
                           let na = ta.firstIndex(where: { $0.start >= span.location + span.length }), aRange.contains(na), ta[na].isWord,
                           ta[na].text.lowercased() != tb[nb].text.lowercased() {
                            let r = NSRange(location: found[0].location, length: tb[nb].end - found[0].location)
                            return (r, ns.substring(with: r))
                        }
                        return (found[0], ns.substring(with: found[0]))
                    }
                }
            }
        }
        // 2. The only invented fact of its kind, for the only missing one of its kind (a name
        //    must also look like the one it replaced: "Priya" for "Priyanka").
        let missingOfKind = Facts.missing(facts, in: rewrite).filter { $0.kind == fact.kind }
        let found = candidates(in: nil)
        guard missingOfKind.count == 1, found.count == 1 else { return nil }
        let changed = ns.substring(with: found[0])
        if fact.kind == .name, commonPrefix(Facts.nameKey(changed), fact.key) < 3 { return nil }
        return (found[0], changed)
    }

    /// Where `fact` first occurs in `text` (UTF-16).
    static func factRange(_ fact: Facts.Fact, in text: String) -> NSRange? {
        switch fact.kind {
        case .number:
            return numberRanges(text).first { $0.key == fact.key }?.range
        case .name:
            return WordDiff.tokens(text).first { $0.isWord && Facts.nameKey($0.text) == fact.key }
                .map { NSRange(location: $0.start, length: $0.end - $0.start) }
        }
    }

    /// Numbers with their places and values (`Facts.numberSpans`, located).
    static func numberRanges(_ text: String) -> [(range: NSRange, key: String)] {
        let ns = text as NSString
        var out: [(NSRange, String)] = []
        for m in Facts.numberPattern.matches(in: text, range: NSRange(location: 0, length: ns.length)) {
            let span = ns.substring(with: m.range)
            if let key = Facts.numberSpans(span).first?.key { out.append((m.range, key)) }
        }
        for t in WordDiff.tokens(text) where t.isWord {
            if let n = Facts.numberWords[t.text.lowercased()] { out.append((NSRange(location: t.start, length: t.end - t.start), n)) }
        }
        return out.sorted { $0.0.location < $1.0.location }
    }

    static func commonPrefix(_ a: String, _ b: String) -> Int {
        zip(a, b).prefix { $0 == $1 }.count
    }

    // MARK: Respellings

    /// Numbers of the rewrite with a value the selection writes differently, as long as only
    /// the digits' grouping differs ("£1150" for "£1,150") or a bare figure stands for a
    /// number word ("6" for "six"): (range in the rewrite, the selection's spelling).
    static func numberRespellings(original: String, rewrite: String) -> [(NSRange, String)] {
        let ns = rewrite as NSString, no = original as NSString
        var spelling: [String: String] = [:]
        for r in numberRanges(original) where spelling[r.key] == nil { spelling[r.key] = no.substring(with: r.range) }
        let exact = Set(numberRanges(original).map { no.substring(with: $0.range).lowercased() })
        var out: [(NSRange, String)] = []
        var last = -1
        for r in numberRanges(rewrite) where r.range.location >= last {
            let have = ns.substring(with: r.range)
            guard let want = spelling[r.key], want != have, !exact.contains(have.lowercased()) else { continue }
            let sign: (String) -> String = { $0.filter { "£$€¥%".contains($0) } }
            let haveIsWord = have.contains(where: \.isLetter), wantIsWord = want.contains(where: \.isLetter)
            let sameForm = !haveIsWord && !wantIsWord && sign(have) == sign(want)
            let wordForFigure = wantIsWord && !haveIsWord && have.allSatisfy(\.isNumber) && !["twice", "dozen", "once"].contains(want.lowercased())
            guard sameForm || wordForFigure else { continue }
            var replacement = want
            // A number word at a sentence start keeps its capital, mid-sentence goes lower case.
            if wantIsWord {
                let atStart = r.range.location == 0 || ns.substring(to: r.range.location).trimmingCharacters(in: .whitespaces).last.map { ".!?\n".contains($0) } ?? true
                replacement = atStart ? want.prefix(1).uppercased() + want.dropFirst() : want.lowercased()
            }
            out.append((r.range, replacement))
            last = r.range.location + r.range.length
        }
        return out
    }

    /// English months, January first: a date's month is its index here.
    static let months = Lexicon.months["en"]!

    nonisolated(unsafe) static let datePattern: NSRegularExpression = {
        let month = "(" + months.map(\.capitalized).joined(separator: "|") + ")"
        let weekday = "(?:(" + Lexicon.weekdays["en"]!.map(\.capitalized).joined(separator: "|") + "),?\\s+(?:the\\s+)?)?"
        let day = "(\\d{1,2})(?:st|nd|rd|th)?"
        // day-month ("3 March", "3rd of March") or month-day ("March 3", "March 3rd").
        return try! NSRegularExpression(pattern: "\\b" + weekday + "(?:" + day + "(?:\\s+of)?\\s+" + month + "|" + month + "\\s+(?:the\\s+)?" + day + ")\\b(?!:)")
    }()

    /// Dates as (range, weekday?, day, month).
    static func dates(_ text: String) -> [(range: NSRange, weekday: String?, day: Int, month: Int)] {
        let ns = text as NSString
        return datePattern.matches(in: text, range: NSRange(location: 0, length: ns.length)).compactMap { m in
            func group(_ i: Int) -> String? { m.range(at: i).location == NSNotFound ? nil : ns.substring(with: m.range(at: i)) }
            guard let d = Int(group(2) ?? group(5) ?? ""), let monthName = group(3) ?? group(4),
                  let month = months.firstIndex(of: monthName.lowercased()), (1...31).contains(d) else { return nil }
            return (m.range, group(1), d, month)
        }
    }

    /// Dates the rewrite writes differently from the selection ("March 3rd" for "3 March"):
    /// (range in the rewrite, the selection's spelling), for each date the selection has
    /// once and the rewrite has once, not already as the selection writes it.
    static func dateRespellings(original: String, rewrite: String) -> [(NSRange, String)] {
        let no = original as NSString
        let mine = dates(original), theirs = dates(rewrite)
        var out: [(NSRange, String)] = []
        for d in mine {
            let want = no.substring(with: d.range)
            guard !rewrite.lowercased().contains(want.lowercased()) else { continue }
            let same = theirs.filter { $0.day == d.day && $0.month == d.month }
            guard mine.filter({ $0.day == d.day && $0.month == d.month }).count == 1, same.count == 1 else { continue }
            // A weekday the rewrite added that the selection did not have goes; one the selection has comes back.
            if let w = same[0].weekday, d.weekday == nil, original.lowercased().contains(w.lowercased()) { continue }
            out.append((same[0].range, want))
        }
        return out.sorted { $0.0.location < $1.0.location }
    }

    // MARK: Invented greeting names

    nonisolated(unsafe) static let greetingPattern = try! NSRegularExpression(
        pattern: #"^(\s*)(Dear|Hi|Hello|Hey)\s+(\p{Lu}[\p{L}'’.-]*(?:\s+\p{Lu}[\p{L}'’-]*)?)\s*([,!:])"#)

    /// A greeting to a name the selection does not have ("Dear Sarah," when the selection
    /// names no Sarah): the name goes ("Hello,", "Hi,"), with a finding (`unsupportedFact`,
    /// removed) naming it; the rewrite as it is, without one, when there is none.
    public static func dropInventedGreetingName(original: String, rewrite: String) -> Repaired<String> {
        let ns = rewrite as NSString
        guard let m = greetingPattern.firstMatch(in: rewrite, range: NSRange(location: 0, length: ns.length)) else { return Repaired(rewrite) }
        let name = ns.substring(with: m.range(at: 3))
        let words = Set(Lexicon.words(original).map(Facts.nameKey))
        let nameWords = Lexicon.words(name).map(Facts.nameKey)
        // Any word of the selection ("Dear Team", "Hi Priyanka") is not invented.
        guard !nameWords.isEmpty, !nameWords.contains(where: { words.contains($0) || Facts.notNames.contains($0) || Facts.starters.contains($0) }),
              !Facts.addressees.contains(nameWords[0]) else { return Repaired(rewrite) }
        let greeting = ns.substring(with: m.range(at: 2))
        let replacement = ns.substring(with: m.range(at: 1)) + (greeting == "Dear" ? "Hello" : greeting) + ns.substring(with: m.range(at: 4))
        return Repaired(ns.replacingCharacters(in: m.range, with: replacement), findings: [Finding(.unsupportedFact, .greetingName(name), action: .removed)])
    }
}
