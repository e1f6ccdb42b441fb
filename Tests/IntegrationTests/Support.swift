import Foundation
import ParlanceClient
import ParlanceJSON

typealias Daemon = DaemonProcess

extension DaemonProcess {
    static var sampleSRT: String {
        try! String(contentsOf: repoRoot.appendingPathComponent("Samples/podcast-sample.srt"), encoding: .utf8)
    }
}
