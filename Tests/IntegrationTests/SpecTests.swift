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

    /// The README shows every method of the spec at least once, and each example's params
    /// validate against that method's params in the spec: the README cannot drift either.
    func testReadmeHasAValidExampleOfEveryMethod() throws {
        let readme = try String(contentsOf: DaemonProcess.repoRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let spec = try JSONParser.parse(try generatedSpec())
        var methods: [String: JSONValue] = [:]
        for m in spec["methods"]?.arrayValue ?? [] { if let n = m["name"]?.stringValue { methods[n] = m } }
        var shown = Set<String>()
        for line in readme.split(separator: "\n") where line.hasPrefix("{\"jsonrpc\"") {
            let message = try JSONParser.parse(String(line))
            let name = try XCTUnwrap(message["method"]?.stringValue, "\(line)")
            guard let method = methods[name] else {
                XCTFail("README shows \(name), which the spec does not have")
                continue
            }
            shown.insert(name)
            let params = message["params"]?.objectValue ?? JSONObject()
            let declared = method["params"]?.arrayValue ?? []
            for p in declared {
                guard let pname = p["name"]?.stringValue else { continue }
                if let value = params[pname] {
                    XCTAssertEqual(SchemaValidator.validate(value, against: p["schema"] ?? true), [], "README \(name) param \(pname)")
                } else {
                    XCTAssertNotEqual(p["required"], true, "README \(name) lacks required param \(pname)")
                }
            }
            let known = Set(declared.compactMap { $0["name"]?.stringValue })
            for key in params.keys where !known.contains(key) { XCTFail("README \(name) passes unknown param \(key)") }
        }
        XCTAssertEqual(Set(methods.keys).subtracting(shown).sorted(), [], "methods without an example in the README")
    }
}
