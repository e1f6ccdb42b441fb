import ParlanceDocuments
import ParlanceProtocol

/// Judges one rewrite (a compose variation or refinement) against the selection it
/// rewrites: it must be a rewrite at all (no refusal, no echo of the prompt, not the
/// selection unchanged), keep every number and name exactly, be in the requested
/// language, and stay within sane bounds of the selection's length.
public enum RewriteVerifier {
    public struct Input: Sendable {
        public var original: String
        public var rewrite: String
        /// The prompt's own instruction texts (system line, task, tone description).
        public var instructions: [String]
        /// BCP-47 primary language the rewrite must be in.
        public var language: String
        /// Length bounds as multiples of the selection's word count.
        public var lengthBounds: ClosedRange<Double>
        /// For a refinement: the text refined, which the output must not merely repeat either.
        public var previous: String?
        /// The prompt's worked examples: their names and figures must not turn up in the output.
        public var examples: [String]
        /// The tone asked for: its markers must be there (`ToneCheck`).
        public var tone: Tone?
        public init(original: String, rewrite: String, instructions: [String], language: String, lengthBounds: ClosedRange<Double> = 0.3...3.0,
                    previous: String? = nil, examples: [String] = [], tone: Tone? = nil) {
            self.tone = tone
            self.previous = previous
            self.examples = examples
            self.original = original
            self.rewrite = rewrite
            self.instructions = instructions
            self.language = language
            self.lengthBounds = lengthBounds
        }
    }

    /// The texts whose numbers and names a rewrite may write: the selection, and for a
    /// refinement the text refined.
    public static func factSources(original: String, previous: String?) -> [String] {
        [original] + (previous.map { [$0] } ?? [])
    }

    /// What the checks find in `x.rewrite` (nothing: it passes).
    public static func check(_ x: Input) -> [Finding] {
        var out: [Finding] = []
        let text = x.rewrite.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.isEmpty || !TextChecks.isLanguage(text) { return [Finding(.degenerate, .notARewrite(text))] }
        if let phrase = TextChecks.refusal(in: text, source: x.original) { out.append(Finding(.refusal, .refusal(phrase))) }
        if let echo = TextChecks.echo(in: text, instructions: x.instructions, source: x.original) {
            out.append(Finding(.instructionEcho, .rewriteEchoesPrompt(echo)))
        }
        let lowered = text.lowercased(), selection = x.original.lowercased() + " " + (x.previous ?? "").lowercased()
        let subjects = x.examples.isEmpty ? [] : ComposePrompt.exampleSubjects.filter { lowered.contains($0) && !selection.contains($0) }
        let borrowed = Facts.borrowed(from: x.examples, in: text, original: x.original)
        if !borrowed.isEmpty || !subjects.isEmpty { out.append(Finding(.instructionEcho, .copiesExample(borrowed.map(\.text) + subjects))) }
        if TextChecks.normalized(text) == TextChecks.normalized(x.original) {
            out.append(Finding(.unchanged, .unchanged(revision: false)))
        } else if let previous = x.previous, TextChecks.normalized(text) == TextChecks.normalized(previous) {
            out.append(Finding(.unchanged, .unchanged(revision: true)))
        }
        let missing = Facts.missing(Facts.extract(x.original), in: text)
        if !missing.isEmpty { out.append(Finding(.factMissing, .factsMissing(missing.map(\.text)))) }
        // Not for a refinement (its instruction may ask for other words) nor a rewrite into
        // another language than the selection's.
        let sameLanguage = LanguageDetector.detect(x.original).code == (x.language.split(separator: "-").first.map(String.init) ?? x.language)
        if x.tone != .direct, x.previous == nil, sameLanguage, let (kept, of) = contentKept(text, original: x.original),
           Double(kept) < minContentShare * Double(of) {
            out.append(Finding(.factMissing, .contentLost(kept: kept, of: of)))
        }
        if x.previous == nil, let from = personChanged(text, original: x.original) { out.append(Finding(.unsupportedFact, .personChanged(from: from))) }
        let invented = invented(in: text, x, borrowed: borrowed)
        if !invented.isEmpty { out.append(Finding(.unsupportedFact, .factsNotInSelection(invented.map(\.text)))) }
        let originalWords = TextChecks.wordCount(x.original)
        let words = TextChecks.wordCount(text)
        if originalWords >= 8, !x.lengthBounds.contains(Double(words) / Double(originalWords)) {
            out.append(Finding(.length, .length(words: words, selectionWords: originalWords, bounds: x.lengthBounds)))
        }
        // The tone's markers (`ToneCheck`): formal and casual by the formality score and
        // contractions, empathetic by an acknowledgement, direct by its first sentence and
        // length, diplomatic by a hedge.
        if let tone = x.tone, !Ablation.off("rewrite.tone"), case let failures = ToneCheck.check(text, tone: tone, original: x.original, language: x.language), !failures.isEmpty {
            out.append(Finding(.toneMismatch, .tone(tone, failures)))
        }
        if words >= 8 {
            let (code, confidence) = LanguageDetector.detect(text)
            let want = x.language.split(separator: "-").first.map(String.init) ?? x.language
            if code != want, confidence >= 0.5, code != "und" { out.append(Finding(.wrongLanguage, .wrongLanguage(found: code, wanted: want))) }
        }
        return out
    }

    /// A rewrite keeps at least this share of the selection's content words (a direct one,
    /// which shortens, is exempt). A tone rewrite keeps most of them; "Hey, team: the
    /// pandemic was really tough on the industry. Let's talk about it!" kept one of fifteen
    /// (SmolLM2-135M, a real podcast's quote about a career in marine mechanics) and passed.
    static let minContentShare = 0.3
    /// Selections with fewer content words than this are not judged by the share.
    static let minContentWords = 6

    /// (kept, of): how many of the selection's content terms (`TextChecks.terms`, stemmed: a
    /// plural as its singular) the rewrite writes; nil for a short selection.
    static func contentKept(_ text: String, original: String) -> (kept: Int, of: Int)? {
        let own = TextChecks.terms(original)
        guard own.count >= minContentWords else { return nil }
        return (own.intersection(TextChecks.terms(text)).count, own.count)
    }

    /// The third-person pronoun the selection says of someone that the rewrite turned into
    /// "you" ("He actually started his career in marine mechanics…" → "You started your career
    /// in marine mechanics…", the 1.5B's casual rewrite of a real podcast's quote, passed):
    /// the selection says no "you", and the rewrite says it where it has fewer of the
    /// selection's he/she/his/her. English only; nil when nothing changed hands.
    static func personChanged(_ text: String, original: String) -> String? {
        let second: Set<String> = ["you", "your", "yours", "yourself"]
        let third = ["he", "she", "his", "her", "him", "hers", "himself", "herself"]
        let before = TextChecks.wordsWithoutYouFillers(original), after = TextChecks.wordsWithoutYouFillers(text)
        guard !before.contains(where: second.contains), after.contains(where: second.contains) else { return nil }
        return third.first { p in after.filter { $0 == p }.count < before.filter { $0 == p }.count }
    }

    /// "Add nothing": the numbers and names of `text` that the selection does not have ("Dear
    /// Mark", "exactly 3 sentences"), but for those of the prompt's examples (`borrowed`,
    /// found apart), of its instructions (left to the echo check) and a greeting's "Team".
    static func invented(in text: String, _ x: Input, borrowed: [Facts.Fact]) -> [Facts.Fact] {
        Facts.unsupported(in: text, by: factSources(original: x.original, previous: x.previous)).filter { f in
            !borrowed.contains { $0.kind == f.kind && $0.key == f.key } && !(f.kind == .name && (x.instructions.contains { $0.contains(f.text) } || Facts.addressees.contains(f.key)))
        }
    }

    /// `x.rewrite` repaired where that is safe (`RewriteRepair`, then `InventedSentences`, in
    /// `.repair` mode) and then checked: the checks' findings, then the repairs'.
    public static func verify(_ x: Input, mode: VerifyMode) -> Repaired<String> {
        var repaired = RewriteRepair.repair(x.rewrite, original: x.original, tone: x.tone, mode: mode)
        if mode == .repair, !Ablation.off("rewrite.invented") {
            let borrowed = Facts.borrowed(from: x.examples, in: repaired.value, original: x.original)
            let dropped = InventedSentences.drop(invented(in: repaired.value, x, borrowed: borrowed) + borrowed, from: repaired.value,
                                                 original: x.original)
            repaired = Repaired(dropped.value, findings: repaired.findings + dropped.findings)
        }
        var checked = x
        checked.rewrite = repaired.value
        return Repaired(repaired.value, findings: check(checked) + repaired.findings)
    }

    /// How bad a failing rewrite is, to keep the best of several attempts: each missing
    /// fact counts three, a tone that is off one, the length or an unchanged text three.
    /// Words the selection does not say (an invented figure, a copy of the prompt's example,
    /// an echo of the prompt, a refusal, no text at all, another language) count more than
    /// any number of missing facts: of two attempts that failed, the one returned may leave
    /// something out, but does not say something wrong.
    public static func severity(_ findings: [Finding], missingFacts: Int) -> Int {
        let wrong: Set<VerificationIssueCode> = [.unsupportedFact, .instructionEcho, .refusal, .degenerate, .wrongLanguage]
        let open = findings.filter(\.isOpen)
        let incomplete = open.reduce(0) { $0 + ($1.code == .factMissing ? 3 * missingFacts : $1.code == .toneMismatch ? 1 : wrong.contains($1.code) ? 0 : 3) }
        return open.filter { wrong.contains($0.code) }.count * 1_000 + incomplete
    }
}
