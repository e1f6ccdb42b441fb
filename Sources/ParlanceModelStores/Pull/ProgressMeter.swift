import ParlanceJSON
import Foundation

/// Progress for one file: at most every 200 ms (and forced at the start and the end),
/// the rate over the last 3 s.
struct ProgressMeter {
    let file: String
    let total: Int?
    let report: @Sendable (PullProgress) -> Void
    static let interval: Duration = .milliseconds(200)
    static let window: Duration = .seconds(3)
    private var samples: [(at: ContinuousClock.Instant, bytes: Int)] = []
    private var last: ContinuousClock.Instant?
    private var resumed = 0

    init(file: String, total: Int?, report: @escaping @Sendable (PullProgress) -> Void) {
        self.file = file
        self.total = total
        self.report = report
    }

    /// A new request: bytes from here are counted for the rate.
    mutating func restart(resumed: Int, completed: Int) {
        self.resumed = resumed
        samples = [(ContinuousClock.now, completed)]
    }

    mutating func update(_ completed: Int, force: Bool = false) {
        let now = ContinuousClock.now
        if !force, let last, now - last < Self.interval { return }
        samples.append((now, completed))
        while samples.count > 2 && now - samples[1].at >= Self.window { samples.removeFirst() }
        var rate = 0.0
        if let first = samples.first {
            let d = now - first.at
            let secs = d.inSeconds
            if secs > 0.001 { rate = Double(max(0, completed - first.bytes)) / secs }
        }
        last = now
        report(PullProgress(file: file, completedBytes: completed, totalBytes: total, bytesPerSecond: rate, resumedBytes: resumed))
    }
}
