import ParlanceJSON
import Foundation

/// llama-bench-style figures measured through the shim with no JSON-RPC and no
/// scheduler: the baseline each daemon figure is divided by, in the same run.
public enum Reference {
    public struct Figures: Sendable, Codable {
        public var promptTokensPerSecond: Double
        public var decodeTokensPerSecond: Double
    }

    /// pp: `promptTokens` in one batch (as llama-bench's pp512); tg: `genTokens` single
    /// decodes (tg128). Best of `repetitions`.
    public static func measure(modelPath: String, threads: Int, contextSize: Int, batchSize: Int = 512,
                               promptTokens: Int = 512, genTokens: Int = 128, repetitions: Int = 3,
                               cache: KVCacheTypes = .init(keys: .f16, values: .f16),
                               flashAttention: Bool = false) throws -> Figures {
        let model = try LlamaModel(path: modelPath)
        let ctx = try LlamaContext(model: model, contextSize: contextSize, batchSize: batchSize, sequences: 1, threads: threads, cache: cache,
                                   flashAttention: flashAttention)
        let batch = LlamaBatch(capacity: max(batchSize, promptTokens), sequences: 1)
        let vocab = Int32(model.vocabularySize)
        var rng = SystemRandomNumberGenerator()
        func tokens(_ n: Int) -> [Token] { (0..<n).map { _ in Int32.random(in: 0..<vocab, using: &rng) } }
        var pp = 0.0, tg = 0.0
        // Warm-up, as llama-bench does.
        batch.clear()
        for (i, t) in tokens(32).enumerated() { batch.add(t, pos: Int32(i), seq: 0, logits: i == 31) }
        _ = ctx.decode(batch)
        for _ in 0..<repetitions {
            ctx.clear()
            let prompt = tokens(promptTokens)
            let t0 = ContinuousClock.now
            // In batches of at most batchSize tokens, as llama-bench's -b does.
            for start in stride(from: 0, to: promptTokens, by: batchSize) {
                batch.clear()
                for i in start..<min(start + batchSize, promptTokens) { batch.add(prompt[i], pos: Int32(i), seq: 0, logits: i == promptTokens - 1) }
                guard ctx.decode(batch) == 0 else { throw EngineError.decodingFailure("reference pp decode failed") }
            }
            pp = max(pp, Double(promptTokens) / (ContinuousClock.now - t0).inSeconds)
            ctx.clear()
            let t1 = ContinuousClock.now
            for (i, t) in tokens(genTokens).enumerated() {
                batch.clear()
                batch.add(t, pos: Int32(i), seq: 0, logits: true)
                guard ctx.decode(batch) == 0 else { throw EngineError.decodingFailure("reference tg decode failed") }
            }
            tg = max(tg, Double(genTokens) / (ContinuousClock.now - t1).inSeconds)
        }
        return Figures(promptTokensPerSecond: pp, decodeTokensPerSecond: tg)
    }

    /// The context settings a figure is taken with: KV cache element types, flash attention,
    /// and the logical batch (`n_batch`) split into micro-batches (`n_ubatch`).
    public struct Settings: Sendable, Hashable, CustomStringConvertible {
        public var cache: KVCacheTypes
        public var flashAttention: Bool
        public var batch: Int
        public var microBatch: Int
        public init(cache: KVCacheTypes, flashAttention: Bool, batch: Int, microBatch: Int) {
            self.cache = cache
            self.flashAttention = flashAttention
            self.batch = batch
            self.microBatch = microBatch
        }
        /// What llama.cpp's own tools start with (llama-cli, llama-server, llama-bench): f16
        /// keys and values, flash attention `auto` (on where the device supports it, as the
        /// CPU does), 2,048-token batches in 512-token micro-batches.
        public static let llamaCppDefaults = Settings(cache: .init(keys: .f16, values: .f16), flashAttention: true, batch: 2048, microBatch: 512)
        /// What the daemon starts a model with when no flag says otherwise (its cache types
        /// chosen as the engine chooses them, for this machine's memory now).
        public static func daemonDefaults(modelPath: String, contextSize: Int) throws -> Settings {
            let e = EngineConfig(modelPath: modelPath, contextSize: contextSize)
            let cache = try e.cache ?? ContextDefaults.cache(forModelAt: modelPath, header: GGUFInspector.inspect(path: modelPath), contextSize: contextSize, onGPU: ContextDefaults.gpu)
            return Settings(cache: cache, flashAttention: e.flashAttention, batch: e.batchSize, microBatch: e.microBatch)
        }
        public var description: String {
            "K \(cache.keys.rawValue), V \(cache.values.rawValue), flash attention \(flashAttention ? "on" : "off"), batch \(batch)/\(microBatch)"
        }
    }

    /// Prompt evaluation at real lengths: for each of `lengths`, tokens per second for that
    /// many random tokens evaluated into an empty cache in batches of `settings.batch` (as a
    /// transcript's prompt is); and, when `decodeDepth` is given, single-token decoding
    /// speed (`genTokens` steps) after that many tokens of context. Best of `repetitions`.
    public static func atLengths(modelPath: String, threads: Int, contextSize: Int, settings: Settings, lengths: [Int],
                                 decodeDepth: Int? = nil, genTokens: Int = 64, repetitions: Int = 1) throws -> (prompt: [Int: Double], decode: Double?) {
        let model = try LlamaModel(path: modelPath)
        let ctx = try LlamaContext(model: model, contextSize: contextSize, batchSize: settings.batch, microBatch: settings.microBatch, sequences: 1,
                                   outputsPerBatch: 1, threads: threads, cache: settings.cache, flashAttention: settings.flashAttention)
        let batch = LlamaBatch(capacity: settings.batch, sequences: 1)
        let vocab = Int32(model.vocabularySize)
        var rng = SystemRandomNumberGenerator()
        func tokens(_ n: Int) -> [Token] { (0..<n).map { _ in Int32.random(in: 0..<vocab, using: &rng) } }
        /// Evaluates `n` fresh tokens from an empty cache; seconds taken.
        func evaluate(_ n: Int) throws -> Double {
            ctx.clear()
            let prompt = tokens(n)
            let t0 = ContinuousClock.now
            for start in stride(from: 0, to: n, by: settings.batch) {
                batch.clear()
                for i in start..<min(start + settings.batch, n) { batch.add(prompt[i], pos: Int32(i), seq: 0, logits: i == n - 1) }
                guard ctx.decode(batch) == 0 else { throw EngineError.decodingFailure("reference prompt of \(n) tokens failed") }
            }
            return (ContinuousClock.now - t0).inSeconds
        }
        _ = try evaluate(32)  // warm-up, as llama-bench does
        var prompt: [Int: Double] = [:]
        for _ in 0..<repetitions {
            for n in lengths { prompt[n] = max(prompt[n] ?? 0, Double(n) / (try evaluate(n))) }
        }
        guard let depth = decodeDepth else { return (prompt, nil) }
        var decode = 0.0
        for _ in 0..<repetitions {
            _ = try evaluate(depth)
            let t0 = ContinuousClock.now
            for (i, t) in tokens(genTokens).enumerated() {
                batch.clear()
                batch.add(t, pos: Int32(depth + i), seq: 0, logits: true)
                guard ctx.decode(batch) == 0 else { throw EngineError.decodingFailure("reference decode after \(depth) tokens failed") }
            }
            decode = max(decode, Double(genTokens) / (ContinuousClock.now - t0).inSeconds)
        }
        return (prompt, decode)
    }

    /// Raw batched decode: `streams` sequences each decode one token per `llama_decode`
    /// (no sampling), after a short prompt each: the aggregate tokens per second llama.cpp
    /// itself reaches at that batch width, to divide the daemon's concurrent figures by.
    public static func batchedDecode(modelPath: String, threads: Int, contextSize: Int, streams: Int, steps: Int = 64,
                                     cache: KVCacheTypes = .init(keys: .f16, values: .f16), flashAttention: Bool = false) throws -> Double {
        let model = try LlamaModel(path: modelPath)
        let ctx = try LlamaContext(model: model, contextSize: contextSize, batchSize: 512, sequences: streams, outputsPerBatch: streams,
                                   threads: threads, cache: cache, flashAttention: flashAttention)
        let batch = LlamaBatch(capacity: 512, sequences: streams)
        let vocab = Int32(model.vocabularySize)
        let promptLength = 32
        batch.clear()
        for s in 0..<streams {
            for i in 0..<promptLength { batch.add(Int32.random(in: 0..<vocab), pos: Int32(i), seq: Int32(s), logits: i == promptLength - 1) }
        }
        guard ctx.decode(batch) == 0 else { throw EngineError.decodingFailure("reference batched prompt failed") }
        let t0 = ContinuousClock.now
        for step in 0..<steps {
            batch.clear()
            for s in 0..<streams { batch.add(Int32.random(in: 0..<vocab), pos: Int32(promptLength + step), seq: Int32(s), logits: true) }
            guard ctx.decode(batch) == 0 else { throw EngineError.decodingFailure("reference batched decode failed") }
        }
        return Double(streams * steps) / (ContinuousClock.now - t0).inSeconds
    }

}
