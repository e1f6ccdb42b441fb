import Foundation
import ParlanceClient
import ParlanceJSON
import XCTest

/// A missing or corrupt model is an error response, never a crash; the daemon stays up.
final class ModelAvailabilityTests: XCTestCase {
    func badModel(_ bytes: [UInt8]?) throws -> Daemon {
        let path = NSTemporaryDirectory() + "bad-\(UUID().uuidString).gguf"
        if let bytes { FileManager.default.createFile(atPath: path, contents: Data(bytes)) }
        return try Daemon(args: ["--model", path])
    }

    func testMissingModel() throws {
        let d = try badModel(nil)
        let i = d.initialize()
        XCTAssertEqual(i.result?["model"]?["availability"], "unavailable")
        XCTAssertEqual(i.result?["model"]?["reason"], "modelNotFound")
        let s = d.call("analysis/summarize", ["text": "Some words to summarize here."])
        XCTAssertEqual(s.errorCode, -32001)
        XCTAssertEqual(s["error"]?["data"]?["reason"], "modelNotFound")
        XCTAssertEqual(d.call("model/status").result?["reason"], "modelNotFound")
        // model/list: the load the request tried failed, with the reason.
        let entry = try XCTUnwrap(d.call("model/list").result?["models"]?.arrayValue?.first)
        XCTAssertEqual(entry["state"], "failed")
        XCTAssertEqual(entry["reason"], "modelNotFound")
        XCTAssertEqual(entry["loads"], 1)
        XCTAssertTrue(d.isRunning)
    }

    func testCorruptModels() throws {
        let real = Array("GGUF".utf8) + [3, 0, 0, 0] + [UInt8](repeating: 0xFF, count: 64)
        var random = SystemRandomNumberGenerator()
        let cases: [(String, [UInt8])] = [
            ("empty", []),
            ("wrong magic", Array("NOPE not a model at all".utf8)),
            ("truncated header", real),
            ("random bytes", (0..<4096).map { _ in UInt8.random(in: 0...255, using: &random) }),
        ]
        for (name, bytes) in cases {
            let d = try badModel(bytes)
            let i = d.initialize()
            XCTAssertEqual(i.result?["model"]?["reason"], "invalidModelFile", name)
            let s = d.call("analysis/summarize", ["text": "Some words to summarize here."])
            XCTAssertEqual(s.errorCode, -32001, name)
            XCTAssertEqual(s["error"]?["data"]?["reason"], "invalidModelFile", name)
            XCTAssertTrue(d.isRunning, name)
        }
    }

    /// Cut inside the tensor data (3 MB in) and inside the last tensor (one byte short).
    func testTruncatedRealModel() throws {
        let model = try XCTUnwrap(ProcessInfo.processInfo.environment["PARLANCE_DEFAULT_MODEL"])
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: model)[.size] as? Int)
        for cut in [3 << 20, size - 1] {
            let h = try XCTUnwrap(FileHandle(forReadingAtPath: model))
            let prefix = try XCTUnwrap(h.read(upToCount: cut))
            let d = try badModel([UInt8](prefix))
            XCTAssertEqual(d.initialize().result?["model"]?["reason"], "invalidModelFile", "cut at \(cut)")
            let status = d.call("model/status").result
            XCTAssertEqual(status?["reason"], "invalidModelFile", "cut at \(cut)")
            // One byte short: caught by the Swift check, naming the tensor, before llama.cpp reads the file.
            if cut == size - 1 {
                XCTAssertTrue(status?["message"]?.stringValue?.contains("past the end") ?? false, "\(String(describing: status))")
            }
            XCTAssertTrue(d.isRunning)
        }
    }
}
