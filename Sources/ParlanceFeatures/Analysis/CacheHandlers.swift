import Foundation
import JSONRPC
import ParlanceJSON
import ParlanceProtocol

/// `analysis/cache/list` and `analysis/cache/clear`.
public enum CacheHandlers {
    public static func list(_ p: AnalysisCacheList.Params, _ ctx: RequestContext) async throws -> AnalysisCacheList.Result {
        if p.uri != nil, p.contentHash != nil {
            throw ResponseError.invalidParams("give 'uri' or 'contentHash', not both", data: ["path": "(root)", "keyword": "oneOf"])
        }
        let cache = ctx.services.analysisCache
        let (all, unlabelled) = await cache.listed()
        var matching = all
        if p.uri != nil || p.contentHash != nil {
            let matches = try await document(uri: p.uri, contentHash: p.contentHash, known: all.map(\.label), ctx)
            matching = all.filter { matches($0.label) }
        }
        let entries = matching.prefix(p.limit ?? 100).map { e in
            CacheEntry(id: e.name, method: e.label.method, contentHashes: e.label.documents, uri: e.label.uri, model: e.label.model,
                       modelIdentity: e.label.modelIdentity, language: e.label.language, checksVersion: e.checks,
                       current: e.checks == AnalysisCache.checksVersion,
                       createdAt: Date(timeIntervalSince1970: e.created).ISO8601Format(), bytes: e.bytes, inMemory: e.inMemory)
        }
        return .init(entries: Array(entries), total: matching.count, totalBytes: matching.reduce(0) { $0 + $1.bytes },
                     unlabelled: p.uri == nil && p.contentHash == nil ? unlabelled : 0, checksVersion: AnalysisCache.checksVersion)
    }

    public static func clear(_ p: AnalysisCacheClear.Params, _ ctx: RequestContext) async throws -> AnalysisCacheClear.Result {
        let given = [p.uri != nil, p.contentHash != nil, p.all != nil].filter { $0 }.count
        if given == 0 {
            throw ResponseError.invalidParams("give 'uri' or 'contentHash' to clear one document, or 'all': true to clear everything",
                                              data: ["path": "(root)", "keyword": "required"])
        }
        if given > 1 {
            throw ResponseError.invalidParams("give one of 'uri', 'contentHash' and 'all', not several", data: ["path": "(root)", "keyword": "oneOf"])
        }
        let cache = ctx.services.analysisCache
        if let all = p.all {
            guard all else {
                throw ResponseError.invalidParams("'all' must be true (it clears every entry); to clear one document give 'uri' or 'contentHash'",
                                                  data: ["path": "all", "keyword": "const"])
            }
            return .init(removed: await cache.removeAll())
        }
        let known = await cache.listed().entries.map(\.label)
        let matches = try await document(uri: p.uri, contentHash: p.contentHash, known: known, ctx)
        return .init(removed: await cache.remove(where: matches))
    }

    /// Which entries belong to the document: by `contentHash`, those made from that text; by
    /// `uri`, those asked for under it and those of its current text when it is open. A uri
    /// neither open nor named by any entry (`known`) is notFound.
    static func document(uri: String?, contentHash: String?, known: [AnalysisCache.Label],
                         _ ctx: RequestContext) async throws -> @Sendable (AnalysisCache.Label) -> Bool {
        if let contentHash { return { $0.documents.contains(contentHash) } }
        let uri = uri ?? ""
        let current = await ctx.document(uri)?.contentHash
        if current == nil, !known.contains(where: { $0.uri == uri }) { throw ErrorMapping.notFound("document", uri) }
        return { label in label.uri == uri || current.map { label.documents.contains($0) } == true }
    }
}
