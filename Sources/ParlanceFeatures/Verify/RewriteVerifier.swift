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

    public static func check(_ x: Input) -> [VerificationIssue] {
        var issues: [VerificationIssue] = []
        let text = x.rewrite.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.isEmpty || !TextChecks.isLanguage(text) {
            return [VerificationIssue(.degenerate, "the output is not a rewrite: \(text.isEmpty ? "empty" : "\"\(clip(text))\"")")]
        }
        if let phrase = TextChecks.refusal(in: text, source: x.original) {
            issues.append(VerificationIssue(.refusal, "the model refused or talked about itself instead of rewriting (\"\(phrase)\")"))
        }
        if let echo = TextChecks.echo(in: text, instructions: x.instructions, source: x.original) {
            issues.append(VerificationIssue(.instructionEcho, "the output repeats the prompt's instructions (\"\(clip(echo))\")"))
        }
        let borrowed = Facts.borrowed(from: x.examples, in: text, original: x.original)
        if !borrowed.isEmpty {
            issues.append(VerificationIssue(.instructionEcho, "the output copies the prompt's example (" + borrowed.map(\.text).joined(separator: ", ") + ")"))
        }
        if TextChecks.normalized(text) == TextChecks.normalized(x.original) {
            issues.append(VerificationIssue(.unchanged, "the output is the selection unchanged"))
        } else if let previous = x.previous, TextChecks.normalized(text) == TextChecks.normalized(previous) {
            issues.append(VerificationIssue(.unchanged, "the output is the text it was asked to revise, unchanged"))
        }
        let missing = Facts.missing(Facts.extract(x.original), in: text)
        if !missing.isEmpty {
            issues.append(VerificationIssue(.factMissing, "facts of the selection missing or changed: " + missing.map(\.text).joined(separator: ", ")))
        }
        // "Add nothing": numbers and names the selection does not have are invented ("Dear
        // Mark", "exactly 3 sentences"). The prompt's own words are left to the echo check.
        let invented = Facts.unsupported(in: text, by: [x.original] + (x.previous.map { [$0] } ?? []))
            .filter { f in !borrowed.contains(f) && !(f.kind == .name && x.instructions.contains { $0.contains(f.text) }) }
        if !invented.isEmpty {
            issues.append(VerificationIssue(.unsupportedFact, "not in the selection: " + invented.map(\.text).joined(separator: ", ")))
        }
        let originalWords = TextChecks.wordCount(x.original)
        let words = TextChecks.wordCount(text)
        if originalWords >= 8 {
            let ratio = Double(words) / Double(originalWords)
            if !x.lengthBounds.contains(ratio) {
                issues.append(VerificationIssue(.length, "the output has \(words) words for a selection of \(originalWords) (outside \(x.lengthBounds.lowerBound)–\(x.lengthBounds.upperBound)×)"))
            }
        }
        if let issue = toneIssue(text, tone: x.tone, original: x.original) { issues.append(issue) }
        if words >= 8 {
            let (code, confidence) = LanguageDetector.detect(text)
            let want = x.language.split(separator: "-").first.map(String.init) ?? x.language
            if code != want, confidence >= 0.5, code != "und" {
                issues.append(VerificationIssue(.wrongLanguage, "the output is in \(code), not \(want)"))
            }
        }
        return issues
    }

    /// The tone's markers (`ToneCheck`): formal and casual by the formality score and
    /// contractions, empathetic by an acknowledgement, direct by its first sentence and
    /// length, diplomatic by a hedge.
    static func toneIssue(_ text: String, tone: Tone?, original: String) -> VerificationIssue? {
        guard let tone else { return nil }
        return ToneCheck.issue(ToneCheck.check(text, tone: tone, original: original), tone: tone)
    }

    /// How bad a failing rewrite is, to keep the best of several attempts: each missing
    /// fact counts three (as much as any other problem), a tone that is off one.
    public static func severity(_ issues: [VerificationIssue], missingFacts: Int) -> Int {
        issues.filter { $0.repaired != true }.reduce(0) {
            $0 + ($1.code == .factMissing ? 3 * missingFacts : $1.code == .toneMismatch ? 1 : 3)
        }
    }

    static func clip(_ s: String, _ n: Int = 80) -> String { s.count > n ? String(s.prefix(n)) + "…" : s }
}
