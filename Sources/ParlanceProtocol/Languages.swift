import ParlanceJSON
import ParlanceSchema

/// What a generating request does when its output language is not one the model writes well.
public enum LanguageFallback: String, Codable, Sendable, SchemaEnum {
    /// Write in the closest language the model writes well, reported in `fallbackFrom` (the default).
    case fallback
    /// Write in the language asked, the quality risk reported in `provenance.languageRisk`.
    case keep
}

/// Where a model's languages were read.
public enum LanguageSource: String, Codable, Sendable, SchemaEnum {
    /// The model's entry in the config file (`languages`).
    case config
    /// The model file's metadata (`general.languages`).
    case gguf
    /// Nothing said: Parlance's fixed table of output languages.
    case `default`
}

/// The output languages a model writes well, and where that came from.
public struct ModelLanguages: Codable, Sendable, Hashable, Schematic {
    /// BCP-47 tags, lowercased: a bare language (`sv`) covers every region of it.
    public var writesWell: [String]
    public var source: LanguageSource
    public init(writesWell: [String], source: LanguageSource) {
        self.writesWell = writesWell
        self.source = source
    }
    public static let schemaDescription: String? =
        "The output languages the model writes well. A request for another one falls back to the closest of these (fallbackFrom), unless it says languageFallback: keep."
    public static let schemaHints: [String: SchemaHint] = [
        "writesWell": SchemaHint(description: "BCP-47 tags, lowercased; a bare language (sv) covers all its regions."),
        "source": SchemaHint(description: "config: the model's `languages` in the config file; gguf: the model file's general.languages; default: neither says, so Parlance's fixed table of output languages."),
    ]
}

/// A request that kept a language the model does not write well (`languageFallback: keep`).
public struct LanguageRisk: Codable, Sendable, Hashable, Schematic {
    /// The language written (the one asked for).
    public var language: String
    /// What the default (`fallback`) would have written in instead.
    public var fallbackWouldUse: String
    /// Where the model's languages came from (model/status's `languages`).
    public var source: LanguageSource
    public var message: String
    public init(language: String, fallbackWouldUse: String, source: LanguageSource, message: String) {
        self.language = language
        self.fallbackWouldUse = fallbackWouldUse
        self.source = source
        self.message = message
    }
    public static let schemaDescription: String? =
        "Present when the request kept a language its model does not write well (languageFallback: keep): the output may be poorer than in the model's own languages."
}

extension SchemaHint {
    /// `languageFallback`, said once for every generating method that takes `language`.
    public static let languageFallback = SchemaHint(description: """
        When the output language is not one the model writes well (model/status's languages): fallback (default) writes in \
        the closest one it does, reported in fallbackFrom; keep writes in the language asked and reports the quality risk in \
        provenance.languageRisk.
        """)
}
