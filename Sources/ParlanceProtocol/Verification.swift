import ParlanceJSON
import ParlanceSchema

/// How a result was checked against its source before it was returned: whether it passed,
/// how many generations it took, and what is still wrong with it when it did not pass.
/// Every generating method's result carries one (per variation for compose, per answer
/// for ask/stream, per result for analyses).
public struct Verification: Codable, Sendable, Hashable, Schematic {
    public var passed: Bool
    public var attempts: Int
    public var issues: [VerificationIssue]
    public var fallback: VerificationFallback?
    public init(passed: Bool, attempts: Int, issues: [VerificationIssue], fallback: VerificationFallback? = nil) {
        self.passed = passed
        self.attempts = attempts
        self.issues = issues
        self.fallback = fallback
    }
    public static let schemaHints: [String: SchemaHint] = [
        "passed": SchemaHint(description: "True when the returned result passed every check. False: it is the best of the attempts, and `issues` says what is wrong with it."),
        "attempts": SchemaHint(description: "Generations made for this result (1 when the first passed; 0 when no model call was needed, e.g. a question retrieval found nothing for).", minimum: 0),
        "issues": SchemaHint(description: "What the checks found in the returned result, or repaired in it (a repaired issue has `repaired: true`). Empty when it passed cleanly."),
        "fallback": SchemaHint(description: "Set when the model's output was replaced: extractive (the best segments, quoted), notFound (the document does not answer the question), repaired (list items dropped or replaced)."),
    ]
}

public enum VerificationFallback: String, Codable, Sendable, SchemaEnum { case extractive, notFound, repaired }

public struct VerificationIssue: Codable, Sendable, Hashable, Schematic {
    public var code: VerificationIssueCode
    public var message: String
    /// Where in the result, e.g. `keyTakeaways[2]`, `citations`, `targetAudience`.
    public var path: String?
    /// True when the daemon fixed it (dropped a duplicate, replaced a citation).
    public var repaired: Bool?
    public init(_ code: VerificationIssueCode, _ message: String, path: String? = nil, repaired: Bool? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.repaired = repaired
    }
    public static let schemaHints: [String: SchemaHint] = [
        "message": SchemaHint(description: "What is wrong, in words, naming the facts or items concerned."),
        "path": SchemaHint(description: "The field or list item concerned, e.g. keyTakeaways[2], citations, targetAudience."),
        "repaired": SchemaHint(description: "True when the daemon fixed this in the returned result (an item dropped, a citation replaced)."),
    ]
}

/// Every check's code. Rewrites: refusal, instructionEcho, unchanged, factMissing,
/// unsupportedFact (a number or name the selection does not have), wrongLanguage, length,
/// toneMismatch. Answers: degenerate, unsupportedCitation, unsupportedFact,
/// notAnswered. Lists: duplicateItem, labelItem, nameOnlyItem, audienceIsName, emptyList.
public enum VerificationIssueCode: String, Codable, Sendable, CaseIterable, SchemaEnum {
    case refusal, instructionEcho, unchanged, factMissing, wrongLanguage, length, toneMismatch
    case degenerate, unsupportedCitation, unsupportedFact, notAnswered
    case duplicateItem, labelItem, nameOnlyItem, audienceIsName, emptyList
}

extension SchemaHint {
    /// The two verification params, said once for every method that takes them.
    public static let verify = SchemaHint(description: """
        Check the result against its source and, when a check fails, generate again (another seed, stricter prompt) or \
        fall back (default true). false: the checks still run and are reported in `verification`, but the first output \
        is returned as it is.
        """)
    public static let maxAttempts = SchemaHint(description: "Generations allowed per result (or per variation) when checks fail, the first included (default 3).",
                                               minimum: 1, maximum: 6)
}
