import ParlanceProtocol
import Synchronization

/// Streamed text of one part of a result, written to stdout as it arrives. A `restart`
/// (a retry after verification, or a fallback) replaces what was streamed: on a terminal
/// the old text is erased; piped, the new text starts on a new line.
final class StreamView: Sendable {
    private let terminal: Terminal
    /// Which part streams: nil for results without parts; else the first part seen that
    /// is not `skip`.
    private let parts: Bool
    private let skip: Set<String>
    private struct State {
        var part: String? = nil
        var text = ""
        var wrote = false
        /// A restart came without text (a new attempt announced): the next text replaces what is shown.
        var restart = false
    }
    private let state = Mutex(State())  // guards the streamed part and its text

    init(_ terminal: Terminal, parts: Bool = false, skip: Set<String> = []) {
        self.terminal = terminal
        self.parts = parts
        self.skip = skip
    }

    /// Handles a progress value; true when it was streamed text.
    func take(_ v: ParlanceProtocol.Progress.Value) -> Bool {
        guard let delta = v.delta else {
            // A new attempt is announced before its text (`restart` without a delta): for the
            // streamed part, or for the whole result when it names no part.
            if v.restart == true {
                state.withLock { s in
                    if !parts || v.part == nil || s.part == nil || v.part == s.part { s.restart = true }
                }
            }
            return false
        }
        let out = state.withLock { s -> (erase: String?, write: String)? in
            if parts {
                guard let p = v.part, !skip.contains(p) else { return nil }
                if s.part == nil { s.part = p }
                guard s.part == p else { return nil }
            }
            var erase: String? = nil
            var prefix = ""
            if v.restart == true || s.restart {
                s.restart = false
                if terminal.stdoutIsTTY { erase = s.text } else if s.wrote && !s.text.hasSuffix("\n") { prefix = "\n" }
                s.text = ""
            }
            s.text += delta
            s.wrote = true
            return (erase, prefix + delta)
        }
        guard let out else { return true }
        terminal.clearBar()
        if let e = out.erase, !e.isEmpty { terminal.erase(e) }
        terminal.out(out.write)
        return true
    }

    /// What is on screen now for the streamed part.
    var text: String { state.withLock { $0.text } }
    var streamedPart: String? { state.withLock { $0.part } }

    /// Makes sure the screen ends with `final` (the result's own text): replaces the
    /// streamed text when it differs, then ends the line.
    func finish(with final: String) {
        let (shown, wrote) = state.withLock { ($0.text, $0.wrote) }
        if shown.trimmingCharacters(in: .whitespacesAndNewlines) != final.trimmingCharacters(in: .whitespacesAndNewlines) {
            if wrote {
                if terminal.stdoutIsTTY { terminal.erase(shown) } else { terminal.out(shown.hasSuffix("\n") ? "" : "\n") }
            }
            terminal.out(final)
            terminal.out(final.hasSuffix("\n") ? "" : "\n")
        } else {
            terminal.out(shown.hasSuffix("\n") ? "" : "\n")
        }
    }
}
