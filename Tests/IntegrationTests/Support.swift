import Foundation
import ParlanceClient
import ParlanceJSON
import XCTest

typealias Daemon = DaemonProcess

extension DaemonProcess {
    static var sampleSRT: String {
        try! String(contentsOf: repoRoot.appendingPathComponent("Samples/podcast-sample.srt"), encoding: .utf8)
    }
}

/// Progress phases that only a request that runs the model reports: waiting for a slot,
/// evaluating a prompt, generating, or a map-reduce step.
let modelWorkPhases: Set<String> = ["queued", "prompt", "generating", "map", "reduce"]

/// The request's `$/progress` (already collected with `DaemonProcess.progress(token:)`)
/// ended and never reported model work: what was served from a cache, or answered without
/// a model call, is observable as such instead of as "fast".
func assertNoModelWork(_ progress: [JSONValue], _ what: String, file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(progress.last?["kind"], "end", "\(what): progress did not end: \(progress)", file: file, line: line)
    let phases = progress.compactMap { $0["phase"]?.stringValue }
    XCTAssertTrue(modelWorkPhases.isDisjoint(with: phases), "\(what) ran the model: phases \(phases)", file: file, line: line)
}

/// The deltas of one part (nil: reports without a part) since its last `restart: true`
/// (a new attempt after a result failed verification), joined: what an editor shows.
func streamedText(_ progress: [JSONValue], part: String? = nil) -> String {
    var out = ""
    for v in progress where v["part"]?.stringValue == part {
        if v["restart"] == true { out = "" }
        out += v["delta"]?.stringValue ?? ""
    }
    return out
}
