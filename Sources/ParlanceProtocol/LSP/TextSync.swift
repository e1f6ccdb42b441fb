import ParlanceJSON
import ParlanceSchema

// The standard LSP surface beside Parlance's own methods: an editor's buffers, kept in
// the same document store as `document/open`, so analyses and questions work on them by
// URI. Positions count characters in the encoding negotiated at `initialize`.

/// A position in a text document: zero-based line, and character offset in the
/// negotiated position encoding (UTF-16 code units unless UTF-8 was agreed).
public struct Position: Codable, Sendable, Hashable, Schematic {
    public var line: Int
    public var character: Int
    public init(line: Int, character: Int) {
        self.line = line
        self.character = character
    }
    public static let schemaHints: [String: SchemaHint] = ["line": SchemaHint(minimum: 0), "character": SchemaHint(minimum: 0)]
}

/// LSP's `Range` (start inclusive, end exclusive).
public struct TextRange: Codable, Sendable, Hashable, Schematic {
    public var start: Position
    public var end: Position
    public init(start: Position, end: Position) {
        self.start = start
        self.end = end
    }
}

public struct TextDocumentIdentifier: Codable, Sendable, Hashable, Schematic {
    public var uri: String
    public init(uri: String) { self.uri = uri }
}

public struct VersionedTextDocumentIdentifier: Codable, Sendable, Hashable, Schematic {
    public var uri: String
    public var version: Int
    public init(uri: String, version: Int) {
        self.uri = uri
        self.version = version
    }
}

public struct TextDocumentItem: Codable, Sendable, Schematic {
    public var uri: String
    public var languageId: String
    public var version: Int
    public var text: String
    public static let schemaHints: [String: SchemaHint] = [
        "languageId": SchemaHint(description: "srt, vtt/webvtt (or a .srt/.vtt uri) are parsed as transcripts; anything else as plain text."),
    ]
}

/// A change: `range` replaced by `text`, or without `range` the whole new text.
public struct TextDocumentContentChangeEvent: Codable, Sendable, Schematic {
    public var range: TextRange?
    public var rangeLength: Int?
    public var text: String
    public init(range: TextRange?, text: String) {
        self.range = range
        self.text = text
    }
}

public enum DidOpenTextDocument: RPCNotification {
    public static let name = "textDocument/didOpen"
    public static let summary = "LSP: an editor buffer opened; it joins the document store under its uri."
    public static let direction = NotificationDirection.clientToServer
    public struct Params: Codable, Sendable, Schematic { public var textDocument: TextDocumentItem }
}

public enum DidChangeTextDocument: RPCNotification {
    public static let name = "textDocument/didChange"
    public static let summary = "LSP: incremental (or whole-text) edits to an open editor buffer."
    public static let direction = NotificationDirection.clientToServer
    public struct Params: Codable, Sendable, Schematic {
        public var textDocument: VersionedTextDocumentIdentifier
        public var contentChanges: [TextDocumentContentChangeEvent]
    }
}

public enum DidCloseTextDocument: RPCNotification {
    public static let name = "textDocument/didClose"
    public static let summary = "LSP: an editor buffer closed; it leaves the document store."
    public static let direction = NotificationDirection.clientToServer
    public struct Params: Codable, Sendable, Schematic { public var textDocument: TextDocumentIdentifier }
}
