/// Speaker turns inside cues, and the names one person goes by.
///
/// Transcripts often start a turn in the middle of a cue ("…that's true. Reda: I think…"),
/// and label a person's first turn with the full name and later turns with the first name
/// ("Bekah Hawrot Weigel:", then "Bekah:"). Both would otherwise misattribute text or count
/// one person twice.
enum SpeakerTurns {
    // MARK: Labels later in a line

    /// Names labelled at the start of a cue line anywhere in the input (the header before the
    /// first timing line excluded, so `Kind: captions` names no one), and the first words of
    /// full names among them, since "Bekah:" may follow "Bekah Hawrot Weigel:". A label in
    /// the middle of a line is believed only when it names one of these: prose like
    /// "…as follows. Step Two: …" has the same shape.
    static func lineStartNames(_ lines: Lines) -> Set<String> {
        var names = Set<String>()
        var inCues = false
        for i in 0..<lines.count {
            let line = lines[i]
            if !inCues {
                inCues = Bytes.arrow(in: line) != nil
                continue
            }
            guard line.prefix(84).contains(UInt8(ascii: ":")), let name = CueText.line(line).speaker else { continue }
            names.insert(name)
            if isFullName(name) { names.insert(firstWord(name)) }
        }
        return names
    }

    /// The line, cut before every `Name: ` that follows the end of a sentence and names a
    /// known speaker; each later piece carries that speaker. Times like "10:30" and words
    /// like "One:" never match (`CueText.speakerLabel` refuses them, and they name no one).
    static func split(_ line: CueText.Line, known: Set<String>) -> [CueText.Line] {
        guard !known.isEmpty, line.text.contains(UInt8(ascii: ":")) else { return [line] }
        var out: [CueText.Line] = []
        var current = line
        var from = line.text.startIndex
        while let (cut, name, rest) = nextLabel(in: current.text, from: from, known: known) {
            out.append(CueText.Line(speaker: current.speaker, text: current.text[current.text.startIndex..<cut],
                                    dashed: current.dashed))
            current = CueText.Line(speaker: name, text: rest, dashed: false)
            from = rest.startIndex
        }
        out.append(current)
        return out
    }

    /// Where the next mid-line label starts (the space before it), its name and the text after it.
    private static func nextLabel(in s: ArraySlice<UInt8>, from: Int, known: Set<String>)
        -> (Int, String, ArraySlice<UInt8>)?
    {
        var i = from
        while i < s.endIndex {
            guard Bytes.isSpace(s[i]), i > s.startIndex, endsSentence(s[s.startIndex..<i]) else {
                i += 1
                continue
            }
            var j = i
            while j < s.endIndex, Bytes.isSpace(s[j]) { j += 1 }
            if let (name, rest) = CueText.speakerLabel(s[j...]), known.contains(name) { return (i, name, rest) }
            i = j
        }
        return nil
    }

    /// Text that ends a sentence or an utterance: `.` `?` `!` a closing bracket or quote, a
    /// broken-off dash, or `…` / `”`.
    private static func endsSentence(_ s: ArraySlice<UInt8>) -> Bool {
        guard let last = s.last else { return false }
        if ".?!)]\"'-".utf8.contains(last) { return true }
        guard s.count >= 3, s[s.endIndex - 3] == 0xE2, s[s.endIndex - 2] == 0x80 else { return false }
        return last == 0xA6 || last == 0x9D  // … or ”
    }

    // MARK: Cue text to segments

    /// The cue's lines grouped into consecutive runs of one effective speaker, one segment per
    /// run with text. Several runs share the cue's time span in proportion to their length in
    /// Unicode scalars (rounded to milliseconds), so each speaker's words keep roughly the time
    /// they were said and the segments never overlap. Empty when the cue has no text.
    static func runs(_ lines: [CueText.Line], _ speakers: [String?], start: Double, end: Double) -> [ParsedSegment] {
        var runs: [(speaker: String?, text: String)] = []
        var k = 0
        while k < lines.count {
            var m = k
            while m + 1 < lines.count, speakers[m + 1] == speakers[k] { m += 1 }
            let text = CueText.collapse(lines[k...m].map(\.text))
            if !text.isEmpty { runs.append((speakers[k], text)) }
            k = m + 1
        }
        guard runs.count > 1 else {
            return runs.map { ParsedSegment(start: start, end: end, speaker: $0.speaker, text: $0.text) }
        }
        let lengths = runs.map { Double($0.text.unicodeScalars.count) }
        let total = lengths.reduce(0, +)
        var out: [ParsedSegment] = []
        var done = 0.0
        var from = start
        for (r, run) in runs.enumerated() {
            done += lengths[r]
            let to = r == runs.count - 1 ? end : ((start + (end - start) * done / total) * 1000).rounded() / 1000
            out.append(ParsedSegment(start: from, end: max(from, to), speaker: run.speaker, text: run.text))
            from = max(from, to)
        }
        return out
    }

    // MARK: One person, several names

    /// Gives every segment its speaker's canonical name and returns the other names used:
    /// canonical name → aliases in order of first use. A one-word label is an alias of an
    /// earlier full-name label whose first word it is ("Bekah" of "Bekah Hawrot Weigel"),
    /// unless two earlier full names share that first word (then it is ambiguous and kept).
    static func canonicalize(_ segments: inout [ParsedSegment]) -> [String: [String]] {
        var byFirstWord: [String: Set<String>] = [:]  // full names seen so far
        var seen = Set<String>()
        var canonical: [String: String] = [:]
        var aliases: [String: [String]] = [:]
        for s in segments {
            guard let name = s.speaker, seen.insert(name).inserted else { continue }
            if isFullName(name) {
                byFirstWord[firstWord(name), default: []].insert(name)
            } else if !name.contains(" "), let fulls = byFirstWord[name], fulls.count == 1, let full = fulls.first {
                canonical[name] = full
                aliases[full, default: []].append(name)
            }
        }
        guard !canonical.isEmpty else { return [:] }
        for k in segments.indices {
            if let name = segments[k].speaker, let full = canonical[name] { segments[k].speaker = full }
        }
        return aliases
    }

    /// Two or more words, the second not a number: "Dan Ott" is a person, "Speaker 2" is not.
    private static func isFullName(_ name: String) -> Bool {
        let words = name.split(separator: " ")
        guard words.count >= 2 else { return false }
        return !words[1].allSatisfy { $0.isASCII && $0.isNumber }
    }

    private static func firstWord(_ name: String) -> String {
        String(name.prefix { $0 != " " })
    }
}
