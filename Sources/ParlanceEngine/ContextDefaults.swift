import Foundation

/// The llama context settings a model gets when the user names none: chosen for the main
/// job (a transcript of 2,000–4,000 tokens: the fastest first token, then decoding no
/// slower) by measuring every KV type, attention kernel and batch with `parlance-bench
/// --reference-matrix`, per backend.
///
/// CPU (2-core x86-64, SmolLM2-135M, two matrix runs; prompt tokens/s at 2,048 and 4,000
/// tokens): f16 keys and values with flash attention evaluated 232–297 and 188–244 in
/// batches of 512 to 2,048 tokens; q8_0 keys with flash attention (the earlier default)
/// 154–176 and 109–114, since flash attention dequantizes every key row for every query and
/// the cost grows with the context; f16 without flash attention 162–248 and 123–188.
/// Decoding after 2,000 tokens was 41–57 tokens/s with flash attention and 54–70 without,
/// within the runs' noise of each other at the low end, so flash attention stays on (it is
/// also what llama.cpp's `auto` picks, and it keeps the score matrix out of the compute
/// buffer). Batches: a prompt evaluated alone goes in steps of at most 1.8 s (progress at
/// least every 2 s), about 400–500 tokens here, so 512-token batches lose nothing to
/// 2,048. GPU (llama.cpp's device list has one): llama.cpp's defaults (f16, flash
/// attention, 2,048-token batches in 512-token micro-batches), which its developers tune
/// for GPUs; not measured here.
public enum ContextDefaults {
    /// Whether llama.cpp has a GPU device to offload to (read once).
    public static let gpu: Bool = ComputeDevice.all().contains { $0.isGPU }
    /// Tokens per `llama_decode` batch: 512 on a CPU, 2,048 on a GPU.
    public static var batch: Int { gpu ? 2048 : 512 }
    /// Tokens computed at once within a batch (the compute buffer grows with it).
    public static let microBatch = 512
    public static let flashAttention = true

    /// The KV cache's element types for a model of `modelBytes` whose cache would take
    /// `f16Bytes` in f16 at the configured context, with `availableBytes` free now: f16 keys
    /// and values, the fastest on CPU and GPU alike. Where memory is short (the model and an
    /// f16 cache would take more than half of what is available) keys are q8_0, saving a
    /// quarter of the cache at a cost in prompt speed that grows with the context; past
    /// three quarters, values too (half the cache).
    public static func cache(modelBytes: Int, f16Bytes: Int, availableBytes: Int?) -> KVCacheTypes {
        guard let available = availableBytes, available > 0 else { return .init(keys: .f16, values: .f16) }
        let need = modelBytes + f16Bytes
        if need * 4 > available * 3 { return .init(keys: .q8_0, values: .q8_0) }
        if need * 2 > available { return .init(keys: .q8_0, values: .f16) }
        return .init(keys: .f16, values: .f16)
    }

    /// The cache types for the model at `path` (its header read as `header`) at
    /// `contextSize` tokens, on the GPU when `onGPU` (its free memory) or else the CPU
    /// (the memory the system has available now).
    public static func cache(forModelAt path: String, header: GGUFInfo, contextSize: Int, onGPU: Bool) -> KVCacheTypes {
        let fileBytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        return cache(modelBytes: fileBytes, f16Bytes: KVCacheTypes.bytes(.init(keys: .f16, values: .f16), contextSize: contextSize, header: header) ?? 0,
                     availableBytes: onGPU ? ComputeDevice.all().filter(\.isGPU).map(\.freeBytes).max() : ProcessMemory.availableBytes())
    }
}

extension KVCacheTypes {
    /// The cache's size in bytes at `contextSize` cells, from a GGUF header's layer and head
    /// counts (nil when the header does not say).
    public static func bytes(_ types: KVCacheTypes, contextSize: Int, header: GGUFInfo) -> Int? {
        guard let arch = header.architecture else { return nil }
        func int(_ key: String) -> Int? { header.metadata["\(arch).\(key)"].flatMap { Int($0) } }
        guard let layers = int("block_count"), let heads = int("attention.head_count"), let embd = int("embedding_length") else { return nil }
        let kvHeads = int("attention.head_count_kv") ?? heads
        let k = int("attention.key_length") ?? embd / max(1, heads)
        let v = int("attention.value_length") ?? embd / max(1, heads)
        // q8_0 stores 32 values in 34 bytes.
        func bytes(_ t: Element, _ elements: Int) -> Int { t == .f16 ? elements * 2 : elements * 34 / 32 }
        let cells = contextSize * layers * kvHeads
        return bytes(types.keys, cells * k) + bytes(types.values, cells * v)
    }
}
