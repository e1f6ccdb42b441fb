#if canImport(Glibc)
import Glibc
#endif
import LlamaShim
import Synchronization

/// The one Swift wrapper over LlamaShim. Every pointer lives here; every return is checked.
///
/// `LlamaModel` is immutable after load and its vocabulary calls are thread-safe, so it is
/// shared. `LlamaContext`, `LlamaBatch` and `LlamaSampler` belong to the engine thread.
public typealias Token = Int32

/// Receives llama.cpp's log lines (level 1 debug … 4 error). Set once at start-up.
///
/// The sink lives in a box handed to the shim as its `user_data` and read back unretained
/// on each line: never a closure stored in a `Mutex`, which Swift re-wraps in a fresh
/// reabstraction thunk on every `withLock`, so each log line nested one layer deeper until
/// the engine thread's stack overflowed (a decode warning logged ~100,000 times crashed the
/// daemon with SIGSEGV).
public enum LlamaLog {
    public typealias Sink = @Sendable (Int, String) -> Void

    final class Box: Sendable {
        let sink: Sink
        init(_ sink: @escaping Sink) { self.sink = sink }
    }

    /// Installs the sink. Each box stays alive for the process (the shim may still be
    /// calling the previous one while it is replaced).
    public static func install(_ s: @escaping Sink) {
        let box = Unmanaged.passRetained(Box(s)).toOpaque()
        pl_init({ level, text, ud in
            guard let text, let ud else { return }
            let line = String(cString: text)
            Unmanaged<Box>.fromOpaque(ud).takeUnretainedValue().sink(Int(level), line)
            let me = LlamaLog.threadKey
            LlamaLog.tapped.withLock { taps in if taps[me] != nil { taps[me]!.append(line) } }
        }, box)
    }

    /// Lines llama.cpp logs on this thread while `body` runs (a model's load: its buffer
    /// sizes, which llama.cpp logs on the loading thread), besides going to the sink. Loads
    /// on other threads keep their own lines.
    static var threadKey: UInt {
        #if os(Linux)
        return UInt(pthread_self())
        #else
        return UInt(bitPattern: pthread_self())
        #endif
    }
    static let tapped = Mutex<[UInt: [String]]>([:])  // guards the lines collected per tapping thread
    static func tap<T>(_ body: () throws(EngineError) -> T) throws(EngineError) -> (T, [String]) {
        let me = threadKey
        tapped.withLock { $0[me] = [] }
        defer { tapped.withLock { _ = $0.removeValue(forKey: me) } }
        let value = try body()
        return (value, tapped.withLock { $0[me] ?? [] })
    }

    /// Sends a line through the shim to the sink, exactly as llama.cpp's lines travel.
    public static func forward(level: Int, _ line: String) { pl_log_forward(Int32(level), line) }
}

/// Process-wide memory habits for the daemon (see `pl_tune_malloc`).
public enum ProcessMemory {
    public static func tune() { pl_tune_malloc() }
    /// Returns freed heap memory to the system (after an unload).
    public static func release() { pl_release_memory() }
}

/// A compute device in llama.cpp's backend registry.
public struct ComputeDevice: Sendable, Hashable {
    public enum Kind: String, Sendable, CaseIterable { case cpu, gpu, integratedGPU, accelerator, other }
    public var name: String
    public var description: String
    public var kind: Kind
    public var freeBytes: Int
    public var totalBytes: Int

    /// The devices llama.cpp sees now (the CPU always; GPUs when it was built for them).
    public static func all() -> [ComputeDevice] {
        return (0..<pl_device_count()).compactMap { i in
            var d = pl_device()
            guard pl_device_get(i, &d) else { return nil }
            let kinds: [Kind] = [.cpu, .gpu, .integratedGPU, .accelerator, .other]
            let name = withUnsafeBytes(of: d.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            let desc = withUnsafeBytes(of: d.description) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            return ComputeDevice(name: name, description: desc, kind: kinds[Int(max(0, min(4, d.type)))],
                                 freeBytes: Int(d.free_bytes), totalBytes: Int(d.total_bytes))
        }
    }

    /// A device layers can be offloaded to.
    public var isGPU: Bool { kind == .gpu || kind == .integratedGPU }
}

public final class LlamaModel: @unchecked Sendable {
    let handle: OpaquePointer
    public let path: String

    /// `gpuLayers`: N layers (llama.cpp takes the last ones) on the GPU devices it found; negative: all; 0: CPU only.
    /// `vocabularyOnly`: the tokenizer and metadata, no weights (for counting tokens).
    public init(path: String, gpuLayers: Int32 = 0, vocabularyOnly: Bool = false) throws(EngineError) {
        var err = [CChar](repeating: 0, count: 256)
        guard let h = pl_model_load(path, gpuLayers, vocabularyOnly, &err, err.count) else {
            throw .invalidModelFile(path: path, reason: String(cBuffer: err))
        }
        handle = h
        self.path = path
    }
    deinit { pl_model_free(handle) }

    public var contextTrainSize: Int { Int(pl_model_n_ctx_train(handle)) }
    /// Repeating layers (blocks); llama.cpp can offload these plus the output layer.
    public var layerCount: Int { Int(pl_model_n_layer(handle)) }
    public var parameterCount: Int { Int(pl_model_n_params(handle)) }
    public var sizeBytes: Int { Int(pl_model_size(handle)) }
    public var vocabularySize: Int { Int(pl_model_n_vocab(handle)) }
    public var chatTemplate: String? { pl_model_chat_template(handle).map { String(cString: $0) } }

    public func metadata(_ key: String) -> String? {
        var buf = [CChar](repeating: 0, count: 512)
        let n = pl_model_meta(handle, key, &buf, buf.count)
        if n < 0 { return nil }
        if Int(n) >= buf.count {
            buf = [CChar](repeating: 0, count: Int(n) + 1)
            _ = pl_model_meta(handle, key, &buf, buf.count)
        }
        return String(cBuffer: buf)
    }

    public var description: String {
        var buf = [CChar](repeating: 0, count: 256)
        _ = pl_model_desc(handle, &buf, buf.count)
        return String(cBuffer: buf)
    }

    public func isEndOfGeneration(_ t: Token) -> Bool { pl_token_is_eog(handle, t) }
    public var bos: Token { pl_token_bos(handle) }
    public var addsBOS: Bool { pl_add_bos(handle) }

    /// Tokenizes text. `special` parses control tokens such as `<|im_start|>`: only ever
    /// true for template text we wrote, never for user or document text.
    public func tokenize(_ text: String, addBOS: Bool = false, special: Bool = false) -> [Token] {
        var utf8 = Array(text.utf8)
        let len = Int32(utf8.count)
        var out = [Token](repeating: 0, count: max(16, utf8.count + 4))
        var n = utf8.withUnsafeMutableBufferPointer { u in
            u.withMemoryRebound(to: CChar.self) { c in
                pl_tokenize(handle, c.baseAddress, len, &out, Int32(out.count), addBOS, special)
            }
        }
        if n < 0 {
            out = [Token](repeating: 0, count: Int(-n))
            n = utf8.withUnsafeMutableBufferPointer { u in
                u.withMemoryRebound(to: CChar.self) { c in
                    pl_tokenize(handle, c.baseAddress, len, &out, Int32(out.count), addBOS, special)
                }
            }
        }
        return Array(out.prefix(max(0, Int(n))))
    }

    /// The bytes of one token (may be part of a UTF-8 character).
    public func piece(_ t: Token, special: Bool = false) -> [UInt8] {
        var buf = [CChar](repeating: 0, count: 64)
        var n = pl_token_piece(handle, t, &buf, Int32(buf.count), special)
        if n < 0 {
            buf = [CChar](repeating: 0, count: Int(-n))
            n = pl_token_piece(handle, t, &buf, Int32(buf.count), special)
        }
        return buf.prefix(max(0, Int(n))).map { UInt8(bitPattern: $0) }
    }

    /// Applies the chat template (the model's own unless given). nil when unsupported.
    public func applyTemplate(_ messages: [(role: String, content: String)], addAssistant: Bool, template: String? = nil) -> String? {
        var cRoles = messages.map { strdup($0.role) }
        var cContents = messages.map { strdup($0.content) }
        defer {
            cRoles.forEach { free($0) }
            cContents.forEach { free($0) }
        }
        let total = messages.reduce(0) { $0 + $1.content.utf8.count + $1.role.utf8.count } * 2 + 256
        var buf = [CChar](repeating: 0, count: total)
        func apply(_ buf: inout [CChar]) -> Int32 {
            cRoles.withUnsafeMutableBufferPointer { r in
                cContents.withUnsafeMutableBufferPointer { c in
                    r.withMemoryRebound(to: UnsafePointer<CChar>?.self) { rr in
                        c.withMemoryRebound(to: UnsafePointer<CChar>?.self) { cc in
                            pl_chat_apply(handle, template, rr.baseAddress, cc.baseAddress, messages.count, addAssistant, &buf, Int32(buf.count))
                        }
                    }
                }
            }
        }
        var n = apply(&buf)
        if n < 0 { return nil }
        if Int(n) > buf.count {
            buf = [CChar](repeating: 0, count: Int(n) + 1)
            n = apply(&buf)
            if n < 0 { return nil }
        }
        return String(decoding: buf.prefix(Int(n)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether llama.cpp's grammar parser accepts a GBNF grammar.
    public func grammarParses(_ gbnf: String) -> Bool {
        var err = [CChar](repeating: 0, count: 128)
        return pl_grammar_check(handle, gbnf, &err, err.count)
    }
}

final class LlamaContext: @unchecked Sendable {
    let handle: OpaquePointer
    let model: LlamaModel

    /// `outputsPerBatch`: the most logits rows one batch asks for (nil: llama.cpp's default,
    /// every token). Each reserved row costs n_vocab floats of compute buffer.
    init(model: LlamaModel, contextSize: Int, batchSize: Int, microBatch: Int? = nil, sequences: Int, outputsPerBatch: Int? = nil,
         threads: Int, cache: KVCacheTypes = .init(keys: .f16, values: .f16), flashAttention: Bool = false) throws(EngineError) {
        self.model = model
        var err = [CChar](repeating: 0, count: 256)
        let p = pl_context_params(n_ctx: UInt32(contextSize), n_batch: UInt32(batchSize), n_ubatch: UInt32(microBatch ?? batchSize),
                                  n_seq_max: UInt32(sequences), n_outputs_max: UInt32(outputsPerBatch ?? 0), n_threads: Int32(threads),
                                  k_q8: cache.keys == .q8_0, v_q8: cache.values == .q8_0, flash_attn: flashAttention)
        guard let h = pl_context_new(model.handle, p, &err, err.count) else {
            throw .contextCreationFailed(String(cBuffer: err))
        }
        handle = h
    }
    deinit { pl_context_free(handle) }

    /// Asks a running llama_decode to stop at its next check. The only call made from
    /// threads other than the engine thread (the shim makes it atomic).
    func setAbort(_ on: Bool) { pl_context_set_abort(handle, on) }

    var size: Int { Int(pl_context_n_ctx(handle)) }
    func decode(_ b: LlamaBatch) -> Int32 { pl_decode(handle, b.handle) }
    @discardableResult func removeTokens(seq: Int32, from p0: Int32, to p1: Int32 = -1) -> Bool { pl_memory_seq_rm(handle, seq, p0, p1) }
    /// The `count` logits of batch `index` (`count`: the vocabulary size), kept past the next decode.
    func logitsRow(_ index: Int32, count: Int) -> [Float]? {
        var row = [Float](repeating: 0, count: count)
        let ok = row.withUnsafeMutableBufferPointer { pl_logits_copy(handle, index, $0.baseAddress, Int32(count)) }
        return ok ? row : nil
    }
    func copyTokens(from src: Int32, to dst: Int32, upTo p1: Int32) { pl_memory_seq_cp(handle, src, dst, 0, p1) }
    func maxPosition(seq: Int32) -> Int32 { pl_memory_seq_pos_max(handle, seq) }
    func minPosition(seq: Int32) -> Int32 { pl_memory_seq_pos_min(handle, seq) }
    func clear() { pl_memory_clear(handle) }

    func saveSequence(_ seq: Int32, tokens: [Token], to path: String) -> Bool {
        pl_state_seq_save(handle, path, seq, tokens, tokens.count) > 0
    }
    func loadSequence(_ seq: Int32, from path: String, capacity: Int) -> [Token]? {
        var out = [Token](repeating: 0, count: capacity)
        var n = 0
        guard pl_state_seq_load(handle, path, seq, &out, capacity, &n) > 0 else { return nil }
        return Array(out.prefix(n))
    }
}

final class LlamaBatch {
    let handle: OpaquePointer
    let capacity: Int
    init(capacity: Int, sequences: Int) {
        self.capacity = capacity
        handle = pl_batch_new(Int32(capacity), Int32(sequences))
    }
    deinit { pl_batch_free(handle) }
    func clear() { pl_batch_clear(handle) }
    @discardableResult func add(_ t: Token, pos: Int32, seq: Int32, logits: Bool) -> Int32 { pl_batch_add(handle, t, pos, seq, logits) }
    var count: Int { Int(pl_batch_count(handle)) }
}

final class LlamaSampler {
    let handle: OpaquePointer
    init(model: LlamaModel, options: SamplingOptions, seed: UInt32, grammar: String?) throws(EngineError) {
        var err = [CChar](repeating: 0, count: 256)
        let p = pl_sampler_params(
            temperature: Float(options.temperature), top_p: Float(options.topP), top_k: Int32(options.topK),
            min_p: Float(options.minP), repeat_penalty: Float(options.repeatPenalty), repeat_last_n: 64, seed: seed)
        guard let h = pl_sampler_new(model.handle, p, grammar, &err, err.count) else {
            throw .grammarRejected(String(cBuffer: err))
        }
        handle = h
    }
    deinit { pl_sampler_free(handle) }
    /// The next token from the logits at batch `index`, never one of `banned`; -1 when
    /// nothing is admissible.
    func sample(_ ctx: LlamaContext, index: Int32, banned: [Token] = []) -> Token {
        banned.withUnsafeBufferPointer { pl_sampler_sample(handle, ctx.handle, index, $0.baseAddress, Int32($0.count)) }
    }
    /// As `sample`, from a logits row `LlamaContext.logitsRow` saved.
    func sample(row: [Float], banned: [Token] = []) -> Token {
        row.withUnsafeBufferPointer { r in
            banned.withUnsafeBufferPointer { pl_sampler_sample_row(handle, r.baseAddress, Int32(r.count), $0.baseAddress, Int32($0.count)) }
        }
    }
    /// Whether the grammar (if any) admits the model's own first choice at batch `index`.
    func admitsTop(_ ctx: LlamaContext, index: Int32) -> Bool { pl_sampler_admits_top(handle, ctx.handle, index) }
    /// An independent copy in this sampler's state (grammar position, penalties, random state).
    func copy() -> LlamaSampler? { pl_sampler_clone(handle).map(LlamaSampler.init(handle:)) }
    private init(handle: OpaquePointer) { self.handle = handle }
    func accept(_ t: Token) { pl_sampler_accept(handle, t) }
    /// How many of `tokens` the grammar (if any) would accept in order from here.
    func grammarPrefix(_ tokens: [Token]) -> Int { Int(pl_sampler_grammar_prefix(handle, tokens, Int32(tokens.count))) }
}

extension String {
    /// A NUL-terminated C buffer as a String (bytes after the first NUL ignored).
    init(cBuffer: [CChar]) {
        self = String(decoding: cBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
