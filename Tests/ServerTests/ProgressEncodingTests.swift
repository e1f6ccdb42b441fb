import ParlanceJSON
import ParlanceProtocol
import XCTest

/// `Progress.Value.json` (the per-token fast path) writes exactly what its Codable
/// encoding writes, for every field.
final class ProgressEncodingTests: XCTestCase {
    func testDirectJSONMatchesCodable() throws {
        let call = ToolCallProgress(ToolCallRecord(callId: "c1", name: "get_weather", arguments: ["city": "Paris"]), state: .started)
        typealias V = ParlanceProtocol.Progress.Value
        let partial: JSONValue = ["a": [1, 2.5, nil, true]]
        var values: [V] = []
        values.append(V(kind: .report, phase: .generating, delta: "Hello \"world\"\n"))
        values.append(V(kind: .report, phase: .generating, delta: "x", part: "v1.2", partial: partial))
        values.append(V(kind: .begin, title: "Summarizing", percentage: 0, cancellable: true))
        values.append(V(kind: .report, message: "prompt 3/9 tokens (1 cached)", phase: .prompt, promptTokens: 9, evaluatedTokens: 3, cachedTokens: 1))
        values.append(V(kind: .report, message: "queued", phase: .queued, queuePosition: 2))
        values.append(V(kind: .report, message: "attempt 2 kept", phase: .verifying, delta: "é 😀", part: "p", attempt: 2, restart: true))
        values.append(V(kind: .report, message: "calling get_weather", phase: .toolCall, toolCall: call))
        values.append(V(kind: .report, message: "12 MB of 98 MB", percentage: 12, phase: .downloading,
                        download: DownloadProgress(file: "m.gguf", completedBytes: 12, totalBytes: 98, bytesPerSecond: 4.5, etaSeconds: 19, resumedBytes: 3)))
        let end: ParlanceProtocol.Progress.Kind = .end
        values.append(V(kind: end, message: "done"))
        for v in values {
            XCTAssertEqual(v.json.serialized(sortKeys: true), try JSONValue(encoding: v).serialized(sortKeys: true))
        }
    }
}
