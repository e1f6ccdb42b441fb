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

/// Per-document transcript cache, bounded in bytes.
public actor DocumentStore {
    private var docs: [String: OpenDocument] = [:]
    public let maxBytes: Int
    public init(maxBytes: Int = 256 << 20) { self.maxBytes = maxBytes }

    public func get(_ uri: String) -> OpenDocument? { docs[uri] }
    public var all: [OpenDocument] { docs.values.sorted { $0.uri < $1.uri } }
    public var byteCount: Int { docs.values.reduce(0) { $0 + $1.text.utf8.count } }

    public func put(_ d: OpenDocument) throws {
        let others = docs.values.filter { $0.uri != d.uri }.reduce(0) { $0 + $1.text.utf8.count }
        if others + d.text.utf8.count > maxBytes {
            throw ResponseError.invalidParams(
                "open documents would exceed the document cache limit of \(maxBytes) bytes; close some first",
                data: ["path": "text", "keyword": "maxLength", "limitBytes": .int(maxBytes)])
        }
        docs[d.uri] = d
    }

    @discardableResult public func remove(_ uri: String) -> Bool { docs.removeValue(forKey: uri) != nil }
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
