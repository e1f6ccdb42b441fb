import ParlanceJSON

extension AnalysisCache {
    /// What an entry is for: the method, the content (hashes), the request's settings, the
    /// output language and the model. The one way to name an entry (`text`); its `label`
    /// says the same for people (analysis/cache/list) and is stored beside the value, not
    /// part of the name.
    public struct Key: Sendable, Hashable {
        public let text: String
        public let label: Label

        /// `documents`: the content hashes of the documents the entry was made from, when
        /// `content` is not one (a part of a document, several documents); `uri` the open
        /// document it was asked for; `modelName` the registry name beside the identity.
        public init(method: String, content: String, settings: JSONObject, language: String, model: String,
                    documents: [String]? = nil, uri: String? = nil, modelName: String? = nil) {
            text = [method, content, JSONValue.object(settings).serialized(sortKeys: true), language, model].joined(separator: "|")
            label = Label(method: method, documents: documents ?? [content], uri: uri, model: modelName, modelIdentity: model, language: language)
        }

        /// A single-document request: its params without the text, uri, progress token and
        /// `refresh` (a refreshed result replaces the entry it would have read). `instructions`
        /// stay in: a focused result is its own entry.
        /// A requested language honoured as asked says nothing the resolved language does not,
        /// so it is left out: compare's summary of a document ("en-us", asked) is the summary
        /// a plain analysis/summarize of it made (en-us, detected), and is shared.
        public init(method: String, input: AnalysisInput, params: some Encodable, engine: any LanguageModel) {
            var p = (try? JSONValue(encoding: params))?.objectValue ?? JSONObject()
            for k in ["workDoneToken", "text", "uri", "refresh"] { p[k] = nil }
            // The instructions as the prompt has them: blank is none, surrounding spaces say nothing.
            p["instructions"] = AnalysisJob.instructions(p["instructions"]?.stringValue).map { .string($0) }
            if input.language.fallbackFrom == nil, input.language.kept == nil { p["language"] = nil }
            // `keep` says something only when it kept a language (its result carries a languageRisk).
            if input.language.kept == nil { p["languageFallback"] = nil }
            // An ablation run's results are its own (`Ablation`).
            if !Ablation.disabled.isEmpty { p["disabledChecks"] = .string(Ablation.disabled.sorted().joined(separator: ",")) }
            self.init(method: method, content: input.contentHash, settings: p, language: input.language.language, model: engine.identity,
                      uri: input.uri, modelName: engine.name)
        }

        /// Two keys are the same entry when they name it the same way, whatever their labels.
        public static func == (a: Key, b: Key) -> Bool { a.text == b.text }
        public func hash(into h: inout Hasher) { h.combine(text) }
    }

    /// What an entry is: the method that made it (`part-notes`: one part of a long
    /// transcript, shared by the analyses that read it in parts), the content hashes of the
    /// documents it was made from, the uri it was asked for, the model and the language.
    public struct Label: Sendable, Hashable, Codable {
        public var method: String
        public var documents: [String]
        public var uri: String?
        public var model: String?
        public var modelIdentity: String
        public var language: String
    }
}
