import Foundation

/// Reads a GGUF file's header and metadata in Swift, with every length bounds-checked,
/// before llama.cpp sees it: llama.cpp asserts (aborting the process) on some malformed
/// files, and a bad model file must never take the daemon down.
public struct GGUFInfo: Sendable, Hashable {
    public var version: Int
    public var tensorCount: Int
    public var metadata: [String: String]  // scalar and string values; arrays summarised
    /// The string arrays of `GGUFInfo.listKeys`, whole.
    public var lists: [String: [String]] = [:]
    /// Arrays read whole (the others are summarised as "[n items]").
    public static let listKeys: Set<String> = ["general.languages"]
    /// The languages the model card names (`general.languages`, ISO 639 codes by the GGUF spec).
    public var languages: [String]? { lists["general.languages"] }
    public var architecture: String? { metadata["general.architecture"] }
    public var name: String? { metadata["general.name"] }
    public var contextLength: Int? { architecture.flatMap { metadata["\($0).context_length"] }.flatMap { Int($0) } }
    public var hasChatTemplate: Bool { metadata["tokenizer.chat_template"] != nil }

    public init(version: Int, tensorCount: Int, metadata: [String: String]) {
        self.version = version
        self.tensorCount = tensorCount
        self.metadata = metadata
    }
}

public enum GGUFInspector {
    /// `searched`: where a default model was looked for (named in the error when none was found).
    public static func inspect(path: String, searched: [String] = []) throws(EngineError) -> GGUFInfo {
        guard FileManager.default.fileExists(atPath: path) else { throw .modelNotFound(path: path, searched: searched) }
        guard let fh = FileHandle(forReadingAtPath: path) else {
            throw .invalidModelFile(path: path, reason: "cannot open the file for reading")
        }
        defer { try? fh.close() }
        let size = Int((try? fh.seekToEnd()) ?? 0)
        // Metadata (vocabularies included) fits in the first 64 MB of any sane model; read
        // 4 MB first (most models' whole header) and more only when the header goes on.
        var want = min(size, 4 << 20)
        while true {
            try? fh.seek(toOffset: 0)
            let head = (try? fh.read(upToCount: want)) ?? Data()
            do {
                return try parse([UInt8](head), fileSize: size)
            } catch let e as GGUFError {
                if e.needsMore, want < min(size, 64 << 20) {
                    want = min(size, 64 << 20, want * 4)
                    continue
                }
                throw .invalidModelFile(path: path, reason: e.reason)
            } catch {
                throw .invalidModelFile(path: path, reason: "\(error)")
            }
        }
    }

    struct GGUFError: Error {
        let reason: String
        /// The header runs past the bytes read (which may be fewer than the file's).
        var needsMore = false
    }

    static func parse(_ b: [UInt8], fileSize: Int) throws -> GGUFInfo {
        if fileSize == 0 { throw GGUFError(reason: "the file is empty") }
        var r = Reader(b: b)
        guard b.count >= 4, b[0] == 0x47, b[1] == 0x47, b[2] == 0x55, b[3] == 0x46 else {
            throw GGUFError(reason: "not a GGUF file (bad magic number)")
        }
        r.i = 4
        let version = Int(try r.u32())
        guard version == 2 || version == 3 else { throw GGUFError(reason: "unsupported GGUF version \(version)") }
        let tensors = try r.u64()
        let kvs = try r.u64()
        guard tensors < 1_000_000, kvs < 1_000_000 else { throw GGUFError(reason: "implausible tensor or metadata count") }
        var meta: [String: String] = [:]
        var lists: [String: [String]] = [:]
        for _ in 0..<kvs {
            let key = try r.string()
            let type = try r.u32()
            if type == 9, GGUFInfo.listKeys.contains(key) {
                let (summary, strings) = try r.array(depth: 0, keep: true)
                meta[key] = summary
                lists[key] = strings
            } else {
                meta[key] = try r.value(type: type, depth: 0)
            }
        }
        var extents: [(name: String, offset: UInt64, bytes: UInt64?)] = []
        for _ in 0..<tensors {
            let name = try r.string()
            let dims = try r.u32()
            guard dims >= 1, dims <= 4 else { throw GGUFError(reason: "tensor '\(name)' with \(dims) dimensions") }
            var elements: UInt64 = 1
            for _ in 0..<dims {
                let (product, overflow) = elements.multipliedReportingOverflow(by: try r.u64())
                guard !overflow, product < 1 << 48 else { throw GGUFError(reason: "tensor '\(name)' has an implausible shape") }
                elements = product
            }
            let type = try r.u32()
            guard type < 64 else { throw GGUFError(reason: "tensor '\(name)' has unknown type \(type)") }
            let offset = try r.u64()
            guard offset < UInt64(fileSize) else { throw GGUFError(reason: "tensor '\(name)' data beyond the end of the file (truncated?)") }
            extents.append((name, offset, blockLayout[type].map { elements / $0.elements * $0.bytes }))
        }
        guard r.i < fileSize else { throw GGUFError(reason: "file truncated after the tensor table") }
        // Tensor offsets count from the data section, which starts at the next multiple of
        // the alignment after the tensor table.
        let alignment = UInt64(meta["general.alignment"].flatMap { Int($0) } ?? 32)
        guard alignment > 0, alignment <= 1 << 20 else { throw GGUFError(reason: "implausible alignment \(alignment)") }
        let dataStart = (UInt64(r.i) + alignment - 1) / alignment * alignment
        for t in extents {
            let end = dataStart + t.offset + (t.bytes ?? 0)
            guard end <= UInt64(fileSize) else {
                throw GGUFError(reason: "tensor '\(t.name)' ends at byte \(end), past the end of the \(fileSize)-byte file (truncated?)")
            }
        }
        var info = GGUFInfo(version: version, tensorCount: Int(tensors), metadata: meta)
        info.lists = lists
        return info
    }

    /// Elements per block and bytes per block of the ggml tensor types whose layout is
    /// fixed and common (F32, F16, BF16, the legacy and K quantizations). Other types are
    /// checked by their offset only, and by llama.cpp's own bounds check.
    static let blockLayout: [UInt32: (elements: UInt64, bytes: UInt64)] = [
        0: (1, 4), 1: (1, 2), 30: (1, 2),                                    // F32, F16, BF16
        2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34),     // Q4_0, Q4_1, Q5_0, Q5_1, Q8_0
        10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210),  // Q2_K … Q6_K
    ]

    struct Reader {
        let b: [UInt8]
        var i = 0
        /// Bytes per element of the fixed-width metadata types (arrays of them are skipped whole).
        static let widths: [UInt32: Int] = [0: 1, 1: 1, 7: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 10: 8, 11: 8, 12: 8]
        mutating func bytes(_ n: Int) throws -> ArraySlice<UInt8> {
            guard n >= 0, n <= b.count - i else { throw GGUFError(reason: "metadata truncated at byte \(i)", needsMore: n >= 0) }
            defer { i += n }
            return b[i..<(i + n)]
        }
        mutating func int<T: FixedWidthInteger>(_: T.Type) throws -> T {
            let s = try bytes(MemoryLayout<T>.size)
            return s.reversed().reduce(T(0)) { $0 << 8 | T($1) }
        }
        mutating func u32() throws -> UInt32 { try int(UInt32.self) }
        mutating func u64() throws -> UInt64 { try int(UInt64.self) }
        mutating func string() throws -> String {
            let n = try u64()
            guard n < 16 << 20 else { throw GGUFError(reason: "string of \(n) bytes in metadata") }
            return String(decoding: try bytes(Int(n)), as: UTF8.self)
        }
        mutating func value(type: UInt32, depth: Int) throws -> String {
            switch type {
            case 0: return String(try int(UInt8.self))
            case 1: return String(try int(Int8.self))
            case 2: return String(try int(UInt16.self))
            case 3: return String(try int(Int16.self))
            case 4: return String(try u32())
            case 5: return String(try int(Int32.self))
            case 6: return String(Float(bitPattern: try u32()))
            case 7: return try int(UInt8.self) != 0 ? "true" : "false"
            case 8: return try string()
            case 9: return try array(depth: depth, keep: false).summary
            case 10: return String(try u64())
            case 11: return String(try int(Int64.self))
            case 12: return String(Double(bitPattern: try u64()))
            default: throw GGUFError(reason: "unknown metadata value type \(type)")
            }
        }

        /// An array value: summarised as "[n items]"; with `keep`, an array of strings is
        /// also returned whole (nil for other element types).
        mutating func array(depth: Int, keep: Bool) throws -> (summary: String, strings: [String]?) {
            guard depth < 2 else { throw GGUFError(reason: "nested arrays too deep") }
            let et = try u32()
            let n = try u64()
            guard n < 10_000_000 else { throw GGUFError(reason: "array of \(n) elements in metadata") }
            var kept: [String]? = nil
            if et == 8 {
                // Vocabularies: skipped by length, no strings made (unless kept).
                if keep { kept = [] }
                for _ in 0..<n {
                    let len = try u64()
                    guard len < 16 << 20 else { throw GGUFError(reason: "string of \(len) bytes in metadata") }
                    let b = try bytes(Int(len))
                    if keep { kept?.append(String(decoding: b, as: UTF8.self)) }
                }
            } else if let width = Reader.widths[et] {
                let (total, overflow) = Int(n).multipliedReportingOverflow(by: width)
                guard !overflow else { throw GGUFError(reason: "array of \(n) elements in metadata") }
                _ = try bytes(total)
            } else {
                for _ in 0..<n { _ = try value(type: et, depth: depth + 1) }
            }
            return ("[\(n) items]", kept)
        }
    }
}
