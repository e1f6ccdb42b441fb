import ParlanceDocuments
@testable import ParlanceFeatures
import ParlanceJSON
import ParlanceProtocol
import XCTest

/// The checks issue 77 added or changed, each on the case that came back `passed: true`
/// (or was thrown away) on 2026-12-07, without a model.
final class SummaryChecksTests: XCTestCase {
    /// The sample podcast, as parsed.
    static let sample: [Segment] = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Samples/podcast-sample.srt")
        let text = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
        return (try? TranscriptParser.parse(text, format: nil).segments) ?? []
    }()

    var source: SourceSupport { SourceSupport(segments: Self.sample) }

    func testASummaryThatRestatesIsSupportedAndAnInventionIsNot() throws {
        try XCTSkipIf(Self.sample.isEmpty, "Samples/podcast-sample.srt did not parse")
        // Said across the episode, in its own words: no one passage holds it.
        let restating = "Priya Raman of Fernhill Labs talks with Maya and Theo about running language models on the device."
        XCTAssertTrue(source.supported(restating), "documentCoverage \(source.documentCoverage(of: restating))")
        // The 135M model's summary of this sample (make demo, 2026-12-07): none of it is in the transcript.
        let invented = "A team of researchers from the University of Edinburgh revealed a quantum-resistant encryption algorithm."
        XCTAssertFalse(source.supported(invented), "documentCoverage \(source.documentCoverage(of: invented))")
    }

    func testAVacuousSummaryNamesNothingOfTheSubject() throws {
        try XCTSkipIf(Self.sample.isEmpty, "Samples/podcast-sample.srt did not parse")
        XCTAssertFalse(source.namesSubject("Here's the episode."))
        XCTAssertFalse(source.namesSubject("It was a great conversation with a lot of insights."))
        XCTAssertTrue(source.namesSubject("Priya explains how Fernhill Labs runs models on the device and what it means for battery life."),
                      "subject terms: \(source.subjectTerms())")
    }

    func testVacuousProseFailsUntilTheLastAttemptThenAnOutlineStandsIn() throws {
        try XCTSkipIf(Self.sample.isEmpty, "Samples/podcast-sample.srt did not parse")
        let check = AnalysisVerifier(fields: [], proseKeys: ["summary"], labels: ["summary"], names: [], source: source)
        let first = check.apply(["summary": "Here's the episode."])
        // Open: another attempt of the model is asked before anything stands in.
        XCTAssertTrue(first.blocking)
        XCTAssertEqual(first.findings.first?.code, .degenerate)
        XCTAssertEqual(first.value["summary"]?.stringValue, "Here's the episode.")
        // A next attempt that names the subject takes its place.
        let good = "Priya Raman of Fernhill Labs explains how her team runs models on the device."
        let topped = check.topUp(first, from: ["summary": .string(good)])
        XCTAssertFalse(topped.blocking, "\(topped.findings.map(\.message))")
        XCTAssertEqual(topped.value["summary"]?.stringValue, good)
        // None did: the outline of the parts, in order, with who said what.
        let (final, replaced) = check.finalRepair(first)
        XCTAssertTrue(replaced)
        XCTAssertFalse(final.blocking)
        let outline = try XCTUnwrap(final.value["summary"]?.stringValue)
        XCTAssertTrue(outline.hasPrefix("At 0"), outline)
        XCTAssertEqual(outline.components(separatedBy: "\u{201C}").count - 1, 3, outline)
        XCTAssertTrue(outline.contains(" says: "), outline)
    }

    func testAnOutlineCoversTheWholeEpisodeInOrder() throws {
        try XCTSkipIf(Self.sample.isEmpty, "Samples/podcast-sample.srt did not parse")
        let outline = try XCTUnwrap(source.outlineSummary(parts: 3))
        let times = outline.matches(of: /At (\d\d):(\d\d)/).map { Int($0.output.1)! * 60 + Int($0.output.2)! }
        XCTAssertEqual(times.count, 3, outline)
        XCTAssertEqual(times, times.sorted(), outline)
        let last = Self.sample.last!.start!
        XCTAssertGreaterThanOrEqual(Double(times.last!), last * 0.5, "the last part is from the episode's second half: \(outline)")
    }

    func testTagsAreLowercaseOnePerItemAndNoName() {
        let names: Set<String> = ["the local loop", "priya raman", "priya"]
        let repaired = ListItemRules.repair(["The Local Loop", "Eco-techs, TechMakers, Small Models", "#Battery Life", "on-device inference"],
                                            field: .init("tags", .tag, minItems: 3), labels: ["tags"], names: names)
        XCTAssertEqual(repaired.value, ["eco-techs", "techmakers", "small models", "battery life", "on-device inference"])
        XCTAssertEqual(repaired.findings.map(\.code), [.nameOnlyItem])
    }

    func testAnAnswerThatLoopsIsDegenerate() {
        let shown = [Segment(id: 1, start: 0, end: 5, speaker: nil, text: "The model was created by a team led by Jutta.", startOffset: 0, endOffset: 10)]
        let looped = "It was created by a team led by a team led by a team led by a team led by Jutta."
        XCTAssertEqual(StreamWatch.repeatedRun(in: looped), "by a team led")
        let subject = AnswerVerifier.degenerate(question: "Who created the model?", answer: looped, passages: .init(shown), instructions: [])
        XCTAssertEqual(subject, .answerLoops("by a team led"))
        XCTAssertNil(StreamWatch.repeatedRun(in: "It was created by a team led by Jutta, and the team led the study."))
    }

    func testARewriteThatCommentsOnItselfOrCopiesTheExampleFails() {
        let original = "We have three things left: the audit, the migration and the launch review."
        let comment = "Here is the revised text with every fact added; we changed \"three things\" to \"we have three outstanding projects\"."
        XCTAssertNotNil(TextChecks.refusal(in: comment, source: original))
        XCTAssertNil(TextChecks.refusal(in: "We have three outstanding projects: the audit, the migration and the launch review.", source: original))
        let copied = RewriteVerifier.check(.init(original: "The audit is next; please plan for it.",
                                                 rewrite: "Hey team: the quarterly review with me has been updated, and the audit is next.",
                                                 instructions: [], language: "en", examples: ComposePrompt.exampleTexts))
        XCTAssertTrue(copied.contains { if case .copiesExample(let f) = $0.subject { f.contains("quarterly") } else { false } },
                      "\(copied.map(\.message))")
        XCTAssertEqual(ComposePrompt.exampleNames(absentFrom: "The quarterly numbers are in.").filter { $0 == "quarterly" }, [])
        XCTAssertTrue(ComposePrompt.exampleNames(absentFrom: "The audit is next.").contains("quarterly"))
    }

    func testATakeawayThatIsAPieceOfASentenceFails() {
        // The 0.5B model's takeaways of the W3C talk (2026-12-07): caption lines, cut.
        XCTAssertTrue(ListItemRules.fragment("the product and services, which thanks to Moore's law are improving in"))
        XCTAssertTrue(ListItemRules.fragment("This affects all of our systems, whether it is the design,"))
        XCTAssertTrue(ListItemRules.fragment("Jutta's lawnmower of justice is an early model. This learning"))
        XCTAssertTrue(ListItemRules.fragment("The model needs to attend to all of the edges and will reduce disparity and be"))
        XCTAssertFalse(ListItemRules.fragment("Machine learning amplifies the advantage of being like the majority."))
        XCTAssertFalse(ListItemRules.fragment("Try a three-billion-parameter model at Q4_K_M first"))
    }

    func testATopicTheTranscriptAlsoWritesInLowerCaseIsNoName() {
        let source = SourceSupport(segments: [
            Segment(id: 1, start: 0, end: 4, speaker: "Jutta", text: "The title is We Count: Fair Treatment, Disability and Machine Learning.", startOffset: 0, endOffset: 10),
            Segment(id: 2, start: 4, end: 9, speaker: "Jutta", text: "People with a disability are outliers in the data that machine learning reads.", startOffset: 10, endOffset: 20),
            Segment(id: 3, start: 9, end: 12, speaker: "Jutta", text: "Welcome to the Open Web Workshop, where disability matters.", startOffset: 20, endOffset: 30),
        ])
        let names: Set<String> = ["disability", "we count", "open web workshop", "jutta"]
        XCTAssertNil(ListItemRules.problem("Disability", kind: .phrase, before: [], labels: [], names: names, source: source))
        XCTAssertEqual(ListItemRules.problem("Open Web Workshop", kind: .phrase, before: [], labels: [], names: names, source: source), .nameOnlyItem)
    }

    func testTopicsOfTalkAreNoTopics() {
        // The 44-minute podcast's topics on 2026-12-07, model-written and filled alike.
        for talk in ["Little bit", "Pretty much", "Feel like", "kind of stuff"] {
            XCTAssertEqual(ListItemRules.problem(talk, kind: .phrase, before: [], labels: [], names: []), .labelItem, talk)
        }
        XCTAssertNil(ListItemRules.problem("Front-end development", kind: .phrase, before: [], labels: [], names: []))
        let chat = SourceSupport(segments: (1...6).map { i in
            Segment(id: i, start: Double(i), end: Double(i + 1), speaker: "Dan",
                    text: "I feel like it's a little bit pretty much about front-end development and commit messages, you know.", startOffset: i, endOffset: i + 1)
        })
        XCTAssertFalse(chat.keyPhrases(excluding: []).contains { SourceSupport.conversational($0) }, "\(chat.keyPhrases(excluding: []))")
        XCTAssertTrue(chat.keyPhrases(excluding: []).contains("Commit messages"), "\(chat.keyPhrases(excluding: []))")
    }

    func testAblationIdsParse() {
        XCTAssertEqual(Ablation.parse(" summary.support, guard.word ,,"), ["summary.support", "guard.word"])
        XCTAssertEqual(Ablation.parse(nil), [])
        XCTAssertFalse(Ablation.known.isEmpty)
    }
}

/// The answerability profiles: one data file, which the daemon embeds and the eval reads.
final class AnswerabilityProfileTests: XCTestCase {
    func testTheEmbeddedProfilesAreTheDataFile() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../eval/fitted/answerability.json")
        let file = try String(contentsOf: url, encoding: .utf8)
        XCTAssertEqual(Answerability.fittedJSON.trimmingCharacters(in: .whitespacesAndNewlines), file.trimmingCharacters(in: .whitespacesAndNewlines),
                       "run python3 eval/fit_abstention.py --embed")
    }

    func testAModelWithoutAProfileOfItsOwnUsesTheDefault() {
        let smol = AnswerabilityProfile.of(model: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53")
        XCTAssertEqual(smol.name, "smollm2-135m-instruct-q4_1")
        XCTAssertEqual(AnswerabilityProfile.of(model: "http://127.0.0.1:8080 some-served-model").name, AnswerabilityProfile.fallback.name)
        XCTAssertEqual(smol.threshold, 0.5)
        XCTAssertFalse(smol.provenance.dataset.isEmpty)
        // Every weight names a feature the daemon computes.
        let known = ["questionCoverage", "focusCoverage", "typedCoverage", "typeMissing", "modelPassed", "modelSaysNotFound", "answerSupport",
                     "relationMissing", "sentenceCoverage"]
        XCTAssertTrue(Set(smol.weights.keys).isSubset(of: known), "\(smol.weights.keys)")
    }
}
