import ParlanceJSON
import ParlanceSchema

public enum ModelStatus: RPCMethod {
    public static let name = "model/status"
    public static let summary = "A model's availability (like SystemLanguageModel.availability), info and scheduler state: the default model, or the one named."
    public struct Params: Codable, Sendable, Schematic, ModelSelecting {
        public var model: String?
        public init(model: String? = nil) { self.model = model }
        public static let schemaHints: [String: SchemaHint] = [
            "model": SchemaHint(description: "A registry name (model/list). Default: the default model.", minLength: 1)]
    }
    public struct Result: Codable, Sendable, Schematic {
        /// The registry name.
        public var name: String?
        /// Loaded or not: `available` with `unloaded` means the file checks out and the first
        /// request will load it.
        public var state: ModelState?
        public var availability: Availability
        public var reason: UnavailableReason?
        public var message: String?
        public var model: ModelDescription?
        public var engine: EngineState?
        /// A remote model: its server as checked now (`/v1/models`).
        public var remote: RemoteModelInfo? = nil
        /// The daemon's caches against their configured limits (`--document-cache-bytes`,
        /// `--analysis-cache-bytes`); present whether or not the model loaded.
        public var caches: CacheState?
        /// The compute devices llama.cpp sees (the CPU; GPUs when it was built for them).
        public var devices: [Device]?
        /// The daemon's resident set size now (every model, cache and buffer), beside each
        /// model's `memory`.
        public var residentBytes: Int?
        /// The output languages the model writes well, and where that came from; a request
        /// for another falls back unless it says `languageFallback: keep`.
        public var languages: ModelLanguages? = nil
        public init(availability: Availability, reason: UnavailableReason? = nil, message: String? = nil,
                    model: ModelDescription? = nil, engine: EngineState? = nil, caches: CacheState? = nil, devices: [Device]? = nil) {
            self.devices = devices
            self.availability = availability
            self.reason = reason
            self.message = message
            self.model = model
            self.engine = engine
            self.caches = caches
        }
    }
    public struct Device: Codable, Sendable, Hashable, Schematic {
        public enum Kind: String, Codable, Sendable, SchemaEnum { case cpu, gpu, integratedGPU, accelerator, other }
        public var name: String
        public var description: String
        public var type: Kind
        public var freeBytes: Int
        public var totalBytes: Int
        public init(name: String, description: String, type: Kind, freeBytes: Int, totalBytes: Int) {
            self.name = name
            self.description = description
            self.type = type
            self.freeBytes = freeBytes
            self.totalBytes = totalBytes
        }
    }
    public struct CacheState: Codable, Sendable, Schematic {
        /// Open documents: how many, their text bytes, and the limit `document/open` enforces.
        public var documents: Int
        public var documentBytes: Int
        public var documentLimitBytes: Int
        /// In-memory analysis results (least recently used evicted past the limit; the
        /// disk copies under the cache dir still answer).
        public var analyses: Int
        public var analysisBytes: Int
        public var analysisLimitBytes: Int
        /// Open `session/*` and `ask/stream` conversations.
        public var sessions: Int
        public init(documents: Int, documentBytes: Int, documentLimitBytes: Int, analyses: Int, analysisBytes: Int,
                    analysisLimitBytes: Int, sessions: Int) {
            self.documents = documents
            self.documentBytes = documentBytes
            self.documentLimitBytes = documentLimitBytes
            self.analyses = analyses
            self.analysisBytes = analysisBytes
            self.analysisLimitBytes = analysisLimitBytes
            self.sessions = sessions
        }
    }
    public struct EngineState: Codable, Sendable, Schematic {
        public var sequenceSlots: Int
        public var freeSlots: Int
        public var activeRequests: Int
        public var queuedRequests: Int
        public var maxQueue: Int
        public var cachedSequences: Int
        public var cachedTokens: Int
        public var threads: Int
        public init(sequenceSlots: Int, freeSlots: Int, activeRequests: Int, queuedRequests: Int, maxQueue: Int,
                    cachedSequences: Int, cachedTokens: Int, threads: Int) {
            self.sequenceSlots = sequenceSlots
            self.freeSlots = freeSlots
            self.activeRequests = activeRequests
            self.queuedRequests = queuedRequests
            self.maxQueue = maxQueue
            self.cachedSequences = cachedSequences
            self.cachedTokens = cachedTokens
            self.threads = threads
        }
    }
}

/// Where a registry model is in its life: loaded on the first request that needs it,
/// unloaded after `--keep-alive` idle seconds or to make room for another (`unloading`
/// while its KV prefixes are saved and its memory freed).
public enum ModelState: String, Codable, Sendable, SchemaEnum { case unloaded, loading, ready, unloading, failed }

public enum ModelList: RPCMethod {
    public static let name = "model/list"
    public static let summary = "Every model in the registry with its state, memory and routes; the memory budget and keep-alive."
    public typealias Params = Empty
    public struct Result: Codable, Sendable, Schematic {
        public var models: [Entry]
        /// The model a request uses when it names none and no route matches.
        public var defaultModel: String
        public var routes: [Route]
        /// `--max-loaded-models` and `--max-model-bytes` (absent: no limit).
        public var maxLoadedModels: Int?
        public var maxModelBytes: Int?
        /// What the loaded models hold (their `memory.totalBytes`), against `maxModelBytes`.
        public var loadedBytes: Int
        /// The daemon's resident set size now.
        public var residentBytes: Int
        public var devices: [ModelStatus.Device]
        /// The models on this machine in other tools' stores (Ollama, the Hugging Face cache,
        /// llama.cpp's cache, LM Studio, GPT4All, the config file's modelDirs) and what
        /// `model/pull` fetched: each can be named wherever a model is.
        public var available: [AvailableModel]? = nil
        public init(models: [Entry], defaultModel: String, routes: [Route], maxLoadedModels: Int?, maxModelBytes: Int?,
                    loadedBytes: Int, residentBytes: Int, devices: [ModelStatus.Device]) {
            self.models = models
            self.defaultModel = defaultModel
            self.routes = routes
            self.maxLoadedModels = maxLoadedModels
            self.maxModelBytes = maxModelBytes
            self.loadedBytes = loadedBytes
            self.residentBytes = residentBytes
            self.devices = devices
        }
    }
    public struct Route: Codable, Sendable, Hashable, Schematic {
        /// A method family (`analysis`, `ask`, `compose`, `session`) or a full method name.
        public var route: String
        public var model: String
        public init(route: String, model: String) {
            self.route = route
            self.model = model
        }
    }
    public struct Entry: Codable, Sendable, Schematic {
        public var name: String
        public var path: String
        public var state: ModelState
        /// Why the last load failed (`failed`), as model/status gives it.
        public var reason: UnavailableReason?
        public var message: String?
        public var isDefault: Bool
        public var fileBytes: Int?
        /// What llama.cpp allocated for it: now when loaded, at its last load otherwise.
        public var memory: ModelMemory?
        /// What the memory budget counts for it: the file plus its KV cache at the configured
        /// context (from the file's header), or its last measured total when that is larger.
        public var estimatedBytes: Int
        public var contextSize: Int
        public var gpuLayersRequested: String
        /// Idle seconds before it unloads (0: never).
        public var keepAliveSeconds: Double
        /// Requests using it now (a model in use is never unloaded).
        public var activeRequests: Int
        /// Milliseconds since a request last used it (absent: never used).
        public var idleMs: Int?
        /// How many times it has been loaded.
        public var loads: Int
        /// The route keys that pick it (the config file's `routes`).
        public var routes: [String]
        /// A remote model: where it is served (not checked by model/list; model/status checks).
        public var remote: RemoteModelInfo? = nil
        public init(name: String, path: String, state: ModelState, reason: UnavailableReason?, message: String?, isDefault: Bool,
                    fileBytes: Int?, memory: ModelMemory?, estimatedBytes: Int, contextSize: Int, gpuLayersRequested: String,
                    keepAliveSeconds: Double, activeRequests: Int, idleMs: Int?, loads: Int, routes: [String]) {
            self.routes = routes
            self.name = name
            self.path = path
            self.state = state
            self.reason = reason
            self.message = message
            self.isDefault = isDefault
            self.fileBytes = fileBytes
            self.memory = memory
            self.estimatedBytes = estimatedBytes
            self.contextSize = contextSize
            self.gpuLayersRequested = gpuLayersRequested
            self.keepAliveSeconds = keepAliveSeconds
            self.activeRequests = activeRequests
            self.idleMs = idleMs
            self.loads = loads
        }
    }
}

public enum ModelLoad: RPCMethod {
    public static let name = "model/load"
    public static let summary = "Load a model now (the first request would), reporting phase loading; answers its model/status once it is ready or failed."
    public static let errors: [ProtocolError] = [.modelUnavailable]
    public struct Params: Codable, Sendable, Schematic, ModelSelecting {
        public var model: String?
        public var workDoneToken: JSONValue?
        public init(model: String? = nil) { self.model = model }
        public static let schemaHints: [String: SchemaHint] = ["model": .model]
    }
    public typealias Result = ModelStatus.Result
}

/// A model served by an OpenAI-compatible server (`--model NAME=openai:URL#model`).
public struct RemoteModelInfo: Codable, Sendable, Hashable, Schematic {
    /// The API's base URL (never with credentials; the key is never reported).
    public var url: String
    /// `host:port`, as provenance and errors name it.
    public var endpoint: String
    /// The model name requests are sent with (nil until the server named its first).
    public var servedModel: String?
    /// What the server lists at `/v1/models` (model/status, once it answered).
    public var servedModels: [String]? = nil
    /// The context prompts are planned for: configured, else the server's, else 4096.
    public var contextSize: Int
    /// `server`: budgets use the server tokenizer's measured characters per token
    /// (`/tokenize`); `estimated`: three characters per token. Results' `usage` is the
    /// server's own either way (`usage.estimated` when it sent none).
    public var tokenCounts: String
    public var maxConcurrentRequests: Int
    /// Calls in flight to it now.
    public var activeCalls: Int
    public var timeoutMs: Int
    /// Whether an API key is configured (the key itself is never reported).
    public var apiKey: Bool
    /// A pool's endpoints (a model with several): each one's health, breaker, load and
    /// counters. nil for one remote endpoint.
    public var endpoints: [PoolEndpointInfo]? = nil
    public static let schemaHints: [String: SchemaHint] = [
        "tokenCounts": SchemaHint(description: "server: budgets use the server tokenizer's characters per token; estimated: three characters per token.",
                                  enumValues: ["server", "estimated"]),
        "apiKey": SchemaHint(description: "Whether an API key is configured (the key itself is never reported)."),
        "url": SchemaHint(description: "The API's base URL."),
        "endpoint": SchemaHint(description: "host:port, as provenance and errors name it."),
    ]
    public init(url: String, endpoint: String, servedModel: String?, contextSize: Int, tokenCounts: String, maxConcurrentRequests: Int,
                activeCalls: Int, timeoutMs: Int, apiKey: Bool) {
        self.url = url
        self.endpoint = endpoint
        self.servedModel = servedModel
        self.contextSize = contextSize
        self.tokenCounts = tokenCounts
        self.maxConcurrentRequests = maxConcurrentRequests
        self.activeCalls = activeCalls
        self.timeoutMs = timeoutMs
        self.apiKey = apiKey
    }
}

/// A model found on disk, read from its GGUF header only.
public struct AvailableModel: Codable, Sendable, Hashable, Schematic {
    /// The name to use in `--model`, the config file, `model/load` and a request's `model`.
    public var name: String
    /// The tool whose store holds it.
    public var source: String
    /// The file llama.cpp opens (a split model's first part).
    public var path: String
    /// How many files it is (a split GGUF is one model, listed only when every part is present).
    public var parts: Int
    public var architecture: String?
    /// The size label ("3B") or parameter count.
    public var parameters: String?
    public var quantization: String?
    public var contextLength: Int?
    /// False for a base model: it is served with a plain fallback template, and its results' provenance says so.
    public var chatTemplate: Bool
    /// Whether the linked llama.cpp knows its architecture (absent: the header names none).
    public var supported: Bool?
    public var fileBytes: Int
    /// Weights, an f16 KV cache at its context (at most 4,096) and compute buffers.
    public var estimatedBytes: Int
    /// Whether that fits in the memory available now (absent: unknown).
    public var fits: Bool?
    public static let schemaHints: [String: SchemaHint] = [
        "source": SchemaHint(enumValues: ["ollama", "hf", "llamacpp", "lmstudio", "gpt4all", "folder", "parlance"]),
    ]
    public init(name: String, source: String, path: String, parts: Int, architecture: String?, parameters: String?, quantization: String?,
                contextLength: Int?, chatTemplate: Bool, supported: Bool?, fileBytes: Int, estimatedBytes: Int, fits: Bool?) {
        self.name = name
        self.source = source
        self.path = path
        self.parts = parts
        self.architecture = architecture
        self.parameters = parameters
        self.quantization = quantization
        self.contextLength = contextLength
        self.chatTemplate = chatTemplate
        self.supported = supported
        self.fileBytes = fileBytes
        self.estimatedBytes = estimatedBytes
        self.fits = fits
    }
}

public enum ModelPull: RPCMethod {
    public static let name = "model/pull"
    public static let summary = """
        Download a model: hf:ORG/REPO[:QUANT] into the Hugging Face cache (shared with every tool that reads it), or \
        ollama:[HOST/]NAME[:TAG] from an OCI registry into Parlance's own data folder. An interrupted pull resumes; \
        every file is checked against its sha256 before it is kept. Reports phase downloading with bytes, rate and ETA.
        """
    public static let errors: [ProtocolError] = [.modelUnavailable]
    public struct Params: Codable, Sendable, Schematic {
        public var model: String
        public var workDoneToken: JSONValue?
        public init(model: String) { self.model = model }
        public static let schemaHints: [String: SchemaHint] = [
            "model": SchemaHint(description: "hf:ORG/REPO[:QUANT] (default quantization Q4_K_M, then Q8_0, then the first) or ollama:[HOST/][NAMESPACE/]NAME[:TAG] (default tag latest).",
                                minLength: 4),
        ]
    }
    public struct Result: Codable, Sendable, Schematic {
        /// The name it resolves under now (quantization or tag filled in).
        public var name: String
        public var path: String
        public var parts: [String]
        public var bytes: Int
        public var sha256: String
        /// Bytes that were already on disk (a resumed pull, or a model already complete).
        public var resumedBytes: Int
        /// False when the model was complete on disk already and nothing was transferred.
        public var downloaded: Bool
    }
}

/// A `model/pull` report: the file being transferred and the bytes so far.
public struct DownloadProgress: Codable, Sendable, Hashable, Schematic {
    public var file: String
    public var completedBytes: Int
    public var totalBytes: Int?
    public var bytesPerSecond: Double
    /// Seconds left at the current rate (absent: unknown).
    public var etaSeconds: Double?
    /// Bytes an interrupted pull had left on disk (resumed, not sent again).
    public var resumedBytes: Int
    public init(file: String, completedBytes: Int, totalBytes: Int?, bytesPerSecond: Double, etaSeconds: Double?, resumedBytes: Int) {
        self.file = file
        self.completedBytes = completedBytes
        self.totalBytes = totalBytes
        self.bytesPerSecond = bytesPerSecond
        self.etaSeconds = etaSeconds
        self.resumedBytes = resumedBytes
    }
}
