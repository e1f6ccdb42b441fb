import Foundation
import JSONRPC
import ParlanceDocuments
import ParlanceHash
import ParlanceProtocol

/// Several open documents asked about as one (`ask/stream`'s `uris`): their segments are
/// numbered on from one document to the next, so retrieval, the prompt, the grammar's ids
/// and the answer's checks all work on one list of segments, and each id maps back to its
/// document and that document's own segment (`citation`).
struct AskDocuments: Sendable {
    struct Part: Sendable {
        let uri: String
        /// How the prompt names it: its file name, else its uri.
        let title: String
        /// A segment's id in the set is its id in the document plus `offset`.
        let offset: Int
        /// The document's own segments.
        let segments: [Segment]
        var ids: ClosedRange<Int>? { segments.isEmpty ? nil : offset + 1...offset + segments.count }
    }

    let parts: [Part]

    /// `documents` in the order asked; each one's segments must be numbered 1, 2, 3…
    /// (as the parser numbers them).
    init(_ documents: [(uri: String, transcript: ParsedTranscript)]) {
        var offset = 0
        var parts: [Part] = []
        let titles = Self.titles(documents.map(\.uri))
        for (i, d) in documents.enumerated() {
            parts.append(Part(uri: d.uri, title: titles[i], offset: offset, segments: d.transcript.segments))
            offset += d.transcript.segments.count
        }
        self.parts = parts
    }

    /// Every document's segments, renumbered in order: what retrieval ranks and the model is shown.
    var segments: [Segment] {
        parts.flatMap { p in
            p.segments.map { s in
                var g = s
                g.id = s.id + p.offset
                return g
            }
        }
    }

    /// The set as one transcript, for retrieval and the checks: no plain text of its own (its
    /// segments keep their offsets, which point into their own documents' texts).
    func transcript(format: TranscriptFormat) -> ParsedTranscript {
        ParsedTranscript(format: format, segments: segments, warnings: [], plainText: "")
    }

    /// The set's content: its documents' uris and contents, in order.
    static func contentHash(_ documents: [(uri: String, contentHash: String)]) -> String {
        SHA256Hex.of(documents.map { "\($0.uri)\n\($0.contentHash)" }.joined(separator: "\n"))
    }

    /// The document a set id belongs to.
    func part(of id: Int) -> Part? {
        parts.first { $0.ids?.contains(id) ?? false }
    }

    /// Each document's first segment (its welcome, which names the topic and answers nothing).
    var openings: Set<Int> { Set(parts.compactMap { $0.ids?.lowerBound }) }

    /// A segment of the set as its document has it: its own id, text, times and offsets.
    func local(_ s: Segment) -> (uri: String, segment: Segment)? {
        guard let p = part(of: s.id), case let i = s.id - p.offset - 1, p.segments.indices.contains(i) else { return nil }
        return (p.uri, p.segments[i])
    }

    /// A cited segment of the set, named by its document.
    func citation(_ s: Segment) -> AskStream.Citation? {
        guard let (uri, own) = local(s) else { return nil }
        var c = Grounding.citation(own)
        c.uri = uri
        return c
    }

    /// The ids the model was shown, per document (in the order of `uris`), as each document numbers them.
    func retrieval(used ids: [Int]) -> [AskStream.DocumentRetrieval] {
        parts.map { p in
            AskStream.DocumentRetrieval(uri: p.uri, segmentsSearched: p.segments.count,
                                        segmentsUsed: ids.filter { p.ids?.contains($0) ?? false }.map { $0 - p.offset })
        }
    }

    /// Segments of the set as prompt lines under their document's title ("Document 2: ep12.srt"),
    /// with "…" between runs that are not consecutive.
    func render(_ segments: [Segment]) -> String {
        var blocks: [String] = []
        for (n, p) in parts.enumerated() {
            guard let ids = p.ids else { continue }
            let mine = segments.filter { ids.contains($0.id) }
            guard !mine.isEmpty else { continue }
            blocks.append(Self.heading(n + 1, p.title) + "\n" + Retrieval.runs(mine))
        }
        return blocks.joined(separator: "\n\n")
    }

    /// The line above a document's passages in the prompt.
    static func heading(_ n: Int, _ title: String) -> String { "Document \(n): \(title)" }

    /// The heading the answer opens with when it opens as the prompt heads a document's
    /// passages ("Document 3: Theo's Rooftop Radio. In 2016…", a document that does not exist):
    /// the model went on writing the prompt. Nil for any other opening.
    static func heading(opening text: String) -> String? {
        text.firstMatch(of: /^\s*(Document\s+\d{1,3})\s*:/).map { String($0.output.1) }
    }

    /// The documents' titles: each uri's file name, or the uri itself where the file name is
    /// missing or another document has the same one.
    static func titles(_ uris: [String]) -> [String] {
        let names = uris.map { uri -> String in
            guard let url = URL(string: uri), url.path.contains("/") else { return uri }
            let name = url.lastPathComponent
            return name.isEmpty || name == "/" ? uri : name
        }
        return zip(uris, names).map { uri, name in names.filter { $0 == name }.count > 1 ? uri : name }
    }
}

extension AskDocuments {
    /// `uris` as one input: each an open document (the first unknown one is named), the
    /// answer language the one asked for, else the first document's.
    static func input(uris: [String], language: String?, fallback: LanguageFallback?, model: String, ctx: RequestContext) async throws -> AnalysisInput {
        let languages = ctx.services.models.languages(model)
        var docs: [OpenDocument] = []
        for (i, uri) in uris.enumerated() {
            guard let d = await ctx.document(uri) else { throw unknown(uri, at: i) }
            docs.append(d)
        }
        let set = AskDocuments(docs.map { ($0.uri, $0.transcript) })
        let first = docs[0]
        var input = AnalysisInput(documents: set, contentHash: contentHash(docs.map { ($0.uri, $0.contentHash) }),
                                  language: try AnalysisInput.resolveLanguage(language ?? first.language, first.transcript,
                                                                              languages: languages, fallback: fallback),
                                  format: first.transcript.format)
        input.languageSource = languages.source
        return input
    }

    /// `uris` given with `uri` or `text`, or naming a document twice: a precise -32602.
    static func check(uris: [String], uri: String?, text: String?) throws {
        if let other = uri != nil ? "uri" : text != nil ? "text" : nil {
            throw ResponseError.invalidParams("give one of 'uri', 'uris' or 'text', not both 'uris' and '\(other)'",
                                              data: ["path": "(root)", "keyword": "oneOf", "error": "conflictingSources",
                                                     "properties": ["uris", .string(other)]])
        }
        for (i, uri) in uris.enumerated() {
            if let first = uris.firstIndex(of: uri), first < i {
                throw ResponseError.invalidParams("uris[\(i)] repeats uris[\(first)] ('\(uri)'): give each document once",
                                                  data: ["path": .string("uris[\(i)]"), "keyword": "uniqueItems", "error": "duplicateDocument",
                                                         "uri": .string(uri), "index": .int(i), "firstIndex": .int(first)])
            }
        }
    }

    /// An unknown document in `uris`: not found, with where it is in the list.
    static func unknown(_ uri: String, at i: Int) -> ResponseError {
        ResponseError(ErrorCode(rawValue: ProtocolError.notFound.code), "unknown document '\(uri)' (uris[\(i)]): open it with document/open first",
                      data: ["error": "notFound", "kind": "document", "id": .string(uri), "path": .string("uris[\(i)]"), "index": .int(i)])
    }
}
