import ParlanceJSON
import ParlanceSchema

public struct TextEdit: Codable, Sendable, Hashable, Schematic {
    public var range: TextRange
    public var newText: String
    public init(range: TextRange, newText: String) {
        self.range = range
        self.newText = newText
    }
}

public struct OptionalVersionedTextDocumentIdentifier: Codable, Sendable, Hashable, Schematic {
    public var uri: String
    public var version: Int?
    public init(uri: String, version: Int?) {
        self.uri = uri
        self.version = version
    }
}

public struct TextDocumentEdit: Codable, Sendable, Hashable, Schematic {
    public var textDocument: OptionalVersionedTextDocumentIdentifier
    public var edits: [TextEdit]
    public init(textDocument: OptionalVersionedTextDocumentIdentifier, edits: [TextEdit]) {
        self.textDocument = textDocument
        self.edits = edits
    }
}

/// `documentChanges` (versioned: the client refuses it if the buffer moved on) when the
/// client supports them, else `changes`.
public struct WorkspaceEdit: Codable, Sendable, Hashable, Schematic {
    public var changes: [String: [TextEdit]]?
    public var documentChanges: [TextDocumentEdit]?
    public init(changes: [String: [TextEdit]]? = nil, documentChanges: [TextDocumentEdit]? = nil) {
        self.changes = changes
        self.documentChanges = documentChanges
    }
}

public struct Command: Codable, Sendable, Schematic {
    public var title: String
    public var command: String
    public var arguments: [JSONValue]?
    public init(title: String, command: String, arguments: [JSONValue]?) {
        self.title = title
        self.command = command
        self.arguments = arguments
    }
}

public enum Refinement: String, Codable, Sendable, CaseIterable, SchemaEnum { case shorter, clearer }

/// What a rewrite action will do, carried in the action's `data` (and its command's
/// argument): the selection as it was offered, by uri, buffer version and range.
public struct RewriteAction: Codable, Sendable, Hashable, Schematic {
    public var uri: String
    public var version: Int
    public var range: TextRange
    public var tone: Tone?
    public var refine: Refinement?
    public init(uri: String, version: Int, range: TextRange, tone: Tone? = nil, refine: Refinement? = nil) {
        self.uri = uri
        self.version = version
        self.range = range
        self.tone = tone
        self.refine = refine
    }
    public static let schemaHints: [String: SchemaHint] = [
        "version": SchemaHint(description: "The buffer version the action was offered for; a later version refuses it (-32801)."),
        "tone": SchemaHint(description: "Rewrite in this tone; absent for a refinement."),
        "refine": SchemaHint(description: "Shorter or clearer, keeping the selection's tone."),
    ]
}

public struct CodeAction: Codable, Sendable, Schematic {
    public var title: String
    public var kind: String?
    public var isPreferred: Bool?
    public var edit: WorkspaceEdit?
    public var command: Command?
    public var data: RewriteAction?
    public init(title: String, kind: String?, edit: WorkspaceEdit? = nil, command: Command? = nil, data: RewriteAction?) {
        self.title = title
        self.kind = kind
        self.edit = edit
        self.command = command
        self.data = data
    }
}

public struct CodeActionContext: Codable, Sendable, Schematic {
    public var diagnostics: [JSONValue]?
    public var only: [String]?
    public var triggerKind: Int?
}

public enum CodeActionRequest: RPCMethod {
    /// Rewrites: the model routed for `compose`.
    public static let modelRoute = "compose"
    public static let name = "textDocument/codeAction"
    public static let summary = "LSP: rewrite actions for a selection (one per tone, Shorter, Clearer); answered at once, the model runs when one is chosen."
    public static let acceptsUnknownParams = true
    public struct Params: Codable, Sendable, Schematic {
        public var textDocument: TextDocumentIdentifier
        public var range: TextRange
        public var context: CodeActionContext?
    }
    public typealias Result = [CodeAction]
}

public enum CodeActionResolve: RPCMethod {
    /// Rewrites: the model routed for `compose`.
    public static let modelRoute = "compose"
    public static let name = "codeAction/resolve"
    public static let summary = "LSP: runs the chosen rewrite and answers the action with its edit (-32801 when the buffer changed since the offer)."
    public static let acceptsUnknownParams = true
    public static let errors: [ProtocolError] = .generating
    public typealias Params = CodeAction
    public typealias Result = CodeAction
}

public enum ExecuteCommand: RPCMethod {
    /// Rewrites: the model routed for `compose`.
    public static let modelRoute = "compose"
    public static let name = "workspace/executeCommand"
    public static let summary = "LSP: runs a rewrite action's command: answered null at once; the edit follows as workspace/applyEdit (or window/showMessage saying why not)."
    public static let acceptsUnknownParams = true
    public struct Params: Codable, Sendable, Schematic {
        public var command: String
        public var arguments: [JSONValue]?
        public var workDoneToken: JSONValue?
    }
    public typealias Result = JSONValue
}

/// LSP answers some requests with a bare array (`textDocument/codeAction`).
extension Array: Schematic where Element: Schematic {}
