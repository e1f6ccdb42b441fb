#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ParlanceInProcess
import Synchronization

/// The command line's output: results on stdout, progress and errors on stderr. On a
/// terminal stderr shows a progress bar; piped or redirected there is no decoration.
final class Terminal: Sendable {
    let stdoutIsTTY = isatty(STDOUT_FILENO) == 1
    let stderrIsTTY = isatty(STDERR_FILENO) == 1
    private struct Bar {
        var shown = false
        var start = ContinuousClock.now
        var last = ContinuousClock.now - .seconds(1)
        var label = ""
    }
    private let bar = Mutex(Bar())  // guards the progress bar's state (drawn from the reader's thread)

    /// Columns of the terminal on stderr, where the bar is drawn (80 when it does not say).
    var columns: Int { Terminal.columns(STDERR_FILENO) }

    /// Columns of the terminal on `fd` (80 when it does not say).
    static func columns(_ fd: Int32) -> Int {
        var w = winsize()
        return ioctl(fd, UInt(TIOCGWINSZ), &w) == 0 && w.ws_col > 0 ? Int(w.ws_col) : 80
    }

    func out(_ s: String) {
        clearBar()
        put(STDOUT_FILENO, s)
    }

    func err(_ s: String) {
        clearBar()
        put(STDERR_FILENO, s)
    }

    private func put(_ fd: Int32, _ s: String) {
        var bytes = Array(s.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            bytes = bytes.dropFirst(n)
        }
    }

    /// Draws `label [#####-----]  42%  ETA 0:12` on stderr, at most ten times a second.
    func progress(_ label: String, percent: Int) {
        guard stderrIsTTY else { return }
        let now = ContinuousClock.now
        let line = bar.withLock { b -> String? in
            if !b.shown { b.start = now }
            guard percent >= 100 || now - b.last >= .milliseconds(100) || label != b.label else { return nil }
            b.last = now
            b.label = label
            b.shown = true
            let p = max(0, min(100, percent))
            let elapsed = (now - b.start) / .seconds(1)
            let eta = p > 0 && p < 100 ? " ETA " + Terminal.clock(elapsed * Double(100 - p) / Double(p)) : ""
            let width = max(10, min(30, columns - label.count - 20))
            let filled = width * p / 100
            return "\r\u{1B}[K" + label.prefix(max(0, columns - width - 20)) + " [" + String(repeating: "#", count: filled)
                + String(repeating: "-", count: width - filled) + "] " + String(p).leftPad(3) + "%" + eta
        }
        if let line { put(STDERR_FILENO, line) }
    }

    func clearBar() {
        let shown = bar.withLock { b -> Bool in
            defer { b.shown = false }
            return b.shown
        }
        if shown { put(STDERR_FILENO, "\r\u{1B}[K") }
    }

    /// Rows `text` takes on the terminal on stdout (for erasing streamed text that was replaced).
    func rows(_ text: String) -> Int {
        let cols = Terminal.columns(STDOUT_FILENO)
        return text.split(separator: "\n", omittingEmptySubsequences: false).reduce(0) { $0 + max(1, ($1.count + cols - 1) / cols) }
    }

    /// Erases `text`, the last thing written to stdout (a terminal).
    func erase(_ text: String) {
        let up = rows(text) - 1
        put(STDOUT_FILENO, "\r" + (up > 0 ? "\u{1B}[\(up)A" : "") + "\u{1B}[J")
    }

    static func clock(_ seconds: Double) -> String { Render.clock(wholeSeconds: Int(seconds.rounded())) }
}

extension String {
    func leftPad(_ n: Int) -> String { count >= n ? self : String(repeating: " ", count: n - count) + self }
}
