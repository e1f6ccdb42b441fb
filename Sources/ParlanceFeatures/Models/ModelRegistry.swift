import Foundation
import JSONRPC
import ParlanceEngine
import ParlanceJSON
import ParlanceModelStores
import ParlanceProtocol
import ParlanceRemote
import Synchronization

/// One model the daemon may serve, by name (`--model NAME=PATH`, the config file).
public struct RegisteredModel: Sendable {
    public var name: String
    public var engine: EngineConfig
    /// Idle seconds before it is unloaded (0: never), like Ollama's `keep_alive`.
    public var keepAlive: Double
    /// Served by an OpenAI-compatible server instead of loaded here (`--model NAME=openai:URL`).
    public var remote: OpenAIEndpoint?
    /// The store name it was given (`ollama:…`, `hf:…`, `lmstudio:…`): found on disk again
    /// before each load, so a model pulled after the daemon started is served.
    public var storeName: String?
    /// What the store keeps with the model (Ollama's `.system` and `.params` layers): a
    /// session created without instructions or sampling options takes these.
    public var storeDefaults: StoreDefaults? = nil
    public init(name: String, engine: EngineConfig, keepAlive: Double, remote: OpenAIEndpoint? = nil, storeName: String? = nil) {
        self.remote = remote
        self.storeName = storeName
        var engine = engine
        engine.name = name
        self.name = name
        self.engine = engine
        self.keepAlive = keepAlive
    }
}

/// The registry as configured: models, which one a request gets, and the memory budget.
public struct RegistrySettings: Sendable {
    public var models: [RegisteredModel]
    public var defaultModel: String
    /// Route key (a method family such as `compose`, or a full method name) → model name.
    public var routes: [String: String]
    public var maxLoadedModels: Int?
    public var maxModelBytes: Int?
    /// Bytes the system could give a new model now (nil: unknown, not checked).
    public var availableMemory: @Sendable () -> Int? = ProcessMemory.availableBytes
    /// Where store names (`ollama:…`, `hf:…`, `lmstudio:…`) are looked up.
    public var stores = StoreEnvironment()
    /// The engine settings for a model a request names that is not registered (a store
    /// name or a GGUF path): it is added to the registry on first use. nil: only
    /// registered names are accepted.
    public var onDemand: EngineConfig? = nil
    /// Keep-alive for models added on demand.
    public var onDemandKeepAlive: Double = 300
    public init(models: [RegisteredModel], defaultModel: String? = nil, routes: [String: String] = [:],
                maxLoadedModels: Int? = nil, maxModelBytes: Int? = nil) {
        self.models = models
        self.defaultModel = defaultModel ?? models.first?.name ?? ""
        self.routes = routes
        self.maxLoadedModels = maxLoadedModels
        self.maxModelBytes = maxModelBytes
    }

    /// One model, never unloaded (tests, the benchmark).
    public static func single(_ config: EngineConfig, keepAlive: Double = 0) -> RegistrySettings {
        let name = config.name.isEmpty ? ModelNames.fromPath(config.modelPath) : config.name
        return RegistrySettings(models: [RegisteredModel(name: name, engine: config, keepAlive: keepAlive)])
    }
}

public enum ModelNames {
    /// A bare `--model PATH` is named after its file: `SmolLM2-135M-Instruct.Q4_1.gguf` →
    /// `SmolLM2-135M-Instruct.Q4_1`.
    public static func fromPath(_ path: String) -> String {
        // A store name is its own registry name: `ollama:llama3.2:3b`.
        if ModelCatalogue.isStoreName(path) { return path }
        // openai:URL#served → the served model's name (its last path part), else the host.
        if RemoteSpec.isRemote(path) {
            let (url, served) = RemoteSpec.split(path)
            if let last = served?.split(separator: "/").last { return String(last) }
            return URL(string: url)?.host ?? "remote"
        }
        let file = (path as NSString).lastPathComponent
        let stem = file.lowercased().hasSuffix(".gguf") ? String(file.dropLast(5)) : file
        return stem.isEmpty ? "default" : stem
    }
}

/// The models the daemon serves: each loaded by the first request that needs it, kept
/// while requests use it, unloaded after its keep-alive (saving its KV prefixes to disk
/// first) or to make room for another within the memory budget.
///
/// A request pins the models it uses through its `ModelUses` until it is answered, so a
/// running request never loses its model. All state is behind one lock; loads and unloads
/// run off it, and a load waits for any unload of memory it needs to finish first.
public final class ModelRegistry: Sendable {
    public enum Phase: Sendable {
        case unloaded
        case loading(Task<Result<Engine, EngineError>, Never>)
        case ready(Engine)
        /// Saving its KV prefixes and freeing its memory; a request waits, then reloads it.
        case unloading
        case failed(EngineError)
    }

    struct Slot {
        var model: RegisteredModel
        var phase: Phase = .unloaded
        /// Requests holding it now.
        var uses = 0
        var lastUsed: ContinuousClock.Instant? = nil
        /// Bumped by every use: an idle timer unloads only if no use came after it was set.
        var generation = 0
        var loads = 0
        /// What llama.cpp allocated at the last load.
        var measured: MemoryUse? = nil
        /// An unload in progress: the next load of this model waits for it.
        var unloading: Task<Void, Never>? = nil
        /// The file's header, read once it checks out (nil: not yet, or it failed).
        var inspected: GGUFInfo? = nil
        /// The model's tokenizer without its weights, for token counts while it is not loaded.
        var vocabulary: LlamaModel? = nil
    }

    public let settings: RegistrySettings
    /// The models served elsewhere: never loaded here, outside the memory budget.
    public let remotes: [String: RemoteModel]
    private let slots: Mutex<[String: Slot]>  // guards every model's phase, uses and timers
    /// Models added on demand (a request named a store name or a path), in order.
    private let added = Mutex<[String]>([])  // guards the order they were added in
    private let log: @Sendable (String) -> Void

    public init(settings: RegistrySettings, log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.settings = settings
        self.log = log
        remotes = Dictionary(uniqueKeysWithValues: settings.models.compactMap { m in m.remote.map { (m.name, RemoteModel(name: m.name, endpoint: $0)) } })
        slots = Mutex(Dictionary(uniqueKeysWithValues: settings.models.map { ($0.name, Slot(model: $0)) }))
    }

    public var names: [String] { settings.models.map(\.name) + added.withLock { $0 } }
    public func has(_ name: String) -> Bool { slots.withLock { $0[name] != nil } }
    public func model(_ name: String) -> RegisteredModel? { slots.withLock { $0[name]?.model } }

    // MARK: choosing

    /// -32602 naming the models there are.
    public func unknown(_ name: String) -> ResponseError {
        .invalidParams("unknown model '\(name)'; the registry has: \(names.joined(separator: ", "))",
                       data: ["error": "unknownModel", "path": "/model", "model": .string(name), "models": .array(names.map { .string($0) })])
    }

    /// The model for a request: the one it names, else the first route that matches, else
    /// the default.
    public func resolve(_ choice: ModelChoice) throws -> String {
        if let n = choice.name {
            if has(n) { return n }
            guard let base = settings.onDemand, ModelCatalogue.isStoreName(n) || n.lowercased().hasSuffix(".gguf") else { throw unknown(n) }
            // A model on disk named by its store name or path: found now (a name that is
            // not there is -32001 notDownloaded), then registered like a configured one.
            if ModelCatalogue.isStoreName(n), case .failure(let e) = Self.locate(n, settings.stores) { throw ErrorMapping.response(for: e) }
            var c = base
            c.modelPath = n
            let m = RegisteredModel(name: n, engine: c, keepAlive: settings.onDemandKeepAlive, storeName: ModelCatalogue.isStoreName(n) ? n : nil)
            let inserted = slots.withLock { all in
                if all[n] != nil { return false }
                all[n] = Slot(model: m)
                return true
            }
            if inserted {
                added.withLock { $0.append(n) }
                log("model '\(n)' added to the registry (named by a request)")
            }
            return n
        }
        for key in choice.routes { if let n = settings.routes[key] { return n } }
        return settings.defaultModel
    }

    // MARK: using

    /// The model's engine, loading it first when it is not loaded (reporting phase
    /// `loading`); pinned until `release`. Throws the load's error, or `memoryBudget` when
    /// it cannot fit beside the models in use.
    public func acquire(_ name: String, progress: ProgressReporter) async throws -> any LanguageModel {
        if let remote = remotes[name] {
            slots.withLock { all in
                all[name]?.uses += 1
                all[name]?.lastUsed = .now
            }
            do { try await remote.prepare() } catch {
                release(name)
                throw error
            }
            return remote
        }
        try relocate(name)
        enum Step { case ready(Engine), wait(Task<Result<Engine, EngineError>, Never>, started: Bool) }
        // The budget counts a first load's KV cache from the file's header.
        if loadedEngine(name) == nil { _ = snapshot(name) }
        let step: Step = try slots.withLock { all in
            guard var s = all[name] else { throw unknown(name) }
            switch s.phase {
            case .ready(let e):
                s.uses += 1
                s.generation += 1
                s.lastUsed = .now
                all[name] = s
                return .ready(e)
            case .loading(let t):
                s.uses += 1
                s.generation += 1
                all[name] = s
                return .wait(t, started: false)
            case .unloaded, .unloading, .failed:
                let victims = try makeRoom(for: name, in: &all)
                var waits: [Task<Void, Never>] = []
                for v in victims {
                    guard case .ready(let e) = all[v]?.phase else { continue }
                    let t = unloadTask(v, e, reason: "to make room for '\(name)'")
                    all[v]!.phase = .unloading
                    all[v]!.unloading = t
                    waits.append(t)
                }
                // Every unload under way (this model's, the victims', idle ones') frees its
                // memory before this load takes any.
                for other in all.values { if case .unloading = other.phase, let u = other.unloading { waits.append(u) } }
                let config = s.model.engine
                let task = Task.detached(priority: .userInitiated) { [self] () -> Result<Engine, EngineError> in
                    for w in waits { await w.value }
                    let start = ContinuousClock.now
                    // On this task's (pool) thread, as before the registry: loading on a thread of
                    // its own measured ~150 ms slower to the first token (cause not pinned down).
                    let result = { () -> Result<Engine, EngineError> in
                        do { return .success(try Engine(config: config)) } catch let e as EngineError { return .failure(e) } catch { return .failure(.invalidModelFile(path: config.modelPath, reason: "\(error)")) }
                    }()
                    loaded(name, result, seconds: (ContinuousClock.now - start).seconds)
                    return result
                }
                s.phase = .loading(task)
                s.loads += 1
                s.uses += 1
                s.generation += 1
                all[name] = s
                return .wait(task, started: true)
            }
        }
        switch step {
        case .ready(let e):
            return e
        case .wait(let task, let started):
            progress(.init(kind: .report, message: started ? "loading model \(name)" : "waiting for model \(name) to load", phase: .loading))
            switch await task.value {
            case .success(let e): return e
            case .failure(let e):
                release(name)
                throw e
            }
        }
    }

    /// A store-named model not loaded now: found on disk again (it may have been pulled, or
    /// removed, since), its path updated.
    private func relocate(_ name: String) throws(EngineError) {
        guard loadedEngine(name) == nil, let store = model(name)?.storeName else { return }
        let found = try Self.locate(store, settings.stores).get()
        let path = found.path
        slots.withLock { all in
            all[name]?.model.storeDefaults = StoreDefaults(found)
            guard all[name]?.model.engine.modelPath != path else { return }
            all[name]?.model.engine.modelPath = path
            all[name]?.inspected = nil
            all[name]?.vocabulary = nil
        }
    }

    /// What the store keeps with a store-named model (found on disk now), nil for others.
    public func storeDefaults(_ name: String) -> StoreDefaults? {
        try? relocate(name)
        return model(name)?.storeDefaults
    }

    /// The model a store name names on disk now.
    static func locate(_ store: String, _ env: StoreEnvironment) -> Result<StoredModel, EngineError> {
        do { return .success(try ModelCatalogue(env).resolve(store)) } catch {
            return .failure(.notOnDisk(name: store, reason: error.reason.rawValue, message: error.message, suggestions: error.suggestions,
                                       pullCommand: error.pullCommand))
        }
    }

    /// Ends one use of the model; the last one starts its keep-alive.
    public func release(_ name: String) {
        slots.withLock { all in
            guard var s = all[name] else { return }
            s.uses = max(0, s.uses - 1)
            s.lastUsed = .now
            if s.uses == 0 { scheduleIdle(&s) }
            all[name] = s
        }
    }

    /// The engine when the model is loaded, without loading or pinning it (a token count
    /// that may fall back to an estimate).
    public func loadedEngine(_ name: String) -> Engine? {
        slots.withLock { all in
            if case .ready(let e) = all[name]?.phase { return e }
            return nil
        }
    }

    /// Counts tokens with the model's tokenizer: the loaded engine's, else its vocabulary
    /// alone (read once, no weights); nil when the file cannot be used.
    public func countTokens(_ name: String, _ text: String) -> Int? {
        if let r = remotes[name] { return r.countTokens(text) }
        if let e = loadedEngine(name) { return e.countTokens(text) }
        if let v = slots.withLock({ $0[name]?.vocabulary }) { return v.tokenize(text, special: false).count }
        // Only a file whose header checked out goes to llama.cpp (it aborts on some bad ones).
        guard let snap = snapshot(name), snap.problem == nil, slots.withLock({ $0[name]?.inspected != nil }), let m = model(name),
              let v = try? LlamaModel(path: m.engine.modelPath, vocabularyOnly: true) else { return nil }
        slots.withLock { $0[name]?.vocabulary = v }
        return v.tokenize(text, special: false).count
    }

    /// Stops every engine (exit): no state is saved, as at any shutdown.
    public func shutdown() {
        let engines = slots.withLock { all in
            all.values.compactMap { s -> Engine? in
                if case .ready(let e) = s.phase { return e }
                return nil
            }
        }
        engines.forEach { $0.shutdown() }
    }

    // MARK: reporting

    public struct Snapshot: Sendable {
        public var model: RegisteredModel
        public var phase: Phase
        public var uses: Int
        public var idle: Duration?
        public var loads: Int
        public var measured: MemoryUse?
        public var estimatedBytes: Int
        /// When not loaded: why the file cannot be used (checked now), nil when it can.
        public var problem: EngineError?
    }

    /// One model's state; for an unloaded one the file is checked (its header read once).
    public func snapshot(_ name: String) -> Snapshot? {
        do { try relocate(name) } catch {
            guard let s = slots.withLock({ $0[name] }) else { return nil }
            return Snapshot(model: s.model, phase: s.phase, uses: s.uses, idle: s.lastUsed.map { ContinuousClock.now - $0 }, loads: s.loads,
                            measured: s.measured, estimatedBytes: 0, problem: error)
        }
        guard let m = model(name) else { return nil }
        let s = slots.withLock { $0[name] }!
        var problem: EngineError? = nil
        var info = s.inspected
        if info == nil && m.remote == nil {
            if m.engine.contextSize < EngineConfig.minimumContext {
                problem = .contextTooSmall(requested: m.engine.contextSize, minimum: EngineConfig.minimumContext)
            } else {
                do {
                    info = try GGUFInspector.inspect(path: m.engine.modelPath, searched: m.engine.modelSearch)
                    slots.withLock { $0[name]?.inspected = info }
                } catch { problem = error }
            }
        }
        return Snapshot(model: m, phase: s.phase, uses: s.uses, idle: s.lastUsed.map { ContinuousClock.now - $0 }, loads: s.loads,
                        measured: s.measured, estimatedBytes: max(s.measured?.totalBytes ?? 0, Self.estimate(m, info)), problem: problem)
    }

    /// What the budget counts for the loaded models.
    public var loadedBytes: Int {
        slots.withLock { all in all.values.reduce(0) { $0 + (Self.holds($1) ? Self.bytes($1) : 0) } }
    }

    /// What a model holds or will hold: llama.cpp's figures from its last load, or the
    /// estimate when that is larger (a load without the log tap reports the weights only).
    private static func bytes(_ s: Slot) -> Int { max(s.measured?.totalBytes ?? 0, estimate(s.model, s.inspected)) }

    // MARK: private

    private static func holds(_ s: Slot) -> Bool {
        switch s.phase {
        case .ready, .loading: return true
        case .unloaded, .unloading, .failed: return false
        }
    }

    /// Before a first load: the file, plus its KV cache at the configured context (from the
    /// header's layer and head counts) when the header has been read.
    static func estimate(_ m: RegisteredModel, _ info: GGUFInfo?) -> Int {
        if m.remote != nil { return 0 }
        let file = (try? FileManager.default.attributesOfItem(atPath: m.engine.modelPath)[.size] as? Int) ?? 0
        // Unset cache types are chosen at load: f16, unless memory is short (the larger, here).
        let types = m.engine.cache ?? .init(keys: .f16, values: .f16)
        return file + (info.flatMap { KVCacheTypes.bytes(types, contextSize: m.engine.contextSize, header: $0) } ?? 0)
    }

    /// The idle models to unload so `name` fits, least recently used first: within
    /// `--max-loaded-models` and `--max-model-bytes`, and within the memory the system has
    /// available (so a load is refused, not killed for memory). Throws `memoryBudget` with
    /// the numbers when the models in use leave no room.
    private func makeRoom(for name: String, in all: inout [String: Slot]) throws -> [String] {
        let maxModels = settings.maxLoadedModels, maxBytes = settings.maxModelBytes
        let need = Self.bytes(all[name]!)
        let bytes = Self.bytes
        // What the system has now, less what loads under way will take, plus what the
        // unloads this load waits for will give back.
        let available = settings.availableMemory().map { now in
            all.values.reduce(now) { sum, slot in
                switch slot.phase {
                case .loading: return sum - bytes(slot)
                case .unloading: return sum + bytes(slot)
                default: return sum
                }
            }
        }
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
                let loaded = held.keys.sorted()
                let busy = held.filter { $0.value.uses > 0 || !($0.value.phase.isReady) }.keys.sorted()
                let used = held.values.reduce(0) { $0 + bytes($1) }
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
                throw ResponseError(ErrorCode(rawValue: ProtocolError.modelUnavailable.code), message, data: .object(data))
            }
            victims.append(lru.key)
            freed += bytes(lru.value)
            held[lru.key] = nil
        }
        return victims
    }

    static func mib(_ bytes: Int) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }

    /// The load finished: record it, and start the keep-alive if nobody waits any more.
    private func loaded(_ name: String, _ result: Result<Engine, EngineError>, seconds: Double) {
        slots.withLock { all in
            guard var s = all[name] else { return }
            switch result {
            case .success(let e):
                s.phase = .ready(e)
                s.measured = e.info.memory
                s.lastUsed = .now
                log("model '\(name)' loaded in \(String(format: "%.2f", seconds)) s (\(Self.mib(e.info.memory.totalBytes)))")
                if s.uses == 0 { scheduleIdle(&s) }
            case .failure(let e):
                s.phase = .failed(e)
                s.inspected = nil
                log("model '\(name)' failed to load: \(e)")
            }
            s.unloading = nil
            all[name] = s
        }
    }

    /// Under the lock: unload `s` after its keep-alive unless a use comes first.
    private func scheduleIdle(_ s: inout Slot) {
        guard s.model.keepAlive > 0, case .ready = s.phase else { return }
        let (name, generation, delay) = (s.model.name, s.generation, s.model.keepAlive)
        Task.detached { [self] in
            guard (try? await Task.sleep(for: .seconds(delay))) != nil else { return }
            expire(name, generation: generation)
        }
    }

    private func expire(_ name: String, generation: Int) {
        slots.withLock { all in
            guard var s = all[name], s.generation == generation, s.uses == 0, case .ready(let e) = s.phase else { return }
            s.unloading = unloadTask(name, e, reason: "idle for \(s.model.keepAlive) s")
            s.phase = .unloading
            all[name] = s
        }
    }

    /// Saves the engine's KV prefixes and stops it, off the lock, then drops the last
    /// reference (its memory goes with it) before the model reads `unloaded`.
    private func unloadTask(_ name: String, _ engine: Engine, reason: String) -> Task<Void, Never> {
        let held = Handoff(engine)
        return Task.detached { [self] in
            await onOwnThread("parlance-unload") {
                if let engine = held.take() { engine.unload() }
                // The engine is gone: what its buffers freed goes back to the system.
                ProcessMemory.release()
            }
            slots.withLock { all in
                if case .unloading = all[name]?.phase { all[name]?.phase = .unloaded }
            }
            log("model '\(name)' unloaded (\(reason))")
        }
    }

}

/// Runs blocking work (an unload's saves and teardown) on a thread of its own, not one of
/// the concurrency pool's (two on this machine, which message reading needs), and awaits it.
func onOwnThread<T: Sendable>(_ name: String, _ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { c in
        let t = Thread { c.resume(returning: body()) }
        t.name = name
        t.stackSize = 8 << 20
        t.start()
    }
}

extension ModelRegistry.Phase {
    var isReady: Bool { if case .ready = self { return true } else { return false } }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// Which model a request asked for: by name, or by its route keys (its full method name,
/// then its family).
public struct ModelChoice: Sendable {
    public var name: String?
    public var routes: [String]
    public init(name: String? = nil, routes: [String] = []) {
        self.name = name
        self.routes = routes
    }
}

/// The models one request (or one piece of work detached from it) holds, released
/// together when it is answered.
public final class ModelUses: Sendable {
    private let held = Mutex<(names: [String], closed: Bool)>(([], false))  // guards the names held and whether they were released
    public init() {}

    /// Records a use taken; false when already released (the caller releases it at once).
    func add(_ name: String) -> Bool {
        held.withLock { h in
            if h.closed { return false }
            h.names.append(name)
            return true
        }
    }

    /// Releases every use (once).
    public func close(_ registry: ModelRegistry) {
        let names = held.withLock { h -> [String] in
            if h.closed { return [] }
            h.closed = true
            return h.names
        }
        names.forEach(registry.release)
    }
}

/// A model's defaults as its store keeps them (Ollama's `.system` and `.params` layers).
public struct StoreDefaults: Sendable {
    public var systemPrompt: String?
    public var options: GenerationOptions?

    init?(_ m: StoredModel) {
        systemPrompt = m.systemPrompt
        options = m.defaultParameters.flatMap(Self.options)
        if systemPrompt == nil && options == nil { return nil }
    }

    /// Ollama's parameter names mapped to a request's options (the rest, such as `stop` or
    /// `num_ctx`, are not request options here).
    static func options(_ json: String) -> GenerationOptions? {
        guard let v = try? JSONParser.parse(Array(json.utf8)), case .object = v else { return nil }
        var o = GenerationOptions()
        o.temperature = v["temperature"]?.doubleValue
        o.topP = v["top_p"]?.doubleValue
        o.topK = v["top_k"]?.intValue
        o.minP = v["min_p"]?.doubleValue
        o.repeatPenalty = v["repeat_penalty"]?.doubleValue
        o.seed = v["seed"]?.intValue
        return [o.temperature, o.topP, o.minP, o.repeatPenalty].contains { $0 != nil } || o.topK != nil || o.seed != nil ? o : nil
    }
}
