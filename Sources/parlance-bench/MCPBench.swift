import Foundation
import ParlanceClient
import ParlanceJSON

/// One MCP tool call's overhead: the same forced call in a session, once to a tool the
/// client runs (`tool/call`, answered at once by this process) and once to an MCP server's
/// tool (the stand-in's `echo`, a Python process answering at once), alternating rounds.
/// Each call's time is the daemon's own (`toolCalls[0].ms`, from sending the call to its
/// answer); the overhead is the difference of the medians.
func mcpBench(daemonPath: String, modelPath: String, threads: Int, rounds: Int = 21) throws -> JSONValue {
    func r2(_ x: Double) -> JSONValue { .double((x * 100).rounded() / 100) }
    let standin = DaemonProcess.repoRoot.appendingPathComponent("tests/fixtures/mcp_standin.py").path
    let d = try DaemonProcess(args: ["--model", modelPath, "--threads", String(threads), "--mcp-server", "standin=python3 \(standin)"],
                              binary: daemonPath)
    _ = d.call("initialize", ["capabilities": ["tools": true]])
    let client = d.call("session/create", ["tools": [["name": "echo", "parameters": ["type": "object", "properties": [:]]]]]).result?["sessionId"] ?? .null
    let mcp = d.call("session/create", ["tools": [["name": "standin/echo"]]]).result?["sessionId"] ?? .null
    func once(_ sid: JSONValue, _ tool: String, answering: Bool) -> Double? {
        let id = d.start("session/respond", ["sessionId": sid, "prompt": "Echo.", "toolChoice": ["name": .string(tool)], "maxToolCalls": 1,
                                             "options": ["maxTokens": 1, "temperature": 0, "seed": 1]])
        if answering, let call = d.waitFor(timeout: 120, { $0["method"] == "tool/call" }), let cid = call["id"] {
            d.send(["jsonrpc": "2.0", "id": cid, "result": ["content": "echo"]])
        }
        return d.response(id)?.result?["toolCalls"]?.arrayValue?.first?["ms"]?.doubleValue
    }
    _ = once(client, "echo", answering: true)  // warm: the model, the stand-in's start
    _ = once(mcp, "standin/echo", answering: false)
    var viaClient: [Double] = [], viaMCP: [Double] = []
    for _ in 0..<rounds {
        if let ms = once(client, "echo", answering: true) { viaClient.append(ms) }
        if let ms = once(mcp, "standin/echo", answering: false) { viaMCP.append(ms) }
    }
    _ = d.call("shutdown")
    d.notify("exit")
    func median(_ xs: [Double]) -> Double { xs.isEmpty ? .nan : xs.sorted()[xs.count / 2] }
    let overhead = median(viaMCP) - median(viaClient)
    return ["toolCallMsMedian": r2(median(viaClient)), "mcpToolCallMsMedian": r2(median(viaMCP)), "mcpOverheadMsMedian": r2(overhead),
            "rounds": .int(min(viaClient.count, viaMCP.count)),
            "targets": ["mcpOverhead<=5ms": .bool(viaMCP.count == rounds && overhead <= 5)]]
}
