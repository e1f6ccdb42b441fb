import Foundation
import Synchronization
import JSONRPC
import ParlanceEngine
import ParlanceJSON
import ParlanceModelStores
import ParlanceProtocol
import ParlanceRemote

/// `model/status`, `model/list`, `model/load`: the registry as clients see it, availability
/// the way `SystemLanguageModel.availability` reports it.
public enum Models {
    /// (An unknown name was refused with the request's other params: `ModelSelecting`.)
    public static func status(_ p: ModelStatus.Params, _ ctx: RequestContext) async -> ModelStatus.Result {
        await status(ctx.services, name: p.model)
    }

    /// Loads the model (as a first request would) and answers its status; a model that
    /// cannot load is the same -32001 a request for it gets.
    public static func load(_ p: ModelLoad.Params, _ ctx: RequestContext) async throws -> ModelLoad.Result {
        let name = try ctx.modelName()
        _ = try await ctx.engine(model: name)
        return await status(ctx.services, name: name)
    }

    public static func list(_ s: Services) async -> ModelList.Result {
        let registry = s.models
        var poolInfo: [String: RemoteModelInfo] = [:]
        for (n, p) in registry.pools { poolInfo[n] = await Self.poolInfo(p) }
        let entries = registry.names.compactMap { registry.snapshot($0) }.map { snap -> ModelList.Entry in
            let (state, reason, message) = describe(snap)
            let routes = registry.settings.routes.filter { $0.value == snap.model.name }.keys.sorted()
            return ModelList.Entry(
                name: snap.model.name, path: snap.model.engine.modelPath, state: state, reason: reason, message: message,
                isDefault: snap.model.name == registry.settings.defaultModel, fileBytes: fileBytes(snap.model.engine.modelPath),
                memory: snap.measured.map(memory), estimatedBytes: snap.estimatedBytes, contextSize: snap.model.engine.contextSize,
                gpuLayersRequested: snap.model.engine.gpuLayers.description, keepAliveSeconds: snap.model.keepAlive,
                activeRequests: snap.uses, idleMs: snap.idle.map { Int($0.inSeconds * 1000) }, loads: snap.loads, routes: routes)
        }.map { e -> ModelList.Entry in
            if let p = registry.pools[e.name], let info = poolInfo[e.name] {
                var e = e
                e.state = .ready
                e.path = info.url
                e.contextSize = p.contextSize
                e.gpuLayersRequested = "remote"
                e.remote = info
                return e
            }
            guard let r = registry.remotes[e.name] else { return e }
            var e = e
            e.state = .ready
            e.path = r.endpoint.baseURL.absoluteString
            e.contextSize = r.contextSize
            e.gpuLayersRequested = "remote"
            e.remote = remoteInfo(r)
            return e
        }
        var result = ModelList.Result(models: entries, defaultModel: registry.settings.defaultModel,
                                      routes: registry.settings.routes.sorted { $0.key < $1.key }.map { .init(route: $0.key, model: $0.value) },
                                      maxLoadedModels: registry.settings.maxLoadedModels, maxModelBytes: registry.settings.maxModelBytes,
                                      loadedBytes: registry.loadedBytes, residentBytes: ProcessMemory.residentBytes ?? 0, devices: machineReading().devices)
        result.available = available(registry.settings.stores)
        return result
    }

    /// What is on disk in the stores, read from GGUF headers only.
    static func available(_ stores: StoreEnvironment) -> [AvailableModel] {
        var env = stores
        env.availableBytes = env.availableBytes ?? ProcessMemory.availableBytes()
        return ModelCatalogue(env).list().map {
            AvailableModel(name: $0.name, source: $0.source.rawValue, path: $0.path, parts: $0.parts.count, architecture: $0.architecture,
                           parameters: $0.parameters, quantization: $0.quantization, contextLength: $0.contextLength, chatTemplate: $0.hasChatTemplate,
                           supported: $0.architectureSupported, fileBytes: $0.fileBytes, estimatedBytes: $0.estimatedBytes, fits: $0.fits)
        }
    }

    /// `model/pull`: downloads into the Hugging Face cache or Parlance's own folder,
    /// reporting bytes, rate and ETA; the pulled name can be used at once.
    public static func pull(_ p: ModelPull.Params, _ ctx: RequestContext) async throws -> ModelPull.Result {
        let progress = ctx.progress
        let pulled: PulledModel
        do {
            pulled = try await ModelPuller.pull(p.model, environment: ctx.services.models.settings.stores) { r in
                let eta = r.totalBytes.flatMap { total in r.bytesPerSecond > 0 ? Double(total - r.completedBytes) / r.bytesPerSecond : nil }
                progress(.init(kind: .report, message: Self.describe(r, eta: eta),
                               percentage: r.totalBytes.flatMap { $0 > 0 ? min(100, r.completedBytes * 100 / $0) : nil }, phase: .downloading,
                               download: DownloadProgress(file: r.file, completedBytes: r.completedBytes, totalBytes: r.totalBytes,
                                                          bytesPerSecond: r.bytesPerSecond, etaSeconds: eta, resumedBytes: r.resumedBytes)))
            }
        } catch {
            if error.reason == .cancelled { throw CancellationError() }
            var data: JSONObject = ["error": "modelUnavailable", "reason": .string(error.reason.rawValue), "message": .string(error.message),
                                    "model": .string(p.model)]
            if !error.available.isEmpty { data["available"] = .array(error.available.map { .string($0) }) }
            if let n = error.neededBytes { data["neededBytes"] = .int(n) }
            if let f = error.freeBytes { data["freeBytes"] = .int(f) }
            if let u = error.url { data["url"] = .string(u) }
            if let s = error.status { data["status"] = .int(s) }
            throw ResponseError(ErrorCode(rawValue: ProtocolError.modelUnavailable.code), "could not pull \(p.model): \(error.message)", data: .object(data))
        }
        // The store's record and the wire's result are the same fields: one converts to the other.
        return try JSONValue(encoding: pulled).decode()
    }

    /// "12.0 MB of 98.1 MB, 45.2 MB/s, 2 s left".
    static func describe(_ r: PullProgress, eta: Double?) -> String {
        func mb(_ b: Int) -> String { String(format: "%.1f MB", Double(b) / 1e6) }
        var s = mb(r.completedBytes) + (r.totalBytes.map { " of " + mb($0) } ?? "")
        s += String(format: ", %.1f MB/s", r.bytesPerSecond / 1e6)
        if let eta { s += eta < 90 ? String(format: ", %.0f s left", eta) : String(format: ", %.0f min left", eta / 60) }
        return r.file + ": " + s
    }

    /// One model's status (default: the default model), without loading it; a remote
    /// model's server is asked now unless `checkRemote` is false (initialize never waits on one).
    public static func status(_ s: Services, name: String?, checkRemote: Bool = true) async -> ModelStatus.Result {
        let name = name ?? s.models.settings.defaultModel
        var result = if let p = s.models.pools[name] { await poolAvailability(p, check: checkRemote) }
            else if checkRemote, let r = s.models.remotes[name] { await remoteAvailability(r) } else { availability(s, name) }
        result.caches = await caches(s)
        // What a client may ask for before it calls (an unknown name has none).
        result.languages = s.models.snapshot(name)?.languages
        let machine = machineReading()
        result.residentBytes = machine.residentBytes
        result.devices = machine.devices
        return result
    }

    /// The devices and the process's resident memory for `model/status`, read at most every
    /// 250 ms: editors poll it, and asking every backend for its free memory and reading
    /// /proc each time cost more than the rest of it. (`model/list` reads its resident bytes afresh.)
    static func machineReading() -> (devices: [ModelStatus.Device], residentBytes: Int?) {
        let now = ContinuousClock.now
        if let (at, reading) = machineCache.withLock({ $0 }), now - at < .milliseconds(250) { return reading }
        let reading = (readDevices(), ProcessMemory.residentBytes)
        machineCache.withLock { $0 = (now, reading) }
        return reading
    }
    private static let machineCache = Mutex<(ContinuousClock.Instant, ([ModelStatus.Device], Int?))?>(nil)  // guards the last reading

    static func readDevices() -> [ModelStatus.Device] {
        ComputeDevice.all().map {
            .init(name: $0.name, description: $0.description, type: ModelStatus.Device.Kind(rawValue: $0.kind.rawValue) ?? .other,
                  freeBytes: $0.freeBytes, totalBytes: $0.totalBytes)
        }
    }

    static func caches(_ s: Services) async -> ModelStatus.CacheState {
        let documents = await s.documents.usage, analyses = await s.analysisCache.usage
        return .init(documents: documents.count, documentBytes: documents.bytes, documentLimitBytes: s.documents.maxBytes,
                     analyses: analyses.entries, analysisBytes: analyses.bytes,
                     analysisLimitBytes: s.analysisCache.maxBytes, sessions: await s.sessions.count)
    }

    static func fileBytes(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
    }

    static func memory(_ m: MemoryUse) -> ModelMemory {
        ModelMemory(weightsBytes: m.weightsBytes, weightsMapped: m.weightsMapped, kvCacheBytes: m.kvCacheBytes,
                    computeBytes: m.computeBytes, outputBytes: m.outputBytes, totalBytes: m.totalBytes)
    }

    static func reason(_ e: EngineError) -> UnavailableReason {
        switch e {
        case .modelNotFound: return .modelNotFound
        case .notOnDisk(_, let r, _, _, _): return r == "notDownloaded" ? .notDownloaded : r == "invalidName" ? .modelNotFound : .invalidModelFile
        case .contextTooSmall, .contextCreationFailed: return .contextTooSmall
        default: return .invalidModelFile
        }
    }

    /// The model's state, and why it cannot be used when it cannot.
    static func describe(_ snap: ModelRegistry.Snapshot) -> (ModelState, UnavailableReason?, String?) {
        switch snap.phase {
        case .ready: return (.ready, nil, nil)
        case .unloading: return (.unloading, nil, nil)
        case .loading: return (.loading, .loading, "the model is loading")
        case .failed(let e): return (.failed, reason(e), e.description)
        case .unloaded: return (.unloaded, snap.problem.map(reason), snap.problem?.description)
        }
    }

    static func remoteInfo(_ r: RemoteModel) -> RemoteModelInfo {
        RemoteModelInfo(url: r.endpoint.baseURL.absoluteString, endpoint: r.endpoint.host, servedModel: r.servedModel, contextSize: r.contextSize,
                        tokenCounts: r.serverCountsTokens ? "server" : "estimated", maxConcurrentRequests: r.endpoint.maxConcurrentRequests,
                        activeCalls: r.activeCalls, timeoutMs: Int(r.endpoint.timeout.inSeconds * 1000), apiKey: r.client.hasKey)
    }

    /// A pool as `model/status` and `model/list` report it: its endpoints' URLs and hosts
    /// (comma-separated), and each endpoint's state.
    static func poolInfo(_ p: PoolModel) async -> RemoteModelInfo {
        let eps = await p.endpointInfo()
        var info = RemoteModelInfo(url: p.members.map(\.endpoint.baseURL.absoluteString).joined(separator: ","),
                                   endpoint: p.members.map(\.endpoint.host).joined(separator: ","), servedModel: p.servedModel, contextSize: p.contextSize,
                                   tokenCounts: p.counter.serverCountsTokens ? "server" : "estimated", maxConcurrentRequests: eps.reduce(0) { $0 + $1.capacity },
                                   activeCalls: eps.reduce(0) { $0 + $1.inFlight }, timeoutMs: Int((p.members.map(\.endpoint.timeout).max() ?? .zero).inSeconds * 1000),
                                   apiKey: p.members.contains { $0.client.hasKey })
        info.endpoints = eps
        return info
    }

    /// A pool is available while one endpoint may serve (checked now unless `check` is false).
    static func poolAvailability(_ p: PoolModel, check: Bool) async -> ModelStatus.Result {
        if check { await p.checkNow() }
        var result: ModelStatus.Result
        let info = await poolInfo(p)
        let usable = info.endpoints?.filter { ($0.health == "ready" || $0.health == "unknown") && $0.circuit != "open" } ?? []
        if await p.anyAvailable() {
            result = .init(availability: .available, message: "pool of \(p.members.count) endpoints; \(usable.count) ready (\(usable.map(\.endpoint).joined(separator: ", ")))")
        } else {
            let why = (info.endpoints ?? []).map { "\($0.endpoint): \($0.circuit == "closed" ? $0.health : "circuit \($0.circuit)")\($0.lastError.map { " (\($0))" } ?? "")" }
            result = .init(availability: .unavailable, reason: .remoteUnavailable, message: "no endpoint of the pool can serve: " + why.joined(separator: "; "))
        }
        result.name = p.name
        result.state = .ready
        result.remote = info
        return result
    }

    /// A remote model is available when its server answers `/v1/models` listing it.
    static func remoteAvailability(_ r: RemoteModel) async -> ModelStatus.Result {
        var result: ModelStatus.Result
        let served: [String]?
        switch await r.check() {
        case .success(let models):
            result = .init(availability: .available, message: "served by \(r.endpoint.host)")
            served = models
        case .failure(let e):
            result = .init(availability: .unavailable, reason: .remoteUnavailable, message: e.fault.message)
            served = nil
        }
        result.name = r.name
        result.state = .ready
        result.remote = remoteInfo(r)
        result.remote?.servedModels = served
        return result
    }

    static func availability(_ s: Services, _ name: String) -> ModelStatus.Result {
        if let r = s.models.remotes[name] {
            // Not called here (initialize must not wait on a server): model/status checks it.
            var result = ModelStatus.Result(availability: .available, message: "served by \(r.endpoint.host); model/status checks it")
            result.name = name
            result.state = .ready
            result.remote = remoteInfo(r)
            return result
        }
        guard let snap = s.models.snapshot(name) else {
            return .init(availability: .unavailable, reason: .modelNotFound, message: "no model named '\(name)'")
        }
        let (state, reason, message) = describe(snap)
        var result: ModelStatus.Result
        if case .ready(let engine) = snap.phase {
            let i = engine.info
            let st = engine.stats
            result = .init(
                availability: .available,
                model: ModelDescription(
                    path: i.path, name: i.name, architecture: i.architecture, description: i.description, parameters: i.parameters,
                    fileBytes: i.fileBytes, contextSize: i.contextSize, trainedContextSize: i.trainedContextSize,
                    vocabularySize: i.vocabularySize, chatTemplate: i.chatTemplate, sha256: engine.modelSha256,
                    layers: i.layers, gpuLayers: i.gpuLayers, gpuLayersRequested: engine.config.gpuLayers.description,
                    memory: memory(i.memory), templateFallback: i.chatTemplate ? nil : ChatPrompt.fallbackTemplate),
                engine: .init(sequenceSlots: st.sequenceSlots, freeSlots: st.freeSlots, activeRequests: st.activeRequests,
                              queuedRequests: st.queuedRequests, maxQueue: st.maxQueue, cachedSequences: st.cachedSequences,
                              cachedTokens: st.cachedTokens, threads: engine.config.threads))
        } else if let reason {
            result = .init(availability: .unavailable, reason: reason, message: message)
        } else {
            // Unloaded, and its file checks out: the first request loads it.
            result = .init(availability: .available, message: "not loaded; the first request that needs it loads it")
        }
        result.name = name
        result.state = state
        return result
    }
}
