import Foundation
import ParlanceClient
import ParlanceJSON
import XCTest

/// The lifecycle and every generic error code, against the real daemon.
final class LifecycleTests: XCTestCase {
    func testRequestBeforeInitializeIsRejectedThenInitializeWorks() throws {
        let d = try Daemon()
        XCTAssertEqual(d.call("model/status").errorCode, -32002)
        let r = d.initialize()
        XCTAssertEqual(r.result?["serverInfo"]?["name"], "parlance")
        XCTAssertEqual(d.call("model/status").result?["availability"], "available")
    }

    func testInitializeReportsModelAndEveryMethod() throws {
        let d = try Daemon()
        let r = try XCTUnwrap(d.initialize().result)
        let methods = r["capabilities"]?["methods"]?.arrayValue?.compactMap(\.stringValue) ?? []
        for m in ["initialize", "shutdown", "model/status", "analysis/summarize", "rpc.discover"] {
            XCTAssertTrue(methods.contains(m), m)
        }
        // initialize answers at once: the model loads on the first request that needs it.
        XCTAssertEqual(r["model"]?["availability"], "available")
        XCTAssertEqual(r["model"]?["state"], "unloaded")
        XCTAssertNil(r["model"]?["model"])
        let loaded = try XCTUnwrap(d.call("model/load").result)
        XCTAssertEqual(loaded["state"], "ready")
        let model = try XCTUnwrap(loaded["model"])
        XCTAssertEqual(model["architecture"], "llama")
        XCTAssertEqual(model["chatTemplate"], true)
        XCTAssertGreaterThan(model["parameters"]?.intValue ?? 0, 100_000_000)
        XCTAssertEqual(model["contextSize"], 4096)
        XCTAssertEqual(model["sha256"]?.stringValue?.count, 64)
    }

    func testSecondInitializeIsInvalidRequest() throws {
        let d = try Daemon()
        _ = d.initialize()
        XCTAssertEqual(d.call("initialize", [:]).errorCode, -32600)
    }

    func testUnknownMethod() throws {
        let d = try Daemon()
        _ = d.initialize()
        let r = d.call("no/such")
        XCTAssertEqual(r.errorCode, -32601)
        XCTAssertEqual(r["error"]?["data"]?["method"], "no/such")
    }

    func testInvalidParamsNameTheProblem() throws {
        let d = try Daemon()
        _ = d.initialize()
        let extra = d.call("analysis/summarize", ["text": "hello there", "bogus": 1])
        XCTAssertEqual(extra.errorCode, -32602)
        XCTAssertTrue(extra["error"]?["message"]?.stringValue?.contains("bogus") ?? false, "\(extra)")
        let wrongType = d.call("analysis/summarize", ["text": 5])
        XCTAssertEqual(wrongType.errorCode, -32602)
        XCTAssertEqual(wrongType["error"]?["data"]?["path"], "text")
        let range = d.call("analysis/summarize", ["text": "hello there", "temperature": 9])
        XCTAssertEqual(range.errorCode, -32602)
        XCTAssertEqual(range["error"]?["data"]?["keyword"], "maximum")
        let neither = d.call("analysis/summarize", [:])
        XCTAssertEqual(neither.errorCode, -32602)
        let empty = d.call("analysis/summarize", ["text": "   "])
        XCTAssertEqual(empty.errorCode, -32602)
        // The daemon still answers.
        XCTAssertEqual(d.call("model/status").result?["availability"], "available")
    }

    func testParseErrorAndInvalidRequestKeepTheDaemonAlive() throws {
        let d = try Daemon()
        _ = d.initialize()
        d.writeRaw(Array("{not json}\n".utf8))
        let pe = d.waitFor { $0.errorCode == -32700 }
        XCTAssertEqual(pe?["id"], .null)
        d.send(["id": 77, "method": "model/status"])  // no "jsonrpc"
        let ir = d.waitFor { $0["id"] == 77 }
        XCTAssertEqual(ir?.errorCode, -32600)
        XCTAssertEqual(d.call("model/status").result?["availability"], "available")
    }

    func testBatch() throws {
        let d = try Daemon()
        _ = d.initialize()
        d.send([["jsonrpc": "2.0", "id": 901, "method": "model/status"],
                ["jsonrpc": "2.0", "method": "initialized"],
                ["jsonrpc": "2.0", "id": 902, "method": "nope"]])
        let batch = try XCTUnwrap(d.waitFor { $0.arrayValue != nil }?.arrayValue)
        XCTAssertEqual(batch.count, 2)
        XCTAssertEqual(Set(batch.compactMap { $0["id"]?.intValue }), [901, 902])
        XCTAssertEqual(batch.first { $0["id"] == 902 }?.errorCode, -32601)
        d.send([])
        XCTAssertEqual(d.waitFor { $0.errorCode == -32600 && $0["id"] == .null }?.errorCode, -32600)
    }

    func testShutdownThenExitCodes() throws {
        let d = try Daemon()
        _ = d.initialize()
        XCTAssertEqual(d.call("shutdown").result, [:])
        XCTAssertEqual(d.call("model/status").errorCode, -32600)
        d.notify("exit")
        XCTAssertEqual(d.waitExit(), 0)

        let d2 = try Daemon()
        _ = d2.initialize()
        d2.notify("exit")
        XCTAssertEqual(d2.waitExit(), 1)
    }

    func testClosingStdinExitsCleanly() throws {
        let d = try Daemon()
        _ = d.initialize()
        d.closeInput()
        XCTAssertEqual(d.waitExit(timeout: 60), 0)
    }

    func testLSPFramingRepliesInLSPFraming() throws {
        let d = try Daemon(framing: .lsp)
        let r = d.initialize()
        XCTAssertEqual(r.result?["serverInfo"]?["name"], "parlance")
        XCTAssertEqual(d.call("model/status").result?["availability"], "available")
    }

    func testOversizedMessageIsRejectedClearly() throws {
        let d = try Daemon(args: ["--max-message-bytes", "4096"])
        _ = d.initialize()
        d.start("analysis/summarize", ["text": .string(String(repeating: "word ", count: 2000))], id: 55)
        let e = d.waitFor { $0.errorCode == -32600 && $0["error"]?["data"]?["error"] == "tooLarge" }
        XCTAssertNotNil(e)
        XCTAssertTrue(e?["error"]?["message"]?.stringValue?.contains("4096") ?? false)
        XCTAssertEqual(d.call("model/status").result?["availability"], "available")
    }
}
