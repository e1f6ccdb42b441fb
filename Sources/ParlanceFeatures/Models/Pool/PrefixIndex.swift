import ParlanceEngine

/// What one endpoint probably has cached: the prefixes of the conversations Parlance sent
/// it, as chained hashes of fixed-size blocks of the rendered conversation (a block's hash
/// covers every byte before it, so a match is always a prefix), least recently used first
/// to go. Approximate, like SGLang's per-worker tree; confirmed or corrected by the cached
/// tokens each response reports.
struct PrefixIndex: Sendable {
    /// Block hash → the tick it was last sent or matched at.
    private var blocks: [UInt64: UInt64] = [:]
    private var tick: UInt64 = 0
    let maxBlocks: Int

    init(maxBlocks: Int) { self.maxBlocks = max(16, maxBlocks) }

    var count: Int { blocks.count }

    /// The chained block hashes of a conversation (FNV-1a 64 over role, content and
    /// separators, each block's hash seeded with the one before it). A partial last block
    /// is not hashed: only whole blocks are compared.
    static func hashes(_ messages: [ChatMessage], blockBytes: Int) -> (hashes: [UInt64], totalBytes: Int) {
        var bytes: [UInt8] = []
        for m in messages {
            bytes += Array(m.role.rawValue.utf8)
            bytes.append(1)
            bytes += Array(m.content.utf8)
            bytes.append(2)
        }
        var out: [UInt64] = []
        out.reserveCapacity(bytes.count / blockBytes)
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        var i = 0
        while i + blockBytes <= bytes.count {
            for b in bytes[i..<(i + blockBytes)] {
                h ^= UInt64(b)
                h = h &* 0x100_0000_01b3
            }
            out.append(h)
            i += blockBytes
        }
        return (out, bytes.count)
    }

    /// Leading blocks of `hashes` this endpoint was sent, and the oldest tick among them.
    func match(_ hashes: [UInt64]) -> (blocks: Int, oldest: UInt64?) {
        var n = 0
        var oldest: UInt64? = nil
        for h in hashes {
            guard let t = blocks[h] else { break }
            n += 1
            oldest = min(oldest ?? t, t)
        }
        return (n, oldest)
    }

    /// Records blocks sent (or confirmed) now.
    mutating func record(_ hashes: [UInt64]) {
        tick += 1
        for h in hashes { blocks[h] = tick }
        if blocks.count > maxBlocks {
            // Drop the least recently used quarter at once (amortized O(1) per block).
            let keep = maxBlocks * 3 / 4
            let cut = blocks.values.sorted(by: >)[keep - 1]
            blocks = blocks.filter { $0.value >= cut }
        }
    }

    /// The endpoint evicted what was sent to it at `tick`: everything used no later than
    /// that went first (its cache is LRU too), so it is forgotten.
    mutating func forget(usedBy tick: UInt64) {
        blocks = blocks.filter { $0.value > tick }
    }
}
