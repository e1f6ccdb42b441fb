import ParlanceSchema

/// What every single-document analysis result carries after the method's own fields: the
/// language it was written in, how the transcript was read, whether it came from the cache,
/// its checks, usage and provenance.
public struct AnalysisMeta: Codable, Sendable {
    public var language: String
    public var fallbackFrom: String?
    public var chunks: Int
    public var cached: Bool
    public var verification: Verification
    public var usage: Usage
    public var provenance: Provenance
    public init(language: String, fallbackFrom: String?, chunks: Int, cached: Bool, verification: Verification, usage: Usage,
                provenance: Provenance) {
        self.language = language
        self.fallbackFrom = fallbackFrom
        self.chunks = chunks
        self.cached = cached
        self.verification = verification
        self.usage = usage
        self.provenance = provenance
    }
}

/// The fields one analysis method adds (`AnalyzeTags.Fields`, …), declared once per method.
public protocol AnalysisFields: Codable, Sendable, Schematic {
    /// How the metadata's members are described for this method. Default: `analysisMetaHints`.
    static var metaHints: [String: SchemaHint] { get }
}

extension AnalysisFields {
    public static var metaHints: [String: SchemaHint] { analysisMetaHints }
}

/// A single-document analysis result: the method's fields, then `AnalysisMeta`, one flat
/// object on the wire (and in the schema), read and written as if it were one struct
/// (`result.tags`, `result.cached`).
@dynamicMemberLookup
public struct Analyzed<Fields: AnalysisFields>: Codable, Sendable, Schematic {
    public var fields: Fields
    public var meta: AnalysisMeta

    public init(fields: Fields, meta: AnalysisMeta) {
        self.fields = fields
        self.meta = meta
    }
    public init(from decoder: any Decoder) throws {
        fields = try Fields(from: decoder)
        meta = try AnalysisMeta(from: decoder)
    }
    public func encode(to encoder: any Encoder) throws {
        try fields.encode(to: encoder)
        try meta.encode(to: encoder)
    }

    public subscript<T>(dynamicMember key: WritableKeyPath<Fields, T>) -> T {
        get { fields[keyPath: key] }
        set { fields[keyPath: key] = newValue }
    }
    public subscript<T>(dynamicMember key: WritableKeyPath<AnalysisMeta, T>) -> T {
        get { meta[keyPath: key] }
        set { meta[keyPath: key] = newValue }
    }

    public static var schemaHints: [String: SchemaHint] { Fields.metaHints.merging(Fields.schemaHints) { a, _ in a } }
    public static var schemaDescription: String? { Fields.schemaDescription }
    public static var schemaTitle: String { "Result" }
}

extension Analyzed: GeneratedResult where Fields: GeneratedResult {
    public static var generatedFields: [String] { Fields.generatedFields }
}

/// A single-document analysis method: its result is its `Fields`, then `AnalysisMeta`.
public protocol DocumentAnalysis: GeneratingMethod where Result == Analyzed<Fields> {
    associatedtype Fields: AnalysisFields
}
