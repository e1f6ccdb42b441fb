import Foundation
import ParlanceProtocol

/// The rules each item of an analysis list must pass (topics, takeaways, action items,
/// tags, themes), and the repair of one list by them: no item twice (equal after
/// normalising, or nearly the same content words), no item that is a prompt label
/// ("Transcript: 1", "keyTakeaways") or a word repeated, and where a sentence is asked for,
/// no bare name ("The Local Loop"). Failing items are dropped; the caller tops the list up
/// from another attempt. The whole result (its lists, audience and prose) is
/// `AnalysisVerifier`'s; the audience rules and a source's names are here, beside the items'.
public enum ListItemRules {
    /// `tag`: a short lowercase keyword ("3-8 short lowercase tags"): written lowercase and
    /// one per item before the rules (`tags`), at most three words, no name of the text.
    public enum Kind: Sendable { case phrase, sentence, tag }

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
    /// With `source`, an item must also be supported by the transcript and must not repeat
    /// the prompt's `instructions` ("3-5 key takeaways for your next project"). Without a
    /// source, `echoSource` (the transcript's text) still lets an item that repeats the
    /// user's instructions fail, and no other rule changes.
    public static func problem(_ item: String, kind: Kind, before kept: [String], labels: [String], names: Set<String>,
                        source: SourceSupport? = nil, instructions: [String] = [], echoSource: String? = nil) -> VerificationIssueCode? {
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
        if let last = words.last, words.count >= 2, danglingWords.contains(String(last)) { return .length }
        if words.count >= 3, Set(words).count == 1 { return .labelItem }
        // "Little bit", "Pretty much": words of talk, no subject.
        if kind != .sentence, SourceSupport.conversational(item) { return .labelItem }
        if kind == .tag {
            // "priya lindqvist", "the local loop": a name of the text is no subject.
            if names.contains(n) { return .nameOnlyItem }
            if words.count > 3 { return .length }
        }
        if kind == .sentence {
            if names.contains(n) { return .nameOnlyItem }
            let raw = Lexicon.words(item).filter { $0.filter(\.isLetter).count >= 2 }
            if raw.count < 3 { return .nameOnlyItem }
            if raw.count <= 4, raw.allSatisfy({ $0.first?.isUppercase ?? false }) { return .nameOnlyItem }
            if fragment(item) { return .length }
        }
        if source == nil, let echoSource, TextChecks.echo(in: item, instructions: instructions, source: echoSource) != nil { return .instructionEcho }
        if let source {
            // A topic that is only a name of the text (the show, a guest, a company) says nothing of the subject.
            // A word the transcript also writes in lower case is no name, whatever a title's
            // capitals made of it ("Disability", from "We Count: Fair Treatment, Disability and
            // Machine Learning", was dropped as a name).
            if kind == .phrase, names.contains(n), !source.text.contains(n) { return .nameOnlyItem }
            if TextChecks.echo(in: item, instructions: instructions, source: source.text) != nil || promptWords(item) { return .instructionEcho }
            if !Ablation.off("list.support"), !source.supported(item) { return .unsupportedFact }
            if source.endsMidWord(item) { return .length }
        }
        return nil
    }

    /// A takeaway that is a piece of a sentence: it opens in lower case (a caption line copied
    /// from mid-sentence: "the product and services, which thanks to Moore's law are improving
    /// in"), ends on a comma or a word no sentence ends with, or ends in an unfinished second
    /// sentence ("… take away the advantage. This learning"). The 0.5B model's takeaways of a
    /// captioned talk were such pieces, and passed (issue 77).
    static func fragment(_ item: String) -> Bool {
        let t = item.trimmingCharacters(in: .whitespacesAndNewlines)
        if brokenOff(t, endings: ",;:", dangling: sentenceDangling) { return true }
        let sentences = Lexicon.sentences(t, .tiled).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return sentences.count >= 2 && !(sentences.last!.last.map { ".!?\u{2026}\"'\u{201D})".contains($0) } ?? true)
    }

    /// `text` (trimmed) opens in lower case, or ends on one of `endings` or, after a letter, on
    /// one of the words `dangling`: a piece cut out of a sentence. `fragment` and
    /// `ChapterRules.cut` read it with their own endings and words.
    static func brokenOff(_ text: String, endings: String, dangling: Set<String>) -> Bool {
        guard let first = text.first(where: { $0.isLetter || $0.isNumber }), let last = text.last else { return false }
        if first.isLowercase || endings.contains(last) { return true }
        guard last.isLetter, let w = Lexicon.words(text, .normalized).last else { return false }
        return dangling.contains(w)
    }

    /// Words a sentence does not end on (beside `danglingWords`).
    static let sentenceDangling: Set<String> = ["in", "be", "to", "is", "are", "that", "which", "who", "for", "from", "by", "at", "as", "into", "was", "were"]

    /// Words no item ends with unless it was cut short (its fitted length ran out under a
    /// tight `maxTokens`: "The Power of a", "Building a new and the"): articles, "of",
    /// conjunctions, possessives. Not the prepositions a phrasal verb ends with ("look out for").
    static let danglingWords: Set<String> = ["a", "an", "the", "of", "and", "or", "with", "their", "our", "your", "its", "whose", "my"]

    /// The task's own words as an item: "3-5 key takeaways", "for your next project".
    static func promptWords(_ item: String) -> Bool {
        let n = " " + TextChecks.normalized(item) + " "
        return n.range(of: #" \d+ \d+ "#, options: .regularExpression) != nil && (n.contains(" takeaway") || n.contains(" topic"))
            || [" key takeaway", " main topic", " takeaways for", " your next project", " target audience", " engagement level"].contains { n.contains($0) }
            || promptMarkup(item)
    }

    /// The prompt's own markup at the start of an output: a part note's label ("Part 1 (5:)
    /// Bekah Hawrot Weigel" came back as a chapter title and opened a summary), the
    /// transcript's heading ("Transcript: 25} and it's not just…"), or a field's name written
    /// as a heading ("targetAudience**:"). Text that says such things itself is not held to it.
    static func promptMarkup(_ text: String, source: String = "") -> Bool {
        let t = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let r = t.range(of: #"^(part \d+\s*[(:]|transcript\s*:|summary\s*:|(target ?audience|key ?takeaways|main ?topics|engagement ?level)\W*:)"#,
                              options: [.regularExpression, .caseInsensitive]) else { return false }
        return !source.localizedCaseInsensitiveContains(t[r])
    }

    /// Tags as the description asks: lowercase, one per item ("Eco-techs, TechMakers, Small
    /// Models" is three), no leading "#". A tag list that was not lowercase is put right here,
    /// before the rules, rather than failed: the words are the model's, the case is the rule's.
    public static func tags(_ items: [String]) -> [String] {
        items.flatMap { $0.split(whereSeparator: { $0 == "," || $0 == ";" }) }
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines).trimmingCharacters(in: CharacterSet(charactersIn: "#")).lowercased() }
            .filter { !$0.isEmpty }
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
        var words = Lexicon.words(normalized, .normalized)
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

    /// Items in order, failing ones dropped (`.repair`), with one finding per failing item.
    /// The list never goes below `minItems`: the least bad failing items are kept (and
    /// reported as not repaired) when there are not enough good ones.
    /// `fill`: sentences of the transcript that may stand in for dropped items of a
    /// sentence list (before any failing item is kept to reach `minItems`), worked out only
    /// when an item is dropped, and only by `.repair`. `.report` and `.propose` return the
    /// items as given.
    public static func repair(_ items: [String], field: Field, labels: [String], names: Set<String>, source: SourceSupport? = nil,
                              instructions: [String] = [], echoSource: String? = nil, mode: VerifyMode = .repair,
                              fill: @autoclosure () -> [String] = []) -> Repaired<[String]> {
        let given = items
        var kept: [String] = []
        var dropped: [(item: String, code: VerificationIssueCode, index: Int)] = []
        let items = (field.kind == .tag ? tags(items.map(unnumbered)) : items).map(unnumbered)
        for (i, raw) in items.enumerated() {
            let item = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if let code = problem(item, kind: field.kind, before: kept, labels: labels, names: names, source: source, instructions: instructions,
                                  echoSource: echoSource) {
                dropped.append((item, code, i))
            } else {
                kept.append(item)
            }
        }
        var findings: [Finding] = []
        var added: [String] = []
        if !dropped.isEmpty, mode == .repair, !Ablation.off("list.fill") {
            for candidate in fill() where kept.count < field.minItems {
                guard problem(candidate, kind: field.kind, before: kept, labels: labels, names: names, source: source, instructions: instructions,
                              echoSource: echoSource) == nil,
                      !kept.contains(where: { TextChecks.jaccard($0, candidate) >= 0.4 }) else { continue }
                // Each added sentence stands in for one dropped item, in order, and carries its code.
                let replaced = dropped[min(added.count, dropped.count - 1)]
                findings.append(Finding(replaced.code, .transcriptSentence(candidate, inPlaceOf: replaced.index), path: "\(field.key)[\(kept.count)]",
                                        action: .added))
                kept.append(candidate)
                added.append(candidate)
            }
        }
        // Not enough good items: keep name-only or label items before duplicates.
        let order: [VerificationIssueCode] = [.nameOnlyItem, .labelItem, .duplicateItem]
        let refill = dropped.sorted { (order.firstIndex(of: $0.code) ?? 9, $0.index) < (order.firstIndex(of: $1.code) ?? 9, $1.index) }
        var restored = Set<Int>()
        for d in refill where kept.count + restored.count < field.minItems { restored.insert(d.index) }
        if !restored.isEmpty {
            kept = items.enumerated().compactMap { i, raw in
                let item = raw.trimmingCharacters(in: .whitespacesAndNewlines)
                return kept.contains(item) || restored.contains(i) ? item : nil
            } + added
        }
        for d in dropped {
            let finding = Finding(d.code, .listItem(d.item), path: "\(field.key)[\(d.index)]")
            findings.append(restored.contains(d.index) ? finding : finding.acted(.removed, mode))
        }
        return Repaired(mode == .repair ? kept : given, findings: findings)
    }

    /// `targetAudience` must describe people ("developers new to local models"), not be a
    /// name from the text (a company, a show, a speaker).
    public static func audienceProblem(_ audience: String, names: Set<String>) -> Finding? {
        let n = TextChecks.normalized(audience)
        let words = Lexicon.words(audience).filter { $0.filter(\.isLetter).count >= 2 }
        let titleCase = !words.isEmpty && words.allSatisfy { $0.first?.isUppercase ?? false }
        let fromText = names.contains(n) || words.contains { names.contains(TextChecks.normalized($0)) && ($0.first?.isUppercase ?? false) }
        if n.isEmpty { return Finding(.audienceIsName, .audienceEmpty, path: "targetAudience") }
        if names.contains(n) || (titleCase && fromText) || !TextChecks.isLanguage(audience) && words.count < 2 {
            return Finding(.audienceIsName, .audienceIsName(audience), path: "targetAudience")
        }
        if !describesPeople(audience) || !isDescription(audience) { return Finding(.audienceIsName, .audienceNotPeople(audience), path: "targetAudience") }
        return nil
    }

    /// Words an audience may take: "People interested in disability and accessibility" is
    /// one, a sentence of the transcript is not.
    static let audienceMaxWords = 18

    /// A description of people, not a statement: one sentence, at most `audienceMaxWords`
    /// words, no "I" or "me" ("1. The interview process has been filled with countless
    /// moments that have shaped me into the person I am today." named a person and passed),
    /// no enumerator before it.
    static func isDescription(_ audience: String) -> Bool {
        let t = audience.trimmingCharacters(in: .whitespacesAndNewlines)
        let words = Lexicon.words(t, .normalized)
        return Lexicon.sentences(t).count <= 1 && words.count <= audienceMaxWords && !words.contains("i") && !words.contains("me")
            && t.range(of: #"^(\d+[.)]|[-*•])\s"#, options: .regularExpression) == nil
    }

    /// "engineers who build on-device AI", "anyone curious about bees": a people noun or a
    /// "those who"/"anyone" phrase, in English, Spanish, French or German.
    public static func describesPeople(_ audience: String) -> Bool {
        let words = Lexicon.words(audience, .normalized)
        return words.contains { w in peopleNouns.contains(w) || peopleNouns.contains(w.hasSuffix("s") ? String(w.dropLast()) : w) }
    }

    static let peopleNouns: Set<String> = [
        "people", "person", "listener", "viewer", "reader", "audience", "user", "developer", "engineer", "programmer", "anyone", "everyone",
        "those", "fan", "professional", "student", "beginner", "expert", "enthusiast", "team", "manager", "patient", "parent", "families",
        "adult", "children", "kid", "clinician", "doctor", "nurse", "staff", "worker", "employee", "owner", "leader", "researcher",
        "practitioner", "hobbyist", "individual", "member", "community", "public", "caregiver", "maker", "builder", "newcomer", "learner",
        "founder", "entrepreneur", "designer", "teacher", "resident", "citizen", "customer", "client", "buyer", "shopper", "traveller",
        "traveler", "cook", "chef", "gardener", "beekeeper", "farmer", "investor", "marketer", "writer", "creator", "musician", "artist",
        "executive", "analyst", "scientist", "consumer", "volunteer", "councillor", "official", "startup", "startups", "company", "companies",
        "business", "businesses", "organisation", "organization", "organizations", "organisations", "vet", "vets", "pet", "homeowner",
        "personas", "persona", "oyentes", "lectores", "usuarios", "estudiantes", "profesionales", "aficionados", "cocineros", "publico",
        "personnes", "auditeurs", "lecteurs", "utilisateurs", "etudiants", "professionnels", "amateurs", "passionnes", "menschen", "horer",
        "leser", "nutzer",
    ]

    /// A description of people for a result whose `targetAudience` failed: those interested
    /// in its first topics, in the result's language.
    public static func audience(topics: [String], language: String) -> String {
        // A topic is lower-cased as a phrase ("Privacy" → "privacy"), except acronyms ("AI")
        // and names of two or more capitalised words ("Fernhill Labs").
        let about = topics.prefix(2).map { t -> String in
            let words = t.split(separator: " ")
            if words.count >= 2, words.allSatisfy({ $0.first?.isUppercase ?? false }) { return t }
            return words.map { w in w.count >= 2 && w.allSatisfy({ $0.isUppercase || $0.isNumber }) ? String(w) : w.lowercased() }.joined(separator: " ")
        }
        let lang = String(language.prefix(2))
        let and = ["es": " y ", "fr": " et ", "de": " und "][lang] ?? " and "
        let list = about.isEmpty ? nil : about.joined(separator: and)
        switch lang {
        case "es": return list.map { "Personas interesadas en \($0)" } ?? "Público general"
        case "fr": return list.map { "Personnes intéressées par \($0)" } ?? "Grand public"
        case "de": return list.map { "Menschen, die sich für \($0) interessieren" } ?? "Allgemeines Publikum"
        default: return list.map { "People interested in \($0)" } ?? "A general audience"
        }
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
