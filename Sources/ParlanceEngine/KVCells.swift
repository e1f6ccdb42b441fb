/// A mirror of llama.cpp's unified KV cache, cell by cell: which cells each sequence
/// holds, a cell shared by several sequences (`llama_memory_seq_cp`) counted once, a cell
/// freed when its last sequence lets it go (`llama_memory_seq_rm`). The scheduler admits
/// work and evicts idle prefixes by these counts, before a decode, so `llama_decode` never
/// has to report that no cell was free.
///
/// It also keeps, as cells come and go, how many distinct cells the sequences of running
/// requests hold (`heldByRunning`), which admission checks while a request waits: counted
/// once per change rather than by a set rebuilt at every step.
///
/// Engine-thread only (public for its unit tests).
public struct KVCells: Sendable {
    public let capacity: Int
    /// Cell ids per sequence, position by position.
    public private(set) var cells: [[UInt32]]
    /// How many sequences, and how many running ones, hold each live cell.
    private var holders: [UInt32: Holders] = [:]
    private var nextId: UInt32 = 0
    /// Sequences a running request holds (`setRunning`).
    private var running: [Bool]
    /// Distinct cells held by running sequences.
    public private(set) var heldByRunning = 0

    private struct Holders {
        var all: Int32
        var running: Int32
    }

    public init(capacity: Int, sequences: Int) {
        self.capacity = capacity
        cells = Array(repeating: [], count: sequences)
        running = Array(repeating: false, count: sequences)
    }

    /// Marks `seq` as held by a running request, or no longer.
    public mutating func setRunning(_ seq: Int, _ on: Bool) {
        guard running[seq] != on else { return }
        running[seq] = on
        for c in cells[seq] { countRunning(c, on ? 1 : -1) }
    }

    private mutating func countRunning(_ c: UInt32, _ delta: Int32) {
        guard var h = holders[c] else { return }
        if h.running == 0, delta > 0 { heldByRunning += 1 }
        h.running += delta
        if h.running == 0, delta < 0 { heldByRunning -= 1 }
        holders[c] = h
    }

    /// Cells in use by any sequence.
    public var used: Int { holders.count }
    public var free: Int { capacity - used }

    public func count(_ seq: Int) -> Int { cells[seq].count }

    /// `n` new cells at the end of `seq` (tokens decoded or restored into it).
    public mutating func append(_ seq: Int, _ n: Int) {
        guard n > 0 else { return }
        cells[seq].reserveCapacity(cells[seq].count + n)
        let r: Int32 = running[seq] ? 1 : 0
        for _ in 0..<n {
            cells[seq].append(nextId)
            holders[nextId] = Holders(all: 1, running: r)
            nextId &+= 1
        }
        if r == 1 { heldByRunning += n }
    }

    /// `dst` (empty) shares `src`'s first `n` cells.
    public mutating func copy(from src: Int, to dst: Int, count n: Int) {
        precondition(cells[dst].isEmpty, "KV copy into a sequence that holds cells")
        let shared = cells[src].prefix(n)
        for c in shared { holders[c]?.all += 1 }
        cells[dst] = Array(shared)
        if running[dst] { for c in shared { countRunning(c, 1) } }
    }

    /// Lets go of `seq`'s cells from position `p` on.
    public mutating func truncate(_ seq: Int, from p: Int) {
        guard p < cells[seq].count else { return }
        let wasRunning = running[seq]
        for c in cells[seq][max(0, p)...] { release(c, running: wasRunning) }
        cells[seq].removeSubrange(max(0, p)...)
    }

    private mutating func release(_ c: UInt32, running wasRunning: Bool) {
        if wasRunning { countRunning(c, -1) }
        guard let h = holders[c] else { return }
        if h.all <= 1 { holders[c] = nil } else { holders[c]?.all = h.all - 1 }
    }

    /// Distinct cells held by any of `seqs`, counted afresh (what `heldByRunning` keeps,
    /// for the debug check and the tests).
    public func held(by seqs: some Sequence<Int>) -> Int {
        var seen = Set<UInt32>()
        for s in seqs { seen.formUnion(cells[s]) }
        return seen.count
    }

    /// Cells that truncating `seq` at `p` would free now (held by no other sequence).
    public func freed(truncating seq: Int, from p: Int = 0) -> Int {
        guard p < cells[seq].count else { return 0 }
        return cells[seq][max(0, p)...].reduce(0) { $0 + (holders[$1]?.all == 1 ? 1 : 0) }
    }
}
