import Foundation
import JSONRPC
import ParlanceDocuments
import ParlanceHash
import ParlanceJSON

/// An open document: its text parsed once into segments, hashed, language noted.
public struct OpenDocument: Sendable {
    public var uri: String
    public var version: Int
    public var text: String
    public var transcript: ParsedTranscript
    public var contentHash: String
    public var language: String?
    public var tokenCount: Int?
}

/// An editor's buffer (LSP `didOpen`): edited in place keystroke by keystroke, parsed into
/// an `OpenDocument` only when a feature reads it.
public struct EditorBuffer: Sendable {
    public var uri: String
    public var languageId: String
    public var version: Int
    public var buffer: TextBuffer
    /// The parsed form of this version, made on first read.
    var parsed: OpenDocument?
}

/// Per-document transcript cache, bounded in bytes: documents opened by `document/open`
/// and editor buffers, one namespace of uris (an editor buffer hides a document opened
/// under the same uri while it is open).
public actor DocumentStore {
    private var docs: [String: OpenDocument] = [:]
    private var editors: [String: EditorBuffer] = [:]
    public let maxBytes: Int
    public init(maxBytes: Int = 256 << 20) { self.maxBytes = maxBytes }

    public func get(_ uri: String) -> OpenDocument? {
        guard let e = editors[uri] else { return docs[uri] }
        if let p = e.parsed { return p }
        let parsed = Self.parse(e)
        editors[uri]?.parsed = parsed
        return parsed
    }

    public var all: [OpenDocument] { uris.sorted().compactMap { get($0) } }

    /// Every open document's URI (opened by a client, by an editor, or both).
    private var uris: Set<String> { Set(docs.keys).union(editors.keys) }

    /// Open documents and their bytes, read in one hop and without parsing any
    /// (`model/status`, which editors poll).
    public var usage: (count: Int, bytes: Int) {
        (uris.count, bytes(except: nil))
    }

    private func bytes(except uri: String?) -> Int {
        docs.values.reduce(0) { $0 + ($1.uri == uri || editors[$1.uri] != nil ? 0 : $1.text.utf8.count) }
            + editors.values.reduce(0) { $0 + ($1.uri == uri ? 0 : $1.buffer.byteCount) }
    }

    private func checkLimit(adding count: Int, for uri: String) throws {
        if bytes(except: uri) + count > maxBytes {
            throw ResponseError.invalidParams(
                "open documents would exceed the document cache limit of \(maxBytes) bytes; close some first",
                data: ["path": "text", "keyword": "maxLength", "limitBytes": .int(maxBytes)])
        }
    }

    public func put(_ d: OpenDocument) throws {
        try refuseEditorBuffer(d.uri)
        try checkLimit(adding: d.text.utf8.count, for: d.uri)
        docs[d.uri] = d
    }

    /// Closes a document opened with `document/open` (an editor's buffer closes with the
    /// editor's `textDocument/didClose`).
    @discardableResult public func remove(_ uri: String) throws -> Bool {
        try refuseEditorBuffer(uri)
        return docs.removeValue(forKey: uri) != nil
    }

    /// An editor buffer belongs to the editor: only its own notifications change it.
    private func refuseEditorBuffer(_ uri: String) throws {
        guard editors[uri] != nil else { return }
        throw ResponseError.invalidParams(
            "uri '\(uri)' is an editor buffer (opened with textDocument/didOpen); it changes only with the editor's textDocument/didChange and didClose",
            data: ["path": "uri", "keyword": "editorBuffer", "error": "editorBuffer", "uri": .string(uri)])
    }

    // MARK: Editor buffers

    public func openEditor(uri: String, languageId: String, version: Int, text: String) throws {
        try checkLimit(adding: text.utf8.count, for: uri)
        editors[uri] = EditorBuffer(uri: uri, languageId: languageId, version: version, buffer: TextBuffer(text), parsed: nil)
    }

    /// Edits a buffer in place (no copy of its text) and moves it to `version`. False when
    /// no such buffer is open.
    public func editEditor(uri: String, version: Int, _ body: (inout TextBuffer) -> Void) -> Bool {
        guard editors[uri] != nil else { return false }
        editors[uri]!.parsed = nil
        editors[uri]!.version = version
        body(&editors[uri]!.buffer)
        return true
    }

    @discardableResult public func closeEditor(_ uri: String) -> Bool { editors.removeValue(forKey: uri) != nil }

    /// Reads an editor buffer where it is (nil when none is open under `uri`).
    public func withEditor<T: Sendable>(_ uri: String, _ body: (EditorBuffer) -> T) -> T? {
        guard let e = editors[uri] else { return nil }
        return body(e)
    }

    /// SRT or WebVTT by language id or extension, plain text otherwise.
    static func parse(_ e: EditorBuffer) -> OpenDocument? {
        let text = e.buffer.text
        let lower = e.uri.lowercased()
        let format: TranscriptFormat
        switch e.languageId.lowercased() {
        case "srt", "subrip": format = .srt
        case "vtt", "webvtt": format = .vtt
        default: format = lower.hasSuffix(".srt") ? .srt : lower.hasSuffix(".vtt") ? .vtt : .text
        }
        // A buffer that is not (yet) a valid transcript is read as plain text; an empty one
        // is no document (features answer notFound until it has text).
        let transcript: ParsedTranscript
        if let t = try? AnalysisInput.parse(text, format: format) {
            transcript = t
        } else if format != .text, let t = try? AnalysisInput.parse(text, format: .text) {
            transcript = t
        } else {
            return nil
        }
        let language = LanguageDetector.detect(String(transcript.plainText.prefix(4000))).code
        return OpenDocument(uri: e.uri, version: e.version, text: text, transcript: transcript, contentHash: SHA256.hex(text),
                            language: language, tokenCount: nil)
    }
}

enum SHA256Hex {
    static func of(_ s: String) -> String { SHA256.hex(s) }
}

/// Maps transcript parse failures to JSON-RPC errors.
enum Documents {
    static func error(_ e: any Error) -> ResponseError {
        guard let e = e as? TranscriptParseError else { return ErrorMapping.response(for: e) }
        switch e {
        case .empty:
            return .invalidParams("text is empty", data: ["path": "text", "keyword": "minLength", "error": "empty"])
        case .noText:
            return .invalidParams("the transcript has timestamps but no text", data: ["path": "text", "keyword": "minLength", "error": "noText"])
        case .invalidUTF8:
            return .invalidParams("text is not valid UTF-8", data: ["path": "text", "keyword": "format", "error": "invalidUTF8"])
        case .unknownFormat(let f):
            return .invalidParams("unknown format '\(f)': expected srt, vtt or text", data: ["path": "format", "keyword": "enum", "error": "unknownFormat"])
        }
    }
}
