import Foundation

/// A loaded model's memory, as llama.cpp reports it while allocating (its own "buffer
/// size" lines at load): the weights (mapped from the file, or copied), the KV cache, the
/// compute buffers the scheduler reserved, and the logits output buffer. Summed over
/// devices; KV caches are all added (a sliding-window model has two), while a device's
/// later report of another buffer replaces its earlier one (the scheduler reserves again).
public struct MemoryUse: Sendable, Hashable {
    public var weightsBytes: Int
    public var weightsMapped: Bool
    public var kvCacheBytes: Int
    public var computeBytes: Int
    public var outputBytes: Int

    public var totalBytes: Int { weightsBytes + kvCacheBytes + computeBytes + outputBytes }

    public init(weightsBytes: Int, weightsMapped: Bool, kvCacheBytes: Int, computeBytes: Int, outputBytes: Int) {
        self.weightsBytes = weightsBytes
        self.weightsMapped = weightsMapped
        self.kvCacheBytes = kvCacheBytes
        self.computeBytes = computeBytes
        self.outputBytes = outputBytes
    }

    /// From lines like `load_tensors:   CPU_Mapped model buffer size =    92.10 MiB`.
    public static func parse(_ lines: [String]) -> MemoryUse {
        var last: [String: [String: Double]] = [:]  // buffer kind → device → MiB
        var mapped = false
        for line in lines {
            guard let r = line.range(of: " buffer size =") else { continue }
            let words = line[..<r.lowerBound].split(separator: " ")
            guard words.count >= 2 else { continue }
            let kind = String(words[words.count - 1]), device = String(words[words.count - 2])
            let rest = line[r.upperBound...].trimmingCharacters(in: .whitespaces)
            guard let number = rest.split(separator: " ").first.flatMap({ Double($0) }), rest.contains("MiB") else { continue }
            if kind == "KV" {
                last[kind, default: [:]]["\(device)#\(last[kind]?.count ?? 0)"] = number
            } else {
                last[kind, default: [:]][device] = number
            }
            if kind == "model", device.hasSuffix("_Mapped") { mapped = true }
        }
        func bytes(_ kind: String) -> Int { Int(((last[kind] ?? [:]).values.reduce(0, +) * 1_048_576).rounded()) }
        return MemoryUse(weightsBytes: bytes("model"), weightsMapped: mapped, kvCacheBytes: bytes("KV"),
                         computeBytes: bytes("compute"), outputBytes: bytes("output"))
    }
}

extension MemoryUse {
    /// Layers llama.cpp says it put on a GPU (`offloaded 31/31 layers to GPU`), when it says.
    public static func offloadedLayers(_ lines: [String]) -> Int? {
        for line in lines.reversed() {
            guard let r = line.range(of: "offloaded "), line.contains("layers to GPU") else { continue }
            if let n = line[r.upperBound...].split(separator: "/").first.flatMap({ Int($0) }) { return n }
        }
        return nil
    }
}

extension ProcessMemory {
    /// Memory the system could give this process now without swapping (Linux:
    /// MemAvailable in /proc/meminfo), or nil where unknown.
    public static func availableBytes() -> Int? {
        guard let s = try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8) else { return nil }
        for line in s.split(separator: "\n") where line.hasPrefix("MemAvailable:") {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            if parts.count >= 2, let kib = Int(parts[1]) { return kib * 1024 }
        }
        return nil
    }

    /// The daemon's resident set size (Linux: /proc/self/statm), or nil where unavailable.
    public static var residentBytes: Int? {
        guard let s = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = s.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
