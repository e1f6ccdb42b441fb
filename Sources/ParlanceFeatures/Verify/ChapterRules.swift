import Foundation
import ParlanceDocuments
import ParlanceJSON
import ParlanceProtocol

/// A chapter before it has times: its title and the id of its first segment.
struct ChapterDraft: Sendable, Equatable {
    var title: String
    var startId: Int
}

/// The rules chapters must pass, and their repair. Layout (`layout`, `layoutFindings`): in
/// document order, one chapter per first segment, the first at the document's first
/// segment, each ending where the next begins, the last at the last segment. Titles
/// (`titleProblem`): not empty, at most `maxWords` words, not a repeat of an earlier title,
/// not only a name, not the prompt's or the user's instructions, supported by the
/// transcript (`ListItemRules`, as a phrase).
public enum ChapterRules {
    public static let maxWords = 8
    /// The characters a title may take: the grammar stops a title here, so a title this long
    /// was cut, most likely mid-word ("Navigating Complex Adaptive Systems during a Pandi",
    /// the 1.5B model on a real talk, passed). Well above what `maxWords` words take: at 50,
    /// the 0.5B's titles of a real podcast were cut at a word's end ("Reda starts a machine
    /// learning course, then uses") where no rule can see the cut; a title that runs long now
    /// ends as the model ends it, and fails for its words.
    public static let maxCharacters = 80
    /// A title that is a piece of a sentence: it opens in lower case, or ends on a comma or a
    /// word no title ends with ("Reda, a front-end developer based in Morocco, is", "fast and
    /// having learning gaps in projects,": the 0.5B on a real podcast, issue 80).
    static func cut(_ title: String) -> Bool {
        ListItemRules.brokenOff(title, endings: ",;:-\u{2013}\u{2014}", dangling: ListItemRules.sentenceDangling.union(ListItemRules.danglingWords))
    }

    /// The prompt's field names: a title that is one of them is a label, not content.
    static let labels = ["chapters", "chapter", "title", "titles", "startSegmentId", "part"]

    /// Drafts → chapters in document order: ids that are no segment's dropped, one chapter
    /// per first segment (the first title given for it), the first moved to the document's
    /// first segment so that the chapters cover it from its start.
    static func layout(_ drafts: [ChapterDraft], segments: [Segment]) -> [ChapterDraft] {
        let position = Dictionary(segments.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { a, _ in a })
        var seen = Set<Int>()
        var out = drafts.filter { position[$0.startId] != nil }
            .enumerated().sorted { (position[$0.element.startId]!, $0.offset) < (position[$1.element.startId]!, $1.offset) }
            .map(\.element).filter { seen.insert($0.startId).inserted }
        if let first = segments.first, !out.isEmpty { out[0].startId = first.id }
        return out
    }

    /// What is wrong with `title` after the titles kept before it, or nil.
    static func titleProblem(_ title: String, before kept: [String], names: Set<String>, source: SourceSupport,
                             instructions: [String]) -> (code: VerificationIssueCode, subject: Finding.Subject)? {
        let t = title.trimmingCharacters(in: .whitespacesAndNewlines)
        let words = Lexicon.words(t).filter { $0.contains(where: \.isLetter) }.count
        if !t.isEmpty, names.contains(TextChecks.normalized(t)) { return (.nameOnlyItem, .chapterTitle(t)) }
        if words > maxWords { return (.length, .chapterTitleWords(t, words: words)) }
        // The title as the grammar stopped it: a title cut there had its last space trimmed
        // ("Reda starts a machine learning course, then uses ", the 0.5B on a real podcast).
        if title.trimmingCharacters(in: .newlines).count >= maxCharacters { return (.length, .chapterTitle(t)) }
        if cut(t) { return (.length, .chapterTitle(t)) }
        guard let code = ListItemRules.problem(t, kind: .phrase, before: kept, labels: labels, names: names, source: source,
                                               instructions: instructions) else { return nil }
        return (code, .chapterTitle(t))
    }

    /// The titles checked in order, each against the passing ones before it. `.repair`:
    /// a failing chapter is merged into the one before it (the first into the next, which
    /// then starts at the document's first segment), titles trimmed; never below
    /// `minChapters`: the least bad failing chapters stay (names and labels before long
    /// titles and repeats), their findings open, so another attempt is asked for and the
    /// result does not pass. Other modes change nothing.
    static func check(_ drafts: [ChapterDraft], segments: [Segment], names: Set<String>, source: SourceSupport,
                      instructions: [String], mode: VerifyMode, minChapters: Int = 1) -> Repaired<[ChapterDraft]> {
        var kept: [ChapterDraft] = []
        var failing: [(index: Int, code: VerificationIssueCode, subject: Finding.Subject)] = []
        for (i, d) in drafts.enumerated() {
            if let p = titleProblem(d.title, before: kept.map(\.title), names: names, source: source, instructions: instructions) {
                failing.append((i, p.code, p.subject))
            } else {
                kept.append(ChapterDraft(title: d.title.trimmingCharacters(in: .whitespacesAndNewlines), startId: d.startId))
            }
        }
        guard mode == .repair else {
            return Repaired(drafts, findings: failing.map { Finding($0.code, $0.subject, path: "chapters[\($0.index)].title").acted(.removed, mode) })
        }
        let order: [VerificationIssueCode] = [.nameOnlyItem, .labelItem, .length, .duplicateItem]
        var restored = Set<Int>()
        for f in failing.sorted(by: { (order.firstIndex(of: $0.code) ?? 9, $0.index) < (order.firstIndex(of: $1.code) ?? 9, $1.index) })
        where kept.count + restored.count < max(1, minChapters) { restored.insert(f.index) }
        let findings = failing.map { f in
            let finding = Finding(f.code, f.subject, path: "chapters[\(f.index)].title")
            return restored.contains(f.index) ? finding : finding.acted(.removed, mode)
        }
        let passing = Set(drafts.indices).subtracting(failing.map(\.index))
        var out = drafts.indices.filter { passing.contains($0) || restored.contains($0) }.map { i in
            ChapterDraft(title: drafts[i].title.trimmingCharacters(in: .whitespacesAndNewlines), startId: drafts[i].startId)
        }
        if let first = segments.first, !out.isEmpty { out[0].startId = first.id }
        return Repaired(out, findings: findings)
    }

    /// The chapters as the result has them: each with its first and last segment, times
    /// (start: its first segment's; end: the next chapter's start, the last the document's
    /// end) or, for plain text, offsets.
    static func chapters(_ drafts: [ChapterDraft], segments: [Segment]) -> [JSONValue] {
        let position = Dictionary(segments.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { a, _ in a })
        let starts = drafts.compactMap { position[$0.startId] }
        guard starts.count == drafts.count, let lastSegment = segments.last else { return [] }
        return drafts.indices.map { i in
            let first = segments[starts[i]]
            let last = i + 1 < drafts.count ? segments[max(starts[i], starts[i + 1] - 1)] : lastSegment
            var o = JSONObject([("title", .string(drafts[i].title)), ("startSegmentId", .int(first.id)), ("endSegmentId", .int(last.id))])
            if let s = first.start { o["start"] = .double(s) }
            let end = i + 1 < drafts.count ? segments[starts[i + 1]].start ?? last.end : segments.compactMap(\.end).max()
            if let e = end { o["end"] = .double(e) }
            if let s = first.sourceStart { o["startOffset"] = .int(s) }
            if let e = last.sourceEnd { o["endOffset"] = .int(e) }
            return .object(o)
        }
    }

    /// The result's chapters against the transcript: what is wrong with their order and
    /// coverage (each an open finding), none when they cover every segment once, in order.
    static func layoutFindings(_ chapters: [JSONValue], segments: [Segment]) -> [Finding] {
        func finding(_ what: String) -> Finding { Finding(.degenerate, .chapterLayout(what), path: "chapters") }
        guard let firstSegment = segments.first, let lastSegment = segments.last else { return [] }
        guard !chapters.isEmpty else { return [finding("are empty")] }
        let position = Dictionary(segments.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { a, _ in a })
        var out: [Finding] = []
        var expected = 0
        var lastTime = -Double.infinity
        for (i, c) in chapters.enumerated() {
            guard let s = c["startSegmentId"]?.intValue.flatMap({ position[$0] }), let e = c["endSegmentId"]?.intValue.flatMap({ position[$0] }) else {
                out.append(finding("name a segment the transcript does not have (chapter \(i + 1))"))
                return out
            }
            if s != expected {
                let id = segments[min(expected, segments.count - 1)].id
                out.append(finding(i == 0 ? "do not start at the first segment (\(firstSegment.id))"
                                          : s > expected ? "leave a gap before chapter \(i + 1) (from segment \(id))" : "overlap at chapter \(i + 1)"))
            }
            if e < s { out.append(finding("end before they start (chapter \(i + 1))")) }
            if let t = c["start"]?.doubleValue {
                if t < lastTime { out.append(finding("are out of order in time (chapter \(i + 1))")) }
                if let end = c["end"]?.doubleValue, end < t { out.append(finding("end before they start in time (chapter \(i + 1))")) }
                lastTime = t
            }
            expected = e + 1
        }
        if expected != segments.count { out.append(finding("do not reach the last segment (\(lastSegment.id))")) }
        return out
    }
}
