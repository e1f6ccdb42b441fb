import Foundation
import ParlanceEngine
import ParlanceProtocol
import XCTest
@testable import ParlanceFeatures

/// The checks run on a growing text: a loop is found as soon as it is one, and text that
/// only repeats a few words, or quotes its source, goes on.
final class StreamWatchTests: XCTestCase {
    func testALoopIsFoundWhereItBecomesOne() {
        let unit = "Please send the report by Friday. "
        var text = "Dear team, " + unit
        XCTAssertNil(StreamWatch().check(text, delta: "."), "one sentence is not a loop")
        text += unit
        XCTAssertEqual(StreamWatch().check(text, delta: ".")?.code, .degenerate, "the same sentence written again")
        XCTAssertNotNil(StreamWatch.loop(in: "hello " + String(repeating: "hello ", count: 11) + "."))
        XCTAssertNotNil(StreamWatch.loop(in: "we will we will we will we will we will we will rock"  + " " + String(repeating: "you rock ", count: 6)))
    }

    func testOrdinaryTextGoesOn() {
        let w = StreamWatch(instructions: ["Rewrite the text below for a colleague, in the tone given after it."], source: "the review moves to Friday",
                            language: "en")
        for text in ["Dear team, the review moves to Friday. Please bring your mockups.",
                     "Yes, yes, yes. We can do that. The review moves to Friday.",
                     "It is very, very, very important that the review moves to Friday."] {
            XCTAssertNil(w.check(text, delta: "."), text)
        }
        XCTAssertNil(w.check("Dear team, the review moves", delta: " moves"), "checked only where a sentence ends")
        XCTAssertNil(StreamWatch(source: "Please send it now. Please send it now.").check("Please send it now. Please send it now.", delta: "."),
                     "a repetition the source has is copied, not a loop")
    }

    /// A stream stopped at an echo that began on its own line: cleaning keeps the rewrite
    /// before it, so the stop is a repair (the rest was cut away), not a failure of the text
    /// kept. A loop still in the text kept stays open.
    func testAStopIsSettledByWhatTheTextKeptStillShows() throws {
        let tone = "Tone: formal, polite, complete sentences."
        let w = StreamWatch(instructions: [tone], source: "hey Sam, the review moved to Friday. thx", language: "en")
        let streamed = "Dear Sam, the review has moved to Friday. Thank you.\nTone: formal, polite."
        let stop = try XCTUnwrap(w.check(streamed, delta: "."))
        XCTAssertEqual(stop.code, .instructionEcho)
        let kept = w.settled(stop, kept: "Dear Sam, the review has moved to Friday. Thank you.")
        XCTAssertFalse(kept.isOpen)
        XCTAssertEqual(kept.issue.repaired, true)
        XCTAssertTrue(kept.issue.message.hasSuffix(": removed"), kept.issue.message)
        XCTAssertTrue(w.settled(stop, kept: streamed).isOpen, "the echo is still in the text kept")
        let loop = "Please send it. " + String(repeating: "we will send it now ", count: 4)
        let loopStop = try XCTUnwrap(StreamWatch().check(loop + ".", delta: "."))
        XCTAssertTrue(StreamWatch().settled(loopStop, kept: loop + ".").isOpen)
    }

    /// A number or name the selection does not have stops a rewrite once its sentence is
    /// finished; a fact the repairs would put back in place, or a name of the instructions,
    /// does not; an answer is judged on its JSON field.
    func testAnInventedFactStopsTheStreamWhereItsSentenceEnds() throws {
        let selection = "hey Priyanka, the rent of £1,150 for Flat 4 is due on 3 March. thx"
        let w = StreamWatch(source: selection, facts: .init(scope: .selection, sources: [selection], names: ["Tone: diplomatic. Perhaps soften it."],
                                                            repairedAgainst: selection))
        XCTAssertNil(w.check("Dear Priyanka, the rent of £1,150 for Flat 4 is due on 3 March. Perhaps", delta: " Perhaps"))
        XCTAssertNil(w.check("Dear Priyanka, the rent is due at 10", delta: "."), "the sentence is not finished: 10 may become 10.5")
        let stop = try XCTUnwrap(w.check("Dear Priyanka, the rent is due at 10:30 on 3 March. Please", delta: ". Please"))
        XCTAssertEqual(stop.code, .unsupportedFact)
        XCTAssertTrue(stop.issue.message.contains("10"), stop.issue.message)
        XCTAssertNil(w.check("Dear Priya, the rent of £1,200 for Flat 4 is due. Please", delta: ". Please"),
                     "changed in place: the repair puts Priyanka and £1,150 back")
        XCTAssertNotNil(w.check("Dear Priyanka, Mr Thompson says the rent is due. Please", delta: ". Please"), "a name of nobody in the selection")

        let answer = StreamWatch(placeholders: false, facts: .init(scope: .segments, sources: ["Ana: the bottle costs 12 euros to ship"], field: "answer"))
        XCTAssertNil(answer.check(#"{"answer": "It costs 12 euros. It"#, delta: ". It"))
        XCTAssertEqual(answer.check(#"{"answer": "It costs 15 euros. It"#, delta: ". It")?.path, "answer")
        XCTAssertNil(answer.check(#"{"answer": "1. It costs 12 euros [3]. It"#, delta: ". It"), "a list marker and a segment id are not facts")
        XCTAssertNil(answer.check(#"{"answer": "1. "#, delta: " "), "a list marker, judged as soon as its mark is followed by a space")
    }

    func testEchoPlaceholderAndLanguageStopTheStream() {
        let w = StreamWatch(instructions: ["Rewrite the text below for a colleague, in the tone given after it."], source: "the review moves to Friday",
                            language: "en")
        XCTAssertEqual(w.check("Rewrite the text below for a colleague.", delta: ".")?.code, .instructionEcho)
        XCTAssertEqual(w.check("Dear [Name], the review moves to Friday.", delta: ".")?.code, .degenerate)
        XCTAssertEqual(w.check("Querido equipo, la revisión se traslada al viernes y por favor traigan sus maquetas.", delta: ".")?.code, .wrongLanguage)
        XCTAssertNil(StreamWatch(placeholders: false).check(#"{"answer": "Friday.", "citations": [3, 5]}"#, delta: "]"))
    }
}

/// A model that writes one sentence again and again until `maxTokens` (one delta a token, every 2 ms),
/// and counts what it produced before its consumer went away.
final class LoopingModel: LanguageModel, @unchecked Sendable {
    let produced = Counter()
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var n = 0
        func add() { lock.lock(); n += 1; lock.unlock() }
        var value: Int { lock.lock(); defer { lock.unlock() }; return n }
    }
    var name: String { "looping" }
    var contextSize: Int { 4096 }
    var parallel: Int { 1 }
    var identity: String { "looping" }
    var hasToolRole: Bool { false }
    var acceptsGrammar: Bool { false }
    func countTokens(_ text: String) -> Int { text.split(separator: " ").count }
    func render(_ messages: [ChatMessage], addAssistant: Bool) -> ModelPrompt { ModelPrompt(messages: messages, tokens: [1, 2, 3]) }
    func render(_ messages: [ChatMessage], history: [Token], after index: Int, endingAtContentOf end: Int?) -> ModelPrompt { render(messages, addAssistant: true) }
    func render(_ messages: [ChatMessage], endingAtContentOf end: Int) -> ModelPrompt { render(messages, addAssistant: false) }
    func describe(_ p: inout Provenance) {}
    func generate(_ request: ModelRequest) -> AsyncThrowingStream<GenerationEvent, any Error> {
        let words = ["Please", " send", " the", " report", " by", " Friday."].map { $0 }
        let counter = produced
        return AsyncThrowingStream { c in
            let task = Task {
                var text = ""
                c.yield(.prompt(evaluated: 3, total: 3, cached: 2))
                for i in 0..<request.maxTokens {
                    if Task.isCancelled { return }
                    let w = (i % words.count == 0 && i > 0 ? " " : "") + words[i % words.count]
                    text += w
                    counter.add()
                    c.yield(.text(w))
                    // A token every 2 ms, as a (fast) model would: the whole loop takes a second.
                    try? await Task.sleep(for: .milliseconds(2))
                }
                c.yield(.done(GenerationResult(text: text, tokens: [], finishReason: .length,
                                               stats: GenerationStats(promptTokens: 3, cachedPromptTokens: 0, generatedTokens: request.maxTokens,
                                                                      queuedMs: 0, firstTokenMs: 0, totalMs: 0))))
                c.finish()
            }
            c.onTermination = { _ in task.cancel() }
        }
    }
}

extension StreamWatchTests {
    /// A stream that loops is stopped where the loop shows, long before maxTokens, and the
    /// model stops producing: the tokens it did not write are the time saved.
    func testALoopingStreamIsStoppedBeforeItsEnd() async throws {
        let model = LoopingModel()
        let request = ModelRequest(prompt: model.render([ChatMessage(.user, "Rewrite.")]), settings: .init(seed: 1, maxTokens: 512))
        let out = try await Generation.stream(model, request, structured: false, progress: .none, part: nil,
                                              watch: StreamWatch(source: "send the report by Friday"))
        XCTAssertEqual(out.stoppedBy?.code, .degenerate)
        XCTAssertEqual(out.text, "Please send the report by Friday. Please send the report by Friday.")
        XCTAssertEqual(out.usage.promptTokens, 3)
        XCTAssertEqual(out.usage.cachedPromptTokens, 2, "a stopped stream's usage keeps what its prompt had cached")
        XCTAssertEqual(out.usage.generatedTokens, 12)
        // The producer sees the cancellation at its next token: it stops well short of 512.
        XCTAssertLessThan(model.produced.value, 256, "the generation stopped with the stream")
        print("StreamWatchTests: stopped after \(out.usage.generatedTokens) of 512 tokens; \(512 - model.produced.value) never generated")
        // Without the watch the same stream runs to maxTokens.
        let whole = try await Generation.stream(LoopingModel(), request, structured: false, progress: .none, part: nil)
        XCTAssertNil(whole.stoppedBy)
        XCTAssertEqual(whole.finishReason, .length)
    }
}
