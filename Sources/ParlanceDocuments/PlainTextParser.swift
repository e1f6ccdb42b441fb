/// Plain text → segments: one per paragraph (blank-line separated) or per speaker turn
/// (`NAME:` at the start of a line); paragraphs longer than `maxSegmentScalars` are split
/// into groups of whole sentences.
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
                flush()
                speaker = name
                buffer.append(rest)
            } else {
                if buffer.isEmpty { speaker = carried }
                buffer.append(line)
            }
        }
        flush()
        return out
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
