import ParlanceDocuments
import ParlanceJSON
import ParlanceProtocol

/// The checks of one analysis result as JSON: its string lists (`ListVerifier`), an
/// optional `targetAudience`, and prose fields that must be language. `apply` repairs a
/// first attempt; `topUp` fills what it still lacks from a later one.
public struct ListCheck: Sendable {
    var fields: [ListVerifier.Field]
    var audienceKey: String? = nil
    var proseKeys: [String] = []
    /// Field names of the prompt's schema: items that repeat them are labels, not content.
    var labels: [String]
    /// Names in the source (speakers, capitalised names and phrases).
    var names: Set<String>
    /// With a source, items must be supported by it and must not repeat `instructions`;
    /// sentence lists are topped up from its central sentences, and a failing audience is
    /// replaced by a description of the people interested in the first topics.
    var source: SourceSupport? = nil
    var instructions: [String] = []
    var topicsKey: String? = nil
    var language = "en"

    public init(fields: [ListVerifier.Field], audienceKey: String? = nil, proseKeys: [String] = [], labels: [String], names: Set<String>,
         source: SourceSupport? = nil, instructions: [String] = [], topicsKey: String? = nil, language: String = "en") {
        self.fields = fields
        self.audienceKey = audienceKey
        self.proseKeys = proseKeys
        self.labels = labels
        self.names = names
        self.source = source
        self.instructions = instructions
        self.topicsKey = topicsKey
        self.language = language
    }

    /// `fill`: dropped items give way to the source's central sentences (sentence lists) or
    /// key phrases, worked out only when an item is dropped.
    func repair(_ items: [String], _ f: ListVerifier.Field, fill: Bool = true) -> (items: [String], issues: [VerificationIssue]) {
        ListVerifier.repair(items, field: f, labels: labels, names: names, source: source, instructions: instructions,
                            fill: !fill ? [] : f.kind == .sentence ? source?.centralSentences() ?? [] : source?.keyPhrases(excluding: names) ?? [])
    }

    /// `repair: false` (verify: false) reports what the checks find and changes nothing.
    public func apply(_ content: JSONObject, repair: Bool = true) -> (JSONObject, [VerificationIssue]) {
        var o = content
        var issues: [VerificationIssue] = []
        for f in fields {
            guard let items = o[f.key]?.arrayValue?.compactMap(\.stringValue) else { continue }
            let (kept, found) = self.repair(items, f, fill: repair)
            if repair {
                o[f.key] = .array(kept.map { .string($0) })
                issues += found
            } else {
                issues += found.map { var i = $0; i.repaired = nil; i.message = i.message.replacingOccurrences(of: ": removed", with: ""); return i }
            }
        }
        var scalars = scalarIssues(o)
        if repair, let source {
            // A prose field that is no summary (a copied line, a placeholder) is repaired before
            // regenerating: the transcript's two most central sentences, in the order said.
            for (i, issue) in scalars.enumerated() where issue.code == .degenerate {
                guard let key = issue.path, proseKeys.contains(key), let prose = source.extractiveSummary(sentences: 2),
                      scalarIssues([key: .string(prose)]).isEmpty else { continue }
                o[key] = .string(prose)
                scalars[i].message += ": replaced by the transcript's central sentences"
                scalars[i].repaired = true
            }
        }
        if let source {
            // Each sentence of a prose field must be supported by the transcript: unsupported
            // ones are dropped, and a field left with none gets the central sentences.
            for key in proseKeys where !scalars.contains(where: { $0.path == key && $0.repaired != true }) {
                guard let prose = o[key]?.stringValue else { continue }
                let sentences = Sentences.split(prose).map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
                let unsupported = sentences.filter { !source.supported($0) }
                guard !unsupported.isEmpty else { continue }
                let kept = sentences.filter { source.supported($0) }
                var message = "\(unsupported.count) of \(sentences.count) sentences of \(key) not supported by the transcript (\"\(RewriteVerifier.clip(unsupported[0], 50))\")"
                if repair {
                    if let fixed = kept.isEmpty ? source.extractiveSummary(sentences: 2) : kept.joined(separator: " ") {
                        o[key] = .string(fixed)
                        message += kept.isEmpty ? ": replaced by the transcript's central sentences" : ": removed"
                        scalars.append(VerificationIssue(.unsupportedFact, message, path: key, repaired: true))
                        continue
                    }
                }
                scalars.append(VerificationIssue(.unsupportedFact, message, path: key))
            }
        }
        if repair, let key = audienceKey, let i = scalars.firstIndex(where: { $0.code == .audienceIsName }) {
            // Repaired before regenerating: the people the first topics interest (only topics
            // that passed their checks, else the transcript's key phrases).
            func usable(_ t: String) -> Bool {
                // Not a name: neither one of the text's nor a run of capitalised words ("Priya Lindqvist").
                let words = t.split(separator: " ")
                return !names.contains(TextChecks.normalized(t)) && !(words.count >= 2 && words.allSatisfy { $0.first?.isUppercase ?? false })
                    && !t.contains(":") && words.count <= 5
            }
            var given: [String] = []
            if let tk = topicsKey, let f = fields.first(where: { $0.key == tk }), let items = o[tk]?.arrayValue?.compactMap(\.stringValue) {
                // Only topics that pass their checks (a list short of good items keeps failing ones).
                given = self.repair(items, ListVerifier.Field(f.key, f.kind, minItems: 0), fill: false).items.filter(usable)
            }
            let topics = given.isEmpty ? (source?.keyPhrases(excluding: names) ?? []).filter(usable) : given
            let audience = ListVerifier.audience(topics: topics, language: language)
            o[key] = .string(audience)
            scalars[i].message += ": replaced by \"\(audience)\""
            scalars[i].repaired = true
        }
        issues += scalars
        return (o, issues)
    }

    func scalarIssues(_ o: JSONObject) -> [VerificationIssue] {
        var issues: [VerificationIssue] = []
        if let key = audienceKey, let a = o[key]?.stringValue, let issue = ListVerifier.audienceProblem(a, names: names) { issues.append(issue) }
        for key in proseKeys {
            if let s = o[key]?.stringValue, !TextChecks.isLanguage(s) {
                issues.append(VerificationIssue(.degenerate, "\(key) is not language: \"\(RewriteVerifier.clip(s))\"", path: key))
            } else if let s = o[key]?.stringValue, ListVerifier.speakerLine(s, names: names) || TextChecks.placeholder(in: s, source: "") != nil {
                issues.append(VerificationIssue(.degenerate, "\(key) copies a transcript line or holds a placeholder: \"\(RewriteVerifier.clip(s))\"", path: key))
            }
        }
        return issues
    }

    /// `merged` (an earlier attempt, already repaired) completed from `next`: lists that
    /// had to keep failing items get `next`'s good items instead; a failing scalar is
    /// replaced when `next`'s passes.
    func topUp(_ merged: JSONObject, issues: [VerificationIssue], from next: JSONObject) -> (JSONObject, [VerificationIssue]) {
        var o = merged
        var out = issues.filter { i in
            // Issues of the parts that get replaced are recomputed below.
            !(i.repaired != true && fields.contains { f in i.path?.hasPrefix(f.key + "[") ?? false })
                && !(i.code == .audienceIsName || (i.code == .degenerate && proseKeys.contains(i.path ?? "")))
        }
        for f in fields {
            let short = issues.contains { $0.repaired != true && ($0.path?.hasPrefix(f.key + "[") ?? false) }
            guard short, let items = o[f.key]?.arrayValue?.compactMap(\.stringValue) else { continue }
            // Only the items that passed, then the new attempt's, each checked against all before it.
            let good = repair(items, ListVerifier.Field(f.key, f.kind, minItems: 0)).items
            let fresh = next[f.key]?.arrayValue?.compactMap(\.stringValue) ?? []
            let (kept, found) = repair(good + fresh, f)
            let limit = max(f.minItems, items.count)
            o[f.key] = .array(kept.prefix(limit).map { .string($0) })
            out += found.filter { $0.repaired != true }.map { var i = $0; i.path = f.key; return i }
        }
        for issue in scalarIssues(merged) {
            guard let key = issue.path, let candidate = next[key], case let probe: JSONObject = [key: candidate],
                  scalarIssues(probe).isEmpty else {
                out.append(issue)
                continue
            }
            o[key] = candidate
        }
        return (o, out)
    }
}
