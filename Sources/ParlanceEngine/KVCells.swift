/// A mirror of llama.cpp's unified KV cache, cell by cell: which cells each sequence
/// holds, a cell shared by several sequences (`llama_memory_seq_cp`) counted once, a cell
/// freed when its last sequence lets it go (`llama_memory_seq_rm`). The scheduler admits
/// work and evicts idle prefixes by these counts, before a decode, so `llama_decode` never
/// has to report that no cell was free.
///
/// Engine-thread only (public for its unit tests).
public struct KVCells: Sendable {
    public let capacity: Int
    /// Cell ids per sequence, position by position.
    public private(set) var cells: [[UInt32]]
    /// How many sequences hold each live cell.
    private var holders: [UInt32: Int32] = [:]
    private var nextId: UInt32 = 0

    public init(capacity: Int, sequences: Int) {
        self.capacity = capacity
        cells = Array(repeating: [], count: sequences)
    }

    /// Cells in use by any sequence.
    public var used: Int { holders.count }
    public var free: Int { capacity - used }

    public func count(_ seq: Int) -> Int { cells[seq].count }

    /// `n` new cells at the end of `seq` (tokens decoded or restored into it).
    public mutating func append(_ seq: Int, _ n: Int) {
        guard n > 0 else { return }
        cells[seq].reserveCapacity(cells[seq].count + n)
        for _ in 0..<n {
            cells[seq].append(nextId)
            holders[nextId] = 1
            nextId &+= 1
        }
    }

    /// `dst` (empty) shares `src`'s first `n` cells.
    public mutating func copy(from src: Int, to dst: Int, count n: Int) {
        precondition(cells[dst].isEmpty, "KV copy into a sequence that holds cells")
        let shared = cells[src].prefix(n)
        for c in shared { holders[c, default: 0] += 1 }
        cells[dst] = Array(shared)
    }

    /// Lets go of `seq`'s cells from position `p` on.
    public mutating func truncate(_ seq: Int, from p: Int) {
        guard p < cells[seq].count else { return }
        for c in cells[seq][max(0, p)...] { release(c) }
        cells[seq].removeSubrange(max(0, p)...)
    }

    private mutating func release(_ c: UInt32) {
        guard let n = holders[c] else { return }
        if n <= 1 { holders[c] = nil } else { holders[c] = n - 1 }
    }

    /// Distinct cells held by any of `seqs`.
    public func held(by seqs: some Sequence<Int>) -> Int {
        var seen = Set<UInt32>()
        for s in seqs { seen.formUnion(cells[s]) }
        return seen.count
    }

    /// Cells that truncating `seq` at `p` would free now (held by no other sequence).
    public func freed(truncating seq: Int, from p: Int = 0) -> Int {
        guard p < cells[seq].count else { return 0 }
        return cells[seq][max(0, p)...].reduce(0) { $0 + (holders[$1] == 1 ? 1 : 0) }
    }
}
