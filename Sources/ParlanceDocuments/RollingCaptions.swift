/// YouTube's automatic captions as `yt-dlp --write-auto-sub` writes them, read once.
///
/// Such a file rolls two lines up the screen. Each line appears two or three times: spoken
/// word by word with inline timings (`good<00:00:04.170><c> to</c>`) as a cue's second line,
/// then as the plain first line of a ~10 ms "settle" cue and of the next cue. Read cue by cue,
/// a talk costs three times its words. Here each line is kept once, each word at the time it
/// was first spoken, and the words are regrouped into sentence-sized segments, cut at pauses,
/// since recognised speech carries no punctuation to cut at.
enum RollingCaptions {
    /// Fewest words in a segment before a pause may end it.
    static let minWords = 15
    /// Most words in a segment: past this it is cut at its longest pause.
    static let maxWords = 40
    /// A pause: this many seconds or more from one word's start to the next's (words come
    /// 0.1 to 0.5 s apart in running speech).
    static let pause = 1.0
    /// A pause long enough to end a segment of `minShortWords` or more (a change of turn).
    static let longPause = 2.5
    static let minShortWords = 5

    struct Word {
        var text: Substring
        var start: Double
        var end: Double
    }

    // MARK: Detection

    /// True when the cues roll: at least a third of them open with the previous cue's last
    /// line, or at least a third carry inline word timings and a third are settle cues (10 ms
    /// or less). Human-made captions do neither, so they parse as before.
    static func isRolling(_ cues: [RawCue], _ lines: Lines) -> Bool {
        guard cues.count >= 3 else { return false }
        var repeats = 0, timed = 0, settles = 0
        var previous: String?
        for cue in cues {
            let texts = cue.lines.map { clean(lines[$0]) }.filter { !$0.isEmpty }
            if let first = texts.first, first == previous { repeats += 1 }
            if cue.lines.contains(where: { hasWordTimes(lines[$0]) }) { timed += 1 }
            if cue.end - cue.start <= 0.011 { settles += 1 }
            if let last = texts.last { previous = last }
        }
        return (repeats >= 2 && repeats * 3 >= cues.count) || (timed * 3 >= cues.count && settles * 3 >= cues.count)
    }

    // MARK: Reading

    /// Sentence-sized segments of the words, each line's words once. A segment spans its
    /// words' earliest start to latest end: cues out of time order (a hand-edited file) must
    /// not give a segment that ends before it starts.
    static func segments(_ cues: [RawCue], _ lines: Lines) -> [ParsedSegment] {
        group(words(cues, lines)).map { run in
            let start = run.map(\.start).min(), end = run.map(\.end).max()
            return ParsedSegment(start: start, end: end, speaker: nil,
                                 text: run.map(\.text).joined(separator: " "))
        }
    }

    /// Every spoken word once, in order. A cue's first line is skipped when it repeats the
    /// previous cue's last line (and carries no word timings of its own, which only a line
    /// being spoken has); every other line with text is new. A word ends where the next one
    /// starts, or where its cue ends if that is sooner.
    static func words(_ cues: [RawCue], _ lines: Lines) -> [Word] {
        var out: [Word] = []
        var previous: String?
        for cue in cues {
            var first = true
            for index in cue.lines {
                let raw = lines[index]
                let text = clean(raw)
                guard !text.isEmpty else { continue }
                defer { first = false }
                if first, text == previous, !hasWordTimes(raw) { continue }
                timedWords(raw, start: cue.start, end: cue.end, into: &out)
            }
            if let last = cue.lines.lazy.map({ clean(lines[$0]) }).last(where: { !$0.isEmpty }) { previous = last }
        }
        for k in out.indices.dropLast() {
            out[k].end = max(out[k].start, min(out[k].end, out[k + 1].start))
        }
        return out
    }

    /// Appends one line's words. A `<hh:mm:ss.ttt>` tag times the words after it; the words
    /// before the first tag start with the cue. Times never run backwards.
    static func timedWords(_ raw: ArraySlice<UInt8>, start: Double, end: Double, into out: inout [Word]) {
        var time = start
        var piece = raw.startIndex
        var i = raw.startIndex
        while i < raw.endIndex {
            if raw[i] == UInt8(ascii: "<"), let close = raw[i..<min(raw.endIndex, i + 32)].firstIndex(of: UInt8(ascii: ">")),
               let t = Timing.timestamp(raw[(i + 1)..<close]) {
                append(raw[piece..<i], start: time, end: end, into: &out)
                time = max(time, t)
                i = close + 1
                piece = i
                continue
            }
            i += 1
        }
        append(raw[piece..<raw.endIndex], start: time, end: end, into: &out)
    }

    private static func append(_ bytes: ArraySlice<UInt8>, start: Double, end: Double, into out: inout [Word]) {
        let text = clean(bytes)
        for w in text.split(separator: " ") {
            out.append(Word(text: w, start: start, end: max(start, end)))
        }
    }

    // MARK: Grouping

    /// Cuts the words into runs: after `minWords` at the first pause, after `minShortWords`
    /// at a long pause, and at `maxWords` at the longest pause among the words past `minWords`.
    static func group(_ words: [Word]) -> [ArraySlice<Word>] {
        var runs: [ArraySlice<Word>] = []
        var from = words.startIndex
        while from < words.endIndex {
            var cut = words.endIndex - 1
            var i = from
            while i < words.endIndex - 1 {
                let count = i - from + 1
                let gap = words[i + 1].start - words[i].start
                if (count >= minWords && gap >= pause) || (count >= minShortWords && gap >= longPause) {
                    cut = i
                    break
                }
                if count >= maxWords {
                    let candidates = (from + minWords - 1)...i
                    cut = candidates.max { words[$0 + 1].start - words[$0].start < words[$1 + 1].start - words[$1].start } ?? i
                    break
                }
                i += 1
            }
            runs.append(words[from...cut])
            from = cut + 1
        }
        return runs
    }

    // MARK: Text

    /// A line without markup, spaces collapsed: the form lines are compared in.
    private static func clean(_ raw: ArraySlice<UInt8>) -> String {
        guard raw.contains(where: { $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: "&") }) else {
            return CueText.collapse(CollectionOfOne(raw))
        }
        return CueText.collapse(CollectionOfOne(Markup.strip(raw).0[...]))
    }

    /// True when the line holds an inline timestamp tag (`<00:00:04.170>`).
    private static func hasWordTimes(_ raw: ArraySlice<UInt8>) -> Bool {
        var i = raw.startIndex
        while let open = raw[i...].firstIndex(of: UInt8(ascii: "<")) {
            let next = open + 1
            if next < raw.endIndex, Bytes.isDigit(raw[next]) { return true }
            i = next
        }
        return false
    }
}
