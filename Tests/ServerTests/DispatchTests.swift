#if canImport(Glibc)
import Glibc
#endif
import Foundation
import JSONRPC
import ParlanceEngine
import ParlanceFeatures
import ParlanceJSON
import ParlanceProtocol
import ParlanceServer
import XCTest

/// The server in-process over a pair of pipes, with no model (a path that does not
/// exist): dispatch, lifecycle and error codes, fast.
final class DispatchTests: XCTestCase {
    struct Harness {
        let server: Server
        let toServer: Int32
        let fromServer: Int32
        let run: Task<Int32, Never>
        var decoder = FrameDecoder()

        init(extraRoutes: (inout Router) -> Void = { _ in }) {
            var a: [Int32] = [0, 0], b: [Int32] = [0, 0]
            _ = pipe(&a)
            _ = pipe(&b)
            let conn = Connection(input: a[0], output: b[1], maxMessageSize: 1 << 20)
            let tmp = NSTemporaryDirectory() + "parlance-dispatch-\(UUID().uuidString)"
            let server = Server(
                options: ServerOptions(models: .single(EngineConfig(modelPath: "/nonexistent/model.gguf")), maxMessageBytes: 1 << 20,
                                       services: ServiceOptions(cacheDirectory: tmp, dataDirectory: tmp, historyEnabled: false)),
                connection: conn, log: Logger(level: .off, file: nil), extraRoutes: extraRoutes)
            self.server = server
            toServer = a[1]
            fromServer = b[0]
            run = Task { await server.run() }
        }

        func send(_ s: String) {
            let bytes = Array((s + "\n").utf8)
            _ = bytes.withUnsafeBytes { write(toServer, $0.baseAddress, $0.count) }
        }

        mutating func next() -> JSONValue {
            var buf = [UInt8](repeating: 0, count: 65536)
            while true {
                if let e = decoder.next(), case .message(let body, _) = e { return try! JSONParser.parse(body) }
                let n = buf.withUnsafeMutableBytes { read(fromServer, $0.baseAddress, $0.count) }
                if n <= 0 { return .null }
                decoder.push(buf[0..<n])
            }
        }

        mutating func call(_ s: String) -> JSONValue {
            send(s)
            return next()
        }

        func close() { Glibc.close(toServer) }
    }

    func code(_ v: JSONValue) -> Int? { v["error"]?["code"]?.intValue }

    func testLifecycleAndErrorCodes() async throws {
        var h = Harness()
        XCTAssertEqual(code(h.call(#"{"jsonrpc":"2.0","id":1,"method":"model/status"}"#)), -32002)
        let initResult = h.call(#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}"#)
        XCTAssertEqual(initResult["result"]?["model"]?["reason"], "modelNotFound", "\(initResult)")
        XCTAssertEqual(code(h.call(#"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}}"#)), -32600)
        XCTAssertEqual(code(h.call(#"{"jsonrpc":"2.0","id":4,"method":"nope"}"#)), -32601)
        XCTAssertEqual(code(h.call(#"{"jsonrpc":"2.0","id":5,"method":"analysis/summarize","params":{"text":1}}"#)), -32602)
        XCTAssertEqual(code(h.call(#"{"jsonrpc":"2.0","id":6,"method":"analysis/summarize","params":{"text":"hi","zzz":1}}"#)), -32602)
        XCTAssertEqual(code(h.call(#"{"jsonrpc":"2.0","id":7,"method":"analysis/summarize","params":[1]}"#)), -32602)
        XCTAssertEqual(code(h.call(#"{"jsonrpc":"2.0","id":8,"method":"analysis/summarize","params":{"text":"Alice met Bob in Paris."}}"#)), -32001)
        // The session is claimed when the request arrives, before any wait for the model.
        XCTAssertEqual(code(h.call(#"{"jsonrpc":"2.0","id":9,"method":"session/respond","params":{"sessionId":"nope","prompt":"x"}}"#)), -32004)
        XCTAssertEqual(code(h.call("{oops")), -32700)
        XCTAssertEqual(code(h.call(#"{"id":10,"method":"model/status"}"#)), -32600)
        XCTAssertEqual(h.call(#"{"jsonrpc":"2.0","id":11,"method":"model/status"}"#)["result"]?["availability"], "unavailable")
        XCTAssertEqual(h.call(#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#)["result"], [:], "ping needs no model")
        XCTAssertEqual(code(h.call(#"{"jsonrpc":"2.0","id":"q","method":"ping","params":{"x":1}}"#)), -32602)
        XCTAssertEqual(h.call(#"{"jsonrpc":"2.0","id":12,"method":"shutdown"}"#)["result"], [:])
        XCTAssertEqual(code(h.call(#"{"jsonrpc":"2.0","id":13,"method":"model/status"}"#)), -32600)
        h.send(#"{"jsonrpc":"2.0","method":"exit"}"#)
        let exitCode = await h.run.value
        XCTAssertEqual(exitCode, 0)
    }

    /// A method whose handler fails with an error no mapping knows.
    enum Boom: RPCMethod {
        static let name = "test/boom"
        static let summary = "Always throws."
        typealias Params = Empty
        typealias Result = Empty
        struct Failure: Error {}
    }

    /// A handler's unexpected Swift error answers -32603 with the request's id; the daemon
    /// keeps serving.
    func testHandlerErrorIsInternalErrorAndTheServerStaysUp() async throws {
        var h = Harness { r in r.on(Boom.self) { _, _ in throw Boom.Failure() } }
        _ = h.call(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#)
        let failed = h.call(#"{"jsonrpc":"2.0","id":"b-7","method":"test/boom"}"#)
        XCTAssertEqual(code(failed), -32603, "\(failed)")
        XCTAssertEqual(failed["id"], "b-7")
        XCTAssertTrue(failed["error"]?["message"]?.stringValue?.contains("Failure") ?? false, "\(failed)")
        XCTAssertEqual(h.call(#"{"jsonrpc":"2.0","id":2,"method":"model/status"}"#)["result"]?["availability"], "unavailable")
        XCTAssertEqual(h.call(#"{"jsonrpc":"2.0","id":3,"method":"shutdown"}"#)["result"], [:])
        h.send(#"{"jsonrpc":"2.0","method":"exit"}"#)
        let exitCode = await h.run.value
        XCTAssertEqual(exitCode, 0)
    }

    func testExitWithoutShutdownIsOne() async {
        var h = Harness()
        _ = h.call(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#)
        h.send(#"{"jsonrpc":"2.0","method":"exit"}"#)
        let exitCode = await h.run.value
        XCTAssertEqual(exitCode, 1)
    }

    func testEndOfInputExitsZero() async {
        let h = Harness()
        h.close()
        let exitCode = await h.run.value
        XCTAssertEqual(exitCode, 0)
    }

    func testDuplicateInFlightIdAndNotificationsNeverAnswered() async {
        var h = Harness()
        _ = h.call(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#)
        h.send(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":999}}"#)
        h.send(#"{"jsonrpc":"2.0","method":"unknown/notification"}"#)
        // Only the next request is answered: notifications get no reply.
        XCTAssertEqual(h.call(#"{"jsonrpc":"2.0","id":"s","method":"model/status"}"#)["id"], "s")
    }

    func testSpecListsEveryRegisteredMethod() throws {
        let spec = try JSONParser.parse(Server.specText())
        let names = spec["methods"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
        XCTAssertEqual(spec["openrpc"], "1.2.6")
        for m in ["initialize", "shutdown", "model/status", "analysis/summarize", "session/create", "document/open", "$/progress"] {
            XCTAssertTrue(names.contains(m), m)
        }
    }
}

final class ErrorMappingTests: XCTestCase {
    struct Boom: Error {}

    func testUnexpectedSwiftErrorsBecomeInternalError() {
        XCTAssertEqual(ErrorMapping.response(for: Boom()).code.rawValue, -32603)
    }

    func testEngineErrorsAreTyped() {
        let e = ErrorMapping.response(for: EngineError.exceededContextWindowSize(promptTokens: 5000, maxTokens: 100, contextSize: 4096))
        XCTAssertEqual(e.code.rawValue, -32010)
        XCTAssertEqual(e.data?["error"], "exceededContextWindowSize")
        XCTAssertEqual(e.data?["promptTokens"], 5000)
        XCTAssertEqual(ErrorMapping.response(for: EngineError.queueFull(capacity: 3)).data?["error"], "concurrentRequests")
        XCTAssertEqual(ErrorMapping.response(for: EngineError.cancelled(partial: "abc", generatedTokens: 2)).data?["partial"], "abc")
        XCTAssertEqual(ErrorMapping.response(for: EngineError.cancelled(partial: "", generatedTokens: 0)).code.rawValue, -32800)
        XCTAssertEqual(ErrorMapping.response(for: EngineError.modelNotFound(path: "/x")).data?["reason"], "modelNotFound")
    }
}
