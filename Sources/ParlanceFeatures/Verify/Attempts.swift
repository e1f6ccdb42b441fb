import Foundation
import ParlanceProtocol

/// Generate, check, and generate again (another seed, a stricter prompt) until a result
/// passes its checks, `maxAttempts` are used, or the time budget is spent. The result
/// returned is the first with the fewest open findings (`Finding.isOpen`), and its
/// `Verification` says honestly whether it passed. With `verify: false` the checks run once,
/// in `mode` `.report`.
public struct Attempts: Sendable {
    public var maxAttempts: Int
    public var verify: Bool
    /// The time budget as a multiple of the first attempt's time.
    public var budgetFactor: Double
    public static let defaultMaxAttempts = 3

    /// What the checks do about what they find: repair (`verify: true`) or report.
    public var mode: VerifyMode { VerifyMode(verify: verify) }

    public init(verify: Bool?, maxAttempts: Int?, budgetFactor: Double = 3) {
        self.verify = verify ?? true
        self.maxAttempts = self.verify ? max(1, maxAttempts ?? Attempts.defaultMaxAttempts) : 1
        self.budgetFactor = budgetFactor
    }

    /// No new attempt starts once this much time has passed since the first began:
    /// `budgetFactor` times the first attempt, at least 2 s.
    func budget(firstAttempt: Duration) -> Duration { max(.seconds(2), firstAttempt * budgetFactor) }

    /// `make(n)` produces attempt n (1-based); `check` judges it. A new attempt is announced
    /// with `$/progress` `{attempt, restart: true}` for `part`.
    /// `rank` orders failing attempts (lower is better; default: the number of open findings).
    /// `worthRetrying` may stop early: false when another attempt is not expected to do better
    /// (default: always worth it).
    public func run<T: Sendable>(progress: ProgressReporter, part: String? = nil, _ make: (Int) async throws -> T,
                                 check: (T) -> [Finding],
                                 rank: ((T, [Finding]) -> Int)? = nil,
                                 worthRetrying: ((T, [Finding]) -> Bool)? = nil) async throws -> (value: T, verification: Verification) {
        let clock = ContinuousClock()
        let start = clock.now
        var firstDuration: Duration?
        var best: (value: T, findings: [Finding], blocking: Int)?
        var attempt = 0
        while true {
            attempt += 1
            let value = try await make(attempt)
            if firstDuration == nil { firstDuration = clock.now - start }
            let findings = check(value)
            let failing = findings.filter(\.isOpen).count
            let blocking = failing == 0 ? 0 : max(1, rank?(value, findings) ?? failing)
            if best == nil || blocking < best!.blocking { best = (value, findings, blocking) }
            guard blocking > 0, verify, attempt < maxAttempts, clock.now - start < budget(firstAttempt: firstDuration!),
                  worthRetrying?(value, findings) ?? true else { break }
            try Task.checkCancellation()
            let why = findings.filter(\.isOpen).map(\.message).joined(separator: "; ")
            progress(.init(kind: .report, message: "attempt \(attempt) failed verification (\(why)); generating again", phase: .verifying,
                           part: part, attempt: attempt + 1, restart: true))
        }
        let b = best!
        return (b.value, Verification(passed: b.blocking == 0, attempts: attempt, issues: b.findings.map(\.issue)))
    }

    /// The seed of attempt n: the request's seed first, then far from it.
    public static func seed(_ base: UInt32, attempt: Int) -> UInt32 { base &+ UInt32(attempt - 1) &* 7919 }
}
