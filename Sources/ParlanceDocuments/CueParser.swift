/// SRT and WebVTT cue blocks → timed segments. One pass over the lines; anything that is
/// not a cue becomes a warning and the parser moves on.
struct ParsedSegment {
    var start: Double?
    var end: Double?
    var speaker: String?
    var text: String
}

/// Warnings with a cap, so a hostile multi-megabyte file cannot produce millions of them.
struct WarningLog {
    static let limit = 500
    private(set) var items: [ParseWarning] = []
    private var dropped = 0

    mutating func add(_ line: Int, _ message: String) {
        if items.count < WarningLog.limit { items.append(ParseWarning(line: line, message: message)) } else { dropped += 1 }
    }

    var all: [ParseWarning] {
        guard dropped > 0 else { return items }
        return items + [ParseWarning(line: items.last?.line ?? 0, message: "\(dropped) further warnings not shown")]
    }
}

/// One cue as written: its times and the input lines of its text. `RollingCaptions` reads
/// these, because it needs the inline word timings that cleaning removes.
struct RawCue {
    var start: Double
    var end: Double
    var lines: [Int]  // 0-based line indices
}

struct CueParser {
    let lines: Lines
    let vtt: Bool
    var warnings = WarningLog()
    var segments: [ParsedSegment] = []
    /// WebVTT only: every cue, text or not, in input order.
    var cues: [RawCue] = []
    /// Speaker carried from the previous cue to unlabeled cues.
    private var carried: String?
    /// Names labelled at the start of some line: only these are read as labels mid-line.
    private let known: Set<String>

    init(lines: Lines, vtt: Bool) {
        self.lines = lines
        self.vtt = vtt
        known = SpeakerTurns.lineStartNames(lines)
    }

    private enum State { case idle, header, skip, cue }

    private struct OpenCue {
        var timingLine: Int  // 0-based
        var start: Double
        var end: Double
        var text: [Int] = []  // line indices
    }

    mutating func run() {
        var state = State.idle
        var open: OpenCue?
        var pendingId: Int?  // a lone line that may be the next cue's identifier
        var i = 0
        if vtt {
            while i < lines.count, Bytes.isBlank(lines[i]) { i += 1 }
            if i < lines.count, Bytes.startsWithKeyword(lines[i], "WEBVTT") {
                state = .header
                i += 1
            } else {
                warnings.add(i + 1, "missing WEBVTT header")
            }
        }
        while i < lines.count {
            let line = lines[i]
            defer { i += 1 }
            if Bytes.isBlank(line), !spacesInCue(i, open) {
                if state == .cue, let c = open { finish(c) }
                open = nil
                if let p = pendingId { warnings.add(p + 1, "text outside a cue ignored") }
                pendingId = nil
                state = .idle
                continue
            }
            let timing = Timing.parse(line)
            switch (state, timing) {
            case (_, .valid(let start, let end)):
                if state == .cue, var c = open {
                    // A missing blank line: the previous cue's last line may be this cue's number.
                    var first = i
                    if let last = c.text.last, last == i - 1, Bytes.isInteger(lines[last]) {
                        c.text.removeLast()
                        first = last
                    }
                    warnings.add(first + 1, "missing blank line before this cue")
                    finish(c)
                }
                pendingId = nil
                open = OpenCue(timingLine: i, start: start, end: end)
                state = .cue
            case (.header, _):
                continue
            case (_, .malformed(let why)):
                if state == .cue, var c = open {
                    if let last = c.text.last, last == i - 1, Bytes.isInteger(lines[last]) { c.text.removeLast() }
                    finish(c)
                }
                open = nil
                pendingId = nil
                warnings.add(i + 1, "cue skipped: \(why)")
                state = .skip
            case (.cue, .none):
                open?.text.append(i)
            case (.skip, .none):
                continue
            case (.idle, .none):
                if vtt, pendingId == nil,
                   Bytes.startsWithKeyword(line, "NOTE") || Bytes.startsWithKeyword(line, "STYLE")
                    || Bytes.startsWithKeyword(line, "REGION") || Bytes.startsWithKeyword(line, "Style:") {
                    // yt-dlp writes its style block as `Style:`, CSS lines, then `##`.
                    state = .skip
                } else if let p = pendingId {
                    warnings.add(p + 1, "text outside a cue ignored")
                    pendingId = nil
                    state = .skip
                } else {
                    pendingId = i
                }
            }
        }
        if state == .cue, let c = open { finish(c) }
        if let p = pendingId { warnings.add(p + 1, "text outside a cue ignored") }
    }

    /// In WebVTT a line of spaces is cue text (only an empty line ends a cue), and yt-dlp
    /// writes such lines: before a cue's text, and as the whole text of cues that blank the
    /// screen. They are read so when they follow the timing line (or only such lines) and what
    /// comes after them is text or the cue's end. In SRT, after text, or before a timing line
    /// (a sloppy separator), a line of spaces ends the cue as before.
    private func spacesInCue(_ i: Int, _ open: OpenCue?) -> Bool {
        guard vtt, let c = open, c.timingLine + c.text.count == i - 1, !lines[i].isEmpty,
              c.text.allSatisfy({ Bytes.isBlank(lines[$0]) }) else { return false }
        var j = i + 1
        while j < lines.count, !lines[j].isEmpty, Bytes.isBlank(lines[j]) { j += 1 }
        return j == lines.count || lines[j].isEmpty || Timing.parse(lines[j]) == .none
    }

    private mutating func finish(_ cue: OpenCue) {
        var end = cue.end
        if end < cue.start {
            warnings.add(cue.timingLine + 1, "cue ends before it starts; end set to start")
            end = cue.start
        }
        if vtt { cues.append(RawCue(start: cue.start, end: end, lines: cue.text)) }
        // A label later in a line ("…true. Reda: I think") starts a new line of its own.
        let cleaned = cue.text.flatMap { SpeakerTurns.split(CueText.line(lines[$0]), known: known) }
        // Each line's effective speaker: its own label, else the line above's (or the
        // previous cue's); a dialogue dash starts an unnamed speaker.
        var effective: [String?] = []
        var current = carried
        for l in cleaned {
            current = l.speaker ?? (l.dashed ? nil : current)
            effective.append(current)
        }
        carried = effective.last ?? carried
        let turns = SpeakerTurns.runs(cleaned, effective, start: cue.start, end: end)
        guard !turns.isEmpty else {
            // A WebVTT cue of only spaces (see `spacesInCue`) blanks the screen on purpose.
            if cue.text.isEmpty || !cue.text.allSatisfy({ Bytes.isBlank(lines[$0]) }) {
                warnings.add(cue.timingLine + 1, "cue has no text")
            }
            return
        }
        segments.append(contentsOf: turns)
    }
}
