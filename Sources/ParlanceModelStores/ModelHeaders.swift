import Foundation
import ParlanceEngine

/// What a listing needs from a GGUF header (read by `GGUFInspector`), small enough to keep
/// in the model index.
struct HeaderSummary: Codable, Sendable, Hashable {
    enum State: String, Codable, Sendable {
        case ok
        /// Not a GGUF file at all (no magic number): not a model llama.cpp can load.
        case notGGUF
        /// A GGUF file whose header does not parse (truncated, corrupt).
        case unreadable
    }
    var state: State
    var problem: String?
    var architecture: String?
    var sizeLabel: String?
    var generalName: String?
    var fileType: Int?
    var contextLength: Int?
    var hasChatTemplate: Bool = false
    /// An f16 KV cache at `ModelHeaders.estimateContext` tokens (or the model's context, if smaller).
    var kvBytes: Int?
    var computeBytes: Int?
}

enum ModelHeaders {
    /// The context the memory estimate assumes: the model's own when smaller.
    static let estimateContext = 4096

    /// Reads the header of the GGUF at `path` (a split model's first part).
    static func summarize(path: String) -> HeaderSummary {
        guard StoreFiles.hasGGUFMagic(path) else {
            return HeaderSummary(state: .notGGUF, problem: "not a GGUF file (no GGUF magic number)")
        }
        let info: GGUFInfo
        do {
            info = try GGUFInspector.inspect(path: path)
        } catch {
            return HeaderSummary(state: .unreadable, problem: "\(error)")
        }
        let meta = info.metadata
        let context = info.contextLength
        let kv = KVCacheTypes.bytes(.init(keys: .f16, values: .f16), contextSize: min(context ?? estimateContext, estimateContext), header: info)
        return HeaderSummary(
            state: .ok, architecture: info.architecture, sizeLabel: meta["general.size_label"].flatMap { $0.isEmpty ? nil : $0 },
            generalName: info.name, fileType: meta["general.file_type"].flatMap { Int($0) }, contextLength: context,
            hasChatTemplate: info.hasChatTemplate, kvBytes: kv, computeBytes: computeAllowance(info))
    }

    /// The compute buffers llama.cpp reserves for a 512-token micro-batch: about eight f32
    /// activations of the embedding width and two of the feed-forward width per token, and
    /// 16 MiB of fixed overhead (SmolLM2-135M: 31 MiB against the 9 MiB llama.cpp reports
    /// with flash attention, so an over-estimate); 64 MiB when the header gives no widths.
    static func computeAllowance(_ info: GGUFInfo) -> Int {
        guard let arch = info.architecture,
              let embd = info.metadata["\(arch).embedding_length"].flatMap({ Int($0) }) else { return 64 << 20 }
        let ff = info.metadata["\(arch).feed_forward_length"].flatMap { Int($0) } ?? 4 * embd
        let tokens = 512
        return tokens * embd * 4 * 8 + tokens * ff * 4 * 2 + (16 << 20)
    }
}

/// Header summaries kept between listings in `$XDG_CACHE_HOME/parlance/model-index.json`
/// (Parlance's own cache), keyed by a file's real path, size and modification time, so a
/// warm listing reads no model file: reading a header costs milliseconds (SmolLM2-135M: 22
/// ms in a release build, its 49,152-token vocabulary walked), a stat microseconds, and
/// listing 50 models took 1.1 s without the index and 2.4 ms with it. Paths that are hard
/// links to one file (the same device, inode, size and time) share one reading.
struct ModelIndex {
    struct Entry: Codable, Sendable {
        var size: Int
        var modified: Int64
        var device: UInt64
        var inode: UInt64
        var summary: HeaderSummary
    }
    struct Stored: Codable {
        var version: Int
        var entries: [String: Entry]
    }
    /// Raise when `HeaderSummary` or how it is computed changes.
    static let version = 1

    let file: String?
    private var entries: [String: Entry] = [:]
    /// "device:inode" → an entry for that file under some path.
    private var byFile: [String: Entry] = [:]
    private var used: Set<String> = []
    private var changed = false

    /// The index file for `environment` (`$XDG_CACHE_HOME/parlance`, else `~/.cache/parlance`).
    static func location(_ environment: StoreEnvironment) -> String {
        let base = environment.variables["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? environment.home + "/.cache"
        return base + "/parlance/model-index.json"
    }

    init(environment: StoreEnvironment) {
        let file = ModelIndex.location(environment)
        self.file = file
        if let data = FileManager.default.contents(atPath: file),
           let stored = try? JSONDecoder().decode(Stored.self, from: data), stored.version == ModelIndex.version {
            entries = stored.entries
            for e in stored.entries.values { byFile["\(e.device):\(e.inode)"] = e }
        }
    }

    /// The summary of the file at `path` (links followed): from the index when its real
    /// path, size and time match, else read now (and kept). Nil when the file is absent.
    mutating func summary(of path: String) -> (HeaderSummary, StoreFiles.Status)? {
        guard let real = StoreFiles.realPath(path), let st = StoreFiles.status(real), st.isRegular else { return nil }
        used.insert(real)
        if let e = entries[real], e.size == st.size, e.modified == st.modified, e.device == st.device, e.inode == st.inode {
            return (e.summary, st)
        }
        let fileKey = "\(st.device):\(st.inode)"
        let summary: HeaderSummary
        if let other = byFile[fileKey], other.size == st.size, other.modified == st.modified {
            summary = other.summary
        } else {
            summary = ModelHeaders.summarize(path: real)
        }
        let entry = Entry(size: st.size, modified: st.modified, device: st.device, inode: st.inode, summary: summary)
        entries[real] = entry
        byFile[fileKey] = entry
        changed = true
        return (summary, st)
    }

    /// Writes the index back when it changed (atomically; a failure only costs the next
    /// listing some reading). `prune`: drop entries for files not looked at (after a full listing).
    mutating func save(prune: Bool) {
        if prune {
            let before = entries.count
            entries = entries.filter { used.contains($0.key) }
            if entries.count != before { changed = true }
        }
        guard changed, let file else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(Stored(version: ModelIndex.version, entries: entries)) else { return }
        try? FileManager.default.createDirectory(atPath: StoreFiles.directory(file), withIntermediateDirectories: true)
        if (try? data.write(to: URL(fileURLWithPath: file), options: .atomic)) != nil { changed = false }
    }
}
