import ParlanceProtocol

/// One thing a check found in a result, and what its repair did about it. Every check and
/// every repair of `Verify/` says what it found in this one shape; the words a client reads
/// are written once, when a finding becomes the wire's `VerificationIssue` (`issue`,
/// `FindingMessages.swift`).
public struct Finding: Hashable, Sendable {
    /// What a repair did about a finding.
    public enum Action: Hashable, Sendable {
        /// The part went (a list item, a citation, a sentence, a name in the greeting).
        case removed
        /// A part was added in place of one that went (a sentence of the transcript, a citation).
        case added
        /// The source's own text was put back (a fact the output had changed).
        case restored
        /// The part was replaced by something else.
        case replaced(by: Replacement)
    }

    /// What stands where a replaced part was.
    public enum Replacement: Hashable, Sendable {
        /// The same text reworded (a tone's lexical repair).
        case rewording
        /// The transcript's most central sentences (an extractive summary).
        case centralSentences
        /// This text, named in the message (a new target audience).
        case text(String)
        /// The daemon's "not found in the document" answer.
        case notFound
    }

    public var code: VerificationIssueCode
    /// Where in the result, e.g. `keyTakeaways[2]`, `citations`, `targetAudience`.
    public var path: String?
    public var subject: Subject
    /// What the repair did; nil: only reported (nothing was, or could be, done).
    public var action: Action?
    /// False when `action` is what the repair would do, not what it did (`VerifyMode.propose`).
    public var applied: Bool

    public init(_ code: VerificationIssueCode, _ subject: Subject, path: String? = nil, action: Action? = nil, applied: Bool = true) {
        self.code = code
        self.subject = subject
        self.path = path
        self.action = action
        self.applied = applied
    }

    /// Still wrong in the result returned: no repair took care of it, so it counts against
    /// the result (and another attempt may do better).
    public var isOpen: Bool { action == nil || !applied }

    /// The finding as the wire carries it.
    public var issue: VerificationIssue {
        VerificationIssue(code, message, path: path, repaired: isOpen ? nil : true)
    }

    /// This finding with `action`, taken or (`mode` other than `.repair`) only proposed or
    /// left out: what each mode says about a repair.
    func acted(_ action: Action, _ mode: VerifyMode) -> Finding {
        var f = self
        switch mode {
        case .repair: f.action = action
        case .propose: f.action = action; f.applied = false
        case .report: f.action = nil
        }
        return f
    }
}

/// What verification does about what it finds: `verify: true` repairs, `verify: false`
/// reports. One call of a check serves both; nothing is taken back afterwards.
public enum VerifyMode: Sendable, Equatable {
    /// Repair what can be repaired safely; each finding says what was done.
    case repair
    /// Change nothing; each finding says only what is wrong.
    case report
    /// Change nothing; each finding says what the repair would have done, not marked
    /// repaired. Only the list-item rules of analysis/compare and analysis/highlights use
    /// it: their `verify: false` has said so since before the modes.
    case propose

    public init(verify: Bool) { self = verify ? .repair : .report }
}

/// A repaired value and what its checks found: every repair returns one. With
/// `VerifyMode.report` (and `.propose`) `value` is what was given.
@dynamicMemberLookup
public struct Repaired<Value> {
    public var value: Value
    public var findings: [Finding]

    public init(_ value: Value, findings: [Finding] = []) {
        self.value = value
        self.findings = findings
    }

    public subscript<T>(dynamicMember path: KeyPath<Value, T>) -> T { value[keyPath: path] }

    /// The findings as the wire carries them.
    public var issues: [VerificationIssue] { findings.map(\.issue) }

    /// Something is still wrong: a finding no repair took care of.
    public var blocking: Bool { findings.contains(where: \.isOpen) }
}

extension Repaired: Sendable where Value: Sendable {}
extension Repaired: Equatable where Value: Equatable {}

extension Verification {
    /// The verification of a result checked once (no retries): passed when every finding
    /// was repaired, with the fallback `repaired` when there were any.
    public init(checked findings: [Finding], attempts: Int = 1) {
        let passed = !findings.contains(where: \.isOpen)
        self.init(passed: passed, attempts: attempts, issues: findings.map(\.issue), fallback: passed && !findings.isEmpty ? .repaired : nil)
    }
}
