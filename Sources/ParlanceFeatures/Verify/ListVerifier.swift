import ParlanceProtocol

/// Judges and repairs the string lists of an analysis (topics, takeaways, action items,
/// tags, themes): no item twice (equal after normalising, or nearly the same content
/// words), no item that is a prompt label ("Transcript: 1", "keyTakeaways") or a word
/// repeated, and where a sentence is asked for, no bare name ("The Local Loop"). Failing
/// items are dropped; the caller tops the list up from another attempt.
public enum ListVerifier {
    public enum Kind: Sendable { case phrase, sentence }

    public struct Field: Sendable {
        public var key: String
        public var kind: Kind
        public var minItems: Int
        public init(_ key: String, _ kind: Kind, minItems: Int) {
            self.key = key
            self.kind = kind
            self.minItems = minItems
        }
    }

    /// Near-duplicates: content-term Jaccard at or above this.
    static let duplicateOverlap = 0.75

    /// The problem with `item` given the items kept before it, or nil when it is fine.
    public static func problem(_ item: String, kind: Kind, before kept: [String], labels: [String], names: Set<String>) -> VerificationIssueCode? {
        let n = TextChecks.normalized(item)
        guard !n.isEmpty, n.contains(where: \.isLetter) else { return .labelItem }
        if TextChecks.placeholder(in: item, source: "") != nil || speakerLine(item, names: names) { return .labelItem }
        for k in kept {
            let m = TextChecks.normalized(k)
            if m == n || TextChecks.jaccard(k, item) >= duplicateOverlap { return .duplicateItem }
            if kind == .sentence, min(m.count, n.count) >= 12, m.contains(n) || n.contains(m) { return .duplicateItem }
        }
        if isLabel(n, labels: labels) { return .labelItem }
        let words = n.split(separator: " ")
        if words.count >= 3, Set(words).count == 1 { return .labelItem }
        if kind == .sentence {
            if names.contains(n) { return .nameOnlyItem }
            let raw = WordDiff.tokens(item).filter { $0.isWord && $0.text.filter(\.isLetter).count >= 2 }
            if raw.count < 3 { return .nameOnlyItem }
            if raw.count <= 4, raw.allSatisfy({ $0.text.first?.isUppercase ?? false }) { return .nameOnlyItem }
        }
        return nil
    }

    /// An item without the enumerator a model writes before it ("1. ", "2) ", "- ", "• ").
    public static func unnumbered(_ item: String) -> String {
        var t = item.trimmingCharacters(in: .whitespacesAndNewlines)
        if let r = t.range(of: #"^(\d{1,2}[.)]|[-•*])\s+"#, options: .regularExpression) { t.removeSubrange(r) }
        return t
    }

    /// A line copied from the transcript, speaker label and all ("Sam: Thanks for making time").
    public static func speakerLine(_ text: String, names: Set<String>) -> Bool {
        guard let colon = text.firstIndex(of: ":") else { return false }
        let label = TextChecks.normalized(String(text[..<colon]))
        return !label.isEmpty && label.split(separator: " ").count <= 3 && names.contains(label)
    }

    /// A prompt label: a field name (split camelCase), "transcript", "speaker", "summary",
    /// optionally followed by a number ("Transcript: 2").
    static func isLabel(_ normalized: String, labels: [String]) -> Bool {
        var words = normalized.split(separator: " ").map(String.init)
        if let last = words.last, last.allSatisfy(\.isNumber) { words.removeLast() }
        let stem = words.joined(separator: " ")
        if stem.isEmpty { return true }
        let generic = ["transcript", "speaker", "summary", "segment", "line", "id", "topic", "takeaway", "item", "title", "none", "n a", "null", "text"]
        return generic.contains(stem) || labels.map { TextChecks.normalized(splitCamel($0)) }.contains(stem)
    }

    static func splitCamel(_ s: String) -> String {
        var out = ""
        for c in s {
            if c.isUppercase, !out.isEmpty { out.append(" ") }
            out.append(c)
        }
        return out
    }

    /// Items in order, failing ones dropped, with one issue per dropped item. The list
    /// never goes below `minItems`: the least bad dropped items are kept (and reported as
    /// not repaired) when there are not enough good ones.
    public static func repair(_ items: [String], field: Field, labels: [String], names: Set<String>) -> (items: [String], issues: [VerificationIssue]) {
        var kept: [String] = []
        var dropped: [(item: String, code: VerificationIssueCode, index: Int)] = []
        let items = items.map(unnumbered)
        for (i, raw) in items.enumerated() {
            let item = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if let code = problem(item, kind: field.kind, before: kept, labels: labels, names: names) {
                dropped.append((item, code, i))
            } else {
                kept.append(item)
            }
        }
        var issues: [VerificationIssue] = []
        // Not enough good items: keep name-only or label items before duplicates.
        let order: [VerificationIssueCode] = [.nameOnlyItem, .labelItem, .duplicateItem]
        let refill = dropped.sorted { (order.firstIndex(of: $0.code) ?? 9, $0.index) < (order.firstIndex(of: $1.code) ?? 9, $1.index) }
        var restored = Set<Int>()
        for d in refill where kept.count + restored.count < field.minItems { restored.insert(d.index) }
        if !restored.isEmpty {
            kept = items.enumerated().compactMap { i, raw in
                let item = raw.trimmingCharacters(in: .whitespacesAndNewlines)
                return kept.contains(item) || restored.contains(i) ? item : nil
            }
        }
        for d in dropped {
            let kept = !restored.contains(d.index)
            issues.append(VerificationIssue(d.code, describe(d.code, d.item) + (kept ? ": removed" : ""), path: "\(field.key)[\(d.index)]",
                                            repaired: kept ? true : nil))
        }
        return (kept, issues)
    }

    static func describe(_ code: VerificationIssueCode, _ item: String) -> String {
        let q = "\"\(RewriteVerifier.clip(item, 60))\""
        switch code {
        case .duplicateItem: return "\(q) repeats an earlier item"
        case .labelItem: return "\(q) is a prompt label or a repeated word, not content"
        case .nameOnlyItem: return "\(q) is a name, not a sentence"
        default: return q
        }
    }

    /// `targetAudience` must describe people ("developers new to local models"), not be a
    /// name from the text (a company, a show, a speaker).
    public static func audienceProblem(_ audience: String, names: Set<String>) -> VerificationIssue? {
        let n = TextChecks.normalized(audience)
        let words = WordDiff.tokens(audience).filter { $0.isWord && $0.text.filter(\.isLetter).count >= 2 }
        let titleCase = !words.isEmpty && words.allSatisfy { $0.text.first?.isUppercase ?? false }
        let fromText = names.contains(n) || words.contains { names.contains(TextChecks.normalized($0.text)) && ($0.text.first?.isUppercase ?? false) }
        guard n.isEmpty || names.contains(n) || (titleCase && fromText) || !TextChecks.isLanguage(audience) && words.count < 2 else { return nil }
        return VerificationIssue(.audienceIsName, "targetAudience \"\(RewriteVerifier.clip(audience, 60))\" is a name from the text, not a description of people",
                                 path: "targetAudience")
    }

    /// Names in a source: its speakers and the capitalised words and phrases that are
    /// names there (normalised), for the name-only checks.
    public static func names(in text: String, speakers: [String]) -> Set<String> {
        var out = Set(speakers.map(TextChecks.normalized))
        let facts = Facts.extract(text).filter { $0.kind == .name }
        for f in facts { out.insert(TextChecks.normalized(f.text)) }
        // Capitalised runs ("Fernhill Labs", "The Local Loop").
        for line in text.split(whereSeparator: \.isNewline) {
            var run: [String] = []
            for t in WordDiff.tokens(String(line)) {
                if t.isWord, t.text.first?.isUppercase ?? false { run.append(t.text); continue }
                if run.count >= 2 { out.insert(TextChecks.normalized(run.joined(separator: " "))) }
                run = []
            }
            if run.count >= 2 { out.insert(TextChecks.normalized(run.joined(separator: " "))) }
        }
        return out
    }
}
