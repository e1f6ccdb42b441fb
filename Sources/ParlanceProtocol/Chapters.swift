import ParlanceSchema

/// One chapter: a title and the run of whole segments it covers, with their times (or, for
/// plain text, their offsets). Chapters follow one another without gap or overlap.
public struct Chapter: Codable, Sendable, Hashable, Schematic {
    public var title: String
    public var startSegmentId: Int
    public var endSegmentId: Int
    public var start: Double?
    public var end: Double?
    public var startOffset: Int?
    public var endOffset: Int?
    public init(title: String, startSegmentId: Int, endSegmentId: Int, start: Double? = nil, end: Double? = nil,
                startOffset: Int? = nil, endOffset: Int? = nil) {
        self.title = title
        self.startSegmentId = startSegmentId
        self.endSegmentId = endSegmentId
        self.start = start
        self.end = end
        self.startOffset = startOffset
        self.endOffset = endOffset
    }
    public static let schemaHints: [String: SchemaHint] = sourceOffsetHints.merging([
        "title": SchemaHint(description: "What the chapter is about, in at most 8 words."),
        "startSegmentId": SchemaHint(description: "The chapter's first segment (the first chapter starts at the document's first segment)."),
        "endSegmentId": SchemaHint(description: "Its last segment: the segment before the next chapter's first (the last chapter ends at the document's last segment)."),
        "start": SchemaHint(description: "Seconds: its first segment's start."),
        "end": SchemaHint(description: "Seconds: the next chapter's start; for the last chapter, the end of the document's last segment."),
    ]) { a, _ in a }
}

public enum AnalyzeChapters: DocumentAnalysis {
    public static let name = "analysis/chapters"
    public static let summary = "Titled chapters covering the whole document in order, with start and end times (a video's chapter list)."
    public typealias Input = DocumentInput
    public struct Fields: AnalysisFields {
        public var chapters: [Chapter]
        public static let schemaHints: [String: SchemaHint] = [
            "chapters": SchemaHint(description: """
                In document order, each starting at a real segment, together covering every segment once. A transcript that \
                fits the context is read in one call that picks each chapter's first segment by id (chunks = 1); a longer one \
                gets a chapter per part, titled from the part notes analysis/summarize also reads (cached per part, so a \
                summary and its chapters read the transcript once).
                """, minItems: 1),
        ]
        public static let metaHints: [String: SchemaHint] = analysisMetaHints.merging([
            "verification": SchemaHint(description: "The chapters checked: in order, no gap or overlap, the first at the first segment, the last at the last; every title non-empty, at most 8 words, not a repeat of another, not only a name, not the prompt's or the user's instructions. A failing chapter is merged into the one before it (the first: into the next); passed is false when a check still fails."),
        ]) { _, own in own }
    }
}
