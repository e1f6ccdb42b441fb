import Foundation
import XCTest
@testable import ParlanceEngine
@testable import ParlanceFeatures

/// The word guard: a banned word's one-token spellings are never sampled, and the last token
/// of a longer spelling only after the tokens before it; and through the real model, a
/// weekday the source does not say cannot be written.
final class WordGuardTests: XCTestCase {
    /// A tokenizer of a few words: " Saturday" is one token, "Saturday" two ("Sat", "urday").
    let vocabulary = [" Saturday", "Sat", "urday", " Saturdays", " saturday", " Sat", " Monday", "day"]
    func tokenize(_ text: String) -> [Token] {
        var out: [Token] = []
        var rest = Substring(text)
        while !rest.isEmpty {
            guard let (i, w) = vocabulary.enumerated().filter({ rest.hasPrefix($0.element) }).max(by: { $0.element.count < $1.element.count }) else {
                return out + [Token(100)]  // a word outside this vocabulary
            }
            out.append(Token(i))
            rest = rest.dropFirst(w.count)
        }
        return out
    }

    func testASpellingIsBannedWhereItWouldBeCompleted() {
        var g = WordGuard(words: ["saturday"], tokenize: tokenize)
        let known = g.banned.filter { $0 < vocabulary.count }.map { vocabulary[Int($0)] }
        XCTAssertEqual(Set(known), [" Saturday", " Saturdays", " saturday"], "one-token spellings, at every step")
        g.observe(1)  // "Sat"
        XCTAssertTrue(g.banned.contains(2), "after Sat, urday would complete Saturday")
        g.observe(6)  // " Monday"
        XCTAssertFalse(g.banned.contains(2), "urday only right after Sat")
        XCTAssertFalse(g.banned.contains(6), "Monday is not banned")
        XCTAssertTrue(WordGuard(words: [], tokenize: tokenize).isEmpty)
    }

    /// Months and weekdays a text does not say, as written, but the ones that are also verbs;
    /// a weekday in the plural names the weekday.
    func testTheCalendarWordsATextDoesNotSay() {
        let absent = Facts.absentCalendarWords("Tuesdays are our office day; from 1 April, and in mayo or sábado.")
        XCTAssertFalse(absent.contains("tuesday"))
        XCTAssertFalse(absent.contains("april"))
        XCTAssertFalse(absent.contains("sábado"))
        XCTAssertFalse(absent.contains("mayo"))
        for w in ["monday", "friday", "november", "miércoles", "août", "lundi"] { XCTAssertTrue(absent.contains(w), w) }
        for verb in ["may", "march", "mars"] { XCTAssertFalse(absent.contains(verb), verb) }
        XCTAssertEqual(Facts.unsupported(in: "Tuesday is our office day.", by: ["Tuesdays are our office day."]).map(\.text), [])
        XCTAssertEqual(Facts.missing(Facts.extract("Tuesdays are our office day."), in: "Tuesday is our office day.").map(\.text), [])
        XCTAssertEqual(Facts.unsupported(in: "The pool opens on Saturdays.", by: ["The pool opens on Saturday 12 April."]).map(\.text), ["Saturdays"],
                       "one Saturday is not every Saturday")
    }

    /// The worked examples' names a rewrite may not write: every one the selection does not
    /// say, the title "Dr" among them, and no calendar word (those are the calendar ban's);
    /// and the examples' subjects ("quarterly", "invoice") the selection does not say.
    func testTheExamplesNamesTheSelectionDoesNotSay() {
        let absent = ComposePrompt.exampleNames(absentFrom: "hey team, we're moving the design review to friday")
        XCTAssertEqual(Set(absent), ["Jonas", "Oakridge", "Magdalena", "Dr", "Okafor", "quarterly", "invoice"])
        let said = ComposePrompt.exampleNames(absentFrom: "Jonas, please ask Dr. Okafor about the quarterly review.")
        XCTAssertEqual(Set(said), ["Oakridge", "Magdalena", "invoice"])
        // After a title's full stop the sentence goes on: "Okafor" is a name there.
        XCTAssertEqual(Facts.extract("The review with Dr. Okafor moved.").map(\.text), ["Dr", "Okafor"])
    }

    /// The default model, greedy, naming the days of the week: without the guard it writes
    /// Thursday; with the weekdays the source does not say banned, no weekday but the source's.
    func testAWeekdayTheSourceDoesNotSayIsNeverWritten() async throws {
        let path = try XCTUnwrap(ProcessInfo.processInfo.environment["PARLANCE_DEFAULT_MODEL"], "set by scripts/setup.sh")
        let engine = try Engine(config: EngineConfig(modelPath: path, contextSize: 512, threads: 1, parallel: 1, cachedSequences: 0))
        let source = "The days of the week are Monday, Tuesday, Wednesday,"
        let prompt = engine.tokenize(source)
        func generate(_ guarded: Bool) async throws -> String {
            var r = GenerationRequest(prompt: prompt, settings: .init(sampling: SamplingOptions(temperature: 0, repeatPenalty: 1.0), maxTokens: 24))
            if guarded { r.wordGuard = engine.wordGuard(Facts.absentCalendarWords(source)) }
            for try await event in engine.generate(r) { if case .done(let result) = event { return result.text } }
            return ""
        }
        let others = ["thursday", "friday", "saturday", "sunday"]
        let free = try await generate(false)
        XCTAssertTrue(others.contains { free.lowercased().contains($0) }, "the premise: the model goes on naming weekdays (\(free))")
        let guarded = try await generate(true)
        XCTAssertFalse(others.contains { guarded.lowercased().contains($0) }, guarded)
        XCTAssertFalse(guarded.trimmingCharacters(in: .whitespaces).isEmpty)
    }
}
