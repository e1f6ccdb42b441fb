import ParlanceEngine
import ParlanceProtocol

/// `model/status`: availability the way `SystemLanguageModel.availability` reports it.
public enum Models {
    public static func status(_ services: Services, wait: Bool) async -> ModelStatus.Result {
        var result = await availability(services, wait: wait)
        result.caches = await caches(services)
        result.residentBytes = ProcessMemory.residentBytes
        result.devices = ComputeDevice.all().map {
            .init(name: $0.name, description: $0.description, type: ModelStatus.Device.Kind(rawValue: $0.kind.rawValue) ?? .other,
                  freeBytes: $0.freeBytes, totalBytes: $0.totalBytes)
        }
        return result
    }

    static func caches(_ s: Services) async -> ModelStatus.CacheState {
        .init(documents: await s.documents.all.count, documentBytes: await s.documents.byteCount, documentLimitBytes: s.documents.maxBytes,
              analyses: await s.analysisCache.entryCount, analysisBytes: await s.analysisCache.byteCount,
              analysisLimitBytes: s.analysisCache.maxBytes, sessions: await s.sessions.count)
    }

    static func availability(_ services: Services, wait: Bool) async -> ModelStatus.Result {
        if wait { _ = try? await services.models.engine() }
        switch services.models.current {
        case .loading:
            return .init(availability: .unavailable, reason: .loading, message: "the model is loading")
        case .failed(let e):
            let reason: UnavailableReason
            switch e {
            case .modelNotFound: reason = .modelNotFound
            case .contextTooSmall, .contextCreationFailed: reason = .contextTooSmall
            default: reason = .invalidModelFile
            }
            return .init(availability: .unavailable, reason: reason, message: e.description)
        case .ready(let engine):
            let i = engine.info
            let s = engine.stats
            return .init(
                availability: .available,
                model: ModelDescription(
                    path: i.path, name: i.name, architecture: i.architecture, description: i.description, parameters: i.parameters,
                    fileBytes: i.fileBytes, contextSize: i.contextSize, trainedContextSize: i.trainedContextSize,
                    vocabularySize: i.vocabularySize, chatTemplate: i.chatTemplate, sha256: engine.modelSha256,
                    layers: i.layers, gpuLayers: i.gpuLayers, gpuLayersRequested: engine.config.gpuLayers.description,
                    memory: ModelMemory(weightsBytes: i.memory.weightsBytes, weightsMapped: i.memory.weightsMapped, kvCacheBytes: i.memory.kvCacheBytes,
                                        computeBytes: i.memory.computeBytes, outputBytes: i.memory.outputBytes, totalBytes: i.memory.totalBytes)),
                engine: .init(sequenceSlots: s.sequenceSlots, freeSlots: s.freeSlots, activeRequests: s.activeRequests,
                              queuedRequests: s.queuedRequests, maxQueue: s.maxQueue, cachedSequences: s.cachedSequences,
                              cachedTokens: s.cachedTokens, threads: engine.config.threads))
        }
    }
}
