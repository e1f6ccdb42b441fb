/// Rendering segments for prompts: one `[id @ mm:ss] Speaker: text` line per segment, so a
/// model can cite segment ids and times back.
extension Chunker {
    /// `[12 @ 03:41] MAYA: text`; without a start time `[12] MAYA: text`; without a speaker
    /// the label is left out.
    public static func promptText(for segments: [Segment]) -> String {
        var out = ""
        for (k, s) in segments.enumerated() {
            if k > 0 { out += "\n" }
            out += "[\(s.id)"
            if let start = s.start { out += " @ " + timestamp(start) }
            out += "] "
            if let speaker = s.speaker { out += speaker + ": " }
            out += s.text
        }
        return out
    }

    /// `MM:SS` below an hour, `H:MM:SS` from an hour on. Negative, NaN and infinite values
    /// render as `00:00`; absurdly large ones are clamped.
    public static func timestamp(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds > 0 else { return "00:00" }
        let total = Int(min(seconds, 3_600_000_000))
        let h = total / 3600, m = (total % 3600) / 60, s = total % 60
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return h > 0 ? "\(h):\(two(m)):\(two(s))" : "\(two(m)):\(two(s))"
    }
}
