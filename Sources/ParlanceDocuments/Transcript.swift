import Foundation

/// The value types every other file in this module produces or consumes.

/// How a transcript is written down.
public enum TranscriptFormat: String, Sendable, Codable, CaseIterable {
    case srt, vtt, text

    /// Parses a format name as a client would send it ("srt", "SRT", "webvtt", "vtt", "text",
    /// "txt", "plain"). Anything else is `.unknownFormat`.
    public init(name: String) throws(TranscriptParseError) {
        switch name.lowercased().trimmingCharacters(in: .whitespaces) {
        case "srt", "subrip": self = .srt
        case "vtt", "webvtt": self = .vtt
        case "text", "txt", "plain", "plaintext", "plain-text": self = .text
        default: throw .unknownFormat(name)
        }
    }
}

/// One cue (SRT/WebVTT) or one paragraph/sentence group (plain text).
public struct Segment: Sendable, Codable, Hashable {
    /// 1-based, unique, in document order (an SRT cue's printed number is ignored).
    public var id: Int
    /// Seconds from the start of the recording; nil for plain text.
    public var start: Double?
    public var end: Double?
    /// From a `NAME:` label or a WebVTT `<v Name>` voice tag; cues without a label inherit
    /// the previous cue's speaker (transcripts label only the first cue of a turn).
    public var speaker: String?
    /// Styling tags removed, lines joined with single spaces, no speaker label.
    public var text: String
    /// Unicode-scalar offsets of `text` inside `ParsedTranscript.plainText`: the half-open
    /// range `startOffset..<endOffset`.
    public var startOffset: Int
    public var endOffset: Int
    /// Plain text only: where the segment sits in the text as the client sent it, in
    /// UTF-16 code units (half-open, first to last non-space character). See `SourceOffsets`.
    public var sourceStart: Int?
    public var sourceEnd: Int?

    public init(id: Int, start: Double? = nil, end: Double? = nil, speaker: String? = nil, text: String,
                startOffset: Int = 0, endOffset: Int = 0) {
        self.id = id
        self.start = start
        self.end = end
        self.speaker = speaker
        self.text = text
        self.startOffset = startOffset
        self.endOffset = endOffset
    }
}

/// Something the parser skipped or repaired. `line` is 1-based in the input.
public struct ParseWarning: Sendable, Codable, Hashable {
    public var line: Int
    public var message: String

    public init(line: Int, message: String) {
        self.line = line
        self.message = message
    }
}

/// One person in a transcript: the name segments carry, and the other labels the
/// transcript used for them (a first name after the full one).
public struct Speaker: Sendable, Codable, Hashable {
    public var name: String
    public var aliases: [String]

    public init(name: String, aliases: [String] = []) {
        self.name = name
        self.aliases = aliases
    }
}

public struct ParsedTranscript: Sendable, Codable, Equatable {
    public var format: TranscriptFormat
    public var segments: [Segment]
    public var warnings: [ParseWarning]
    /// Segment texts joined by "\n"; segment offsets index into it by Unicode scalar.
    public var plainText: String
    /// Canonical speaker name → the other labels that named the same person, in order of
    /// first use ("Bekah Hawrot Weigel" → ["Bekah"]). Segments carry only canonical names.
    public var aliases: [String: [String]]

    public init(format: TranscriptFormat, segments: [Segment], warnings: [ParseWarning], plainText: String,
                aliases: [String: [String]] = [:]) {
        self.format = format
        self.segments = segments
        self.warnings = warnings
        self.plainText = plainText
        self.aliases = aliases
    }

    /// Decodes transcripts encoded before `aliases` existed, too.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(format: try c.decode(TranscriptFormat.self, forKey: .format),
                  segments: try c.decode([Segment].self, forKey: .segments),
                  warnings: try c.decode([ParseWarning].self, forKey: .warnings),
                  plainText: try c.decode(String.self, forKey: .plainText),
                  aliases: try c.decodeIfPresent([String: [String]].self, forKey: .aliases) ?? [:])
    }

    /// Total duration covered by the timed segments (nil for plain text).
    public var duration: Double? {
        segments.compactMap(\.end).max()
    }

    /// Distinct speakers (canonical names) in order of first appearance.
    public var speakers: [String] {
        var seen = Set<String>()
        return segments.compactMap(\.speaker).filter { seen.insert($0).inserted }
    }

    /// `speakers`, each once, with the aliases the transcript also used for them.
    public var people: [Speaker] {
        speakers.map { Speaker(name: $0, aliases: aliases[$0] ?? []) }
    }
}

public enum TranscriptParseError: Error, Sendable, Equatable {
    /// Nothing but whitespace (or a byte-order mark).
    case empty
    /// Cue numbers and timing lines, but no cue text.
    case noText
    case invalidUTF8
    case unknownFormat(String)
}

extension TranscriptParseError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .empty: "the transcript is empty"
        case .noText: "the transcript has timing lines but no text"
        case .invalidUTF8: "the transcript is not valid UTF-8"
        case .unknownFormat(let f): "unknown transcript format '\(f)' (expected srt, vtt or text)"
        }
    }
}
