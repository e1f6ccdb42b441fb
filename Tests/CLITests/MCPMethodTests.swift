import Foundation
import JSONRPC
import ParlanceEngine
import ParlanceFeatures
import ParlanceInProcess
import ParlanceJSON
import ParlanceMCP
import ParlanceServer
import XCTest

@testable import ParlanceMCPServer

/// `parlance mcp`'s method table and typed params, over an in-process server with no
/// model (a path that does not exist): no tool call reaches a model here.
final class MCPMethodTests: XCTestCase {
    /// Params are read as they always were: a field of another type reads as absent,
    /// params that are not an object as empty; what is echoed or passed on stays as sent.
    func testParamsAreReadLeniently() {
        XCTAssertEqual(InitializeParams.read(["protocolVersion": "2024-11-05"]).protocolVersion, "2024-11-05")
        XCTAssertNil(InitializeParams.read(["protocolVersion": 5]).protocolVersion)
        XCTAssertNil(InitializeParams.read(.array([])).protocolVersion)
        let call = CallToolParams.read(["name": 5, "arguments": .null, "_meta": ["progressToken": "t"]])
        XCTAssertEqual(call.name, .int(5))
        XCTAssertEqual(call.arguments, .null)
        XCTAssertEqual(call.progressToken, .string("t"))
        XCTAssertNil(CallToolParams.read(["_meta": 3]).progressToken)
        XCTAssertNil(CallToolParams.read(.object(JSONObject())).arguments)
        let prompt = GetPromptParams.read(["name": "rewrite", "arguments": ["text": "hi", "n": 2, "z": .null]])
        XCTAssertEqual(prompt.name, .string("rewrite"))
        XCTAssertEqual(prompt.arguments, ["text": "hi", "n": "2", "z": "null"])
        XCTAssertEqual(GetPromptParams.read(["arguments": [1]]).arguments, [:])
        XCTAssertEqual(CancelledParams.read(["requestId": "a"]).requestId, .string("a"))
        XCTAssertNil(CancelledParams.read(["requestId": 1.5]).requestId)
        XCTAssertNil(ReadResourceParams.read(["uri": 5]).uri)
        XCTAssertEqual(SetLevelParams.read(["level": "debug"]).level, "debug")
    }

    func testTheTable() async throws {
        let tmp = NSTemporaryDirectory() + "parlance-mcp-\(UUID().uuidString)"
        let options = ServerOptions(models: .single(EngineConfig(modelPath: "/nonexistent/model.gguf")), maxMessageBytes: 1 << 20,
                                    services: ServiceOptions(cacheDirectory: tmp, dataDirectory: tmp, historyEnabled: false))
        let client = try InProcessClient(options: options, log: Logger(level: .off, file: nil))
        let (connection, _) = try XCTUnwrap(Connection.pair())
        let table = MCPMethods.table(MCPServer(connection: connection, client: client))

        // Only the methods that set what later requests read are answered in arrival order.
        let methods = [MCPWire.initialize, MCPWire.ping, MCPWire.setLevel, MCPWire.toolsList, MCPWire.toolsCall, MCPWire.resourcesList,
                       MCPWire.resourceTemplatesList, MCPWire.resourcesRead, MCPWire.promptsList, MCPWire.promptsGet]
        for m in methods { XCTAssertEqual(table.route(m).ordered, m == MCPWire.initialize || m == MCPWire.setLevel, m) }

        // The revision initialize negotiates is the one tools/list reads.
        let initialized = try await table.route(MCPWire.initialize).answer(.int(1), ["protocolVersion": "2024-11-05"]).get()
        XCTAssertEqual(initialized["protocolVersion"], .string("2024-11-05"))
        let old = try await table.route(MCPWire.toolsList).answer(.int(2), .object(JSONObject())).get()
        XCTAssertNil(old["tools"]?.arrayValue?.first?["outputSchema"])
        _ = await table.route(MCPWire.initialize).answer(.int(3), .object(JSONObject()))
        let new = try await table.route(MCPWire.toolsList).answer(.int(4), .object(JSONObject())).get()
        XCTAssertNotNil(new["tools"]?.arrayValue?.first?["outputSchema"])

        guard case .failure(let level) = await table.route(MCPWire.setLevel).answer(.int(5), ["level": "loud"]) else {
            return XCTFail("logging/setLevel took an unknown level")
        }
        XCTAssertEqual(level.code, .invalidParams)
        XCTAssertEqual(level.data, ["path": "/level"])
        guard case .failure(let unknown) = await table.route("server/discover").answer(.int(6), .object(JSONObject())) else {
            return XCTFail("server/discover answered")
        }
        XCTAssertEqual(unknown.code, .methodNotFound)
        XCTAssertEqual(unknown.message, "parlance mcp does not serve server/discover")
        XCTAssertEqual(unknown.data, ["method": "server/discover"])
        XCTAssertFalse(table.route("server/discover").ordered)
        await client.close()
    }
}
