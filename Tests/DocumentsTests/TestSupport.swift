import Foundation
import ParlanceDocuments
import XCTest

/// Locates the repository's `Samples/` directory: next to this file (symlinks resolved),
/// then `$PARLANCE_REPO_ROOT`, then /work/main.
enum SampleFiles {
    static func url(_ name: String) throws -> URL {
        var candidates: [URL] = []
        for start in [URL(fileURLWithPath: #filePath), URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()] {
            var dir = start.deletingLastPathComponent()
            for _ in 0..<6 {
                candidates.append(dir.appendingPathComponent("Samples"))
                dir = dir.deletingLastPathComponent()
            }
        }
        if let root = ProcessInfo.processInfo.environment["PARLANCE_REPO_ROOT"] {
            candidates.append(URL(fileURLWithPath: root).appendingPathComponent("Samples"))
        }
        candidates.append(URL(fileURLWithPath: "/work/main/Samples"))
        for dir in candidates {
            let file = dir.appendingPathComponent(name)
            if FileManager.default.fileExists(atPath: file.path) { return file }
        }
        throw XCTSkip("sample \(name) not found (set PARLANCE_REPO_ROOT)")
    }

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: url(name)))
    }
}

/// Parses or fails the test with the thrown error.
func parsed(_ text: String, _ format: TranscriptFormat? = nil, file: StaticString = #filePath, line: UInt = #line)
    -> ParsedTranscript
{
    do {
        return try TranscriptParser.parse(text, format: format)
    } catch {
        XCTFail("unexpected error \(error)", file: file, line: line)
        return ParsedTranscript(format: .text, segments: [], warnings: [], plainText: "")
    }
}

/// The error a parse throws, or nil when it succeeds.
func parseError(_ text: String, _ format: TranscriptFormat? = nil) -> TranscriptParseError? {
    do {
        _ = try TranscriptParser.parse(text, format: format)
        return nil
    } catch {
        return error
    }
}

extension ParsedTranscript {
    /// The plain text between a segment's offsets (Unicode scalars).
    func slice(_ s: Segment) -> String {
        let scalars = Array(plainText.unicodeScalars)
        guard s.startOffset >= 0, s.endOffset <= scalars.count, s.startOffset <= s.endOffset else { return "<out of range>" }
        return String(String.UnicodeScalarView(scalars[s.startOffset..<s.endOffset]))
    }
}

/// The real transcripts in `../shared/realworld/` beside the package root (see its README).
/// They carry no licence to redistribute, so they are read in place and never copied here;
/// a test that needs one is skipped when it is absent.
enum RealWorldFiles {
    static func text(_ name: String) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let file = root.deletingLastPathComponent().appendingPathComponent("shared/realworld/\(name)")
        guard let data = FileManager.default.contents(atPath: file.path) else {
            throw XCTSkip("\(file.path) not found")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
