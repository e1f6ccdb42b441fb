import Foundation
import ParlanceEngine
import XCTest

/// The engine's pure pieces: the KV cell mirror, and the log path from llama.cpp.
final class EngineUnitTests: XCTestCase {
    /// The KV cache's size from a header (SmolLM2-135M's shape: 30 layers, 3 KV heads of 64),
    /// and the types chosen for it: f16 with memory to spare, q8_0 keys and then values as
    /// memory gets short.
    func testCacheTypesChosenByTheMemoryAvailable() {
        let header = GGUFInfo(version: 3, tensorCount: 0, metadata: [
            "general.architecture": "llama", "llama.block_count": "30", "llama.attention.head_count": "9",
            "llama.attention.head_count_kv": "3", "llama.embedding_length": "576"])
        let f16 = KVCacheTypes(keys: .f16, values: .f16)
        XCTAssertEqual(KVCacheTypes.bytes(f16, contextSize: 4096, header: header), 4096 * 30 * 3 * 64 * 2 * 2)  // 90 MiB
        XCTAssertEqual(KVCacheTypes.bytes(.init(keys: .q8_0, values: .f16), contextSize: 4096, header: header), 4096 * 30 * 3 * 64 * 34 / 32 + 4096 * 30 * 3 * 64 * 2)
        XCTAssertNil(KVCacheTypes.bytes(f16, contextSize: 4096, header: GGUFInfo(version: 3, tensorCount: 0, metadata: [:])))
        let mb = 1 << 20
        XCTAssertEqual(ContextDefaults.cache(modelBytes: 100 * mb, f16Bytes: 90 * mb, availableBytes: 8192 * mb), f16)
        XCTAssertEqual(ContextDefaults.cache(modelBytes: 100 * mb, f16Bytes: 90 * mb, availableBytes: nil), f16, "unknown memory: the fast default")
        XCTAssertEqual(ContextDefaults.cache(modelBytes: 100 * mb, f16Bytes: 90 * mb, availableBytes: 300 * mb), .init(keys: .q8_0, values: .f16))
        XCTAssertEqual(ContextDefaults.cache(modelBytes: 100 * mb, f16Bytes: 90 * mb, availableBytes: 200 * mb), .init(keys: .q8_0, values: .q8_0))
    }

    func testCellsSharedByACopyAreCountedOnceAndFreedWithTheirLastHolder() {
        var kv = KVCells(capacity: 100, sequences: 3)
        kv.append(0, 40)
        XCTAssertEqual(kv.used, 40)
        kv.copy(from: 0, to: 1, count: 30)
        XCTAssertEqual(kv.used, 40, "a copy shares cells")
        kv.append(1, 5)
        XCTAssertEqual(kv.used, 45)
        XCTAssertEqual(kv.held(by: [0, 1]), 45)
        XCTAssertEqual(kv.freed(truncating: 0), 10, "only the cells no other sequence holds")
        kv.truncate(0, from: 0)
        XCTAssertEqual(kv.used, 35, "the shared 30 stay with sequence 1")
        XCTAssertEqual(kv.count(1), 35)
        kv.truncate(1, from: 10)
        XCTAssertEqual(kv.used, 10)
        XCTAssertEqual(kv.free, 90)
        kv.truncate(1, from: 0)
        XCTAssertEqual(kv.used, 0)
    }

    /// What admission reads while a request waits: kept as cells come and go, equal at every
    /// turn to the distinct cells of the running sequences counted afresh.
    func testCellsHeldByRunningSequencesAreKeptAsTheyChange() {
        var kv = KVCells(capacity: 200, sequences: 4)
        func check(_ running: [Int], _ line: UInt = #line) {
            XCTAssertEqual(kv.heldByRunning, kv.held(by: running), line: line)
        }
        kv.append(0, 50)  // an idle cached prefix
        check([])
        kv.setRunning(1, true)
        kv.copy(from: 0, to: 1, count: 40)  // a running request reuses 40 of it
        check([1])
        XCTAssertEqual(kv.heldByRunning, 40)
        kv.append(1, 10)
        kv.setRunning(2, true)
        kv.copy(from: 1, to: 2, count: 45)  // a follower shares the leader's prefix
        kv.append(2, 3)
        check([1, 2])
        XCTAssertEqual(kv.heldByRunning, 53)
        kv.truncate(2, from: 41)  // rejected drafts
        check([1, 2])
        kv.setRunning(1, false)  // the leader finishes; its cells stay cached
        check([2])
        XCTAssertEqual(kv.heldByRunning, 41)
        kv.truncate(0, from: 0)
        kv.truncate(1, from: 0)
        check([2])
        kv.setRunning(2, false)
        check([])
        XCTAssertEqual(kv.heldByRunning, 0)
    }

    func testTruncatingPastTheEndChangesNothing() {
        var kv = KVCells(capacity: 10, sequences: 1)
        kv.append(0, 4)
        kv.truncate(0, from: 7)
        XCTAssertEqual(kv.used, 4)
        XCTAssertEqual(kv.freed(truncating: 0, from: 9), 0)
    }

    /// llama.cpp logged a failed decode ~100,000 times in a livelock; each line once nested
    /// the log sink one thunk deeper, until the engine thread's stack overflowed (SIGSEGV).
    /// 300,000 lines on a 256 KiB stack must all arrive.
    func testManyLogLinesOnASmallStack() {
        final class Counter: @unchecked Sendable {
            let lock = NSLock()
            var n = 0
        }
        let counter = Counter()
        LlamaLog.install { level, line in
            guard level == 3, line == "decode: failed to find a memory slot" else { return }
            counter.lock.lock()
            counter.n += 1
            counter.lock.unlock()
        }
        let done = DispatchSemaphore(value: 0)
        let t = Thread {
            for _ in 0..<300_000 { LlamaLog.forward(level: 3, "decode: failed to find a memory slot") }
            done.signal()
        }
        t.stackSize = 256 << 10
        t.start()
        done.wait()
        XCTAssertEqual(counter.n, 300_000)
    }
}

/// `--gpu-layers`: parsing, what llama.cpp is asked for, and what is reported offloaded.
final class GPULayersTests: XCTestCase {
    func testParsingResolutionAndOffloadedCounts() {
        XCTAssertEqual(GPULayers("auto"), .auto)
        XCTAssertEqual(GPULayers("all"), .all)
        XCTAssertEqual(GPULayers("12"), .count(12))
        for bad in ["", "-1", "many", "1.5"] { XCTAssertNil(GPULayers(bad), bad) }
        // No GPU: auto is silent and asks for none; all and a count warn and run on the CPU.
        XCTAssertEqual(GPULayers.auto.resolved(gpuAvailable: false).layers, 0)
        XCTAssertNil(GPULayers.auto.resolved(gpuAvailable: false).warning)
        XCTAssertNotNil(GPULayers.all.resolved(gpuAvailable: false).warning)
        XCTAssertNotNil(GPULayers.count(3).resolved(gpuAvailable: false).warning)
        XCTAssertNil(GPULayers.count(0).resolved(gpuAvailable: false).warning)
        for g in [GPULayers.auto, .all, .count(3)] { XCTAssertEqual(g.offloaded(layers: 30, gpuAvailable: false), 0) }
        // A GPU: auto and all ask for every layer (negative), a count is capped at layers + 1.
        XCTAssertEqual(GPULayers.auto.resolved(gpuAvailable: true).layers, -1)
        XCTAssertEqual(GPULayers.all.resolved(gpuAvailable: true).layers, -1)
        XCTAssertNil(GPULayers.all.resolved(gpuAvailable: true).warning)
        XCTAssertEqual(GPULayers.auto.offloaded(layers: 30, gpuAvailable: true), 31)
        XCTAssertEqual(GPULayers.count(12).offloaded(layers: 30, gpuAvailable: true), 12)
        XCTAssertEqual(GPULayers.count(99).offloaded(layers: 30, gpuAvailable: true), 31)
        XCTAssertEqual(GPULayers.count(0).offloaded(layers: 30, gpuAvailable: true), 0)
    }
}

/// The memory llama.cpp reports allocating, read from its log lines.
final class MemoryUseTests: XCTestCase {
    func testBufferSizesAreSummedPerKindAndALaterReportReplacesAnEarlierOne() {
        let lines = [
            "load_tensors:   CPU_Mapped model buffer size =    92.10 MiB",
            "load_tensors:        CUDA0 model buffer size =  1000.00 MiB",
            "llama_context:        CPU  output buffer size =     3.00 MiB",
            "llama_kv_cache:        CPU KV buffer size =    68.91 MiB",
            "llama_kv_cache_iswa: SWA cache:        CPU KV buffer size =    10.00 MiB",
            "llama_kv_cache: size =   68.91 MiB (  4096 cells,  30 layers, 16/1 seqs), K (q8_0):   23.91 MiB, V (f16):   45.00 MiB",
            "sched_reserve:        CPU compute buffer size =     9.00 MiB",
            "sched_reserve:        CPU compute buffer size =     8.77 MiB",
            "unrelated line = 5 MiB",
        ]
        let m = MemoryUse.parse(lines)
        let mib = { (x: Double) in Int((x * 1_048_576).rounded()) }
        XCTAssertEqual(m.weightsBytes, mib(1092.10))
        XCTAssertTrue(m.weightsMapped)
        XCTAssertEqual(m.kvCacheBytes, mib(78.91), "both caches of a sliding-window model; the summary line is not counted")
        XCTAssertEqual(m.computeBytes, mib(8.77), "the last reservation replaces the first")
        XCTAssertEqual(m.outputBytes, mib(3))
        XCTAssertEqual(MemoryUse.offloadedLayers(["load_tensors: offloaded 31/31 layers to GPU"]), 31)
        XCTAssertNil(MemoryUse.offloadedLayers(lines))
        XCTAssertEqual(MemoryUse.parse([]), MemoryUse(weightsBytes: 0, weightsMapped: false, kvCacheBytes: 0, computeBytes: 0, outputBytes: 0))
    }
}
