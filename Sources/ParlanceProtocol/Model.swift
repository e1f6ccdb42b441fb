import ParlanceSchema

public enum ModelStatus: RPCMethod {
    public static let name = "model/status"
    public static let summary = "Model availability (like SystemLanguageModel.availability), model info and scheduler state."
    public typealias Params = Empty
    public struct Result: Codable, Sendable, Schematic {
        public var availability: Availability
        public var reason: UnavailableReason?
        public var message: String?
        public var model: ModelDescription?
        public var engine: EngineState?
        /// The daemon's caches against their configured limits (`--document-cache-bytes`,
        /// `--analysis-cache-bytes`); present whether or not the model loaded.
        public var caches: CacheState?
        /// The compute devices llama.cpp sees (the CPU; GPUs when it was built for them).
        public var devices: [Device]?
        /// The daemon's resident set size now (every model, cache and buffer), beside each
        /// model's `memory`.
        public var residentBytes: Int?
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
