import Foundation
import JSONRPC
import ParlanceEngine
import ParlanceJSON
import ParlanceModelStores
import ParlanceProtocol
import Synchronization

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
    /// The models served by pools of servers.
    public let pools: [String: PoolModel]
    let slots: Mutex<[String: Slot]>  // guards every model's phase, uses and timers
    /// Models added on demand (a request named a store name or a path), in order.
    private let added = Mutex<[String]>([])  // guards the order they were added in
    let log: @Sendable (String) -> Void

    public init(settings: RegistrySettings, log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.settings = settings
        self.log = log
        remotes = Dictionary(uniqueKeysWithValues: settings.models.compactMap { m in m.remote.map { (m.name, RemoteModel(name: m.name, endpoint: $0)) } })
        pools = Dictionary(uniqueKeysWithValues: settings.models.compactMap { m in m.pool.map { (m.name, PoolModel(name: m.name, spec: $0)) } })
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
        if let remote = remotes[name] { return try await acquireRemote(name, remote.prepare, remote) }
        if let pool = pools[name] { return try await acquireRemote(name, pool.prepare, pool) }
        try relocate(name)
        // The budget counts a first load's KV cache from the file's header.
        if loadedEngine(name) == nil { _ = snapshot(name) }
        switch try claim(name) {
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

    /// A model served elsewhere: pinned, then checked to answer (released again if not).
    private func acquireRemote(_ name: String, _ prepare: () async throws -> Void, _ remote: any LanguageModel) async throws -> any LanguageModel {
        slots.withLock { all in
            all[name]?.uses += 1
            all[name]?.lastUsed = .now
        }
        do { try await prepare() } catch {
            release(name)
            throw error
        }
        return remote
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
        if let p = pools[name] { return p.countTokens(text) }
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
        /// The file's header, once read (nil: served elsewhere, or the file failed).
        public var header: GGUFInfo? = nil
        /// The output languages it writes well: the config file's, else its file's, else the table.
        public var languages: ModelLanguages { .of(config: model.languages, gguf: header?.languages) }
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
        if info == nil && !m.servedElsewhere {
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
                        measured: s.measured, estimatedBytes: max(s.measured?.totalBytes ?? 0, Self.estimate(m, info)), problem: problem,
                        header: info)
    }

    /// The output languages model `name` writes well (its header read once, not loaded);
    /// a name not registered gets the fixed table.
    public func languages(_ name: String) -> ModelLanguages {
        snapshot(name)?.languages ?? .table
    }

    /// What the budget counts for the loaded models.
    public var loadedBytes: Int {
        slots.withLock { all in all.values.reduce(0) { $0 + (Self.holds($1) ? Self.bytes($1) : 0) } }
    }
}

extension ModelRegistry.Phase {
    var isReady: Bool { if case .ready = self { return true } else { return false } }
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
