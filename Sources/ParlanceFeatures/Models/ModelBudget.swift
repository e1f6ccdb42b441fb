import Foundation
import JSONRPC
import ParlanceEngine
import ParlanceJSON
import ParlanceProtocol

// The registry's memory budget: what each model holds or will hold, and which idle
// models a load unloads to fit (or the -32001 `memoryBudget` refusal when none can).
extension ModelRegistry {
    /// What a model holds or will hold: llama.cpp's figures from its last load, or the
    /// estimate when that is larger (a load without the log tap reports the weights only).
    static func bytes(_ s: Slot) -> Int { max(s.measured?.totalBytes ?? 0, estimate(s.model, s.inspected)) }

    /// Whether the model counts against the budget: loaded, or loading.
    static func holds(_ s: Slot) -> Bool {
        switch s.phase {
        case .ready, .loading: return true
        case .unloaded, .unloading, .failed: return false
        }
    }

    /// Before a first load: the file, plus its KV cache at the configured context (from the
    /// header's layer and head counts) when the header has been read.
    static func estimate(_ m: RegisteredModel, _ info: GGUFInfo?) -> Int {
        if m.servedElsewhere { return 0 }
        let file = (try? FileManager.default.attributesOfItem(atPath: m.engine.modelPath)[.size] as? Int) ?? 0
        // Unset cache types are chosen at load: f16, unless memory is short (the larger, here).
        let types = m.engine.cache ?? .init(keys: .f16, values: .f16)
        return file + (info.flatMap { KVCacheTypes.bytes(types, contextSize: m.engine.contextSize, header: $0) } ?? 0)
    }

    /// The idle models to unload so `name` fits, least recently used first: within
    /// `--max-loaded-models` and `--max-model-bytes`, and within the memory the system has
    /// available (so a load is refused, not killed for memory). Throws `memoryBudget` with
    /// the numbers when the models in use leave no room.
    func makeRoom(for name: String, in all: inout [String: Slot]) throws -> [String] {
        let maxModels = settings.maxLoadedModels, maxBytes = settings.maxModelBytes
        let need = Self.bytes(all[name]!)
        let bytes = Self.bytes
        let available = availableMemory(beside: all)
        var held = all.filter { $0.key != name && Self.holds($0.value) }
        var freed = 0
        func fits() -> Bool {
            (maxModels.map { held.count + 1 <= $0 } ?? true)
                && (maxBytes.map { held.values.reduce(0) { $0 + bytes($1) } + need <= $0 } ?? true)
                && (available.map { need <= $0 + freed } ?? true)
        }
        var victims: [String] = []
        while !fits() {
            let idle = held.filter { if case .ready = $0.value.phase { return $0.value.uses == 0 } else { return false } }
            let tooBig = maxBytes.map { need > $0 } ?? false
            guard !tooBig, let lru = idle.min(by: { ($0.value.lastUsed ?? .now) < ($1.value.lastUsed ?? .now) }) else {
                throw budgetError(name, need: need, held: held, available: available, tooBig: tooBig)
            }
            victims.append(lru.key)
            freed += bytes(lru.value)
            held[lru.key] = nil
        }
        return victims
    }

    /// What the system has now, less what loads under way will take, plus what the
    /// unloads this load waits for will give back (nil: unknown, not checked).
    private func availableMemory(beside all: [String: Slot]) -> Int? {
        settings.availableMemory().map { now in
            all.values.reduce(now) { sum, slot in
                switch slot.phase {
                case .loading: return sum - Self.bytes(slot)
                case .unloading: return sum + Self.bytes(slot)
                default: return sum
                }
            }
        }
    }

    /// -32001 `memoryBudget`: why `name` (about `need` bytes) cannot load beside the models
    /// `held`, with the limits in force and the models in use.
    private func budgetError(_ name: String, need: Int, held: [String: Slot], available: Int?, tooBig: Bool) -> ResponseError {
        let maxModels = settings.maxLoadedModels, maxBytes = settings.maxModelBytes
        let loaded = held.keys.sorted()
        let busy = held.filter { $0.value.uses > 0 || !($0.value.phase.isReady) }.keys.sorted()
        let used = held.values.reduce(0) { $0 + Self.bytes($1) }
        var why: String
        if tooBig {
            why = "it needs about \(Self.mib(need)) alone, over --max-model-bytes \(Self.mib(maxBytes!))"
        } else {
            why = "loaded: \(loaded.isEmpty ? "none" : loaded.joined(separator: ", ")) (\(Self.mib(used)))"
            if let maxModels { why += ", --max-loaded-models \(maxModels)" }
            if let maxBytes { why += ", --max-model-bytes \(Self.mib(maxBytes))" }
            if let available { why += ", the system has \(Self.mib(available)) available" }
            why += busy.isEmpty ? "" : "; in use, so not unloaded: \(busy.joined(separator: ", "))"
        }
        let message = "cannot load model '\(name)' (about \(Self.mib(need))): \(why)"
        var data: JSONObject = ["error": "modelUnavailable", "reason": "memoryBudget", "message": .string(message), "model": .string(name),
                                "neededBytes": .int(need), "loadedBytes": .int(used),
                                "loadedModels": .array(loaded.map { .string($0) }), "busy": .array(busy.map { .string($0) })]
        if let maxModels { data["maxLoadedModels"] = .int(maxModels) }
        if let maxBytes { data["maxModelBytes"] = .int(maxBytes) }
        if let available { data["availableBytes"] = .int(available) }
        return ResponseError(ErrorCode(rawValue: ProtocolError.modelUnavailable.code), message, data: .object(data))
    }

    static func mib(_ bytes: Int) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
}
