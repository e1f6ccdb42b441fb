import XCTest
@testable import ParlanceFeatures
import ParlanceDocuments
import ParlanceProtocol

/// Results the models (SmolLM2-135M, Qwen2.5-Coder 0.5B and 1.5B) gave on the real transcripts of
/// ../shared/realworld/ (eval/realworld.py, 2026-12-07 and -08), each returned with `passed: true`,
/// and the rule that now fails it. The texts are the model's outputs, not the transcripts.
final class RealTranscriptFailuresTests: XCTestCase {
    /// A part note's label, the transcript's heading and a field name written as a heading
    /// are the prompt's markup, not a title, a topic or a summary.
    func testThePromptsMarkupIsNoContent() {
        for markup in ["Part 1 (5:) Bekah Hawrot Weigel", "Part 3 (14: 50-18): The interview with", "Transcript: 25} and it's not just about creating.",
                       "targetAudience**: [", "Summary: the episode"] {
            XCTAssertTrue(ListItemRules.promptMarkup(markup), markup)
            XCTAssertTrue(ListItemRules.promptWords(markup), markup)
        }
        for content in ["Partnerships with local schools", "Part-time work and study", "The transcript of a court case"] {
            XCTAssertFalse(ListItemRules.promptMarkup(content), content)
        }
        // A transcript that itself says "Part 1:" may be quoted.
        XCTAssertFalse(ListItemRules.promptMarkup("Part 1: the setup", source: "Welcome. Part 1: the setup. We begin with the hives."))
        let summary = AnalysisVerifier.copiesLines("Part 1 (5:) Bekah Hawrot Weigel, Reda: Hello and welcome to Season 8, Episode 5.", speakers: [])
            || ListItemRules.promptMarkup("Part 1 (5:) Bekah Hawrot Weigel, Reda: Hello and welcome to Season 8, Episode 5.")
        XCTAssertTrue(summary)
    }

    /// "When" after the question word places something; it asks for a time only as the
    /// question word ("What happened when Jutta retested…?" was read as a time question and
    /// its extractive quote passed).
    func testWhenAsAClauseAsksForNoTime() {
        XCTAssertNil(AskStream.AnswerType.asked(by: "What happened when Jutta retested the more mature models?"))
        XCTAssertEqual(AskStream.AnswerType.asked(by: "When did Marcus start to run the orders migration?"), .time)
        XCTAssertEqual(AskStream.AnswerType.asked(by: "¿Cuándo abrió Casa Brasa?"), .time)
        XCTAssertEqual(AskStream.AnswerType.asked(by: "Depuis quand les voitures n'ont-elles plus le droit de passer sur le pont ?"), .time)
        XCTAssertEqual(AskStream.AnswerType.asked(by: "Since when has the clinic opened on Sundays?"), .time)
        XCTAssertEqual(AskStream.AnswerType.asked(by: "How old was the film X-ray machine when it was replaced?"), .quantity)
        XCTAssertEqual(AskStream.AnswerType.asked(by: "¿Quiénes cocinaban en Casa Brasa cuando abrió?"), .name)
        XCTAssertNil(AskStream.AnswerType.asked(by: "Where is the config stored?"))
        // Suing for an amount is money: "two weeks" and "ten years" are no answer (the 1.5B's
        // extractive quote of real captions passed as a quantity).
        XCTAssertEqual(AskStream.AnswerType.asked(by: "How much were the copyright holders suing for?"), .amount)
        XCTAssertFalse(Answerability.holds(.amount, in: "liability this litigation in two weeks instead of ten years and we forced the copyright guys",
                                           units: [], questionWords: []))
        XCTAssertTrue(Answerability.holds(.amount, in: "sued for the GDP of Sweden two hundred and fifty billion dollars", units: [], questionWords: []))
        XCTAssertTrue(AnswerVerifier.saysNotFound("Reda is from an unspecified location."))
    }

    /// A title as long as the grammar lets it be was cut there.
    func testAChapterTitleTheGrammarCutFails() {
        let cut = String("Navigating Complex Adaptive Systems: Teaching and Learning during a Pandemic".padding(toLength: ChapterRules.maxCharacters, withPad: "s", startingAt: 0))
        XCTAssertEqual(cut.count, ChapterRules.maxCharacters)
        let source = SourceSupport(segments: [Segment(id: 1, speaker: nil, text: "Navigating complex adaptive systems during a pandemic is hard.",
                                                      startOffset: 0, endOffset: 1)])
        XCTAssertEqual(ChapterRules.titleProblem(cut, before: [], names: [], source: source, instructions: [])?.code, .length)
        XCTAssertNil(ChapterRules.titleProblem("Complex adaptive systems in a pandemic", before: [], names: [], source: source, instructions: []))
    }

    /// Titles the grammar cut and whose last space was trimmed, and titles that are pieces of
    /// a sentence (the 0.5B on a real podcast, 2026-12-08, all passed).
    func testAChapterTitleThatIsAPieceOfASentenceFails() {
        let source = SourceSupport(segments: [Segment(id: 1, speaker: nil, text: """
            Reda is a front-end developer from Morocco. He started a machine learning course, then uses what he learned. \
            We talk about going fast and having learning gaps in projects, and Reda and Bekah discuss their experience.
            """, startOffset: 0, endOffset: 1)])
        for title in ["Reda, a front-end developer based in Morocco, is",
                      "fast and having learning gaps in projects,", "Learning gaps in projects and the"] {
            XCTAssertEqual(ChapterRules.titleProblem(title, before: [], names: [], source: source, instructions: [])?.code, .length, title)
        }
        XCTAssertNil(ChapterRules.titleProblem("A front-end developer from Morocco", before: [], names: [], source: source, instructions: []))
        XCTAssertNil(ChapterRules.titleProblem("Learning gaps in projects", before: [], names: [], source: source, instructions: []))
    }

    /// What stands in for a dropped topic or takeaway is not talk: no "Didn't know" as a
    /// topic, no sentence a speaker says of themselves or to the listener as a takeaway.
    func testTalkDoesNotStandInForATopicOrATakeaway() {
        XCTAssertTrue(SourceSupport.conversational("Didn't know"))
        XCTAssertFalse(SourceSupport.conversational("First job"))
        XCTAssertTrue(SourceSupport.spoken("See like, \"Hey, I did this thing today and now I know something."))
        XCTAssertTrue(SourceSupport.spoken("Looking for, like, projects on YouTube, projects on, you know--."))
        XCTAssertFalse(SourceSupport.spoken("Machine learning may help us amplify the opportunities."))
        let text = """
            So I did this thing today and now I know something about the pipeline, you know, really. \
            The pipeline moved to the new cluster in March after the old cluster failed twice. \
            The new cluster runs the pipeline nightly and the old cluster is kept for backups.
            """
        let central = SourceSupport(segments: [Segment(id: 1, speaker: nil, text: text, startOffset: 0, endOffset: 1)])
            .centralSentences(statementsOnly: true)
        XCTAssertFalse(central.isEmpty)
        XCTAssertFalse(central.contains { $0.contains("I did") }, "\(central)")
    }

    /// A rewrite that tells "you" what the selection says of him fails; one that keeps him passes.
    func testARewriteThatTurnsHimIntoYouFails() {
        let quote = "He actually started his career in marine mechanics, which is pretty interesting. And during the pandemic, "
            + "decided to switch tracks into, you know, web development and front-end development in general."
        // "you know" is a filler: the selection says no "you" of anyone.
        let casual = "You started your career in marine mechanics, which is pretty cool. And during the pandemic, you decided to switch "
            + "tracks into web development and front-end development. It's a bit of a change, but it's definitely exciting!"
        XCTAssertEqual(RewriteVerifier.personChanged(casual, original: quote), "he")
        XCTAssertNil(RewriteVerifier.personChanged("He started his career in marine mechanics, which is pretty cool. During the pandemic he "
            + "switched to web development and front-end development.", original: quote))
        let findings = RewriteVerifier.check(.init(original: quote, rewrite: casual,
                                                   instructions: [], language: "en", tone: .casual))
        XCTAssertTrue(findings.contains { if case .personChanged = $0.subject { return true } else { return false } }, "\(findings)")
    }

    /// A summary whose first sentence went as unsupported is not left opening "It also…".
    func testASummaryLeftAsAContinuationIsNotRepairedByRemoval() {
        XCTAssertTrue(AnalysisVerifier.continues("It also provides advice on how to attract angel investors by gaining momentum, writing interesting blogs and hustle."))
        XCTAssertTrue(AnalysisVerifier.continues("Additionally, the speaker covers funding."))
        XCTAssertFalse(AnalysisVerifier.continues("Travis Kalanick tells how Scour was sued and how he raised money for Red Swoosh."))
        XCTAssertFalse(AnalysisVerifier.continues("It is a talk about startups."))
    }

    /// A summary that gives one speaker another's family name fails.
    func testASummaryThatMixesTwoSpeakersNamesFails() {
        let people: Set<String> = ["bekah hawrot weigel", "dan ott", "reda", "bekah", "dan"]
        let summary = "This transcript is a series of interviews with Reda Hawrot Weigel and Dan Ott, discussing their career journeys."
        XCTAssertEqual(AnalysisVerifier.mixedName(summary, people: people)?.written, "Reda Hawrot Weigel")
        XCTAssertEqual(AnalysisVerifier.mixedName(summary, people: people)?.person, "Bekah Hawrot Weigel")
        XCTAssertNil(AnalysisVerifier.mixedName("Bekah Hawrot Weigel and Dan Ott talk with Reda about his move into web development.", people: people))
        XCTAssertNil(AnalysisVerifier.mixedName("Dan and Reda talk about Ott's idea.", people: people))
        XCTAssertNil(AnalysisVerifier.mixedName("Sarah Ott and Dan Ott run the show.", people: ["dan ott", "sarah ott"]))
    }

    /// An audience is a description of people, not a sentence that names a person.
    func testAnAudienceIsADescriptionNotASentence() {
        for sentence in ["1. The interview process has been filled with countless moments that have shaped me into the person I am today.",
                         "the audience is a very important part of the process. The audience is not just people who want to buy products but it's"] {
            XCTAssertEqual(ListItemRules.audienceProblem(sentence, names: [])?.code, .audienceIsName, sentence)
        }
        for audience in ["People interested in disability and accessibility", "Developers who want to run models on their own laptops",
                         "Front-end developers changing careers, and anyone who mentors them"] {
            XCTAssertNil(ListItemRules.audienceProblem(audience, names: []), audience)
        }
    }

    /// A rewrite that keeps one of the selection's fifteen content words says something else.
    func testARewriteThatDropsTheSelectionsContentFails() throws {
        let quote = "He actually started his career in marine mechanics, which is pretty interesting. And during the pandemic, decided to switch tracks into, you know, web development and front-end development in general."
        let other = RewriteVerifier.check(.init(original: quote, rewrite: "Hey, team: the pandemic was really tough on the industry. Let's talk about it!",
                                                instructions: [], language: "en", tone: .casual))
        let lost = try XCTUnwrap(Self.contentLost(other), "\(other.map(\.message))")
        XCTAssertLessThanOrEqual(lost.kept, 2)
        XCTAssertGreaterThanOrEqual(lost.of, 12)
        let casual = RewriteVerifier.check(.init(original: quote, rewrite: "So he started out in marine mechanics, pretty cool right? Then the pandemic hit and he switched to web dev, front-end stuff mostly.",
                                                 instructions: [], language: "en", tone: .casual))
        XCTAssertNil(Self.contentLost(casual), "\(casual.map(\.message))")
        // A direct rewrite shortens, a rewrite into another language has other words: neither is judged by the share.
        let direct = RewriteVerifier.check(.init(original: quote, rewrite: "He moved from marine mechanics to web development.",
                                                 instructions: [], language: "en", tone: .direct))
        XCTAssertNil(Self.contentLost(direct))
    }

    static func contentLost(_ findings: [Finding]) -> (kept: Int, of: Int)? {
        for f in findings { if case .contentLost(let kept, let of) = f.subject { return (kept, of) } }
        return nil
    }
}
