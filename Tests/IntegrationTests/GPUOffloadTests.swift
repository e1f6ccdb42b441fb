import Foundation
import ParlanceClient
import ParlanceJSON
import XCTest

/// `--gpu-layers` on a llama.cpp built for the CPU only (this machine, and CI): the device
/// list shows the CPU and no GPU, `auto` offloads nothing and says nothing, `all` (or a
/// count) says once that no GPU exists, and the output is the same in every case.
final class GPUOffloadTests: XCTestCase {
    func daemon(_ gpuLayers: String) throws -> (Daemon, String) {
        let log = NSTemporaryDirectory() + "gpu-\(UUID().uuidString).log"
        let d = try Daemon(args: ["--gpu-layers", gpuLayers, "--log-file", log, "--log-level", "warning"])
        XCTAssertEqual(d.initialize().result?["model"]?["availability"], "available")
        XCTAssertEqual(d.call("model/load").result?["state"], "ready", "loaded on demand")
        return (d, log)
    }

    func warnings(_ log: String) -> [String] {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init).filter { $0.contains("gpu-layers") }
    }

    func answer(_ d: Daemon) -> JSONValue? {
        let sid = d.call("session/create", ["options": ["temperature": 0, "maxTokens": 16, "deterministic": true]]).result?["sessionId"] ?? .null
        return d.call("session/respond", ["sessionId": sid, "prompt": "Name a colour."]).result?["text"]
    }

    func testCPUOnlyBuildReportsItsDevicesAndRunsEveryLayerOnTheCPU() throws {
        let (auto, autoLog) = try daemon("auto")
        let status = try XCTUnwrap(auto.call("model/status").result)
        let devices = try XCTUnwrap(status["devices"]?.arrayValue)
        XCTAssertTrue(devices.contains { $0["type"] == "cpu" && ($0["totalBytes"]?.intValue ?? 0) > 0 }, "\(devices)")
        XCTAssertFalse(devices.contains { $0["type"] == "gpu" || $0["type"] == "integratedGPU" }, "this build has no GPU backend")
        XCTAssertEqual(status["model"]?["gpuLayers"], 0)
        XCTAssertEqual(status["model"]?["gpuLayersRequested"], "auto")
        XCTAssertGreaterThan(status["model"]?["layers"]?.intValue ?? 0, 0)
        XCTAssertEqual(warnings(autoLog), [], "auto on a CPU-only build logs nothing")
        // Memory as llama.cpp reported allocating it: mapped weights about the file's size,
        // a KV cache, compute and output buffers; the daemon's RSS beside them.
        let memory = try XCTUnwrap(status["model"]?["memory"])
        let file = try XCTUnwrap(status["model"]?["fileBytes"]?.intValue)
        let weights = try XCTUnwrap(memory["weightsBytes"]?.intValue)
        XCTAssertEqual(memory["weightsMapped"], true)
        XCTAssertLessThan(abs(weights - file), file / 10, "\(memory) vs a file of \(file) bytes")
        for k in ["kvCacheBytes", "computeBytes", "outputBytes"] { XCTAssertGreaterThan(memory[k]?.intValue ?? 0, 0, k) }
        XCTAssertEqual(memory["totalBytes"]?.intValue, ["weightsBytes", "kvCacheBytes", "computeBytes", "outputBytes"].compactMap { memory[$0]?.intValue }.reduce(0, +))
        XCTAssertGreaterThan(status["residentBytes"]?.intValue ?? 0, 0)
        let reference = answer(auto)

        for asked in ["all", "7"] {
            let (d, log) = try daemon(asked)
            XCTAssertEqual(d.call("model/status").result?["model"]?["gpuLayers"], 0, asked)
            XCTAssertEqual(warnings(log).count, 1, "\(asked): one warning that no GPU exists: \(warnings(log))")
            XCTAssertTrue(warnings(log).first?.contains("no GPU device") == true)
            XCTAssertEqual(answer(d), reference, "\(asked): the same output as on the CPU")
        }
        let (zero, zeroLog) = try daemon("0")
        XCTAssertEqual(warnings(zeroLog), [])
        XCTAssertEqual(zero.call("model/status").result?["model"]?["gpuLayersRequested"], "0")
    }

    func testBadGPULayersValueIsRefusedAtStart() throws {
        let d = try Daemon(args: ["--gpu-layers", "many"])
        XCTAssertEqual(d.waitExit(timeout: 30), 2)
    }
}
