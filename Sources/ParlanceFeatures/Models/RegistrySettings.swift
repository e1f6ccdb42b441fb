import Foundation
import ParlanceEngine
import ParlanceJSON
import ParlanceModelStores
import ParlanceProtocol
import ParlanceRemote

/// One model the daemon may serve, by name (`--model NAME=PATH`, the config file).
public struct RegisteredModel: Sendable {
    public var name: String
    public var engine: EngineConfig
    /// Idle seconds before it is unloaded (0: never), like Ollama's `keep_alive`.
    public var keepAlive: Double
    /// Served by an OpenAI-compatible server instead of loaded here (`--model NAME=openai:URL`).
    public var remote: OpenAIEndpoint?
    /// Served by several OpenAI-compatible servers (`--model NAME=openai:URL1,URL2`, `endpoints`).
    public var pool: PoolSpec? = nil
    /// Served elsewhere (one remote server or a pool): never loaded here.
    public var servedElsewhere: Bool { remote != nil || pool != nil }
    /// The store name it was given (`ollama:…`, `hf:…`, `lmstudio:…`): found on disk again
    /// before each load, so a model pulled after the daemon started is served.
    public var storeName: String?
    /// What the store keeps with the model (Ollama's `.system` and `.params` layers): a
    /// session created without instructions or sampling options takes these.
    public var storeDefaults: StoreDefaults? = nil
    /// The output languages it writes well, as the config file says (normalized tags); nil:
    /// its file's `general.languages`, else the fixed table (`ModelLanguages.of`).
    public var languages: [String]? = nil
    public init(name: String, engine: EngineConfig, keepAlive: Double, remote: OpenAIEndpoint? = nil, storeName: String? = nil) {
        self.remote = remote
        self.storeName = storeName
        var engine = engine
        engine.name = name
        self.name = name
        self.engine = engine
        self.keepAlive = keepAlive
    }
}

/// The registry as configured: models, which one a request gets, and the memory budget.
public struct RegistrySettings: Sendable {
    public var models: [RegisteredModel]
    public var defaultModel: String
    /// Route key (a method family such as `compose`, or a full method name) → model name.
    public var routes: [String: String]
    public var maxLoadedModels: Int?
    public var maxModelBytes: Int?
    /// Bytes the system could give a new model now (nil: unknown, not checked).
    public var availableMemory: @Sendable () -> Int? = ProcessMemory.availableBytes
    /// Where store names (`ollama:…`, `hf:…`, `lmstudio:…`) are looked up.
    public var stores = StoreEnvironment()
    /// The engine settings for a model a request names that is not registered (a store
    /// name or a GGUF path): it is added to the registry on first use. nil: only
    /// registered names are accepted.
    public var onDemand: EngineConfig? = nil
    /// Keep-alive for models added on demand.
    public var onDemandKeepAlive: Double = 300
    public init(models: [RegisteredModel], defaultModel: String? = nil, routes: [String: String] = [:],
                maxLoadedModels: Int? = nil, maxModelBytes: Int? = nil) {
        self.models = models
        self.defaultModel = defaultModel ?? models.first?.name ?? ""
        self.routes = routes
        self.maxLoadedModels = maxLoadedModels
        self.maxModelBytes = maxModelBytes
    }

    /// One model, never unloaded (tests, the benchmark).
    public static func single(_ config: EngineConfig, keepAlive: Double = 0) -> RegistrySettings {
        let name = config.name.isEmpty ? ModelNames.fromPath(config.modelPath) : config.name
        return RegistrySettings(models: [RegisteredModel(name: name, engine: config, keepAlive: keepAlive)])
    }
}

public enum ModelNames {
    /// A bare `--model PATH` is named after its file: `SmolLM2-135M-Instruct.Q4_1.gguf` →
    /// `SmolLM2-135M-Instruct.Q4_1`.
    public static func fromPath(_ path: String) -> String {
        // A store name is its own registry name: `ollama:llama3.2:3b`.
        if ModelCatalogue.isStoreName(path) { return path }
        // openai:URL#served → the served model's name (its last path part), else the host.
        if RemoteSpec.isRemote(path) {
            let (url, served) = RemoteSpec.split(path)
            if let last = served?.split(separator: "/").last { return String(last) }
            return URL(string: url)?.host ?? "remote"
        }
        let file = (path as NSString).lastPathComponent
        let stem = file.lowercased().hasSuffix(".gguf") ? String(file.dropLast(5)) : file
        return stem.isEmpty ? "default" : stem
    }
}

/// Which model a request asked for: by name, or by its route keys (its full method name,
/// then its family).
public struct ModelChoice: Sendable {
    public var name: String?
    public var routes: [String]
    public init(name: String? = nil, routes: [String] = []) {
        self.name = name
        self.routes = routes
    }
}

/// A model's defaults as its store keeps them (Ollama's `.system` and `.params` layers).
public struct StoreDefaults: Sendable {
    public var systemPrompt: String?
    public var options: GenerationOptions?

    init?(_ m: StoredModel) {
        systemPrompt = m.systemPrompt
        options = m.defaultParameters.flatMap(Self.options)
        if systemPrompt == nil && options == nil { return nil }
    }

    /// Ollama's parameter names mapped to a request's options (the rest, such as `stop` or
    /// `num_ctx`, are not request options here).
    static func options(_ json: String) -> GenerationOptions? {
        guard let v = try? JSONParser.parse(Array(json.utf8)), case .object = v else { return nil }
        var o = GenerationOptions()
        o.temperature = v["temperature"]?.doubleValue
        o.topP = v["top_p"]?.doubleValue
        o.topK = v["top_k"]?.intValue
        o.minP = v["min_p"]?.doubleValue
        o.repeatPenalty = v["repeat_penalty"]?.doubleValue
        o.seed = v["seed"]?.intValue
        return [o.temperature, o.topP, o.minP, o.repeatPenalty].contains { $0 != nil } || o.topK != nil || o.seed != nil ? o : nil
    }
}
