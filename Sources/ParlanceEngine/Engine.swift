import Foundation
import Synchronization
import ParlanceHash

public struct EngineConfig: Sendable {
    public var modelPath: String
    /// The model's registry name (results' provenance names it); default: the file's stem.
    public var name: String = ""
    public var contextSize: Int
    public var threads: Int
    public var parallel: Int       // requests decoded together
    public var cachedSequences: Int  // extra sequence ids kept for prefix reuse
    public var maxQueue: Int
    public var batchSize: Int
    public var microBatch: Int
    public var promptChunk: Int
    /// Element types of the KV cache; nil: chosen at load (`ContextDefaults.cache`): f16,
    /// unless memory is short. q8_0 halves a cache's memory but costs prompt speed that
    /// grows with the context (flash attention dequantizes every row it reads).
    public var cache: KVCacheTypes?
    /// Flash attention (always on with q8_0 values, which need it).
    public var flashAttention: Bool
    /// Where long prefixes' KV states are saved for reuse across evictions and restarts
    /// (nil: never), and the most bytes kept there (least recently used deleted first).
    public var stateDirectory: String?
    public var stateLimitBytes: Int
    /// Where the default model was looked for, in order (reported when it is not found).
    public var modelSearch: [String] = []
    /// Layers offloaded to a GPU (`--gpu-layers`).
    public var gpuLayers: GPULayers = .auto
    /// Receives the engine's warnings (a state file it could not write or read).
    public var onWarning: @Sendable (String) -> Void
    /// Speculative decoding drafted from the text, for requests that do not say
    /// (`--speculative on|off`). On by default, for requests whose output copies their
    /// prompt's text (`GenerationRequest.copiesText`); the step cost model then drafts only
    /// what it expects to pay for itself on this machine (see `StepCost`).
    public var speculative: Bool = true
    /// Logits rows reserved for drafted tokens per batch (each costs one vocabulary of
    /// floats in the compute buffer); 0 turns drafting off for every request.
    public var draftRows: Int = 32
    /// Check the KV cell mirror against llama.cpp's memory after every step, and stop the
    /// process when they disagree (`PARLANCE_CHECK_KV=1`; the tests turn it on).
    public var checkKV: Bool = ProcessInfo.processInfo.environment["PARLANCE_CHECK_KV"] == "1"

    public init(modelPath: String, contextSize: Int = 4096, threads: Int = MachineDefaults.threads, parallel: Int = 8, cachedSequences: Int = 8,
                maxQueue: Int = 256, batchSize: Int = ContextDefaults.batch, microBatch: Int = ContextDefaults.microBatch, promptChunk: Int = 128,
                cache: KVCacheTypes? = nil, flashAttention: Bool = ContextDefaults.flashAttention,
                stateDirectory: String? = nil, stateLimitBytes: Int = 1 << 30, onWarning: @escaping @Sendable (String) -> Void = { _ in }) {
        self.modelPath = modelPath
        self.contextSize = contextSize
        self.threads = threads
        self.parallel = parallel
        self.cachedSequences = cachedSequences
        self.maxQueue = maxQueue
        self.batchSize = batchSize
        self.microBatch = microBatch
        self.promptChunk = promptChunk
        self.cache = cache
        self.flashAttention = flashAttention
        self.stateDirectory = stateDirectory
        self.stateLimitBytes = stateLimitBytes
        self.onWarning = onWarning
    }

    public static let minimumContext = 512
}

/// How many of a model's layers llama.cpp puts on a GPU: `auto` all of them when it has a
/// GPU device and none otherwise; `all` all of them (a warning without a GPU); or a count
/// (llama.cpp offloads the last N repeating layers, and the output layer too when N
/// exceeds them).
public enum GPULayers: Sendable, Hashable, CustomStringConvertible {
    case auto, all
    case count(Int)

    /// "auto", "all" or a non-negative integer.
    public init?(_ text: String) {
        switch text {
        case "auto": self = .auto
        case "all": self = .all
        default:
            guard let n = Int(text), n >= 0 else { return nil }
            self = .count(n)
        }
    }

    public var description: String {
        switch self {
        case .auto: return "auto"
        case .all: return "all"
        case .count(let n): return String(n)
        }
    }

    /// What llama.cpp is asked for (negative: all layers), and the warning to log when the
    /// request cannot be met on these devices (nil when it can, or for `auto`).
    public func resolved(gpuAvailable: Bool) -> (layers: Int32, warning: String?) {
        let layers: Int32
        switch self {
        case .auto: return (gpuAvailable ? -1 : 0, nil)
        case .count(0): return (0, nil)
        case .all: layers = -1
        case .count(let n): layers = Int32(clamping: n)
        }
        let warning = "--gpu-layers \(self): llama.cpp has no GPU device (it was built for the CPU only); every layer runs on the CPU"
        return (layers, gpuAvailable ? nil : warning)
    }

    /// Layers actually on a GPU for a model of `layers` repeating layers (llama.cpp offloads
    /// those and then the output layer: `layers + 1` in all).
    public func offloaded(layers: Int, gpuAvailable: Bool) -> Int {
        guard gpuAvailable else { return 0 }
        let asked = resolved(gpuAvailable: true).layers
        return asked < 0 ? layers + 1 : min(Int(asked), layers + 1)
    }
}

/// The KV cache's element types, as llama.cpp's `--cache-type-k` / `--cache-type-v`.
public struct KVCacheTypes: Sendable, Hashable {
    public enum Element: String, Sendable, CaseIterable { case f16, q8_0 }
    public var keys: Element
    public var values: Element
    public init(keys: Element, values: Element) {
        self.keys = keys
        self.values = values
    }
}

public struct ModelInfo: Sendable, Hashable {
    /// A name a person recognizes: the registry's (or the file's, for a bare path), with
    /// the size label and quantization beside it when the name does not already say them
    /// (`SmolLM2-135M-Instruct.Q4_1`, `ollama:llama3.2:3b (3B, Q4_K_M)`). Not the
    /// header's `general.name`, which is often a training run's ("Smollm2 135M 8k Lc100K Mix1 Ep2").
    public static func displayName(config: EngineConfig, header: GGUFInfo, description: String) -> String {
        let file = (config.modelPath as NSString).lastPathComponent
        let stem = file.lowercased().hasSuffix(".gguf") ? String(file.dropLast(5)) : file
        let base = config.name.isEmpty ? stem : config.name
        // llama.cpp's description is "<arch> <size> <file type>": its last word is the quantization.
        let quant = description.split(separator: " ").last.map(String.init).flatMap { $0.contains("?") ? nil : $0 }
        let extras = [header.metadata["general.size_label"], quant].compactMap { $0 }
            .filter { !$0.isEmpty && !base.lowercased().contains($0.lowercased()) }
        return extras.isEmpty ? base : base + " (" + extras.joined(separator: ", ") + ")"
    }

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
    /// Repeating layers, and how many layers (of `layers + 1`, with the output layer) are on a GPU.
    public var layers: Int
    public var gpuLayers: Int
    public var memory: MemoryUse
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
    /// The vocabulary's tokens that hold a digit, and those of separators only, with their
    /// text (read once, when a `NumberGuard` first needs them).
    private let digitTokens = Mutex<(digits: [(token: Token, text: String)], separators: [(token: Token, text: String)])?>(nil)

    public init(config: EngineConfig) throws(EngineError) {
        var config = config
        guard config.contextSize >= EngineConfig.minimumContext else {
            throw .contextTooSmall(requested: config.contextSize, minimum: EngineConfig.minimumContext)
        }
        let gguf = try GGUFInspector.inspect(path: config.modelPath, searched: config.modelSearch)
        let gpu = ComputeDevice.all().contains { $0.isGPU }
        let (asked, warning) = config.gpuLayers.resolved(gpuAvailable: gpu)
        if let warning { config.onWarning(warning) }
        let cache = config.cache ?? ContextDefaults.cache(forModelAt: config.modelPath, header: gguf, contextSize: config.contextSize, onGPU: asked != 0)
        config.cache = cache
        let sequences = config.parallel + config.cachedSequences
        // The scheduler asks for one logits row per active request per batch (its next
        // token, or a prompt's last) plus one per drafted token (at most `draftRows`), so that
        // many rows are reserved, not one per batch token: at a 512-token batch that saves
        // ~90 MiB of logits for the default model (a row is its 49,152-token vocabulary in floats).
        // llama.cpp's own reports of what it allocates are read as it loads (`MemoryUse`).
        let ((model, ctx), allocations) = try LlamaLog.tap { () throws(EngineError) -> (LlamaModel, LlamaContext) in
            let model = try LlamaModel(path: config.modelPath, gpuLayers: asked)
            let ctx = try LlamaContext(model: model, contextSize: config.contextSize, batchSize: config.batchSize, microBatch: min(config.microBatch, config.batchSize),
                                       sequences: sequences, outputsPerBatch: sequences + config.draftRows, threads: config.threads, cache: cache,
                                       flashAttention: config.flashAttention)
            return (model, ctx)
        }
        self.model = model
        self.config = config
        prompt = ChatPrompt(model: model)
        let fileBytes = (try? FileManager.default.attributesOfItem(atPath: config.modelPath)[.size] as? Int) ?? 0
        info = ModelInfo(
            path: config.modelPath, name: ModelInfo.displayName(config: config, header: gguf, description: model.description),
            architecture: gguf.architecture, description: model.description,
            parameters: model.parameterCount, sizeBytes: model.sizeBytes, fileBytes: fileBytes, contextSize: ctx.size,
            trainedContextSize: model.contextTrainSize, vocabularySize: model.vocabularySize, chatTemplate: prompt.hasTemplate,
            templateSha256: SHA256.hex(model.chatTemplate ?? ""), layers: model.layerCount,
            // Without a GPU device nothing is offloaded, whatever llama.cpp logs: built with its
            // RPC backend it honours --gpu-layers and logs "offloaded 31/31 layers to GPU"
            // with no RPC server to put them on, and they stay on the CPU.
            gpuLayers: gpu ? MemoryUse.offloadedLayers(allocations) ?? config.gpuLayers.offloaded(layers: model.layerCount, gpuAvailable: gpu) : 0, memory: {
                var m = MemoryUse.parse(allocations)
                if m.weightsBytes == 0 { m.weightsBytes = model.sizeBytes }  // no log sink installed
                return m
            }())
        digest = ModelDigest(path: config.modelPath)
        // State files hold this model's KV cells in this cache layout, and nothing else's.
        let store = config.stateDirectory.map { dir in
            PrefixStore(root: dir, fingerprint: { quickIdentity(of: config.modelPath).map { "\($0)-k\(cache.keys)-v\(cache.values)" } },
                        limitBytes: config.stateLimitBytes, warn: config.onWarning)
        }
        scheduler = Scheduler(ctx: ctx, model: model, config: .init(
            sequences: sequences, maxActive: config.parallel, maxQueue: config.maxQueue,
            batchSize: config.batchSize, promptChunk: config.promptChunk, speculative: config.speculative,
            draftRows: config.draftRows, checkKV: config.checkKV), store: store, warn: config.onWarning)
        // The thread lets go of the scheduler before it says it has exited, so an unload
        // that waited for it frees the context and the model when it drops the engine,
        // before it reports the model unloaded (not whenever this thread gets to it).
        let exited = scheduler.exited
        let handoff = Handoff(scheduler)
        let t = Thread {
            handoff.take()?.run()
            exited.signal()
        }
        t.name = "parlance-engine"
        t.stackSize = 8 << 20
        t.start()
    }

    /// SHA-256 of the model file (computed once, off the request path).
    public var modelSha256: String { digest.value }

    public var stats: EngineStats { scheduler.stats }

    public func tokenize(_ text: String) -> [Token] { model.tokenize(text, special: false) }
    public func countTokens(_ text: String) -> Int { model.tokenize(text, special: false).count }
    /// A guard that finishes each of `facts` exactly once an output starts it, in this model's tokens.
    public func factGuard(_ facts: [String]) -> FactGuard {
        FactGuard(facts: facts, tokenize: { model.tokenize($0, special: false) }, piece: { String(decoding: model.piece($0), as: UTF8.self) })
    }

    /// A guard that keeps `words` out of the output, in this model's tokens.
    public func wordGuard(_ words: [String]) -> WordGuard {
        WordGuard(words: words, tokenize: { model.tokenize($0, special: false) })
    }

    /// A guard that keeps the output to the numbers of `source`, in this model's tokens.
    public func numberGuard(source: String) -> NumberGuard {
        let tokens = digitTokens.withLock { cached in
            if let cached { return cached }
            var digits: [(token: Token, text: String)] = [], separators: [(token: Token, text: String)] = []
            for t in 0..<Token(model.vocabularySize) {
                let text = String(decoding: model.piece(t), as: UTF8.self)
                if text.contains(where: \.isASCIIDigit) {
                    digits.append((t, text))
                } else if !text.isEmpty, text.allSatisfy({ $0 == "." || $0 == "," || $0 == ":" }) {
                    separators.append((t, text))
                }
            }
            cached = (digits, separators)
            return (digits, separators)
        }
        return NumberGuard(source: source, digitTokens: tokens.digits, separatorTokens: tokens.separators, vocabularySize: model.vocabularySize)
    }

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

    /// Stops the engine; the abort callback ends a running decode within a graph node, and
    /// this returns once the engine thread is out of llama.cpp (at most half a second).
    public func shutdown() { scheduler.stopAndWait(timeout: 0.5) }

    /// Stops an idle engine for good, first saving every cached sequence long enough to be
    /// worth a state file, so the next load of this model restores them from disk. Returns
    /// once the engine thread has left llama.cpp; the model's memory is freed when the last
    /// reference to the engine goes.
    public func unload() { scheduler.stopAndWait(timeout: 60, saving: true) }
}

/// A reference handed over once: the first `take()` gets it and the handoff lets it go,
/// so the taker's own scope decides when it is released (the engine thread's scheduler,
/// an unload's engine).
public final class Handoff<Value: Sendable>: Sendable {
    private let value: Mutex<Value?>  // guards the reference until it is taken
    public init(_ v: Value) { value = Mutex(v) }
    public func take() -> Value? { value.withLock { v in defer { v = nil }; return v } }
}

final class IDCounter: Sendable {
    private let value = Mutex<UInt64>(0)  // guards the last issued id
    func next() -> UInt64 { value.withLock { $0 += 1; return $0 } }
}

/// A model file's identity for naming its KV state files, at once: SHA-256 of its size and
/// first MiB (header, metadata, vocabulary), 16 hex digits. The full digest (`ModelDigest`)
/// takes seconds on a large model; the engine thread must not wait for it.
func quickIdentity(of path: String) -> String? {
    guard let fh = FileHandle(forReadingAtPath: path) else { return nil }
    defer { try? fh.close() }
    guard let size = try? fh.seekToEnd(), (try? fh.seek(toOffset: 0)) != nil, let head = try? fh.read(upToCount: 1 << 20) else { return nil }
    return String(SHA256.hex(Array("\(size):".utf8) + [UInt8](head)).prefix(16))
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
