import ParlanceJSON
import ParlanceSchema

/// A transcript as Parlance parsed it: its segments, a page at a time, its plain text and
/// its speakers, so a client never parses SRT or WebVTT itself.
///
/// Paged by `offset`/`limit`, not a cursor: a document's segments are a fixed list for its
/// text (segment ids run 1…total in order, so the segment at `offset` has id `offset + 1`),
/// which gives random access (the page around a citation's segment, pages fetched in
/// parallel) with no state kept in the daemon. Every page carries `contentHash` and
/// `version`, so a client paging an open document sees when document/change replaced it.
public enum DocumentSegments: RPCMethod {
    public static let name = "document/segments"
    public static let summary = "The parsed segments (id, start, end, speaker, text) of an open document or of text, a page at a time, with the plain text and the speakers (each with the other names the transcript used for them)."
    public static let errors: [ProtocolError] = [.notFound]

    public struct Params: Codable, Sendable, Schematic {
        public var uri: String?
        public var text: String?
        public var format: DocumentFormat?
        public var offset: Int?
        public var limit: Int?
        public var includeText: Bool?
        public init(uri: String? = nil, text: String? = nil, format: DocumentFormat? = nil, offset: Int? = nil, limit: Int? = nil,
                    includeText: Bool? = nil) {
            self.uri = uri
            self.text = text
            self.format = format
            self.offset = offset
            self.limit = limit
            self.includeText = includeText
        }
        public static let schemaDescription: String? = "Give uri (an open document) or text."
        public static let schemaHints: [String: SchemaHint] = [
            "uri": SchemaHint(description: "An open document (document/open).", minLength: 1),
            "text": SchemaHint(description: "A transcript given inline (SRT, WebVTT or plain text), parsed as document/open parses it and not kept."),
            "format": SchemaHint(description: "With text: its format (default: detected). An open document has its own."),
            "offset": SchemaHint(description: "Segments to skip: the page starts at segment id offset + 1. Default 0; at most total.", minimum: 0),
            "limit": SchemaHint(description: "At most this many segments (default 500).", minimum: 1, maximum: 5000),
            "includeText": SchemaHint(description: "Include the whole plain text (default true; false for the second page on)."),
        ]
    }

    public struct Result: Codable, Sendable, Schematic {
        public var uri: String?
        public var version: Int?
        public var format: DocumentFormat
        public var contentHash: String
        public var total: Int
        public var offset: Int
        public var nextOffset: Int?
        public var segments: [SegmentInfo]
        public var text: String?
        public var speakers: [SpeakerInfo]
        public var durationSeconds: Double?
        public init(uri: String?, version: Int?, format: DocumentFormat, contentHash: String, total: Int, offset: Int, nextOffset: Int?,
                    segments: [SegmentInfo], text: String?, speakers: [SpeakerInfo], durationSeconds: Double?) {
            self.uri = uri
            self.version = version
            self.format = format
            self.contentHash = contentHash
            self.total = total
            self.offset = offset
            self.nextOffset = nextOffset
            self.segments = segments
            self.text = text
            self.speakers = speakers
            self.durationSeconds = durationSeconds
        }
        public static let schemaHints: [String: SchemaHint] = [
            "uri": SchemaHint(description: "The document's uri (absent for text given inline)."),
            "version": SchemaHint(description: "The open document's version (absent for text given inline)."),
            "contentHash": SchemaHint(description: "SHA-256 of the text as sent (document/open's contentHash)."),
            "total": SchemaHint(description: "Segments in the whole document."),
            "nextOffset": SchemaHint(description: "The offset of the next page; absent on the last page."),
            "text": SchemaHint(description: "The plain text: every segment's text, in order, one segment per line (without speaker labels or times)."),
            "speakers": SchemaHint(description: "Each person once, in order of first appearance, by the name segments carry, with the other labels the transcript used for them (a first name after the full name)."),
            "durationSeconds": SchemaHint(description: "The end of the last timed segment (absent for plain text)."),
        ]
    }

    public static var example: (params: JSONValue, result: JSONValue)? {
        (["text": "1\n00:00:01,000 --> 00:00:04,000\nMAYA: Welcome back.\n\n2\n00:00:04,500 --> 00:00:09,000\nTheo: Today, the launch.\n", "limit": 1],
         ["format": "srt", "contentHash": "485f5327509444ebf9513b7813c47d9c5efad74eebe0d72077f1f7054a245314", "total": 2, "offset": 0, "nextOffset": 1,
          "segments": [["id": 1, "start": 1.0, "end": 4.0, "speaker": "MAYA", "text": "Welcome back."]],
          "text": "Welcome back.\nToday, the launch.", "speakers": [["name": "MAYA", "aliases": []], ["name": "Theo", "aliases": []]],
          "durationSeconds": 9.0])
    }
}

/// One segment: a cue (SRT, WebVTT) or a paragraph or speaker turn (plain text).
public struct SegmentInfo: Codable, Sendable, Hashable, Schematic {
    public var id: Int
    public var start: Double?
    public var end: Double?
    public var speaker: String?
    public var text: String
    public var startOffset: Int?
    public var endOffset: Int?
    public init(id: Int, start: Double?, end: Double?, speaker: String?, text: String, startOffset: Int? = nil, endOffset: Int? = nil) {
        self.id = id
        self.start = start
        self.end = end
        self.speaker = speaker
        self.text = text
        self.startOffset = startOffset
        self.endOffset = endOffset
    }
    public static let schemaHints: [String: SchemaHint] = sourceOffsetHints.merging([
        "id": SchemaHint(description: "1-based, in document order (the id citations and key moments name)."),
        "start": SchemaHint(description: "Seconds from the start of the recording (absent for plain text)."),
        "speaker": SchemaHint(description: "The speaker's name as `speakers` lists it (a label or voice tag; a cue without one goes on with the previous speaker)."),
        "text": SchemaHint(description: "Styling tags removed, lines joined, no speaker label."),
    ]) { a, _ in a }
}

/// One person in a transcript.
public struct SpeakerInfo: Codable, Sendable, Hashable, Schematic {
    public var name: String
    public var aliases: [String]
    public init(name: String, aliases: [String]) {
        self.name = name
        self.aliases = aliases
    }
    public static let schemaHints: [String: SchemaHint] = [
        "name": SchemaHint(description: "The name segments carry (the first full form the transcript used)."),
        "aliases": SchemaHint(description: "Other labels the transcript used for the same person (\"Bekah\" for \"Bekah Hawrot Weigel\"), in order of first use."),
    ]
}
