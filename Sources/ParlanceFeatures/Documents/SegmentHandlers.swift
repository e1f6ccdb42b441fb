import JSONRPC
import ParlanceDocuments
import ParlanceHash
import ParlanceProtocol

/// `document/segments`: a page of a transcript's parsed segments, its plain text and its
/// speakers.
public enum SegmentHandlers {
    public static let defaultLimit = 500

    public static func segments(_ p: DocumentSegments.Params, _ ctx: RequestContext) async throws -> DocumentSegments.Result {
        try AnalysisInput.checkSource(text: p.text, uri: p.uri)
        let transcript: ParsedTranscript
        let contentHash: String
        var version: Int? = nil
        if let text = p.text {
            transcript = try AnalysisInput.parse(text, format: p.format.flatMap { TranscriptFormat(rawValue: $0.rawValue) })
            contentHash = SHA256.hex(text)
        } else {
            let uri = p.uri ?? ""
            if p.format != nil {
                throw ResponseError.invalidParams("'format' applies to text given inline; the open document '\(uri)' has its own",
                                                  data: ["path": "format", "keyword": "dependentRequired", "uri": .string(uri)])
            }
            guard let doc = await ctx.document(uri) else { throw ErrorMapping.notFound("document", uri) }
            transcript = doc.transcript
            contentHash = doc.contentHash
            version = doc.version
        }
        return try page(transcript, p, contentHash: contentHash, version: version)
    }

    /// The page `p` asks for; an offset past the last segment is refused.
    static func page(_ t: ParsedTranscript, _ p: DocumentSegments.Params, contentHash: String, version: Int?) throws -> DocumentSegments.Result {
        let total = t.segments.count
        let offset = p.offset ?? 0
        guard offset <= total else {
            throw ResponseError.invalidParams("offset \(offset) is past the last segment: the document has \(total)",
                                              data: ["path": "offset", "keyword": "maximum", "limit": .int(total), "total": .int(total)])
        }
        let end = min(total, offset + (p.limit ?? defaultLimit))
        let segments = t.segments[offset..<end].map { s in
            SegmentInfo(id: s.id, start: s.start, end: s.end, speaker: s.speaker, text: s.text, startOffset: s.sourceStart, endOffset: s.sourceEnd)
        }
        return .init(uri: p.uri, version: version, format: DocumentFormat(rawValue: t.format.rawValue) ?? .text, contentHash: contentHash,
                     total: total, offset: offset, nextOffset: end < total ? end : nil, segments: segments,
                     text: p.includeText ?? true ? t.plainText : nil,
                     speakers: t.people.map(SpeakerInfo.init), durationSeconds: t.duration)
    }
}
