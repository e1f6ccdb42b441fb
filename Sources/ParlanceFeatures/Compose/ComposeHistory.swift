import Foundation
import JSONRPC
import ParlanceEngine
import ParlanceProtocol

/// Compose history: one JSON file per composition under `<data dir>/history`, written
/// atomically (temp file + rename, mode 0600), so a crash leaves the old entry or the
/// new one and never touches the others; a corrupt or foreign file is skipped with a
/// warning. Ephemeral compositions (and everything under `--no-history`) live only in
/// memory, so they can still be refined until the daemon exits. The token sequences of
/// recent variations are kept in memory too, so a refinement finds them in the KV cache.
public actor ComposeHistory {
    struct Record {
        var entry: ComposeHistoryEntry
        var persisted: Bool
        var hidden: Set<String> = []   // ephemeral refinements of a persisted entry
        var lastNumber: Int
    }

    public let directory: String?
    let onWarning: @Sendable (String) -> Void
    private var records: [String: Record] = [:]
    private var loaded = false
    private var tokenCache: [String: (model: String, tokens: [Token], tick: UInt64)] = [:]
    private var tick: UInt64 = 0
    static let memoryEntries = 64
    static let cachedTokenSequences = 64

    /// `directory` nil: history disabled.
    public init(directory: String?, onWarning: @escaping @Sendable (String) -> Void = { _ in }) {
        self.directory = directory
        self.onWarning = onWarning
    }

    public nonisolated var enabled: Bool { directory != nil }

    // MARK: Entries

    /// Stores a new composition; returns whether it was written to disk.
    func save(_ entry: ComposeHistoryEntry, persist: Bool) -> Bool {
        load()
        let persist = persist && directory != nil
        records[entry.id] = Record(entry: entry, persisted: persist, lastNumber: entry.variations.count)
        if persist { write(entry.id) } else { evictMemoryOnly() }
        return persist && records[entry.id]?.persisted == true
    }

    /// Reserves the next variation number of an entry (ids stay unique under concurrent refines).
    func nextVariationId(_ entryId: String) -> String? {
        guard var r = records[entryId] else { return nil }
        r.lastNumber += 1
        records[entryId] = r
        return "\(entryId).\(r.lastNumber)"
    }

    /// Adds a refined variation; returns whether it was written to disk.
    func add(_ v: ComposeVariation, to entryId: String, persist: Bool) -> Bool {
        guard var r = records[entryId] else { return false }
        // In id order (the order refines arrived), whatever order they finished in.
        let number = { (id: String) in Int(id.split(separator: ".").last ?? "") ?? 0 }
        let at = r.entry.variations.firstIndex { number($0.id) > number(v.id) } ?? r.entry.variations.count
        r.entry.variations.insert(v, at: at)
        if !(persist && r.persisted) { r.hidden.insert(v.id) }
        records[entryId] = r
        if persist && r.persisted { write(entryId) }
        return persist && records[entryId]?.persisted == true
    }

    /// The entry (with every variation, ephemeral ones included) and the variation.
    func variation(_ id: String) -> (ComposeHistoryEntry, ComposeVariation)? {
        load()
        guard let dot = id.lastIndex(of: "."), let r = records[String(id[..<dot])],
              let v = r.entry.variations.first(where: { $0.id == id }) else { return nil }
        return (r.entry, v)
    }

    public func list(limit: Int, offset: Int) -> (entries: [ComposeHistorySummary], total: Int) {
        load()
        let stored = records.values.filter(\.persisted).map(view).sorted { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) }
        let page = stored.dropFirst(offset).prefix(limit).map { e in
            ComposeHistorySummary(id: e.id, createdAt: e.createdAt, preview: String(e.text.prefix(80)), audience: e.audience,
                                  tones: e.variations.filter { $0.parentId == nil }.map(\.tone), variations: e.variations.count)
        }
        return (Array(page), stored.count)
    }

    public func get(_ id: String) throws -> ComposeHistoryEntry {
        load()
        guard let r = records[id], r.persisted else { throw ErrorMapping.notFound("history entry", id) }
        return view(r)
    }

    public func delete(_ id: String) throws {
        load()
        guard let r = records[id], r.persisted, let path = path(id) else { throw ErrorMapping.notFound("history entry", id) }
        records[id] = nil
        if unlink(path) != 0, errno != ENOENT { onWarning("could not delete history entry \(path): errno \(errno)") }
    }

    /// Deletes every stored entry (and any unreadable file in the history directory).
    public func clear() -> Int {
        load()
        let ids = records.values.filter(\.persisted).map(\.entry.id)
        for id in ids { records[id] = nil }
        if let directory, let files = try? FileManager.default.contentsOfDirectory(atPath: directory) {
            for f in files where f.hasSuffix(".json") || f.contains(".json.tmp-") { unlink("\(directory)/\(f)") }
        }
        return ids.count
    }

    // MARK: Token sequences (for refine's prefix reuse)

    /// Keeps a variation's token sequence — `model`'s tokens, usable by that model only.
    func remember(_ tokens: [Token], model: String, for variationId: String) {
        tick += 1
        tokenCache[variationId] = (model, tokens, tick)
        while tokenCache.count > Self.cachedTokenSequences, let old = tokenCache.min(by: { $0.value.tick < $1.value.tick }) {
            tokenCache[old.key] = nil
        }
    }

    func tokens(for variationId: String, model: String) -> [Token]? {
        tokenCache[variationId].flatMap { $0.model == model ? $0.tokens : nil }
    }

    // MARK: Disk

    private func view(_ r: Record) -> ComposeHistoryEntry {
        var e = r.entry
        if !r.hidden.isEmpty { e.variations.removeAll { r.hidden.contains($0.id) } }
        return e
    }

    private func path(_ id: String) -> String? { directory.map { "\($0)/\(id).json" } }

    private func write(_ id: String) {
        guard let r = records[id], let path = path(id) else { return }
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            try AtomicFile.write(try encoder.encode(view(r)), to: path)
        } catch {
            onWarning("could not write history entry \(path): \(error)")
            records[id]?.persisted = false
        }
    }

    /// Reads every entry once, at first use. Unreadable files are skipped, not removed.
    private func load() {
        guard !loaded else { return }
        loaded = true
        guard let directory else { return }
        guard let files = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for f in files.sorted() where f.hasSuffix(".json") {
            let p = "\(directory)/\(f)"
            do {
                guard let data = FileManager.default.contents(atPath: p) else { throw CocoaError(.fileReadUnknown) }
                let e = try JSONDecoder().decode(ComposeHistoryEntry.self, from: data)
                guard "\(e.id).json" == f else { throw CocoaError(.fileReadCorruptFile) }
                let last = e.variations.compactMap { v in v.id.split(separator: ".").last.flatMap { Int($0) } }.max() ?? 0
                records[e.id] = Record(entry: e, persisted: true, lastNumber: last)
            } catch {
                onWarning("skipping unreadable compose history file \(p): \(error)")
            }
        }
    }

    private func evictMemoryOnly() {
        let memoryOnly = records.values.filter { !$0.persisted }
        guard memoryOnly.count > Self.memoryEntries else { return }
        for r in memoryOnly.sorted(by: { $0.entry.createdAt < $1.entry.createdAt }).prefix(memoryOnly.count - Self.memoryEntries) {
            records[r.entry.id] = nil
        }
    }

    // MARK: Ids

    static func newEntryId() -> String {
        "cmp-" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
    }

    static func timestamp(_ date: Date = Date()) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        f.timeZone = TimeZone(identifier: "UTC")
        return f.string(from: date)
    }
}

/// compose/history/* handlers.
public enum ComposeHistoryHandlers {
    public static func list(_ p: ComposeHistoryList.Params, _ ctx: RequestContext) async throws -> ComposeHistoryList.Result {
        let store = ctx.services.composeHistory
        let (entries, total) = await store.list(limit: p.limit ?? 50, offset: p.offset ?? 0)
        return .init(entries: entries, total: total, enabled: store.enabled)
    }

    public static func get(_ p: ComposeHistoryGet.Params, _ ctx: RequestContext) async throws -> ComposeHistoryEntry {
        try await ctx.services.composeHistory.get(p.id)
    }

    public static func delete(_ p: ComposeHistoryGet.Params, _ ctx: RequestContext) async throws -> Empty {
        try await ctx.services.composeHistory.delete(p.id)
        return Empty()
    }

    public static func clear(_ p: Empty, _ ctx: RequestContext) async throws -> ComposeHistoryClear.Result {
        .init(deleted: await ctx.services.composeHistory.clear())
    }
}
