import Foundation

/// KV states of long, valuable prefixes (an open document's prompt, a session's
/// history) saved to disk, so a later request — after the in-memory copy was evicted,
/// or after a restart — restores them in milliseconds instead of evaluating them again.
///
/// Each entry is two files under a directory named for the model and KV cache types:
/// `NAME.kv` (llama.cpp's sequence state) and `NAME.tokens` (the tokens it holds, raw
/// little-endian Int32). An entry counts only when both exist; each is written to a
/// temp file (mode 0600) and renamed, the `.tokens` last, so a crash leaves at worst an
/// orphan `.kv`, removed at the next scan. Oldest entries (by modification time, touched
/// on every load) are deleted past `limitBytes`.
///
/// Engine-thread only, like the context it reads and writes.
final class PrefixStore {
    struct Entry {
        let name: String
        let tokens: [Token]
        let bytes: Int
        var used: Date
    }

    /// Prefixes shorter than this are cheaper to evaluate than to keep on disk.
    static let minimumTokens = 256

    private let root: String
    private let fingerprint: () -> String?
    private let limitBytes: Int
    private let warn: @Sendable (String) -> Void
    private var directory: String? = nil
    private var entries: [Entry] = []

    /// `fingerprint` names the model and cache layout, asked on first use; nil (the model
    /// file cannot be read) leaves the store unused.
    init(root: String, fingerprint: @escaping () -> String?, limitBytes: Int, warn: @escaping @Sendable (String) -> Void) {
        self.root = root
        self.fingerprint = fingerprint
        self.limitBytes = limitBytes
        self.warn = warn
    }

    /// The entry sharing the longest prefix with `prompt`, when that prefix beats
    /// `better` tokens (what memory already offers) by at least `minimumTokens`.
    func bestMatch(for prompt: [Token], better: Int) -> (entry: Entry, prefix: Int)? {
        guard open() else { return nil }
        var best: (Entry, Int)? = nil
        for e in entries {
            let l = commonPrefix(e.tokens, prompt)
            if l >= better + PrefixStore.minimumTokens, l > (best?.1 ?? 0) { best = (e, l) }
        }
        return best
    }

    /// Whether a stored entry already covers `tokens` up to `minimumTokens` of its end.
    func covers(_ tokens: [Token]) -> Bool {
        guard open() else { return true }
        return entries.contains { commonPrefix($0.tokens, tokens) + PrefixStore.minimumTokens > tokens.count }
    }

    /// Restores an entry into sequence `seq` (which must be empty). The tokens restored,
    /// or nil (the entry is dropped when llama.cpp refuses it).
    func load(_ entry: Entry, into seq: Int32, ctx: LlamaContext) -> [Token]? {
        guard let dir = directory else { return nil }
        let path = "\(dir)/\(entry.name).kv"
        guard let tokens = ctx.loadSequence(seq, from: path, capacity: entry.tokens.count), tokens == entry.tokens else {
            ctx.removeTokens(seq: seq, from: 0)
            warn("dropping KV state file \(path): llama.cpp could not restore it")
            remove(entry.name)
            return nil
        }
        let now = Date()
        try? FileManager.default.setAttributes([.modificationDate: now], ofItemAtPath: path)
        if let i = entries.firstIndex(where: { $0.name == entry.name }) { entries[i].used = now }
        return tokens
    }

    /// Saves sequence `seq`, holding `tokens`, unless it is short or already stored.
    func save(seq: Int32, tokens: [Token], ctx: LlamaContext) {
        guard tokens.count >= PrefixStore.minimumTokens, open(), !covers(tokens), let dir = directory else { return }
        let name = UUID().uuidString.lowercased()
        let kv = "\(dir)/\(name).kv", list = "\(dir)/\(name).tokens"
        let tmp = "\(dir)/.\(name).tmp"
        guard ctx.saveSequence(seq, tokens: tokens, to: tmp) else {
            try? FileManager.default.removeItem(atPath: tmp)
            warn("could not save the KV state of a \(tokens.count)-token prefix to \(dir)")
            return
        }
        let data = tokens.withUnsafeBytes { Data($0) }
        do {
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: tmp)
            try FileManager.default.moveItem(atPath: tmp, toPath: kv)
            try data.write(to: URL(fileURLWithPath: tmp))
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: tmp)
            try FileManager.default.moveItem(atPath: tmp, toPath: list)
        } catch {
            warn("could not save a KV state file in \(dir): \(error)")
            for p in [tmp, kv, list] { try? FileManager.default.removeItem(atPath: p) }
            return
        }
        let bytes = (try? FileManager.default.attributesOfItem(atPath: kv)[.size] as? Int) ?? 0
        entries.append(Entry(name: name, tokens: tokens, bytes: bytes + data.count, used: Date()))
        trim()
    }

    var byteCount: Int { entries.reduce(0) { $0 + $1.bytes } }

    // MARK: files

    /// Creates the directory and reads its entries, once. False when disabled or unusable.
    private func open() -> Bool {
        if directory != nil { return true }
        guard limitBytes > 0, let fp = fingerprint() else { return false }
        let dir = "\(root)/\(fp)"
        let fm = FileManager.default
        do {
            try fm.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            warn("KV state cache disabled: cannot create \(dir): \(error)")
            return false
        }
        directory = dir
        let names = (try? fm.contentsOfDirectory(atPath: dir)) ?? []
        for n in names where n.hasPrefix(".") && n.hasSuffix(".tmp") { try? fm.removeItem(atPath: "\(dir)/\(n)") }
        for n in names where n.hasSuffix(".kv") {
            let name = String(n.dropLast(3))
            let kv = "\(dir)/\(n)", list = "\(dir)/\(name).tokens"
            guard let data = fm.contents(atPath: list), data.count % 4 == 0, !data.isEmpty,
                  let attrs = try? fm.attributesOfItem(atPath: kv) else {
                warn("removing incomplete KV state file \(kv)")
                try? fm.removeItem(atPath: kv)
                try? fm.removeItem(atPath: list)
                continue
            }
            let tokens = data.withUnsafeBytes { Array($0.bindMemory(to: Token.self)) }
            entries.append(Entry(name: name, tokens: tokens, bytes: ((attrs[.size] as? Int) ?? 0) + data.count,
                                 used: (attrs[.modificationDate] as? Date) ?? .distantPast))
        }
        trim()
        return true
    }

    /// Deletes least recently used entries until the store fits its limit.
    private func trim() {
        while byteCount > limitBytes, let oldest = entries.min(by: { $0.used < $1.used }) { remove(oldest.name) }
    }

    private func remove(_ name: String) {
        guard let dir = directory else { return }
        try? FileManager.default.removeItem(atPath: "\(dir)/\(name).kv")
        try? FileManager.default.removeItem(atPath: "\(dir)/\(name).tokens")
        entries.removeAll { $0.name == name }
    }
}

/// How many leading tokens two token lists share.
func commonPrefix(_ a: [Token], _ b: [Token]) -> Int {
    var i = 0
    let n = min(a.count, b.count)
    while i < n, a[i] == b[i] { i += 1 }
    return i
}
