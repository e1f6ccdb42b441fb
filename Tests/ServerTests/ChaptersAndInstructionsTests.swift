import Foundation
import ParlanceDocuments
import ParlanceEngine
@testable import ParlanceFeatures
import ParlanceJSON
import ParlanceProtocol
import ParlanceSchema
import XCTest

/// `analysis/chapters`' layout and title checks, and `instructions` on the analyses (the
/// prompt, the cache key, the checks, the limit), without a model.
final class ChaptersAndInstructionsTests: XCTestCase {
    typealias Harness = DispatchTests.Harness

    static let segments: [Segment] = (1...8).map { i in
        Segment(id: i, start: Double(i - 1) * 10 + 1, end: Double(i) * 10, speaker: i < 5 ? "Maya" : "Theo",
                text: ["Welcome back to the show about local software.", "Today we talk about battery tests for the launch.",
                       "The battery tests failed twice, so the launch moves to March.", "Marketing needs the new date by Friday.",
                       "Now pricing: the basic plan costs less than last year.", "The pro plan keeps its price for teams.",
                       "Students get the basic plan for free.", "That is all for today, thanks for listening."][i - 1])
    }
    static var source: SourceSupport { SourceSupport(segments: segments) }
    static let names: Set<String> = ["maya", "theo", "maya lindqvist"]

    func drafts(_ pairs: [(String, Int)]) -> [ChapterDraft] { pairs.map { ChapterDraft(title: $0.0, startId: $0.1) } }

    // MARK: Layout

    func testLayoutOrdersByStartOneChapterPerSegmentAndStartsAtTheFirstSegment() {
        let laid = ChapterRules.layout(drafts([("Pricing plans", 5), ("Battery tests", 2), ("Again", 5), ("Nowhere", 99), ("Launch date", 4)]),
                                       segments: Self.segments)
        XCTAssertEqual(laid, drafts([("Battery tests", 1), ("Launch date", 4), ("Pricing plans", 5)]),
                       "sorted, the second chapter at segment 5 and the unknown id dropped, the first moved to segment 1")
    }

    func testChaptersCoverEverySegmentOnceWithContiguousTimes() {
        let chapters = ChapterRules.chapters(drafts([("Battery tests", 1), ("Pricing plans", 5)]), segments: Self.segments)
        XCTAssertEqual(chapters, [
            ["title": "Battery tests", "startSegmentId": 1, "endSegmentId": 4, "start": .double(1), "end": .double(41)],
            ["title": "Pricing plans", "startSegmentId": 5, "endSegmentId": 8, "start": .double(41), "end": .double(80)],
        ])
        XCTAssertEqual(ChapterRules.layoutFindings(chapters, segments: Self.segments), [])
    }

    func testPlainTextChaptersCarryOffsetsInsteadOfTimes() {
        let plain = [Segment(id: 1, text: "One."), Segment(id: 2, text: "Two.")].enumerated().map { i, s in
            var s = s
            s.sourceStart = i * 5
            s.sourceEnd = i * 5 + 4
            return s
        }
        let chapters = ChapterRules.chapters(drafts([("First part", 1), ("Second part", 2)]), segments: plain)
        XCTAssertEqual(chapters[1], ["title": "Second part", "startSegmentId": 2, "endSegmentId": 2, "startOffset": 5, "endOffset": 9])
    }

    func testLayoutFindingsCatchGapsOverlapsAndMissingEnds() {
        func chapter(_ s: Int, _ e: Int, _ t: Double) -> JSONValue { ["title": "T", "startSegmentId": .int(s), "endSegmentId": .int(e), "start": .double(t)] }
        let segs = Self.segments
        let messages = { (cs: [JSONValue]) in ChapterRules.layoutFindings(cs, segments: segs).map(\.message) }
        XCTAssertEqual(messages([chapter(2, 8, 11)]), ["the chapters do not start at the first segment (1)"])
        XCTAssertEqual(messages([chapter(1, 3, 1), chapter(5, 8, 41)]), ["the chapters leave a gap before chapter 2 (from segment 4)"])
        XCTAssertEqual(messages([chapter(1, 5, 1), chapter(4, 8, 31)]), ["the chapters overlap at chapter 2"])
        XCTAssertEqual(messages([chapter(1, 6, 1)]), ["the chapters do not reach the last segment (8)"])
        XCTAssertEqual(messages([chapter(1, 4, 31), chapter(5, 8, 1)]), ["the chapters are out of order in time (chapter 2)"])
        XCTAssertEqual(messages([]), ["the chapters are empty"])
        XCTAssertTrue(ChapterRules.layoutFindings([chapter(1, 8, 1)], segments: segs).allSatisfy(\.isOpen))
    }

    // MARK: Titles

    func check(_ pairs: [(String, Int)], instructions: [String] = [], mode: VerifyMode = .repair, min: Int = 1) -> Repaired<[ChapterDraft]> {
        ChapterRules.check(drafts(pairs), segments: Self.segments, names: Self.names, source: Self.source, instructions: instructions,
                           mode: mode, minChapters: min)
    }

    func testFailingTitlesAreMergedIntoTheirNeighbours() {
        let r = check([("Maya Lindqvist", 1), ("Battery tests and the launch", 2), ("Battery tests and the launch", 4),
                       ("Pricing of the basic plan and the pro plan for teams and students", 5), ("Pricing for students", 7)])
        XCTAssertEqual(r.value, drafts([("Battery tests and the launch", 1), ("Pricing for students", 7)]),
                       "the name, the repeat and the long title go; the first kept chapter starts at segment 1")
        XCTAssertEqual(r.findings.map(\.code), [.nameOnlyItem, .duplicateItem, .length])
        XCTAssertEqual(r.findings.map(\.path), ["chapters[0].title", "chapters[2].title", "chapters[3].title"])
        XCTAssertTrue(r.findings.allSatisfy { !$0.isOpen })
        XCTAssertTrue(r.findings[2].message.contains("has 13 words (at most 8)"), r.findings[2].message)
        XCTAssertTrue(Verification(checked: r.findings).passed)
    }

    func testBelowTheMinimumFailingChaptersStayAndTheResultDoesNotPass() {
        let r = check([("Maya", 1), ("Battery tests", 2), ("Theo", 5)], min: 3)
        XCTAssertEqual(r.value.map(\.title), ["Maya", "Battery tests", "Theo"])
        XCTAssertEqual(r.findings.filter(\.isOpen).count, 2)
        XCTAssertFalse(Verification(checked: r.findings).passed, "a result that fails its checks never comes back passed")
        XCTAssertEqual(check([("", 1)]).value.map(\.title), [""], "an empty title fails and stays when it is the only chapter")
        XCTAssertFalse(Verification(checked: check([("", 1)]).findings).passed)
    }

    func testReportModeChangesNothing() {
        let r = check([("Maya", 1), ("Battery tests", 2)], mode: .report)
        XCTAssertEqual(r.value, drafts([("Maya", 1), ("Battery tests", 2)]))
        XCTAssertEqual(r.findings.map(\.isOpen), [true])
    }

    func testATitleThatOnlyRepeatsTheUsersInstructionsFails() {
        let users = ["focus on what is said about pricing"]
        let r = check([("Battery tests", 1), ("What is said about pricing", 5)], instructions: users)
        XCTAssertEqual(r.findings.map(\.code), [.instructionEcho])
        XCTAssertEqual(r.value.map(\.title), ["Battery tests"])
        XCTAssertEqual(check([("Battery tests", 1), ("Pricing for students", 7)], instructions: users).findings, [],
                       "a title about the instructions' subject in the transcript's words passes")
    }

    func testChapterCountFollowsLength() {
        XCTAssertEqual(Chapters.count(tokens: 80, segments: 4), 1...2)
        XCTAssertEqual(Chapters.count(tokens: 2900, segments: 108), 2...8)
        XCTAssertEqual(Chapters.count(tokens: 5000, segments: 1), 1...1)
    }

    func testEachChapterStartsInItsOwnWindowOfSegmentIds() {
        let windows = Chapters.windows(Self.segments, count: 4)
        XCTAssertEqual(windows.map { $0.map(\.id) }, [[1], [2, 3], [4, 5], [6, 7]], "the first at segment 1, the others spread, disjoint, in order")
        XCTAssertEqual(Chapters.windows(Self.segments, count: 1).map { $0.map(\.id) }, [[1]])
        let schema = Chapters.windowSchema(windows)
        XCTAssertEqual(SchemaValidator.validate(["chapter1": ["startSegmentId": 1, "title": "Welcome"], "chapter2": ["startSegmentId": 3, "title": "Battery tests"],
                                                 "chapter3": ["startSegmentId": 5, "title": "Pricing"], "chapter4": ["startSegmentId": 7, "title": "Students"]],
                                                against: schema), [])
        XCTAssertFalse(SchemaValidator.validate(["chapter1": ["startSegmentId": 1, "title": "Welcome"], "chapter2": ["startSegmentId": 5, "title": "Pricing"],
                                                  "chapter3": ["startSegmentId": 5, "title": "Pricing"], "chapter4": ["startSegmentId": 7, "title": "Students"]],
                                                 against: schema).isEmpty, "chapter 2 cannot start in chapter 3's window")
    }

    // MARK: Instructions

    func testInstructionsGoOnTheTaskLineAfterTheTranscript() throws {
        let input = try Self.input()
        let plain = AnalysisPrompt.messages(input, task: "Summarize this transcript.")[1].content
        let focused = AnalysisPrompt.messages(input, task: "Summarize this transcript.", instructions: "focus on pricing")[1].content
        XCTAssertTrue(focused.hasSuffix("Summarize this transcript. Also follow the user's instructions: focus on pricing Write in English."), focused)
        let cut = plain.range(of: "Summarize this transcript.")!.lowerBound
        XCTAssertTrue(focused.hasPrefix(String(plain[..<cut])), "the transcript before the task is the same prefix, with or without instructions")
    }

    func testInstructionsArePartOfTheCacheKeyTrimmedAndBlankIsNone() throws {
        let input = try Self.input(), engine = LoopingModel()
        func key(_ i: String?) -> AnalysisCache.Key {
            AnalysisCache.Key(method: AnalyzeTags.name, input: input, params: AnalysisParams(DocumentInput(text: "x", instructions: i)), engine: engine)
        }
        XCTAssertNotEqual(key(nil), key("focus on pricing"))
        XCTAssertEqual(key("focus on pricing"), key("  focus on pricing\n"))
        XCTAssertEqual(key(nil), key("   "))
        XCTAssertEqual(AnalysisJob.instructions(" \n "), nil)
    }

    func testListItemsThatRepeatTheUsersInstructionsFailWithoutASourceToo() {
        let transcript = Self.segments.map(\.text).joined(separator: "\n")
        let users = ["focus on what is said about pricing"]
        XCTAssertEqual(ListItemRules.problem("said about pricing", kind: .tag, before: [], labels: [], names: [], instructions: users,
                                             echoSource: transcript), .instructionEcho)
        XCTAssertNil(ListItemRules.problem("basic plan", kind: .tag, before: [], labels: [], names: [], instructions: users, echoSource: transcript))
        XCTAssertNil(ListItemRules.problem("said about pricing", kind: .tag, before: [], labels: [], names: []), "no instructions, no echo check")
        let (o, v) = Highlights.verify(["keyMoments": [], "quotes": [], "actionItems": ["Focus on what is said about pricing.", "Ask for the student plan."]],
                                       names: [], repair: true, instructions: users, transcript: transcript)
        XCTAssertEqual(o["actionItems"], ["Ask for the student plan."])
        XCTAssertEqual(v.issues.map(\.code), [.instructionEcho])
    }

    func testInstructionsTooLongAreAPreciseErrorOnEveryAnalysis() {
        var h = Harness()
        _ = h.call(#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#)
        let long = String(repeating: "a", count: 1001)
        for (i, m) in ["analysis/summarize", "analysis/tags", "analysis/content", "analysis/highlights", "analysis/entities",
                       "analysis/worthIt", "analysis/chapters"].enumerated() {
            let req = JSONValue.object(JSONObject([("jsonrpc", "2.0"), ("id", .int(i + 1)), ("method", .string(m)),
                                                   ("params", ["text": "Hello there.", "instructions": .string(long)])]))
            let r = h.call(req.serialized())
            XCTAssertEqual(r["error"]?["code"], -32602, "\(m): \(r)")
            XCTAssertEqual(r["error"]?["data"]?["path"], "instructions", "\(m): \(r)")
            XCTAssertEqual(r["error"]?["data"]?["keyword"], "maxLength", "\(m): \(r)")
            XCTAssertEqual(r["error"]?["message"]?.stringValue?.contains("at most 1000 characters long, got 1001"), true, "\(m): \(r)")
        }
        let none = h.call(#"{"jsonrpc":"2.0","id":20,"method":"analysis/chapters","params":{}}"#)
        XCTAssertEqual(none["error"]?["code"], -32602)
        XCTAssertEqual(none["error"]?["data"]?["keyword"], "required")
    }

    static func input() throws -> AnalysisInput {
        let text = "1\n00:00:01,000 --> 00:00:04,000\nMaya: The basic plan costs less.\n\n2\n00:00:04,000 --> 00:00:08,000\nTheo: Students get it free.\n"
        return AnalysisInput(transcript: try TranscriptParser.parse(text, format: nil), contentHash: "h", language: LanguageSupport.resolve("en")!, uri: nil)
    }
}
