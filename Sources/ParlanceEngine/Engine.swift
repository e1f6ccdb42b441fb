import Foundation
import Synchronization
import ParlanceHash

public struct EngineConfig: Sendable {
    public var modelPath: String
    public var contextSize: Int
    public var threads: Int
    public var parallel: Int       // requests decoded together
    public var cachedSequences: Int  // extra sequence ids kept for prefix reuse
    public var maxQueue: Int
    public var batchSize: Int
    public var microBatch: Int
    public var promptChunk: Int
    /// q8_0 KV cache (with flash attention): half the memory of f16.
    public var quantizedKV: Bool

    public init(modelPath: String, contextSize: Int = 4096, threads: Int = 2, parallel: Int = 8, cachedSequences: Int = 8,
                maxQueue: Int = 256, batchSize: Int = 256, microBatch: Int = 256, promptChunk: Int = 128, quantizedKV: Bool = true) {
        self.modelPath = modelPath
        self.contextSize = contextSize
        self.threads = threads
        self.parallel = parallel
        self.cachedSequences = cachedSequences
        self.maxQueue = maxQueue
        self.batchSize = batchSize
        self.microBatch = microBatch
        self.promptChunk = promptChunk
        self.quantizedKV = quantizedKV
    }

    public static let minimumContext = 512
}

public struct ModelInfo: Sendable, Hashable {
    public var path: String
    public var name: String?
    public var architecture: String?
    public var description: String
    public var parameters: Int
    public var sizeBytes: Int
    public var fileBytes: Int
    public var contextSize: Int
    public var trainedContextSize: Int
    public var vocabularySize: Int
    public var chatTemplate: Bool
    public var templateSha256: String
}

/// A loaded model and the thread that owns its context.
public final class Engine: Sendable {
    public let model: LlamaModel
    public let info: ModelInfo
    public let prompt: ChatPrompt
    public let config: EngineConfig
    private let scheduler: Scheduler
    private let ids = IDCounter()
    private let digest: ModelDigest

    public init(config: EngineConfig) throws(EngineError) {
        guard config.contextSize >= EngineConfig.minimumContext else {
            throw .contextTooSmall(requested: config.contextSize, minimum: EngineConfig.minimumContext)
        }
        let gguf = try GGUFInspector.inspect(path: config.modelPath)
        let model = try LlamaModel(path: config.modelPath)
        let sequences = config.parallel + config.cachedSequences
        let ctx = try LlamaContext(model: model, contextSize: config.contextSize, batchSize: config.batchSize, microBatch: config.microBatch,
                                   sequences: sequences, threads: config.threads, quantizedKV: config.quantizedKV)
        self.model = model
        self.config = config
        prompt = ChatPrompt(model: model)
        let fileBytes = (try? FileManager.default.attributesOfItem(atPath: config.modelPath)[.size] as? Int) ?? 0
        info = ModelInfo(
            path: config.modelPath, name: gguf.name, architecture: gguf.architecture, description: model.description,
            parameters: model.parameterCount, sizeBytes: model.sizeBytes, fileBytes: fileBytes, contextSize: ctx.size,
            trainedContextSize: model.contextTrainSize, vocabularySize: model.vocabularySize, chatTemplate: prompt.hasTemplate,
            templateSha256: SHA256.hex(model.chatTemplate ?? ""))
        scheduler = Scheduler(ctx: ctx, model: model, config: .init(
            sequences: sequences, maxActive: config.parallel, maxQueue: config.maxQueue,
            batchSize: config.batchSize, promptChunk: config.promptChunk))
        digest = ModelDigest(path: config.modelPath)
        let s = scheduler
        let t = Thread { s.run() }
        t.name = "parlance-engine"
        t.stackSize = 8 << 20
        t.start()
    }

    /// SHA-256 of the model file (computed once, off the request path).
    public var modelSha256: String { digest.value }

    public var stats: EngineStats { scheduler.stats }

    public func tokenize(_ text: String) -> [Token] { model.tokenize(text, special: false) }
    public func countTokens(_ text: String) -> Int { model.tokenize(text, special: false).count }

    /// Runs a request. Cancelling the consuming task (or dropping the stream) cancels it
    /// within one decode step, aborting a long prompt evaluation mid-way.
    public func generate(_ request: GenerationRequest) -> AsyncThrowingStream<GenerationEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream<GenerationEvent, any Error>.makeStream()
        let total = request.prompt.count + request.maxTokens
        if total > info.contextSize || request.prompt.isEmpty {
            continuation.finish(throwing: request.prompt.isEmpty
                ? EngineError.decodingFailure("empty prompt")
                : EngineError.exceededContextWindowSize(promptTokens: request.prompt.count, maxTokens: request.maxTokens, contextSize: info.contextSize))
            return stream
        }
        let job = Job(id: ids.next(), request: request, continuation: continuation)
        let s = scheduler
        continuation.onTermination = { reason in
            if case .cancelled = reason { s.cancel(job) }
        }
        scheduler.submit(job)
        return stream
    }

    public func shutdown() { scheduler.stop() }
}

final class IDCounter: Sendable {
    private let value = Mutex<UInt64>(0)  // guards the last issued id
    func next() -> UInt64 { value.withLock { $0 += 1; return $0 } }
}

/// Hashes the model file on a background thread at load; readers wait only if they ask
/// before it finishes.
final class ModelDigest: Sendable {
    private let state = Mutex<String?>(nil)  // guards the computed digest
    private let done = DispatchSemaphore(value: 0)
    init(path: String) {
        DispatchQueue.global(qos: .utility).async { [self] in
            let h = (try? SHA256.hexOfFile(atPath: path)) ?? "unavailable"
            state.withLock { $0 = h }
            done.signal()
        }
    }
    var value: String {
        if let v = state.withLock({ $0 }) { return v }
        done.wait()
        done.signal()
        return state.withLock { $0 } ?? "unavailable"
    }
}
