import Foundation
import ParlanceClient
import ParlanceJSON
import ParlanceSchema
import XCTest

/// protocol/parlance.openrpc.json is generated from the Swift types; this fails when the
/// committed file and the code drift apart (regenerate with `make spec`).
final class SpecTests: XCTestCase {
    func generatedSpec() throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: DaemonProcess.binary)
        p.arguments = ["--print-spec"]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    func testCommittedSpecMatchesTheCode() throws {
        let committed = try String(contentsOf: DaemonProcess.repoRoot.appendingPathComponent("protocol/parlance.openrpc.json"), encoding: .utf8)
        let generated = try generatedSpec()
        XCTAssertEqual(try JSONParser.parse(committed), try JSONParser.parse(generated),
                       "protocol/parlance.openrpc.json is stale: run `make spec` and commit it")
    }

    func testDiscoverAnswersTheSameDocumentAndListsEveryCapability() throws {
        let d = try DaemonProcess()
        let caps = d.initialize().result?["capabilities"]?["methods"]?.arrayValue?.compactMap(\.stringValue) ?? []
        let spec = try XCTUnwrap(d.call("rpc.discover").result)
        XCTAssertEqual(spec, try JSONParser.parse(try generatedSpec()))
        let specMethods = Set(spec["methods"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? [])
        for m in caps { XCTAssertTrue(specMethods.contains(m), "\(m) missing from the spec") }
        XCTAssertFalse(caps.isEmpty)
    }

    func testEverySchemaInTheSpecCompilesToAGrammar() throws {
        let spec = try JSONParser.parse(try generatedSpec())
        for m in spec["methods"]?.arrayValue ?? [] {
            guard let result = m["result"]?["schema"] else { continue }
            XCTAssertNoThrow(try GrammarBuilder.gbnf(for: result), m["name"]?.stringValue ?? "")
        }
    }
}
