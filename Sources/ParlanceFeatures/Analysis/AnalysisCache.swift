import Foundation
import ParlanceEngine
import ParlanceHash
import ParlanceJSON
import Synchronization

/// Results keyed by (content hash, method, params, model), in memory (LRU, byte-bounded)
/// and on disk under the user cache dir, so a repeated request answers at once, even
/// after a restart. Disk writes are atomic (temp file + rename, mode 0600); a corrupt
/// file is ignored, replaced, and logged.
public actor AnalysisCache {
    private var memory: [String: (data: Data, tick: UInt64)] = [:]
    private var bytes = 0
    private var tick: UInt64 = 0
    public let maxBytes: Int
    public let directory: String?
    public let onWarning: @Sendable (String) -> Void

    public init(directory: String?, maxBytes: Int = 32 << 20, onWarning: @escaping @Sendable (String) -> Void = { _ in }) {
        self.directory = directory
        self.maxBytes = maxBytes
        self.onWarning = onWarning
        if let directory { try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]) }
    }

    /// Entries and bytes held in memory, read in one hop (`model/status`).
    public var usage: (entries: Int, bytes: Int) { (memory.count, bytes) }

    public func get<T: Decodable>(_ key: String) -> T? {
        let name = SHA256.hex(key)
        if let hit = memory[name] {
            tick += 1
            memory[name]!.tick = tick
            return try? JSONDecoder().decode(T.self, from: hit.data)
        }
        guard let path = path(for: name), let data = FileManager.default.contents(atPath: path) else { return nil }
        do {
            let v = try JSONDecoder().decode(T.self, from: data)
            remember(name, data)
            return v
        } catch {
            onWarning("ignoring corrupt cache file \(path): \(error)")
            try? FileManager.default.removeItem(atPath: path)
            return nil
        }
    }

    public func put<T: Encodable>(_ key: String, _ value: T) {
        guard let data = try? JSONEncoder().encode(value) else { return }
        let name = SHA256.hex(key)
        remember(name, data)
        if let path = path(for: name) {
            do { try AtomicFile.write(data, to: path) } catch { onWarning("could not write cache file \(path): \(error)") }
        }
    }

    /// Drops every entry whose key began with `prefix` (memory only: disk entries are
    /// content-addressed, so changed content simply misses).
    public func clearMemory() {
        memory = [:]
        bytes = 0
    }

    private func remember(_ name: String, _ data: Data) {
        if let old = memory[name] { bytes -= old.data.count }
        tick += 1
        memory[name] = (data, tick)
        bytes += data.count
        while bytes > maxBytes, let victim = memory.min(by: { $0.value.tick < $1.value.tick }) {
            bytes -= victim.value.data.count
            memory[victim.key] = nil
        }
    }

    private func path(for name: String) -> String? {
        directory.map { "\($0)/\(name).json" }
    }

    /// The cache key for an analysis: what was analysed, how, and by which model.
    public static func key(method: String, input: AnalysisInput, params: some Encodable, engine: any LanguageModel) -> String {
        var p = (try? JSONValue(encoding: params))?.objectValue ?? JSONObject()
        p["workDoneToken"] = nil
        p["text"] = nil
        p["uri"] = nil
        return [method, input.contentHash, JSONValue.object(p).serialized(sortKeys: true), input.language.language, engine.identity,
                "checks=\(checksVersion)"].joined(separator: "|")
    }

    /// Raised whenever the checks and repairs change what a result holds, so that a cache
    /// written by an older daemon is not served as this one's result.
    /// 2: takeaways and topics grounded in the transcript, audiences that describe people.
    static let checksVersion = 5
}

/// Crash-safe file writes: a reader sees the old file or the new one, never half of one.
public enum AtomicFile {
    public static func write(_ data: Data, to path: String) throws {
        let dir = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let tmp = "\(path).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        guard FileManager.default.createFile(atPath: tmp, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown)
        }
        if rename(tmp, path) != 0 {
            try? FileManager.default.removeItem(atPath: tmp)
            throw CocoaError(.fileWriteUnknown)
        }
    }
}
