import Foundation
import ParlanceFeatures
import ParlanceJSON
@testable import ParlanceRemote
import XCTest

/// The pieces of a remote engine that need no server: the event-stream parser, the fault
/// from an HTTP error, `Retry-After`, and `openai:` entries in flags and config files.
final class RemoteUnitTests: XCTestCase {
    func testServerSentEventsAcrossArbitraryChunkBoundaries() {
        let stream = "data: {\"a\":1}\n\n: a comment\r\ndata: line one\r\ndata: line two\r\n\r\nevent: ping\nid: 7\n\ndata:{\"b\":2}\r\rdata: [DONE]\n\n"
        let expected = ["{\"a\":1}", "line one\nline two", "{\"b\":2}", "[DONE]"]
        // Whole, byte by byte, and in every two-piece split: the same events.
        var whole = ServerSentEvents()
        XCTAssertEqual(whole.feed(Array(stream.utf8)), expected)
        var bytewise = ServerSentEvents()
        XCTAssertEqual(stream.utf8.flatMap { bytewise.feed([$0]) }, expected)
        let bytes = Array(stream.utf8)
        for cut in 1..<bytes.count {
            var p = ServerSentEvents()
            XCTAssertEqual(p.feed(bytes[..<cut]) + p.feed(bytes[cut...]), expected, "split at \(cut)")
        }
        var partial = ServerSentEvents()
        XCTAssertEqual(partial.feed(Array("data: {\"cut".utf8)), [])
        XCTAssertTrue(partial.hasPartialEvent)
    }

    func testHTTPErrorsBecomeTypedFaults() {
        let openai = RemoteFault.http(500, body: Data(#"{"error":{"message":"boom","type":"server_error"}}"#.utf8), retryAfter: nil, host: "h:1")
        XCTAssertEqual(openai.kind, .remoteError)
        XCTAssertEqual(openai.serverMessage, "boom")
        XCTAssertTrue(openai.retryable)
        let llama = RemoteFault.http(400, body: Data(#"{"error":"bad prompt"}"#.utf8), retryAfter: nil, host: "h:1")
        XCTAssertEqual(llama.serverMessage, "bad prompt")
        XCTAssertFalse(llama.retryable, "a 4xx is the request's own fault")
        let limited = RemoteFault.http(429, body: Data(), retryAfter: "2.5", host: "h:1")
        XCTAssertEqual(limited.kind, .rateLimited)
        XCTAssertEqual(limited.retryAfterMs, 2500)
        XCTAssertEqual(RemoteFault.parseRetryAfter("0"), 0)
        XCTAssertNil(RemoteFault.parseRetryAfter("soon"))
        let date = RemoteFault.parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT")
        XCTAssertEqual(date, 0, "a date in the past: retry now")
        let html = RemoteFault.http(502, body: Data("<html>Bad Gateway</html>".utf8), retryAfter: nil, host: "h:1")
        XCTAssertEqual(html.serverMessage, "<html>Bad Gateway</html>")
    }

    func testChatEventsFromChunksAndErrors() throws {
        let delta = try OpenAIClient.events(in: #"{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}"#, host: "h")
        guard case .delta("Hi") = delta.first else { return XCTFail("\(delta)") }
        let usage = try OpenAIClient.events(in: #"{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":1}}}"#, host: "h")
        guard case .usage(3, 2, 1) = usage.first else { return XCTFail("\(usage)") }
        XCTAssertThrowsError(try OpenAIClient.events(in: "{nope", host: "h")) { XCTAssertEqual(($0 as? RemoteFault)?.kind, .remoteProtocol) }
        XCTAssertThrowsError(try OpenAIClient.events(in: #"{"error":{"message":"out of memory"}}"#, host: "h")) {
            XCTAssertEqual(($0 as? RemoteFault)?.serverMessage, "out of memory")
        }
        XCTAssertThrowsError(try OpenAIClient.events(in: "[1,2]", host: "h")) { XCTAssertEqual(($0 as? RemoteFault)?.kind, .remoteProtocol) }
    }

    func testRemoteEntriesInFlagsAndConfig() throws {
        let e = try RemoteSpec.endpoint("openai:http://127.0.0.1:8080/v1#qwen2.5-7b", entry: nil, contextSize: nil)
        XCTAssertEqual(e.servedModel, "qwen2.5-7b")
        XCTAssertEqual(e.host, "127.0.0.1:8080")
        XCTAssertEqual(e.root.absoluteString, "http://127.0.0.1:8080")
        XCTAssertEqual(e.maxConcurrentRequests, 4)
        XCTAssertEqual(ModelNames.fromPath("openai:http://127.0.0.1:8080/v1#Qwen/Qwen2.5-7B"), "Qwen2.5-7B")
        XCTAssertEqual(ModelNames.fromPath("openai:http://localhost:8080/v1"), "localhost")
        // Plain http only on loopback; no credentials in the URL; the key's variable must be set.
        XCTAssertThrowsError(try RemoteSpec.endpoint("openai:http://gpu-box:8000/v1", entry: nil, contextSize: nil)) {
            XCTAssertTrue("\($0)".contains("https://"), "\($0)")
        }
        XCTAssertNoThrow(try RemoteSpec.endpoint("openai:https://gpu-box:8000/v1", entry: nil, contextSize: nil))
        XCTAssertNoThrow(try RemoteSpec.endpoint("openai:http://[::1]:8000/v1", entry: nil, contextSize: nil))
        XCTAssertThrowsError(try RemoteSpec.endpoint("openai:https://user:secret@host/v1", entry: nil, contextSize: nil)) {
            XCTAssertFalse("\($0)".contains("secret"), "the error does not repeat the credentials")
        }
        XCTAssertThrowsError(try RemoteSpec.endpoint("openai:not a url", entry: nil, contextSize: nil))

        let dir = NSTemporaryDirectory() + "parlance-remote-config-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func write(_ v: JSONValue) throws -> String {
            let path = dir + "/config.json"
            try Data(v.serialized().utf8).write(to: URL(fileURLWithPath: path))
            return path
        }
        var file = try ConfigFile.load(path: try write(["models": [
            "vllm": ["url": "https://gpu:8000/v1", "servedModel": "Qwen/Qwen2.5-7B-Instruct", "timeoutSeconds": 2.5, "maxConcurrentRequests": 16, "contextSize": 8192],
            "local": ["path": "m.gguf"],
        ]]))
        let settings = try RegistryBuilder().build(file: file, base: .init(modelPath: ""), explicit: [], fallback: "x.gguf")
        let vllm = try XCTUnwrap(settings.models.first { $0.name == "vllm" }?.remote)
        XCTAssertEqual(vllm.servedModel, "Qwen/Qwen2.5-7B-Instruct")
        XCTAssertEqual(vllm.timeout, .milliseconds(2500))
        XCTAssertEqual(vllm.maxConcurrentRequests, 16)
        XCTAssertEqual(vllm.contextSize, 8192)
        XCTAssertNil(settings.models.first { $0.name == "local" }?.remote)
        XCTAssertEqual(settings.models.first { $0.name == "local" }?.engine.modelPath, dir + "/m.gguf")
        // A flag giving a configured remote model another URL keeps its settings.
        var b = RegistryBuilder()
        b.flagModels = [("vllm", "openai:https://other:9000/v1#m2")]
        let moved = try XCTUnwrap(try b.build(file: file, base: .init(modelPath: ""), explicit: [], fallback: "x.gguf").models.first { $0.name == "vllm" }?.remote)
        XCTAssertEqual(moved.host, "other:9000")
        XCTAssertEqual(moved.servedModel, "Qwen/Qwen2.5-7B-Instruct", "the file's servedModel is kept")
        XCTAssertEqual(moved.maxConcurrentRequests, 16)

        XCTAssertThrowsError(try ConfigFile.load(path: try write(["models": ["both": ["path": "m.gguf", "url": "https://x/v1"]]]))) {
            XCTAssertTrue("\($0)".contains("exactly one of path"), "\($0)")
        }
        XCTAssertThrowsError(try ConfigFile.load(path: try write(["models": ["r": ["url": "https://x/v1", "timeoutSeconds": 0]]])))
        file = try ConfigFile.load(path: try write(["models": ["r": ["url": "https://x/v1", "apiKeyEnv": "PARLANCE_TEST_UNSET_KEY_VARIABLE"]]]))
        XCTAssertThrowsError(try RegistryBuilder().build(file: file, base: .init(modelPath: ""), explicit: [], fallback: "x.gguf")) {
            XCTAssertTrue("\($0)".contains("PARLANCE_TEST_UNSET_KEY_VARIABLE"), "\($0)")
        }
    }
}
