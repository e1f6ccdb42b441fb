import Foundation
import ParlanceClient
import ParlanceJSON
import XCTest

/// The checks on a model that can do the job (Qwen2.5-Coder-0.5B-Instruct, from PyPI through
/// scripts/setup-test-models.sh): what it writes well is kept, not thrown away. On
/// 2026-12-07 the support check replaced this model's summary of a real talk with "two
/// central sentences" and "repaired" its topics with phrases such as "Power tools".
final class CapableModelTests: XCTestCase {
    static let model: String? = {
        if let p = ProcessInfo.processInfo.environment["PARLANCE_TEST_QWEN"], !p.isEmpty { return p }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = [Daemon.repoRoot.appendingPathComponent("scripts/setup-test-models.sh").path, "qwen-0.5b"]
        let out = Pipe()
        p.standardOutput = out
        guard (try? p.run()) != nil else { return nil }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let path = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return p.terminationStatus == 0 && FileManager.default.fileExists(atPath: path) ? path : nil
    }()

    func testTheSummaryOfACapableModelIsKeptAndSaysWhatTheEpisodeIsAbout() throws {
        let model = try XCTUnwrap(Self.model, "scripts/setup-test-models.sh qwen-0.5b did not install the model")
        let d = try Daemon(args: ["--model", model])
        _ = d.initialize()
        let r = d.call("analysis/summarize", ["text": .string(Daemon.sampleSRT), "seed": 42, "workDoneToken": "sum"])
        let s = try XCTUnwrap(r.result, "\(r)")
        let v = try XCTUnwrap(s["verification"])
        XCTAssertEqual(v["passed"], true, "\(v)")
        // The model's own summary, not the outline that stands in when every attempt fails.
        XCTAssertNotEqual(v["fallback"], "extractive", "\(s)")
        let summary = s["summary"]?.stringValue ?? ""
        XCTAssertFalse(summary.hasPrefix("At "), summary)
        // It names what the episode is about: its guest, her company, or running models locally.
        let lower = summary.lowercased()
        XCTAssertTrue(["priya", "fernhill", "local", "device", "model"].contains { lower.contains($0) }, summary)

        // Tags: lowercase, one per item, none a name of the text.
        let t = try XCTUnwrap(d.call("analysis/tags", ["text": .string(Daemon.sampleSRT), "seed": 42]).result)
        let tags = t["tags"]?.arrayValue?.compactMap(\.stringValue) ?? []
        XCTAssertGreaterThanOrEqual(tags.count, 3, "\(t)")
        for tag in tags {
            XCTAssertEqual(tag, tag.lowercased(), "\(tags)")
            XCTAssertFalse(tag.contains(","), "\(tags)")
            XCTAssertFalse(["the local loop", "priya raman", "maya lindqvist", "theo brandt"].contains(tag), "\(tags)")
        }
        _ = d.call("shutdown")
    }
}
