import Foundation

/// What the analysis cache holds, read from the entries themselves (each carries its label,
/// checks version and time), and removing entries by what they are: `analysis/cache/list`
/// and `analysis/cache/clear`.
extension AnalysisCache {
    /// One entry as listed: its name (the SHA-256 of its key), what it is, when it was made,
    /// under which checks, its size and whether it is held in memory too.
    public struct Listed: Sendable {
        public var name: String
        public var label: Label
        public var checks: Int
        public var created: Double
        public var bytes: Int
        public var inMemory: Bool
    }

    /// The parts of a stored entry the index reads (its value is skipped).
    struct Header: Decodable {
        var checks: Int
        var label: Label?
        var created: Double?
    }

    /// Every labelled entry, newest first, and how many entries have no label (made before
    /// entries carried one: only `removeAll` removes those).
    public func listed() -> (entries: [Listed], unlabelled: Int) {
        var entries: [Listed] = []
        var unlabelled = 0
        for (name, data) in storedEntries() {
            guard let header = try? JSONDecoder().decode(Header.self, from: data), let label = header.label else {
                unlabelled += 1
                continue
            }
            entries.append(Listed(name: name, label: label, checks: header.checks, created: header.created ?? 0, bytes: data.count,
                                  inMemory: memory[name] != nil))
        }
        entries.sort { ($0.created, $0.name) > ($1.created, $1.name) }
        return (entries, unlabelled)
    }

    /// Removes the labelled entries `matches` accepts, in memory and on disk; how many.
    public func remove(where matches: @Sendable (Label) -> Bool) -> Int {
        var removed = 0
        for (name, data) in storedEntries() {
            guard let label = (try? JSONDecoder().decode(Header.self, from: data))?.label, matches(label) else { continue }
            drop(name)
            removed += 1
        }
        return removed
    }

    /// Removes every entry, labelled or not (a corrupt file too); how many.
    public func removeAll() -> Int {
        let names = Set(memory.keys).union(diskNames())
        for name in names { drop(name) }
        return names.count
    }

    /// Every entry by name, from memory or else from disk.
    private func storedEntries() -> [(name: String, data: Data)] {
        var out = memory.map { (name: $0.key, data: $0.value.data) }
        for name in diskNames() where memory[name] == nil {
            guard let path = path(for: name), let data = FileManager.default.contents(atPath: path) else { continue }
            out.append((name, data))
        }
        return out
    }

    /// The names of the entries on disk (`<sha256>.json`; temporary files are not entries).
    private func diskNames() -> [String] {
        guard let directory, let files = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        return files.compactMap { f in
            guard f.hasSuffix(".json") else { return nil }
            let name = String(f.dropLast(5))
            return name.count == 64 && name.allSatisfy(\.isHexDigit) ? name : nil
        }
    }

    private func drop(_ name: String) {
        if let old = memory.removeValue(forKey: name) { bytes -= old.data.count }
        guard let path = path(for: name), FileManager.default.fileExists(atPath: path) else { return }
        do { try FileManager.default.removeItem(atPath: path) } catch { onWarning("could not remove cache file \(path): \(error)") }
    }
}
