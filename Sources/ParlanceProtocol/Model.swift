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
        public init(availability: Availability, reason: UnavailableReason? = nil, message: String? = nil,
                    model: ModelDescription? = nil, engine: EngineState? = nil) {
            self.availability = availability
            self.reason = reason
            self.message = message
            self.model = model
            self.engine = engine
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
