/// Plain text → segments: one per paragraph (blank-line separated) or per speaker turn
/// (`NAME:` at the start of a line, or after a sentence on a line that opened with one: a
/// chat pasted as one line, "Alice: We ship in March. Bob: Then support needs a FAQ.");
/// paragraphs longer than `maxSegmentScalars` are split into groups of whole sentences.
enum PlainTextParser {
    static let maxSegmentScalars = 600
    static let targetGroupScalars = 400

    static func parse(_ lines: Lines) -> [ParsedSegment] {
        var out: [ParsedSegment] = []
        var carried: String?
        var speaker: String?
        var buffer: [ArraySlice<UInt8>] = []

        func flush() {
            let text = CueText.collapse(buffer)
            buffer.removeAll(keepingCapacity: true)
            guard !text.isEmpty else { return }
            for piece in split(text) {
                out.append(ParsedSegment(start: nil, end: nil, speaker: speaker, text: piece))
            }
            carried = speaker
        }

        for i in 0..<lines.count {
            let raw = lines[i]
            if Bytes.isBlank(raw) {
                flush()
                speaker = carried
                continue
            }
            let line = raw.drop(while: Bytes.isSpace)
            if let (name, rest) = CueText.speakerLabel(line) {
                for (k, turn) in turns(name, rest).enumerated() {
                    flush()
                    speaker = turn.speaker
                    if k == 0 || !turn.text.isEmpty { buffer.append(turn.text) }
                }
            } else {
                if buffer.isEmpty { speaker = carried }
                buffer.append(line)
            }
        }
        flush()
        return out
    }

    /// A labeled line's turns: it is cut before each later `NAME:` that follows the end of a
    /// sentence ("." "!" "?" and a space). A name said mid-line is words without digits
    /// ("Bob"), or numbered as the line's speaker is ("Speaker 2" after "Speaker 1"), not
    /// "Phase 2:", which a speaker may be listing.
    static func turns(_ speaker: String, _ rest: ArraySlice<UInt8>) -> [(speaker: String, text: ArraySlice<UInt8>)] {
        var out: [(speaker: String, text: ArraySlice<UInt8>)] = []
        var current = (speaker: speaker, start: rest.startIndex)
        var i = rest.startIndex
        while i < rest.endIndex {
            let b = rest[i]
            guard b == UInt8(ascii: ".") || b == UInt8(ascii: "!") || b == UInt8(ascii: "?"),
                  i + 1 < rest.endIndex, Bytes.isSpace(rest[i + 1]) else {
                i += 1
                continue
            }
            let next = rest[(i + 1)...].drop(while: Bytes.isSpace)
            if let (name, after) = CueText.speakerLabel(next), !name.contains(where: \.isNumber) || unnumbered(name) == unnumbered(speaker) {
                out.append((current.speaker, rest[current.start...i]))
                current = (name, after.startIndex)
                i = after.startIndex
            } else {
                i += 1
            }
        }
        out.append((current.speaker, rest[current.start...]))
        return out
    }

    /// A name without its numbers: "Speaker" for "Speaker 2".
    static func unnumbered(_ name: String) -> String {
        name.split(separator: " ").filter { !$0.allSatisfy(\.isNumber) }.joined(separator: " ")
    }

    /// Groups sentences of an over-long paragraph into pieces of about `targetGroupScalars`.
    static func split(_ text: String) -> [String] {
        guard text.unicodeScalars.count > maxSegmentScalars else { return [text] }
        var groups: [String] = []
        var current = ""
        var size = 0
        for sentence in Sentences.split(text) {
            let n = sentence.unicodeScalars.count
            if size > 0, size + n > targetGroupScalars {
                groups.append(Sentences.trimmed(current))
                current = ""
                size = 0
            }
            current += sentence
            size += n
        }
        if size > 0 { groups.append(Sentences.trimmed(current)) }
        return groups.filter { !$0.isEmpty }
    }
}
