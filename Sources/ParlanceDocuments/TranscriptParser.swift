/// Entry points: format detection and parsing of SRT, WebVTT and plain text.
///
/// Parsing never traps on input: malformed cues become `ParseWarning`s (1-based line
/// numbers) and the parser continues; only an input with nothing usable throws.
public enum TranscriptParser {
    /// `vtt` when the text starts with `WEBVTT` (after a byte-order mark and blank lines),
    /// `srt` when one of the first 200 non-blank lines is a cue timing line, else `text`.
    public static func detectFormat(_ text: String) -> TranscriptFormat {
        detectFormat(lines: Lines(Array(text.utf8.prefix(1 << 20))))
    }

    public static func parse(_ text: String, format: TranscriptFormat?) throws(TranscriptParseError) -> ParsedTranscript {
        var t = try parse(lines: Lines(Array(text.utf8)), format: format)
        if t.format == .text { SourceOffsets.attach(to: &t.segments, source: text) }
        return t
    }

    /// Like `parse(_:format:)` for raw bytes; bytes that are not UTF-8 throw `.invalidUTF8`.
    public static func parse(bytes: [UInt8], format: TranscriptFormat?) throws(TranscriptParseError) -> ParsedTranscript {
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .invalidUTF8 }
        return try parse(text, format: format)
    }

    // MARK: Implementation

    static func detectFormat(lines: Lines) -> TranscriptFormat {
        var seen = 0
        for i in 0..<lines.count {
            let line = lines[i]
            if Bytes.isBlank(line) { continue }
            if seen == 0, Bytes.startsWithKeyword(Bytes.trimmed(line), "WEBVTT") { return .vtt }
            if case .valid = Timing.parse(line) { return .srt }
            seen += 1
            if seen >= 200 { break }
        }
        return .text
    }

    static func parse(lines: Lines, format: TranscriptFormat?) throws(TranscriptParseError) -> ParsedTranscript {
        guard (0..<lines.count).contains(where: { !isWhitespaceOnly(lines[$0]) }) else { throw .empty }
        let format = format ?? detectFormat(lines: lines)
        var raw: [ParsedSegment]
        var warnings: [ParseWarning] = []
        switch format {
        case .text:
            raw = PlainTextParser.parse(lines)
        case .srt, .vtt:
            var p = CueParser(lines: lines, vtt: format == .vtt)
            p.run()
            // YouTube's rolling auto-captions say each line two or three times; read them once.
            raw = format == .vtt && RollingCaptions.isRolling(p.cues, lines) ? RollingCaptions.segments(p.cues, lines) : p.segments
            warnings = p.warnings.all
        }
        guard !raw.isEmpty else { throw format == .text ? .empty : .noText }
        let aliases = SpeakerTurns.canonicalize(&raw)
        return assemble(raw, format: format, warnings: warnings, aliases: aliases)
    }

    /// Numbers the segments, joins their texts with "\n" and records scalar offsets.
    static func assemble(_ raw: [ParsedSegment], format: TranscriptFormat, warnings: [ParseWarning],
                         aliases: [String: [String]] = [:]) -> ParsedTranscript {
        var segments: [Segment] = []
        segments.reserveCapacity(raw.count)
        var offset = 0
        for (k, r) in raw.enumerated() {
            var length = 0  // Unicode scalars = UTF-8 bytes that are not continuation bytes
            for b in r.text.utf8 where b & 0xC0 != 0x80 { length += 1 }
            segments.append(Segment(id: k + 1, start: r.start, end: r.end, speaker: r.speaker, text: r.text,
                                    startOffset: offset, endOffset: offset + length))
            offset += length + 1
        }
        let plain = raw.map(\.text).joined(separator: "\n")
        return ParsedTranscript(format: format, segments: segments, warnings: warnings, plainText: plain, aliases: aliases)
    }

    /// Blank in the Unicode sense (spaces, tabs, no-break spaces, a stray BOM), so an input of
    /// only whitespace is `.empty` rather than a one-segment transcript of nothing.
    private static func isWhitespaceOnly(_ line: ArraySlice<UInt8>) -> Bool {
        if line.allSatisfy(Bytes.isSpace) { return true }
        let s = String(decoding: line.prefix(4096), as: UTF8.self)
        return line.count <= 4096 && s.unicodeScalars.allSatisfy { $0.properties.isWhitespace || $0 == "\u{FEFF}" || $0 == "\u{200B}" }
    }
}
