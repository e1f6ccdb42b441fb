import Foundation
import ParlanceJSON
import ParlanceProtocol

/// Judges one analysis result as JSON: its string lists (each by `ListItemRules`), an
/// optional `targetAudience`, and prose fields that must be language. `apply` repairs a
/// first attempt (or, `VerifyMode.report`, reports on it); `topUp` fills what it still
/// lacks from a later one.
public struct AnalysisVerifier: Sendable {
    var fields: [ListItemRules.Field]
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
    /// Without a source: the transcript's text, so that items repeating `instructions` (the
    /// user's) still fail.
    var echoSource: String? = nil

    public init(fields: [ListItemRules.Field], audienceKey: String? = nil, proseKeys: [String] = [], labels: [String], names: Set<String>,
                source: SourceSupport? = nil, instructions: [String] = [], topicsKey: String? = nil, language: String = "en",
                echoSource: String? = nil) {
        self.echoSource = echoSource
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

    /// One list by the item rules. Dropped items give way to the source's central
    /// sentences (sentence lists) or key phrases, worked out only when an item is dropped.
    func items(_ items: [String], _ f: ListItemRules.Field, mode: VerifyMode = .repair) -> Repaired<[String]> {
        ListItemRules.repair(items, field: f, labels: labels, names: names, source: source, instructions: instructions, echoSource: echoSource, mode: mode,
                             fill: f.kind == .sentence ? source?.centralSentences(statementsOnly: true) ?? [] : source?.topicFill(minItems: f.minItems, excluding: names) ?? [])
    }

    /// The items of a list that pass the rules, none added, none kept to reach a minimum.
    func passing(_ items: [String], _ f: ListItemRules.Field) -> [String] {
        ListItemRules.repair(items, field: ListItemRules.Field(f.key, f.kind, minItems: 0), labels: labels, names: names, source: source,
                             instructions: instructions, echoSource: echoSource).value
    }

    /// The result's lists, audience and prose checked; with `.repair`, repaired first.
    public func apply(_ content: JSONObject, mode: VerifyMode = .repair) -> Repaired<JSONObject> {
        var out = Repaired(content)
        if mode == .repair {
            for key in proseKeys + [audienceKey].compactMap({ $0 }) {
                if let s = out.value[key]?.stringValue { out.value[key] = .string(Self.spaced(s)) }
            }
        }
        for f in fields {
            guard let given = out.value[f.key]?.arrayValue?.compactMap(\.stringValue) else { continue }
            let list = items(given, f, mode: mode)
            if mode == .repair { out.value[f.key] = .array(list.value.map { .string($0) }) }
            out.findings += list.findings
        }
        if mode == .repair { restoreNames(&out) }
        var scalars = Repaired(out.value, findings: scalarFindings(out.value))
        cutToWholeSentences(&scalars, mode: mode)
        if let source, !Ablation.off("summary.support") { checkProseSupport(&scalars, source: source, mode: mode) }
        if mode == .repair { repairAudience(&scalars) }
        return Repaired(scalars.value, findings: out.findings + scalars.findings)
    }

    /// After the last attempt: prose that still fails (no summary, no subject, nothing the
    /// transcript supports) is replaced by an outline of the transcript's parts
    /// (`SourceSupport.outlineSummary`). Before it, such prose stays open, so that another
    /// attempt of the model is asked first: a capable model's next summary beats any
    /// extract. `replaced`: whether it replaced anything.
    public func finalRepair(_ r: Repaired<JSONObject>) -> (result: Repaired<JSONObject>, replaced: Bool) {
        guard let source, !Ablation.off("summary.outline") else { return (r, false) }
        var out = r
        var replaced = false
        for key in proseKeys {
            let open = out.findings.indices.filter { out.findings[$0].path == key && out.findings[$0].isOpen }
            guard !open.isEmpty, let prose = source.fallbackSummary() else { continue }
            out.value[key] = .string(prose)
            for i in open { out.findings[i].action = .replaced(by: .centralSentences) }
            replaced = true
        }
        return (out, replaced)
    }

    /// `text` with single spaces and none before a full stop or comma (French keeps its space
    /// before "?", "!", ":" and ";"): where the number guard refused a number the model had
    /// opened with a space ("the new date is March  in order to", "by Friday .").
    static func spaced(_ text: String) -> String {
        text.replacingOccurrences(of: " {2,}", with: " ", options: .regularExpression)
            .replacingOccurrences(of: " +([.,])", with: "$1", options: .regularExpression)
            .trimmingCharacters(in: .whitespaces)
    }

    /// A prose field cut mid-sentence (its fitted length or the token budget ran out: "The new
    /// launch is on", and it passed) keeps the whole sentences before the fragment (`.repair`;
    /// other modes report it). One with none is left to `finalRepair`: `scalarFindings` calls
    /// it degenerate.
    func cutToWholeSentences(_ r: inout Repaired<JSONObject>, mode: VerifyMode) {
        for key in proseKeys where !r.findings.contains(where: { $0.path == key && $0.isOpen }) {
            guard let prose = r.value[key]?.stringValue, let (whole, fragment) = Self.cut(prose), !whole.isEmpty else { continue }
            var finding = Finding(.length, .proseCut(key: key, fragment: fragment), path: key)
            if mode == .repair {
                r.value[key] = .string(whole)
                finding.action = .removed
            }
            r.findings.append(finding)
        }
    }

    /// `prose` split before a last sentence that has no end ("." "!" "?" "…" or a CJK full
    /// stop, then closing quotes or brackets): the whole sentences and the fragment; nil when
    /// it ends a sentence.
    static func cut(_ prose: String) -> (whole: String, fragment: String)? {
        let text = prose.trimmingCharacters(in: .whitespacesAndNewlines)
        let closing: Set<Character> = ["\"", "'", "\u{201D}", "\u{2019}", ")", "]", "\u{00BB}", "\u{300D}", "\u{FF09}"]
        let enders: Set<Character> = [".", "!", "?", "\u{2026}", "\u{3002}", "\u{FF01}", "\u{FF1F}"]
        guard let last = text.reversed().first(where: { !closing.contains($0) }), !enders.contains(last) else { return nil }
        let sentences = Lexicon.sentences(text, .tiled)
        let fragment = (sentences.last ?? text).trimmingCharacters(in: .whitespacesAndNewlines)
        let whole = sentences.dropLast().joined().trimmingCharacters(in: .whitespacesAndNewlines)
        return (whole, fragment)
    }

    /// Each sentence of a prose field must be supported by the transcript: unsupported ones
    /// are dropped (`.repair`) while others stay; a field with none supported stays open (the
    /// next attempt, then `finalRepair`).
    func checkProseSupport(_ r: inout Repaired<JSONObject>, source: SourceSupport, mode: VerifyMode) {
        for key in proseKeys where !r.findings.contains(where: { $0.path == key && $0.isOpen }) {
            guard let prose = r.value[key]?.stringValue else { continue }
            let sentences = Lexicon.sentences(prose, .tiled).map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
            let unsupported = sentences.filter { !source.supported($0) }
            guard !unsupported.isEmpty else { continue }
            let kept = sentences.filter { source.supported($0) }
            var finding = Finding(.unsupportedFact, .proseUnsupported(key: key, unsupported: unsupported.count, of: sentences.count, first: unsupported[0]),
                                  path: key)
            if mode == .repair, !kept.isEmpty, case let fixed = kept.joined(separator: " "), source.namesSubject(fixed), !Self.continues(fixed) {
                r.value[key] = .string(fixed)
                finding.action = .removed
            }
            r.findings.append(finding)
        }
    }

    /// Prose that opens as the continuation of a sentence no longer there: "It also provides
    /// advice on how to attract angel investors…" was all that was left of the 1.5B's summary
    /// of real captions once its first sentence went as unsupported, and it passed. Such prose
    /// is not repaired by removal; the finding stays open.
    static func continues(_ prose: String) -> Bool {
        let t = prose.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        return t.range(of: #"^((it|they|he|she|this|these|that|we) (also|further|additionally)\b|also\b|additionally\b|in addition\b|furthermore\b|moreover\b|besides\b|however\b|then\b)"#,
                       options: .regularExpression) != nil
    }

    /// A target audience that is a name is repaired before regenerating: the people the
    /// first topics interest (only topics that passed their checks, else the transcript's
    /// key phrases).
    func repairAudience(_ r: inout Repaired<JSONObject>) {
        guard let key = audienceKey, let i = r.findings.firstIndex(where: { $0.code == .audienceIsName }) else { return }
        func usable(_ t: String) -> Bool {
            // Not a name: neither one of the text's nor a run of capitalised words ("Priya Lindqvist").
            let words = t.split(separator: " ")
            return !names.contains(TextChecks.normalized(t)) && !(words.count >= 2 && words.allSatisfy { $0.first?.isUppercase ?? false })
                && !t.contains(":") && words.count <= 5
        }
        var given: [String] = []
        if let tk = topicsKey, let f = fields.first(where: { $0.key == tk }), let items = r.value[tk]?.arrayValue?.compactMap(\.stringValue) {
            // Only topics that pass their checks (a list short of good items keeps failing ones).
            given = passing(items, f).filter(usable)
        }
        let topics = given.isEmpty ? (source?.keyPhrases(excluding: names) ?? []).filter(usable) : given
        let audience = ListItemRules.audience(topics: topics, language: language)
        r.value[key] = .string(audience)
        r.findings[i].action = .replaced(by: .text(audience))
    }

    func scalarFindings(_ o: JSONObject) -> [Finding] {
        var out: [Finding] = []
        if let key = audienceKey, let a = o[key]?.stringValue, let finding = ListItemRules.audienceProblem(a, names: names) { out.append(finding) }
        for key in proseKeys {
            if let s = o[key]?.stringValue, !TextChecks.isLanguage(s) {
                out.append(Finding(.degenerate, .proseNotLanguage(key: key, text: s), path: key))
            } else if let s = o[key]?.stringValue, Self.copiesLines(s, speakers: speakerLabels) || TextChecks.placeholder(in: s, source: "") != nil
                        || ListItemRules.promptMarkup(s, source: source?.text ?? "") {
                out.append(Finding(.degenerate, .proseCopiesLine(key: key, text: s), path: key))
            } else if let s = o[key]?.stringValue, let (whole, fragment) = Self.cut(s), whole.isEmpty {
                out.append(Finding(.degenerate, .proseCut(key: key, fragment: fragment), path: key))
            } else if let s = o[key]?.stringValue, let (written, person) = Self.mixedName(s, people: speakers) {
                out.append(Finding(.unsupportedFact, .mixedName(key: key, written: written, person: person), path: key))
            } else if let s = o[key]?.stringValue, let source, !Ablation.off("summary.subject"), !source.namesSubject(s) {
                // A summary must say what the document is about: "Here's the episode." passed.
                out.append(Finding(.degenerate, .proseVacuous(key: key, text: s), path: key))
            }
        }
        return out
    }

    /// Prose that gives a person another's family name (`mixedName`) gets the person's own
    /// name back: the first name says who is meant ("Reda Hawrot Weigel" → "Reda").
    func restoreNames(_ r: inout Repaired<JSONObject>) {
        let people = speakers
        for key in proseKeys {
            guard var text = r.value[key]?.stringValue else { continue }
            for _ in 0..<4 {
                guard let (written, person) = Self.mixedName(text, people: people), let range = text.range(of: written, options: .caseInsensitive),
                      let first = written.split(separator: " ").first.map({ $0.lowercased() }) else { break }
                let own = people.filter { $0.split(separator: " ").first.map(String.init) == first }.max { $0.count < $1.count } ?? first
                text.replaceSubrange(range, with: own.split(separator: " ").map(\.capitalized).joined(separator: " "))
                r.findings.append(Finding(.unsupportedFact, .mixedName(key: key, written: written, person: person), path: key).acted(.restored, .repair))
            }
            r.value[key] = .string(text)
        }
    }

    /// A person's family name written after another person's first name: "Reda Hawrot
    /// Weigel" (the 1.5B's summary of a real podcast whose speakers are Bekah Hawrot Weigel,
    /// Dan Ott and Reda, passed). `people`: normalized names; the written name and the person.
    static func mixedName(_ prose: String, people: Set<String>) -> (written: String, person: String)? {
        let words = Lexicon.words(prose, .normalized)
        let full = people.map { $0.split(separator: " ").map(String.init) }.filter { $0.count >= 2 }
        let firstNames = Set(people.compactMap { $0.split(separator: " ").first.map(String.init) })
        for parts in full {
            let tail = Array(parts.dropFirst())
            // A name that is itself a speaker's ("Sarah Ott" beside "Dan Ott") is no mix.
            for i in words.indices.dropLast(tail.count) where words[i] != parts[0] && firstNames.contains(words[i])
                && Array(words[(i + 1)...(i + tail.count)]) == tail && !people.contains(([words[i]] + tail).joined(separator: " ")) {
                return (([words[i]] + tail).map(\.capitalized).joined(separator: " "), parts.map(\.capitalized).joined(separator: " "))
            }
        }
        return nil
    }

    /// Prose with a sentence that opens with a speaker's label ("… May. Theo: then docs need
    /// …") copies the transcript's lines, and may give them to the wrong speaker. `speakers`:
    /// normalized; any other name before a colon is no label ("One: install Ollama…", "The
    /// Local Loop: a journey…").
    static func copiesLines(_ prose: String, speakers: Set<String>) -> Bool {
        Lexicon.sentences(prose, .tiled).contains { ListItemRules.speakerLine($0.trimmingCharacters(in: .whitespacesAndNewlines), names: speakers) }
    }

    /// The transcript's speakers (normalized), the people `mixedName` knows; none without a transcript.
    var speakers: Set<String> { source.map { Set($0.segments.compactMap { $0.speaker.map(TextChecks.normalized) }) } ?? [] }

    /// The labels `copiesLines` reads: the transcript's speakers; without a transcript, the
    /// names.
    var speakerLabels: Set<String> {
        source == nil ? names : speakers
    }

    /// `merged` (an earlier attempt, already repaired) completed from `next`: lists that
    /// had to keep failing items get `next`'s good items instead; a failing scalar is
    /// replaced when `next`'s passes.
    func topUp(_ merged: Repaired<JSONObject>, from next: JSONObject) -> Repaired<JSONObject> {
        var o = merged.value
        var out = merged.findings.filter { f in
            // Findings of the parts that get replaced are found again below.
            !(f.isOpen && fields.contains { field in f.path?.hasPrefix(field.key + "[") ?? false })
                && !(f.code == .audienceIsName || (f.code == .degenerate && proseKeys.contains(f.path ?? "")))
        }
        for f in fields {
            let short = merged.findings.contains { $0.isOpen && ($0.path?.hasPrefix(f.key + "[") ?? false) }
            guard short, let items = o[f.key]?.arrayValue?.compactMap(\.stringValue) else { continue }
            // Only the items that passed, then the new attempt's, each checked against all before it.
            let fresh = next[f.key]?.arrayValue?.compactMap(\.stringValue) ?? []
            let list = self.items(passing(items, f) + fresh, f)
            o[f.key] = .array(list.value.prefix(max(f.minItems, items.count)).map { .string($0) })
            out += list.findings.filter(\.isOpen).map { var finding = $0; finding.path = f.key; return finding }
        }
        for finding in scalarFindings(merged.value) where !proseKeys.contains(finding.path ?? "") {
            guard let key = finding.path, let candidate = next[key], case let probe: JSONObject = [key: candidate],
                  scalarFindings(probe).isEmpty else {
                out.append(finding)
                continue
            }
            o[key] = candidate
        }
        // Prose still open (no summary, no subject, none of it supported) takes the next
        // attempt's when that passes every prose check.
        out.removeAll { f in proseKeys.contains(f.path ?? "") && f.isOpen }
        for key in proseKeys {
            let open = merged.findings.filter { $0.path == key && $0.isOpen }
            guard !open.isEmpty else { continue }
            if let candidate = next[key], case let probe = apply([key: candidate]), !probe.blocking {
                o[key] = probe.value[key]
                out += probe.findings
            } else {
                out += open
            }
        }
        return Repaired(o, findings: out)
    }
}
