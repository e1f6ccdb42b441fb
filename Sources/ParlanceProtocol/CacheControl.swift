import ParlanceJSON
import ParlanceSchema

/// The analysis cache (results of `analysis/*`, first answers of `ask/stream`, and the part
/// notes a long transcript is read through): what it holds, and clearing it. Every analysis
/// also takes `refresh: true`, which makes its result again and replaces the entry.

/// Which document's entries: by `uri` (the entries asked for under it, and those of the
/// open document's current text) or by `contentHash` (document/open's).
let cacheDocumentHints: [String: SchemaHint] = [
    "uri": SchemaHint(description: "A document: the entries made for it under this uri (any of its versions), and those of its current text when it is open. A uri neither open nor in the cache is -32004.", minLength: 1),
    "contentHash": SchemaHint(description: "A document's text by its SHA-256 (document/open's contentHash): the entries made from that text, whichever uri it came under.",
                              pattern: "^[0-9a-f]{64}$"),
]

/// One entry of the analysis cache.
public struct CacheEntry: Codable, Sendable, Hashable, Schematic {
    public var id: String
    public var method: String
    public var contentHashes: [String]
    public var uri: String?
    public var model: String?
    public var modelIdentity: String
    public var language: String
    public var checksVersion: Int
    public var current: Bool
    public var createdAt: String
    public var bytes: Int
    public var inMemory: Bool
    public init(id: String, method: String, contentHashes: [String], uri: String?, model: String?, modelIdentity: String, language: String,
                checksVersion: Int, current: Bool, createdAt: String, bytes: Int, inMemory: Bool) {
        self.id = id
        self.method = method
        self.contentHashes = contentHashes
        self.uri = uri
        self.model = model
        self.modelIdentity = modelIdentity
        self.language = language
        self.checksVersion = checksVersion
        self.current = current
        self.createdAt = createdAt
        self.bytes = bytes
        self.inMemory = inMemory
    }
    public static let schemaHints: [String: SchemaHint] = [
        "id": SchemaHint(description: "The entry's name: the SHA-256 of its key (method, content, settings, language, model)."),
        "method": SchemaHint(description: "The method that made it (analysis/summarize, …, ask/stream for a first answer), or part-notes: the notes on one part of a transcript too long to read at once, shared by every analysis of it."),
        "contentHashes": SchemaHint(description: "The SHA-256 of each document's text the entry was made from (document/open's contentHash); several for analysis/compare."),
        "uri": SchemaHint(description: "The open document it was asked for (absent for text given inline)."),
        "model": SchemaHint(description: "The model's registry name (model/list)."),
        "modelIdentity": SchemaHint(description: "What the cache knows the model by: the GGUF file's SHA-256, or a remote server's endpoint and served model."),
        "language": SchemaHint(description: "The output language."),
        "checksVersion": SchemaHint(description: "The version of the checks and repairs the result was made under."),
        "current": SchemaHint(description: "Made under this daemon's checks version: only such entries are ever served; the others wait to be cleared."),
        "createdAt": SchemaHint(description: "When it was made. ISO 8601, UTC."),
        "bytes": SchemaHint(description: "Its size as stored."),
        "inMemory": SchemaHint(description: "Also held in the in-memory cache (every entry is on disk unless the daemon runs without a cache dir)."),
    ]
}

public enum AnalysisCacheList: RPCMethod {
    public static let name = "analysis/cache/list"
    public static let summary = "What the analysis cache holds: each result's method, documents, model, language, checks version and time, newest first."
    public static let errors: [ProtocolError] = [.notFound]
    public struct Params: Codable, Sendable, Schematic {
        public var uri: String?
        public var contentHash: String?
        public var limit: Int?
        public init(uri: String? = nil, contentHash: String? = nil, limit: Int? = nil) {
            self.uri = uri
            self.contentHash = contentHash
            self.limit = limit
        }
        public static let schemaHints: [String: SchemaHint] = cacheDocumentHints.merging([
            "limit": SchemaHint(description: "At most this many entries, the newest (default 100).", minimum: 1, maximum: 10000),
        ]) { a, _ in a }
        public static let schemaDescription: String? = "Give uri or contentHash to list one document's entries; neither lists every entry."
    }
    public struct Result: Codable, Sendable, Schematic {
        public var entries: [CacheEntry]
        public var total: Int
        public var totalBytes: Int
        public var unlabelled: Int
        public var checksVersion: Int
        public init(entries: [CacheEntry], total: Int, totalBytes: Int, unlabelled: Int, checksVersion: Int) {
            self.entries = entries
            self.total = total
            self.totalBytes = totalBytes
            self.unlabelled = unlabelled
            self.checksVersion = checksVersion
        }
        public static let schemaHints: [String: SchemaHint] = [
            "total": SchemaHint(description: "Entries that match, before limit."),
            "totalBytes": SchemaHint(description: "Their size as stored."),
            "unlabelled": SchemaHint(description: "Entries made before the cache recorded what each one is (not listed; clearing with all: true removes them)."),
            "checksVersion": SchemaHint(description: "This daemon's checks version (an entry of another is never served)."),
        ]
    }
}

public enum AnalysisCacheClear: RPCMethod {
    public static let name = "analysis/cache/clear"
    public static let summary = "Remove cached analysis results: one document's (by uri or contentHash) or all; says how many were removed."
    public static let errors: [ProtocolError] = [.notFound]
    public struct Params: Codable, Sendable, Schematic {
        public var uri: String?
        public var contentHash: String?
        public var all: Bool?
        public init(uri: String? = nil, contentHash: String? = nil, all: Bool? = nil) {
            self.uri = uri
            self.contentHash = contentHash
            self.all = all
        }
        public static let schemaHints: [String: SchemaHint] = cacheDocumentHints.merging([
            "all": SchemaHint(description: "true: every entry, in memory and on disk (entries of other checks versions and unlabelled ones too)."),
        ]) { a, _ in a }
        public static let schemaDescription: String? = "Exactly one of uri, contentHash and all (true)."
    }
    public struct Result: Codable, Sendable, Schematic {
        public var removed: Int
        public init(removed: Int) { self.removed = removed }
        public static let schemaHints: [String: SchemaHint] = [
            "removed": SchemaHint(description: "How many entries were removed (0 when there were none)."),
        ]
    }
}
