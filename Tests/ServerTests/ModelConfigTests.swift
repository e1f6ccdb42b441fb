import Foundation
import ParlanceEngine
import ParlanceFeatures
import JSONRPC
import ParlanceJSON
import Synchronization
import XCTest

/// The registry as built from the config file and the command line: flags win, paths
/// resolve against the file, names and routes are checked before the daemon serves.
final class ModelConfigTests: XCTestCase {
    func write(_ json: String) throws -> String {
        let dir = NSTemporaryDirectory() + "parlance-config-unit-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/config.json"
        try Data(json.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    func testModelFlagAndNames() {
        XCTAssertEqual(RegistryBuilder.parseModelFlag("fast=/m/small.gguf").name, "fast")
        XCTAssertEqual(RegistryBuilder.parseModelFlag("fast=/m/small.gguf").path, "/m/small.gguf")
        XCTAssertNil(RegistryBuilder.parseModelFlag("/m/a=b.gguf").name, "a path with = is a bare path")
        XCTAssertNil(RegistryBuilder.parseModelFlag("=x.gguf").name)
        XCTAssertEqual(ModelNames.fromPath("/m/SmolLM2-135M-Instruct.Q4_1.gguf"), "SmolLM2-135M-Instruct.Q4_1")
        XCTAssertEqual(ModelNames.fromPath("/m/plain"), "plain")
    }

    func testFileFlagsAndPrecedence() throws {
        let path = try write("""
            {"models": {"big": {"path": "models/big.gguf", "contextSize": 8192, "threads": 4, "gpuLayers": "all", "keepAlive": 60},
                        "fast": {"path": "/abs/fast.gguf", "cacheTypeV": "q8_0"}},
             "defaultModel": "fast", "routes": {"analysis": "big", "compose": "fast"}, "keepAlive": 120, "maxLoadedModels": 2}
            """)
        let file = try ConfigFile.load(path: path)
        let base = EngineConfig(modelPath: "")
        var b = RegistryBuilder()
        var r = try b.build(file: file, base: base, explicit: [], fallback: "/default.gguf")
        XCTAssertEqual(r.models.map(\.name), ["big", "fast"])
        XCTAssertEqual(r.defaultModel, "fast")
        XCTAssertEqual(r.routes, ["analysis": "big", "compose": "fast"])
        XCTAssertEqual(r.maxLoadedModels, 2)
        let big = try XCTUnwrap(r.models.first { $0.name == "big" })
        XCTAssertEqual(big.engine.modelPath, (path as NSString).deletingLastPathComponent + "/models/big.gguf", "relative to the file")
        XCTAssertEqual(big.engine.contextSize, 8192)
        XCTAssertEqual(big.engine.threads, 4)
        XCTAssertEqual(big.engine.gpuLayers, .all)
        XCTAssertEqual(big.keepAlive, 60, "the model's own keep-alive")
        XCTAssertEqual(big.engine.name, "big")
        let fast = try XCTUnwrap(r.models.first { $0.name == "fast" })
        XCTAssertEqual(fast.keepAlive, 120, "the file's default keep-alive")
        XCTAssertEqual(fast.engine.cache?.values, .q8_0)
        XCTAssertEqual(fast.engine.contextSize, base.contextSize)

        // Flags win: an explicit --ctx over every model, --keep-alive over the file's, a
        // --model naming a configured model changes its path only, a new one is added and
        // becomes the default (the first --model), routes from --route over the file's.
        var flagged = base
        flagged.contextSize = 2048
        b.keepAlive = 5
        b.flagModels = [(name: "big", path: "/other/big.gguf"), (name: "extra", path: "/x/extra.gguf")]
        b.routes = ["analysis": "extra"]
        b.maxLoadedModels = 3
        r = try b.build(file: file, base: flagged, explicit: ["--ctx", "--keep-alive"], fallback: "/default.gguf")
        XCTAssertEqual(r.models.map(\.name), ["big", "fast", "extra"])
        XCTAssertEqual(r.models.map(\.engine.contextSize), [2048, 2048, 2048])
        XCTAssertEqual(r.models.map(\.keepAlive), [5, 5, 5])
        XCTAssertEqual(r.models[0].engine.modelPath, "/other/big.gguf")
        XCTAssertEqual(r.models[0].engine.threads, 4, "the file's other settings stay")
        XCTAssertEqual(r.defaultModel, "big", "the first --model is the default")
        XCTAssertEqual(r.routes["analysis"], "extra")
        XCTAssertEqual(r.maxLoadedModels, 3)
    }

    func testWithoutModelsTheEmbeddedDefaultIsTheOne() throws {
        let r = try RegistryBuilder().build(file: nil, base: EngineConfig(modelPath: ""), explicit: [], fallback: "/cache/SmolLM2.gguf")
        XCTAssertEqual(r.models.map(\.name), ["SmolLM2"])
        XCTAssertEqual(r.defaultModel, "SmolLM2")
        XCTAssertEqual(r.models[0].keepAlive, 300, "Ollama's default: five minutes")
    }

    func testProblemsAreRefusedWithWhere() throws {
        func problem(_ json: String, _ builder: RegistryBuilder = RegistryBuilder()) -> String {
            do {
                let path = try write(json)
                _ = try builder.build(file: try ConfigFile.load(path: path), base: EngineConfig(modelPath: ""), explicit: [], fallback: "/d.gguf")
                return "accepted"
            } catch { return "\(error)" }
        }
        XCTAssertTrue(problem(#"{"models": {"x": {"path": "a.gguf", "contextSize": "big"}}}"#).contains("models.x.contextSize"))
        XCTAssertTrue(problem(#"{"models": {"x": {"path": "a.gguf", "contextSize": 64}}}"#).contains("models.x.contextSize"))
        XCTAssertTrue(problem(#"{"models": {"x": {}}}"#).contains("path"))
        XCTAssertTrue(problem(#"{"models": {"x": {"path": "a.gguf", "gpuLayers": "many"}}}"#).contains("gpuLayers"))
        XCTAssertTrue(problem(#"{"models": {"x": {"path": "a.gguf"}}, "routes": {"ask": "y"}}"#).contains("route 'ask' names model 'y'"))
        XCTAssertTrue(problem(#"{"models": {"x": {"path": "a.gguf"}}, "defaultModel": "y"}"#).contains("default model 'y'"))
        XCTAssertTrue(problem(#"{"keepalive": 3}"#).contains("keepalive"), "unknown keys are refused (a typo is not ignored)")
        XCTAssertTrue(problem("[1,").contains("not valid JSON"))
    }
}

/// The registry's refusal before the system runs out of memory: a load that would not fit
/// in what the system has available unloads idle models first, and is refused (never
/// attempted) when only busy ones stand in the way.
final class RegistryMemoryTests: XCTestCase {
    func testSystemMemoryEvictsIdleModelsThenRefuses() async throws {
        let model = try XCTUnwrap(ProcessInfo.processInfo.environment["PARLANCE_DEFAULT_MODEL"])
        let available = Mutex<Int>(8 << 30)  // guards the fake MemAvailable the test sets
        var settings = RegistrySettings(models: ["a", "b"].map { RegisteredModel(name: $0, engine: EngineConfig(modelPath: model), keepAlive: 0) })
        settings.availableMemory = { available.withLock { $0 } }
        let registry = ModelRegistry(settings: settings)
        defer { registry.shutdown() }
        _ = try await registry.acquire("a", progress: .none)
        registry.release("a")
        // The system fills up: 100 MiB left, less than a model needs; a is idle, so it goes.
        available.withLock { $0 = 100 << 20 }
        _ = try await registry.acquire("b", progress: .none)
        XCTAssertNil(registry.loadedEngine("a"), "the idle model was unloaded to make room")
        XCTAssertNotNil(registry.loadedEngine("b"))
        // b is in use: a cannot load, and says why with the numbers.
        do {
            _ = try await registry.acquire("a", progress: .none)
            XCTFail("a load that does not fit was attempted")
        } catch let e as ResponseError {
            XCTAssertEqual(e.code.rawValue, -32001)
            XCTAssertEqual(e.data?["reason"], "memoryBudget")
            XCTAssertEqual(e.data?["availableBytes"], .int(100 << 20))
            XCTAssertEqual(e.data?["busy"], ["b"])
            XCTAssertGreaterThan(e.data?["neededBytes"]?.intValue ?? 0, 100 << 20)
            XCTAssertTrue(e.message.contains("the system has 100.0 MiB available"), e.message)
        }
        registry.release("b")
        XCTAssertNil(registry.loadedEngine("a"))
    }
}
