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
            pp = max(pp, Double(promptTokens) / seconds(ContinuousClock.now - t0))
            ctx.clear()
            let t1 = ContinuousClock.now
            for (i, t) in tokens(genTokens).enumerated() {
                batch.clear()
                batch.add(t, pos: Int32(i), seq: 0, logits: true)
                guard ctx.decode(batch) == 0 else { throw EngineError.decodingFailure("reference tg decode failed") }
            }
            tg = max(tg, Double(genTokens) / seconds(ContinuousClock.now - t1))
        }
        return Figures(promptTokensPerSecond: pp, decodeTokensPerSecond: tg)
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
        return Double(streams * steps) / seconds(ContinuousClock.now - t0)
    }

    static func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }
}
