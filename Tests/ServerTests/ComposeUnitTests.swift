import Foundation
@testable import ParlanceFeatures
import ParlanceJSON
import ParlanceProtocol
import XCTest

/// The deterministic parts of compose/variations: word diff, formality, analysis.
final class ComposeUnitTests: XCTestCase {
    // MARK: Word diff

    /// A first line that announces the answer is not part of it, however it begins (eval,
    /// headcount-note-1: passed with the preamble).
    func testAPreambleBeforeTheAnswerIsDropped() {
        let answer = "Board note: Headcount is 212 against a plan of 230."
        XCTAssertEqual(ComposePrompt.clean("Here is the rewritten text:\n" + answer), answer)
        XCTAssertEqual(ComposePrompt.clean("I wonder if I could do it, but i'd like to make sure that the message is professional and diplomatic. Here's a rewritten version:\n\n" + answer), answer)
        // A message's own first line is kept.
        let list = "Hi all, the lift will be out of service from Monday 3 June, so please note the following arrangements for the week:\n- use the stairs"
        XCTAssertEqual(ComposePrompt.clean(list), list)
    }

    func testDiffAppliesExactly() {
        let pairs = [
            ("We have to move the launch to March.", "The launch will be moved to March."),
            ("Hello  world", "Hello world"),
            ("  leading and trailing  ", "leading, and trailing!"),
            ("", "Something new."),
            ("Something old.", ""),
            ("Same text.", "Same text."),
            ("Café déjà vu 🚀 rocks", "Café vu 🚀 really rocks"),
            ("a b c d e f", "f e d c b a"),
            ("Line one.\nLine two.", "Line one.\n\nLine 2."),
        ]
        for (a, b) in pairs {
            let d = WordDiff.diff(a, b)
            XCTAssertEqual(WordDiff.apply(d.hunks, to: a), b, "\(a) → \(b): \(d.hunks)")
            for h in d.hunks {
                let ua = Array(a.utf16), ub = Array(b.utf16)
                XCTAssertEqual(String(decoding: ua[h.originalStart..<h.originalEnd], as: UTF16.self), h.original)
                XCTAssertEqual(String(decoding: ub[h.replacementStart..<h.replacementEnd], as: UTF16.self), h.replacement)
            }
        }
        XCTAssertEqual(WordDiff.diff("Same text.", "Same text.").hunks, [])
    }

    func testDiffHunksAreWordLevel() {
        let d = WordDiff.diff("Marketing needs the new date by Friday.", "Marketing needs a new date by Monday.")
        XCTAssertEqual(d.hunks.map(\.original), ["the", "Friday"])
        XCTAssertEqual(d.hunks.map(\.replacement), ["a", "Monday"])
        XCTAssertEqual(d.hunks[0].originalStart, 16)
        XCTAssertEqual(d.hunks[0].originalEnd, 19)
        XCTAssertEqual(d.wordsKept, 5)
        XCTAssertEqual(d.wordsRemoved, 2)
        XCTAssertEqual(d.wordsAdded, 2)
        XCTAssertEqual(d.similarity, 5.0 / 7.0, accuracy: 0.001)
        // Contractions and hyphenated words stay one token.
        XCTAssertEqual(WordDiff.tokens("don't re-run it").map(\.text), ["don't", "re-run", "it"])
    }

    func testDiffOffsetsAreUTF16() {
        let d = WordDiff.diff("🚀 go now", "🚀 go later")
        XCTAssertEqual(d.hunks.count, 1)
        XCTAssertEqual(d.hunks[0].originalStart, 6)  // 🚀 is 2 UTF-16 units
        XCTAssertEqual(d.hunks[0].original, "now")
    }

    // MARK: Formality

    func testFormalityOrdersTexts() {
        let formal = "Dear colleagues, please note that the product launch has been postponed to March. We kindly request that the marketing department provide the revised date prior to Friday."
        let plain = "The launch moves to March. Marketing needs the new date by Friday."
        let casual = "hey guys!! gonna push the launch to march, it's kinda annoying lol. can u grab the new date by friday? thx!"
        let f = Formality.score(formal), p = Formality.score(plain), c = Formality.score(casual)
        XCTAssertGreaterThan(f, 0.7, "formal \(f)")
        XCTAssertLessThan(c, 0.3, "casual \(c)")
        XCTAssertGreaterThan(f, p)
        XCTAssertGreaterThan(p, c)
        for s in [f, p, c] { XCTAssertTrue((0...1).contains(s)) }
        XCTAssertEqual(Formality.score(formal), f, "deterministic")
        XCTAssertEqual(Formality.score(""), 0.5)
    }

    /// In Spanish, French, German, Italian, Portuguese and Norwegian the address and the words of
    /// letters and of chat order the texts; English's markers (contractions, "you") do not
    /// apply. Swift and the eval's Python port (eval/parlance_eval/formality.py) agree.
    func testFormalityOrdersTextsInOtherLanguages() throws {
        let texts: [(String, formal: String, casual: String)] = [
            ("es", "Estimada señora García: le informamos de que la reparación de la caldera se aplaza al jueves 14 de marzo. Le rogamos disculpe las molestias. Atentamente, la administración.",
             "¡Hola Marta! Oye, te cuento que el técnico no viene hasta el jueves 14 de marzo. Perdona, ¡te descontamos 50 euros, vale?"),
            ("fr", "Madame, Monsieur, nous vous informons que la sortie au musée est reportée au mardi 3 décembre. Veuillez agréer nos salutations distinguées.",
             "Salut ! Coucou à toi, la sortie au musée c'est mardi 3 décembre, t'inquiète, ta participation reste valable. Bises !"),
            ("de", "Sehr geehrte Frau Weber, hiermit möchten wir Ihnen mitteilen, dass die Lieferung am Montag eintrifft. Mit freundlichen Grüßen.",
             "Hallo Anna! Hey, dein Paket kommt am Montag, echt super. Ich sag dir dann Bescheid, okay?"),
            ("it", "Gentile signora Rossi, desideriamo comunicarLe che la consegna è prevista per lunedì. Cordiali saluti.",
             "Ciao Giulia! Ehi, il tuo pacco arriva lunedì, dai. Ti scrivo appena so qualcosa, ok?"),
            ("pt", "Prezada senhora Silva, informamos que a entrega está prevista para segunda-feira. Atenciosamente, a equipe.",
             "Oi Ana! Olha, teu pacote chega na segunda, tá? Te aviso quando souber, valeu!"),
            ("nb", "Vi vil herved informere Dem om at leveransen er forsinket til mandag. Vi beklager ulempen. Med vennlig hilsen, kundeservice.",
             "Hei Kari! Heisann, pakka di kommer på mandag, digg ass. Jeg sier ifra, okei? Klem!"),
        ]
        for (language, formal, casual) in texts {
            let f = Formality.score(formal, language: language), c = Formality.score(casual, language: language)
            XCTAssertGreaterThan(f, 0.6, "\(language) formal \(f)")
            XCTAssertLessThan(c, 0.35, "\(language) casual \(c)")
            XCTAssertEqual(ToneCheck.check(formal, tone: .formal, original: casual, language: language), [], language)
            XCTAssertEqual(ToneCheck.check(casual, tone: .casual, original: formal, language: language), [], language)
            XCTAssertEqual(ToneCheck.check(casual, tone: .formal, original: formal, language: language).first?.marker, "slang", language)
            XCTAssertEqual(ToneCheck.check(formal, tone: .casual, original: casual, language: language).map(\.marker), ["formality"], language)
            // A dialect tag counts as its language.
            XCTAssertEqual(Formality.score(formal, language: language + "-XX"), f)
        }
        // English's markers put the Spanish formal letter below formal's threshold.
        XCTAssertLessThan(Formality.score(texts[0].formal), ToneCheck.formalAtLeast)
        // "Sie" opening a sentence is "she" or "they"; inside one, capitalised, it is the formal address.
        XCTAssertLessThan(Formality.score("Sie kommt am Montag. Das Paket ist groß.", language: "de"),
                          Formality.score("Kommen Sie am Montag. Das Paket ist groß.", language: "de"))
    }

    // MARK: Analysis

    func testKeyPointsQuoteTheSelectionAndSkipGreetings() {
        let text = "Hi team,\nWe have to move the launch to March because the battery tests failed twice. Marketing needs the new date by Friday. Thanks!"
        let points = ComposeAnalyzer.keyPoints(text)
        XCTAssertEqual(points, ["We have to move the launch to March because the battery tests failed twice.", "Marketing needs the new date by Friday."])
        XCTAssertEqual(ComposeAnalyzer.keyPoints("Ship it."), ["Ship it."])
    }

    func testPreservationIsChecked() {
        let point = "Marketing needs the new date by Friday."
        XCTAssertTrue(ComposeAnalyzer.isPreserved(point, in: "The marketing team requires the new date before Friday."))
        XCTAssertFalse(ComposeAnalyzer.isPreserved(point, in: "We are excited about the launch."))
        let numbers = "The budget grows by 25 percent in 2026."
        XCTAssertFalse(ComposeAnalyzer.isPreserved(numbers, in: "The budget grows by 20 percent in 2026."), "a changed number is a lost point")
        XCTAssertTrue(ComposeAnalyzer.isPreserved("The tests failed twice.", in: "Both tests failed 2 times."))
        let (kept, missing) = ComposeAnalyzer.check([point, numbers], against: "Marketing needs the date by Friday.")
        XCTAssertEqual(kept, [point])
        XCTAssertEqual(missing, [numbers])
    }

    func testSentimentAndAudience() {
        XCTAssertEqual(ComposeAnalyzer.sentiment("Great work everyone, I'm really pleased with the progress."), .positive)
        XCTAssertEqual(ComposeAnalyzer.sentiment("Unfortunately the release is delayed again and the tests failed."), .negative)
        XCTAssertEqual(ComposeAnalyzer.sentiment("The meeting is at 3 pm in room 4."), .neutral)
        XCTAssertEqual(ComposeAnalyzer.sentiment("Thanks for the great demo, but the outage was a problem."), .mixed)
        XCTAssertEqual(ComposeAnalyzer.sentiment("This is not good."), .negative)
        XCTAssertEqual(ComposeAnalyzer.audience("Q3 revenue is below forecast; the board wants a budget decision."), .executive)
        XCTAssertEqual(ComposeAnalyzer.audience("Thank you for your order. Your invoice and the contract renewal are attached."), .client)
        XCTAssertEqual(ComposeAnalyzer.audience("Team, the sprint ends Friday; everyone please update your tickets."), .team)
        XCTAssertEqual(ComposeAnalyzer.audience("Today we are announcing a new community park, open to the public."), .public)
        XCTAssertEqual(ComposeAnalyzer.audience("Could you look at my PR when you have a minute?"), .peer)
    }
}
