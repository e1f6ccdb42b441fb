import ParlanceJSON
import ParlanceSchema

/// Measured by the engine for every generating request.
public struct Usage: Codable, Sendable, Hashable, Schematic {
    public var promptTokens: Int
    public var cachedPromptTokens: Int
    public var generatedTokens: Int
    public var firstTokenMs: Double
    public var totalMs: Double
    /// Present (true) when the token counts are estimates: a remote server that reported no
    /// usage of its own.
    public var estimated: Bool? = nil
    /// Speculative decoding (a local engine): tokens drafted from the text and verified,
    /// and how many of them the model's own sampling agreed with.
    public var draftTokens: Int? = nil
    public var acceptedDraftTokens: Int? = nil
    public init(promptTokens: Int, cachedPromptTokens: Int, generatedTokens: Int, firstTokenMs: Double, totalMs: Double, estimated: Bool? = nil,
                draftTokens: Int? = nil, acceptedDraftTokens: Int? = nil) {
        self.estimated = estimated
        self.draftTokens = draftTokens
        self.acceptedDraftTokens = acceptedDraftTokens
        self.promptTokens = promptTokens
        self.cachedPromptTokens = cachedPromptTokens
        self.generatedTokens = generatedTokens
        self.firstTokenMs = firstTokenMs
        self.totalMs = totalMs
    }
    public static let schemaDescription: String? =
        "Token counts and timings measured by the engine (a remote model: the server's own usage; `estimated` when it reported none). Summed over every model call the result needed."
    public static let schemaHints: [String: SchemaHint] = [
        "cachedPromptTokens": SchemaHint(description: "Prompt tokens reused from the KV cache instead of evaluated."),
        "firstTokenMs": SchemaHint(description: "Milliseconds from the request to its first generated token."),
        "draftTokens": SchemaHint(description: "Tokens drafted from the text (the prompt, the output so far, sibling variations) and verified in the same decode step (speculative decoding; a local engine only)."),
        "acceptedDraftTokens": SchemaHint(description: "Of draftTokens, those the model's own sampling agreed with: each one a decode step saved."),
    ]

    public static func + (a: Usage, b: Usage) -> Usage {
        Usage(promptTokens: a.promptTokens + b.promptTokens, cachedPromptTokens: a.cachedPromptTokens + b.cachedPromptTokens,
              generatedTokens: a.generatedTokens + b.generatedTokens,
              firstTokenMs: a.firstTokenMs == 0 ? b.firstTokenMs : a.firstTokenMs, totalMs: ((a.totalMs + b.totalMs) * 10).rounded() / 10,
              estimated: a.estimated == true || b.estimated == true ? true : nil,
              draftTokens: sum(a.draftTokens, b.draftTokens), acceptedDraftTokens: sum(a.acceptedDraftTokens, b.acceptedDraftTokens))
    }
    /// Two optional counts added (nil when neither is given).
    public static func sum(_ a: Int?, _ b: Int?) -> Int? { a == nil && b == nil ? nil : (a ?? 0) + (b ?? 0) }
    public static let zero = Usage(promptTokens: 0, cachedPromptTokens: 0, generatedTokens: 0, firstTokenMs: 0, totalMs: 0)
}

/// What produced a result, so scripts can cache results and detect stale ones.
public struct Provenance: Codable, Sendable, Hashable, Schematic {
    /// The registry name of the model that produced the result (model/list).
    public var model: String? = nil
    /// SHA-256 of the GGUF file; for a remote model, of `openai:<endpoint>/<servedModel>`
    /// (its weights are not visible from here).
    public var modelSha256: String
    /// SHA-256 of the chat template; for a remote model, of the empty string (the server
    /// applies its own).
    public var templateSha256: String
    /// Present when the model has no chat template: which template was used instead.
    public var templateFallback: String? = nil
    /// `host:port` of the OpenAI-compatible server (a remote model).
    public var endpoint: String? = nil
    /// A pool with `continueOnFailure`: the endpoint that went on with the output after
    /// `endpoint`'s stream was cut (the text before it came from `endpoint`).
    public var continuedOn: String? = nil
    /// The model name the server serves it under (a remote model).
    public var servedModel: String? = nil
    public var sampler: SamplerSettings
    public var seed: Int
    /// Present (true) when the request ran with `deterministic`.
    public var deterministic: Bool? = nil
    /// Present when the request kept a language the model does not write well (`languageFallback: keep`).
    public var languageRisk: LanguageRisk? = nil
    public init(modelSha256: String, templateSha256: String, sampler: SamplerSettings, seed: Int) {
        self.modelSha256 = modelSha256
        self.templateSha256 = templateSha256
        self.sampler = sampler
        self.seed = seed
    }
}

public struct SamplerSettings: Codable, Sendable, Hashable, Schematic {
    public var temperature: Double
    public var topP: Double
    public var topK: Int
    public var minP: Double
    public var repeatPenalty: Double
    public var maxTokens: Int
    public init(temperature: Double, topP: Double, topK: Int, minP: Double, repeatPenalty: Double, maxTokens: Int) {
        self.temperature = temperature
        self.topP = topP
        self.topK = topK
        self.minP = minP
        self.repeatPenalty = repeatPenalty
        self.maxTokens = maxTokens
    }
}

/// Model options a client may set (all optional; defaults per method).
public struct GenerationOptions: Codable, Sendable, Hashable, Schematic {
    public var temperature: Double?
    public var topP: Double?
    public var topK: Int?
    public var minP: Double?
    public var repeatPenalty: Double?
    public var seed: Int?
    public var deterministic: Bool? = nil
    public var maxTokens: Int?
    public var speculative: Bool? = nil
    public init(temperature: Double? = nil, topP: Double? = nil, topK: Int? = nil, minP: Double? = nil,
                repeatPenalty: Double? = nil, seed: Int? = nil, maxTokens: Int? = nil, deterministic: Bool? = nil, speculative: Bool? = nil) {
        self.deterministic = deterministic
        self.speculative = speculative
        self.temperature = temperature
        self.topP = topP
        self.topK = topK
        self.minP = minP
        self.repeatPenalty = repeatPenalty
        self.seed = seed
        self.maxTokens = maxTokens
    }
    public static let schemaHints: [String: SchemaHint] = [
        "temperature": SchemaHint(description: "0 = greedy.", minimum: 0, maximum: 2),
        "topP": SchemaHint(minimum: 0, maximum: 1),
        "topK": SchemaHint(minimum: 0, maximum: 1000),
        "minP": SchemaHint(minimum: 0, maximum: 1),
        "repeatPenalty": SchemaHint(minimum: 0.5, maximum: 2),
        "seed": SchemaHint(description: "Same seed + same input = same output.", minimum: 0, maximum: 4_294_967_295),
        "deterministic": .deterministic,
        "maxTokens": SchemaHint(description: "Upper bound on generated tokens.", minimum: 1, maximum: 8192),
        "speculative": .speculative,
    ]
}

extension SchemaHint {
    /// `model`, said once for every method that generates.
    public static let model = SchemaHint(description: """
        A model by its registry name (model/list), or a model on disk by its store name: ollama:NAME[:TAG], \
        hf:ORG/REPO[:QUANT], lmstudio:PUBLISHER/REPO[/FILE] (model/list's `available`), or a GGUF file's path. \
        Default: the route for this method or its family in the config file, else the default model. An unknown \
        registry name is -32602 with data.models listing the names; a store name not on disk is -32001 with \
        data.reason notDownloaded, data.suggestions and data.pullCommand.
        """, minLength: 1)

    /// What `speculative` does, said once for every method that takes it.
    public static let speculative = SchemaHint(description: """
        Speculative decoding drafted from the text: tokens the output is likely to copy (from the selection, the refined \
        variation, the document's segments, sibling variations) are verified several per decode step. The output is the \
        same with it on or off; only the speed differs. Default: the daemon's --speculative (on), which drafts where the \
        output copies text (compose, refine, ask, LSP rewrites) and not for free text such as a session turn; true drafts \
        for any request, each draft verified whole. A deterministic request never drafts (llama.cpp's kernels are not \
        bit-stable across batch shapes). A remote engine gets the server's own speculative settings, or none when false.
        """)

    /// What `deterministic` promises, said once for every method that takes it.
    public static let deterministic = SchemaHint(description: """
        Identical output for the same input, seed and options, whatever else the daemon has done or is doing. Costs: the \
        request runs alone (it waits for running requests, later ones wait for it) and evaluates its whole prompt itself \
        (no cached prefix). Without it the same request usually gives the same output, but batching beside other requests \
        and reused prefixes may change the numbers slightly, and so sometimes the text.
        """)
}

/// Information about the loaded model.
public struct ModelDescription: Codable, Sendable, Hashable, Schematic {
    public var path: String
    public var name: String?
    public var architecture: String?
    public var description: String
    public var parameters: Int
    public var fileBytes: Int
    public var contextSize: Int
    public var trainedContextSize: Int
    public var vocabularySize: Int
    public var chatTemplate: Bool
    /// Present when the model has no chat template: which template is used instead.
    public var templateFallback: String? = nil
    public var sha256: String
    /// Repeating layers; `gpuLayers` of `layers + 1` (with the output layer) are on a GPU.
    public var layers: Int?
    public var gpuLayers: Int?
    /// `--gpu-layers` as given: auto, all or a count.
    public var gpuLayersRequested: String?
    /// What llama.cpp allocated for this model, as it reported it.
    public var memory: ModelMemory?
    public init(path: String, name: String?, architecture: String?, description: String, parameters: Int, fileBytes: Int,
                contextSize: Int, trainedContextSize: Int, vocabularySize: Int, chatTemplate: Bool, sha256: String,
                layers: Int? = nil, gpuLayers: Int? = nil, gpuLayersRequested: String? = nil, memory: ModelMemory? = nil,
                templateFallback: String? = nil) {
        self.templateFallback = templateFallback
        self.memory = memory
        self.layers = layers
        self.gpuLayers = gpuLayers
        self.gpuLayersRequested = gpuLayersRequested
        self.path = path
        self.name = name
        self.architecture = architecture
        self.description = description
        self.parameters = parameters
        self.fileBytes = fileBytes
        self.contextSize = contextSize
        self.trainedContextSize = trainedContextSize
        self.vocabularySize = vocabularySize
        self.chatTemplate = chatTemplate
        self.sha256 = sha256
    }
}

/// A model's memory as llama.cpp reports allocating it, in bytes.
public struct ModelMemory: Codable, Sendable, Hashable, Schematic {
    public var weightsBytes: Int
    public var weightsMapped: Bool
    public var kvCacheBytes: Int
    public var computeBytes: Int
    public var outputBytes: Int
    public var totalBytes: Int
    public init(weightsBytes: Int, weightsMapped: Bool, kvCacheBytes: Int, computeBytes: Int, outputBytes: Int, totalBytes: Int) {
        self.weightsBytes = weightsBytes
        self.weightsMapped = weightsMapped
        self.kvCacheBytes = kvCacheBytes
        self.computeBytes = computeBytes
        self.outputBytes = outputBytes
        self.totalBytes = totalBytes
    }
    public static let schemaHints: [String: SchemaHint] = [
        "weightsMapped": SchemaHint(description: "The weights are mapped from the model file (pages the kernel may share and drop), not copied."),
        "computeBytes": SchemaHint(description: "The compute buffers llama.cpp's scheduler reserved for a batch."),
        "outputBytes": SchemaHint(description: "The logits output buffer."),
    ]
}

/// Like FoundationModels' `SystemLanguageModel.Availability`.
public enum Availability: String, Codable, Sendable, SchemaEnum {
    case available, unavailable
}

public enum UnavailableReason: String, Codable, Sendable, SchemaEnum {
    case modelNotFound, invalidModelFile, loading, contextTooSmall, memoryBudget
    /// A store name (`hf:…`, `ollama:…`) whose model is not on disk: `parlance models pull` gets it.
    case notDownloaded
    /// A remote model whose server cannot be used now (`message` says why).
    case remoteUnavailable
}

/// Params of a method that generates: `model` picks the registry entry.
public protocol ModelSelecting {
    /// The registry name the request asked for (nil: its route, or the default model).
    var model: String? { get }
}
extension GenerationParams: ModelSelecting {
    public var model: String? { controls.model }
}
extension SessionCreate.Params: ModelSelecting {}

/// Params that name open documents by uri. The server takes a snapshot of those documents
/// when the request arrives, so a `document/change` sent after it never alters the text it
/// works on, and one sent before it always does.
public protocol DocumentReferencing {
    var documentURIs: [String] { get }
}

/// An input that names at most one open document, by `uri`.
public protocol OneDocumentInput: DocumentReferencing {
    var uri: String? { get }
}
extension OneDocumentInput {
    public var documentURIs: [String] { uri.map { [$0] } ?? [] }
}
extension DocumentInput: OneDocumentInput {}
extension Summarize.Input: OneDocumentInput {}
extension AnalyzeWorthIt.Input: OneDocumentInput {}
extension AskStream.Input: DocumentReferencing {
    public var documentURIs: [String] { (uri.map { [$0] } ?? []) + (uris ?? []) }
}
extension AnalyzeCompare.Input: DocumentReferencing {
    public var documentURIs: [String] { documents.compactMap(\.uri) }
}
extension GenerationParams: DocumentReferencing where Input: DocumentReferencing {
    public var documentURIs: [String] { input.documentURIs }
}
