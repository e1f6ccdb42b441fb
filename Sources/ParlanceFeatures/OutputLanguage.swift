import ParlanceDocuments
import ParlanceProtocol

/// A request's output language against its model's languages (`ModelLanguages`): the one
/// place generating methods resolve `language` and `languageFallback`.
enum OutputLanguage {
    /// A tag that names no language is -32010 `unsupportedLanguageOrLocale`, listing the
    /// languages that are accepted.
    static func resolve(_ tag: String, languages: ModelLanguages, fallback: LanguageFallback?) throws -> LanguageSupport.Resolution {
        let list = languages.source == .default ? nil : languages.writesWell
        guard let r = LanguageSupport.resolve(tag, writesWell: list, keep: fallback == .keep) else {
            // Any language the table or the model knows is accepted (one they do not write falls back).
            let known = LanguageSupport.supported + languages.writesWell.filter { !LanguageSupport.supported.contains($0) }
            throw ErrorMapping.unsupportedLanguage(tag, supported: known)
        }
        return r
    }
}

extension LanguageSupport.Resolution {
    /// What `provenance.languageRisk` says of a kept language; nil when none was kept.
    func risk(source: LanguageSource) -> LanguageRisk? {
        kept.map {
            let whose = switch source {
            case .config: "the config file's languages for this model"
            case .gguf: "the languages the model file names"
            case .default: "Parlance's output languages"
            }
            return LanguageRisk(language: language, fallbackWouldUse: $0.fallbackWouldUse, source: source,
                                message: "\(LanguageSupport.displayName(language)) (\(language)) is not among \(whose); written as asked "
                                    + "(languageFallback: keep) instead of \($0.fallbackWouldUse), so the output may be poorer")
        }
    }
}

extension ModelLanguages {
    /// The fixed table: what a model gets when neither its card nor the config says.
    static let table = ModelLanguages(writesWell: LanguageSupport.supported, source: .default)

    /// The config file's list over the model file's (`general.languages`), else the table.
    static func of(config: [String]?, gguf: [String]?) -> ModelLanguages {
        if let c = config.map({ LanguageSupport.normalize($0).tags }), !c.isEmpty { return ModelLanguages(writesWell: c, source: .config) }
        if let g = gguf.map({ LanguageSupport.normalize($0).tags }), !g.isEmpty { return ModelLanguages(writesWell: g, source: .gguf) }
        return table
    }
}
