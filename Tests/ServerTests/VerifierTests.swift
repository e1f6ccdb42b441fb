import ParlanceDocuments
@testable import ParlanceFeatures
import ParlanceProtocol
import XCTest

/// Every verifier judged on passing and failing examples, without a model.
final class VerifierTests: XCTestCase {
    // MARK: Facts

    func testFactsCompareNumbersByValueAndNamesExactly() {
        let source = "Hi Priyanka, the rent for March is £1,150 and is due on Friday. Tom will collect 2.5 kg of keys."
        let facts = Facts.extract(source)
        XCTAssertEqual(Set(facts.map(\.text)), ["£1,150", "2.5", "Priyanka", "March", "Friday", "Tom"])
        // Same values written differently: nothing missing.
        XCTAssertEqual(Facts.missing(facts, in: "Dear Priyanka, March rent (£1150) is due Friday; Tom collects 2.50 kg."), [])
        // A changed amount and a shortened name are misses, whatever else overlaps.
        let changed = Facts.missing(facts, in: "Hi Priya, the rent for March is £1,200 and is due on Friday. Tom will collect 2.5 kg of keys.")
        XCTAssertEqual(Set(changed.map(\.text)), ["£1,150", "Priyanka"])
    }

    func testSentenceInitialWordsAreNotNamesUnlessCapitalisedElsewhere() {
        let facts = Facts.extract("Unfortunately the launch slipped. Marketing needs the date. We told Marketing on Monday.")
        XCTAssertEqual(Set(facts.map(\.text)), ["Marketing", "Monday"])
    }

    func testNumberWordsAndDigitsAreTheSameFact() {
        let facts = Facts.extract("We tested the hives twice and found three queens.")
        XCTAssertEqual(Facts.missing(facts, in: "The hives were tested 2 times; 3 queens were found."), [])
        XCTAssertEqual(Facts.missing(facts, in: "The hives were tested and queens were found.").map(\.key).sorted(), ["2", "3"])
    }

    func testUnsupportedFactsAreThoseNowhereInTheSources() {
        let sources = ["We started testing mite counts every two weeks.", "Ana keeps 12 hives in Leeds."]
        XCTAssertEqual(Facts.unsupported(in: "Every two weeks; Ana has 12 hives.", by: sources), [])
        XCTAssertEqual(Set(Facts.unsupported(in: "About 40% of hives in Bristol failed.", by: sources).map(\.text)), ["40%", "Bristol"])
    }

    // MARK: Text checks

    func testLanguageRejectsPunctuationTimestampsAndRepeats() {
        for bad in ["\"][\"", "2018-03-15 19:47:46.300 +0000", "42", "12:30", "Ben, Ben, Ben!", "", "  ", "[3]"] {
            XCTAssertFalse(TextChecks.isLanguage(bad), bad)
        }
        for good in ["They test mite counts every two weeks.", "Cada dos semanas.", "Tous les quinze jours, le mardi."] {
            XCTAssertTrue(TextChecks.isLanguage(good), good)
        }
    }

    func testRefusalIsOnlyARefusalWhenTheSourceDidNotSayIt() {
        XCTAssertNotNil(TextChecks.refusal(in: "I'm sorry for the misunderstanding, but as a language AI, I don't have the capability to do that."))
        XCTAssertNotNil(TextChecks.refusal(in: "As an AI language model I cannot rewrite this."))
        // An apology for what the writer cannot do is a rewrite only of a text that says so.
        XCTAssertNil(TextChecks.refusal(in: "Sorry, I can't make Friday; could we meet on Monday?", source: "I won't be able to make Friday. Monday?"))
        XCTAssertNotNil(TextChecks.refusal(in: "Sorry, I can't rewrite that. Could we meet on Monday?", source: "Moving the review to Monday."))
        XCTAssertNotNil(TextChecks.refusal(in: "Sorry, but I'm unable to do this.", source: "The review won't happen on Friday."))
        XCTAssertNotNil(TextChecks.refusal(in: "Renewal is on 1 December. I'm sorry, I don't have the ability to provide a response atm."))
        // An empathetic variation of the compose tuning part ended so, and passed.
        XCTAssertNotNil(TextChecks.refusal(in: "I propose renegotiating with Maersk. I'm sorry sorry, but I can't help it."))
        XCTAssertNotNil(TextChecks.refusal(in: "I apologise, but I can't write this email for you."))
        XCTAssertNotNil(TextChecks.refusal(in: "Lo siento, no puedo reescribir este mensaje."))
        // An apology that says "I'm sorry, but I" in the selection may say it in the rewrite.
        let source = "I'm sorry, but I cannot attend the review on Friday."
        XCTAssertNil(TextChecks.refusal(in: "I am sorry, but I cannot attend Friday's review. I'm sorry, but I will be away.", source: source))
    }

    func testEchoFindsThePromptsOwnWordsButNotTheUsers() {
        let instructions = ["Rewrite the text below for a colleague, in the tone given after it. Keep every fact; add nothing.", "Tone: casual. Friendly and relaxed"]
        XCTAssertNotNil(TextChecks.echo(in: "Rewrite the text.", instructions: instructions, source: "We moved the launch."))
        XCTAssertNotNil(TextChecks.echo(in: "Rewrite the text below for a colleague please", instructions: instructions, source: "We moved the launch."))
        XCTAssertNil(TextChecks.echo(in: "Hey, we moved the launch to March.", instructions: instructions, source: "We moved the launch to March."))
        // Words the selection itself contains are not an echo.
        XCTAssertNil(TextChecks.echo(in: "Please keep every fact you add nothing", instructions: instructions,
                                     source: "Please keep every fact you add nothing"))
    }

    // MARK: Rewrites

    func testRewriteVerifierPassesAFaithfulRewrite() {
        let issues = RewriteVerifier.check(.init(
            original: "Hi Priyanka, the rent for March is £1,150 and is due on Friday.",
            rewrite: "Dear Priyanka, please note that the March rent of £1,150 is due on Friday.",
            instructions: ["Rewrite the text below for a colleague, in the tone given after it."], language: "en"))
        XCTAssertEqual(issues, [])
    }

    func testRewriteVerifierNamesEachFailure() {
        let original = "We have to reject your proposal because the budget of $40,000 was cut. Marta will call you on Monday."
        let instructions = ["Rewrite the text below for a client, in the tone given after it. Keep every fact; add nothing.", "Tone: diplomatic."]
        func codes(_ rewrite: String, language: String = "en") -> Set<VerificationIssueCode> {
            Set(RewriteVerifier.check(.init(original: original, rewrite: rewrite, instructions: instructions, language: language)).map(\.code))
        }
        XCTAssertEqual(codes("Rewrite the text with a diplomatic tone."), [.instructionEcho, .factMissing])
        XCTAssertTrue(codes("I'm sorry for the misunderstanding, but as a language AI, I don't have the capability to rewrite text.").contains(.refusal))
        XCTAssertEqual(codes(original), [.unchanged])
        XCTAssertEqual(codes("Regrettably we must decline your proposal, since the budget of $45,000 was cut. Marta will call you on Monday."), [.factMissing, .unsupportedFact], "$45,000 is both a changed and an invented figure")
        XCTAssertEqual(codes("Lamentablemente debemos rechazar su propuesta porque el presupuesto de $40,000 fue recortado. Marta le llamará el Monday."),
                       [.wrongLanguage])
        XCTAssertEqual(codes("\"]["), [.degenerate])
    }

    func testRefinementMustNotRepeatTheTextItRevises() {
        let previous = "The budget of $40,000 was cut, so we must decline."
        let issues = RewriteVerifier.check(.init(original: "We reject it: the $40,000 budget was cut.", rewrite: previous, instructions: [],
                                                 language: "en", previous: previous))
        XCTAssertEqual(issues.map(\.code), [.unchanged])
    }

    // MARK: Answers

    let segments = [
        Segment(id: 1, start: 0, end: 4, speaker: "Host", text: "Welcome back to Rooftop Hives, I'm here with Ana.", startOffset: 0, endOffset: 10),
        Segment(id: 2, start: 4, end: 9, speaker: "Ana", text: "We keep twelve hives on three roofs in Leeds.", startOffset: 10, endOffset: 20),
        Segment(id: 3, start: 9, end: 15, speaker: "Ana", text: "We started testing mite counts every two weeks after a bad winter.", startOffset: 20, endOffset: 30),
        Segment(id: 4, start: 15, end: 20, speaker: "Host", text: "And the honey?", startOffset: 30, endOffset: 40),
    ]

    func testAnswerCitingTheGreetingGetsTheSupportingSegment() {
        let v = AnswerVerifier.check(question: "How often do they test mite counts?", answer: "They test mite counts every two weeks.",
                                     cited: [1], shown: segments, instructions: [])
        XCTAssertEqual(v.citations, [3])
        XCTAssertFalse(v.blocking, "citation repairs do not block: \(v.issues)")
        XCTAssertTrue(v.issues.contains { $0.code == .unsupportedCitation && $0.repaired == true })
    }

    func testTheSegmentAnAnswersFactsComeFromIsCited() {
        let shown = [
            Segment(id: 1, speaker: "Host", text: "Welcome to the Casa Brasa podcast: today, the story of Casa Brasa."),
            Segment(id: 2, speaker: "Ana", text: "Casa Brasa is our family restaurant, and I run the kitchen."),
            Segment(id: 3, speaker: "Ana", text: "We opened the doors on the 3rd of March 2019, after a year of building work."),
            Segment(id: 4, speaker: "Host", text: "And what is on the menu at Casa Brasa?"),
        ]
        let v = AnswerVerifier.check(question: "What date did Casa Brasa start?", answer: "On the 3rd of March 2019.", cited: [],
                                     shown: shown, instructions: [])
        XCTAssertTrue(v.citations.contains(3), "the segment holding 3, March and 2019: \(v.citations)")
        XCTAssertLessThanOrEqual(v.citations.count, 3)
        // A fact that most segments hold ("Casa Brasa") says nothing of where an answer comes from.
        XCTAssertNil(AnswerVerifier.factSource(question: "Who runs it?", answer: "Casa Brasa.", passages: .init(shown)))
    }

    /// The segment that states the value asked for beside its subject is cited, however the
    /// model answered, though retrieval ranks the segments that repeat the question's words first.
    func testTheEvidencePassageIsCited() {
        let shown = [
            Segment(id: 1, speaker: "Host", text: "The new mould is the big topic today, the new mould for the charging case."),
            Segment(id: 2, speaker: "Lena", text: "Everyone agrees the new mould was needed, because the old mould cracked twice."),
            Segment(id: 3, speaker: "Lena", text: "The mould maker in Porto delivered the new mould in May."),
            Segment(id: 4, speaker: "Felix", text: "It came to 12,000 euros in the end."),
            Segment(id: 5, speaker: "Host", text: "Next, the posters for the new mould campaign."),
        ]
        let question = "How much did the new mould cost?"
        let evidence = Answerability.evidence(question: question, segments: shown)
        XCTAssertEqual(evidence.quote, [4], "\(evidence)")
        let answer = "The new mould is a very important part of the case."
        let without = AnswerVerifier.check(question: question, answer: answer, cited: [], shown: shown, instructions: [])
        XCTAssertFalse(without.citations.contains(4), "retrieval alone: \(without.citations)")
        let with = AnswerVerifier.check(question: question, answer: answer, cited: [], passages: .init(shown), instructions: [], evidence: evidence.quote)
        XCTAssertTrue(with.citations.contains(4), "\(with.citations)")
        XCTAssertLessThanOrEqual(with.citations.count, 3)
    }

    func testSupportedCitationIsKept() {
        let v = AnswerVerifier.check(question: "How many hives do they keep?", answer: "They keep twelve hives in Leeds.", cited: [2],
                                     shown: segments, instructions: [])
        XCTAssertEqual(v.citations, [2])
        XCTAssertEqual(v.issues, [])
    }

    func testDegenerateAndInventedAnswersBlock() {
        let instructions = ["Give answer (a few sentences), citations (the [id]s of the lines that support it)"]
        // The question again, alone or under the prompt's label for it, is no answer.
        for bad in ["\"][\"", "2018-03-15 19:47:46.300 +0000", "the [id]s of the lines that support it",
                    "How often do they test mite counts?", "Question: How often do they test mite counts?"] {
            let v = AnswerVerifier.check(question: "How often do they test mite counts?", answer: bad, cited: [3], shown: segments, instructions: instructions)
            XCTAssertTrue(v.issues.contains { $0.code == .degenerate }, bad)
            XCTAssertTrue(v.blocking)
        }
        XCTAssertTrue(AnswerVerifier.repeatsQuestion("Question: Which vet looks after reptiles?", "Which vet looks after reptiles?"))
        XCTAssertFalse(AnswerVerifier.repeatsQuestion("Answer: Oslo.", "Did they move the office to Oslo or to Bergen last year?"))
        XCTAssertFalse(AnswerVerifier.repeatsQuestion("Tomasz: every two weeks they test mite counts.", "How often do they test mite counts?"))
        let invented = AnswerVerifier.check(question: "How much honey?", answer: "About 40% more honey, 35 kg a year.", cited: [4], shown: segments,
                                            instructions: [])
        XCTAssertEqual(invented.issues.filter { $0.repaired != true }.map(\.code), [.unsupportedFact])
        // Copying a line unrelated to the question is not an answer.
        let copy = AnswerVerifier.check(question: "How often are mites counted?", answer: segments[0].text, cited: [1], shown: segments, instructions: [])
        XCTAssertTrue(copy.issues.contains { $0.code == .degenerate })
        // ... with its speaker or "Transcript:" before it, or cut, or run on into the next line.
        for copied in ["Host: Welcome back to Rooftop Hives, I'm here with Ana.", "Transcript: Host: Welcome back to Rooftop Hives, I'm here",
                       "Welcome back to Rooftop Hives, I'm here with Ana. We keep twelve hives"] {
            let v = AnswerVerifier.check(question: "How often are mites counted?", answer: copied, cited: [1], shown: segments, instructions: [])
            XCTAssertTrue(v.issues.contains { $0.code == .degenerate && $0.message.contains("copies segment 1") }, "\(copied): \(v.issues)")
        }
        // A short answer that a line opens with, or a line that shares the question's words, is not a copy.
        for answer in ["Welcome back.", "Ana: We keep twelve hives on three roofs in Leeds."] {
            let v = AnswerVerifier.check(question: "How many hives do they keep?", answer: answer, cited: [2], shown: segments, instructions: [])
            XCTAssertFalse(v.issues.contains { $0.message.contains("copies segment") }, "\(answer): \(v.issues)")
        }
    }

    /// Segment ids and list markers point at the transcript: their numbers are not facts the
    /// answer invents. A number of its own still is.
    func testSegmentReferencesAndListMarkersAreNotInventedFacts() {
        for answer in ["They keep twelve hives on three roofs [2].", "1. They keep twelve hives, as segment 2 says.",
                       "As segments 2 and 4 say, they keep twelve hives on three roofs."] {
            let v = AnswerVerifier.check(question: "How many hives do they keep?", answer: answer, cited: [2], shown: segments, instructions: [])
            XCTAssertFalse(v.issues.contains { $0.code == .unsupportedFact }, "\(answer): \(v.issues)")
        }
        let invented = AnswerVerifier.check(question: "How many hives do they keep?", answer: "They keep 14 hives on three roofs [2].", cited: [2],
                                            shown: segments, instructions: [])
        XCTAssertTrue(invented.issues.contains { $0.code == .unsupportedFact && $0.message.contains("14") }, "\(invented.issues)")
        XCTAssertEqual(AnswerVerifier.withoutReferences("1. Nine roofs [4], see segments 3-5.\n2) Twelve"), "  Nine roofs  , see  .\n  Twelve")
    }

    /// "How many <unit>": an answer counts that unit in one of its sentences, or it counts something else.
    func testACountOfSomethingElseIsNotAnAnswer() {
        func counts(_ question: String, _ answer: String) -> Bool {
            !AnswerVerifier.check(question: question, answer: answer, cited: [2], shown: segments, instructions: []).issues
                .contains { $0.code == .notAnswered && $0.message.contains("asks how many") }
        }
        for answer in ["They keep twelve hives on three roofs in Leeds.", "Twelve.", "The number of hives they keep is twelve, on three roofs."] {
            XCTAssertTrue(counts("How many hives do they keep?", answer), answer)
        }
        XCTAssertFalse(counts("How many hives do they keep?", "They have kept bees on three roofs in Leeds for years."))
        XCTAssertFalse(counts("¿Cuántas mesas tiene ahora el restaurante?", "El restaurante es de la huerta. Puede ser 4 euros por un litro de aceite."))
        XCTAssertTrue(counts("¿Cuántas mesas tiene ahora el restaurante?", "Ahora el restaurante tiene diez mesas y una terraza."))
    }

    func testSayingNotFoundIsRecognised() {
        XCTAssertTrue(AnswerVerifier.check(question: "What did the extractor cost?", answer: "The transcript does not mention the cost.",
                                           cited: [2], shown: segments, instructions: []).saysNotFound)
        XCTAssertTrue(AnswerVerifier.saysNotFound("No se menciona en la transcripción."))
        XCTAssertFalse(AnswerVerifier.saysNotFound("They keep twelve hives."))
    }

    // MARK: Lists

    func testListRepairDropsDuplicatesLabelsAndNames() {
        let items = ["Urban bees need fewer treatments than expected.", "Urban bees need fewer treatments than expected.",
                     "urban bees need fewer treatments than expected!", "Transcript: 1", "The Local Loop", "Llama-server",
                     "Test mite counts every two weeks after winter."]
        let r = ListItemRules.repair(items, field: .init("keyTakeaways", .sentence, minItems: 1), labels: ["keyTakeaways"], names: ["the local loop"])
        let (kept, issues) = (r.value, r.issues)
        XCTAssertEqual(kept, ["Urban bees need fewer treatments than expected.", "Test mite counts every two weeks after winter."])
        XCTAssertEqual(issues.map(\.code), [.duplicateItem, .duplicateItem, .labelItem, .nameOnlyItem, .nameOnlyItem])
        XCTAssertTrue(issues.allSatisfy { $0.repaired == true })
        XCTAssertEqual(issues.map(\.path), ["keyTakeaways[1]", "keyTakeaways[2]", "keyTakeaways[3]", "keyTakeaways[4]", "keyTakeaways[5]"])
    }

    func testNearDuplicatesByContentWords() {
        let r = ListItemRules.repair(["Local models on laptops", "local model on a laptop", "Privacy of transcripts"],
                                     field: .init("mainTopics", .phrase, minItems: 1), labels: [], names: [])
        let (kept, issues) = (r.value, r.issues)
        XCTAssertEqual(kept, ["Local models on laptops", "Privacy of transcripts"])
        XCTAssertEqual(issues.map(\.code), [.duplicateItem])
    }

    func testListNeverGoesBelowItsMinimumAndSaysSo() {
        let r = ListItemRules.repair(["Ben, Ben, Ben!", "Bees", "Bees"], field: .init("mainTopics", .phrase, minItems: 3), labels: [], names: [])
        let (kept, issues) = (r.value, r.issues)
        XCTAssertEqual(kept.count, 3)
        XCTAssertTrue(issues.contains { $0.repaired == nil }, "items kept to meet the minimum are reported as not repaired")
    }

    func testTargetAudienceMustDescribePeople() {
        let names = ListItemRules.names(in: "Welcome to The Local Loop. I'm Maya from Fernhill Labs.", speakers: ["Maya"])
        XCTAssertNotNil(ListItemRules.audienceProblem("Fernhill Labs", names: names))
        XCTAssertNotNil(ListItemRules.audienceProblem("Maya", names: names))
        XCTAssertNil(ListItemRules.audienceProblem("Developers curious about running models locally", names: names))
        XCTAssertNil(ListItemRules.audienceProblem("Fans of Fernhill Labs products and local software", names: names))
    }

    // MARK: Retrieval word forms

    func testRetrievalJoinsIrregularFormsAndDemonyms() {
        let index = BM25Index(documents: ["Our Danish supplier ships the frames.", "Priya ran the migration on Tuesday.", "Nothing here."])
        XCTAssertEqual(index.search("Which supplier is from Denmark?", limit: 1).first?.index, 0)
        XCTAssertEqual(index.search("Who is running the migration?", limit: 1).first?.index, 1)
        XCTAssertEqual(BM25Index.terms("run ran running runs"), ["run", "run", "run", "run"])
    }

    // MARK: Attempts

    func testAttemptsRetryUntilACheckPassesAndKeepTheBest() async throws {
        let attempts = Attempts(verify: true, maxAttempts: 3)
        var made: [Int] = []
        let (value, verification) = try await attempts.run(progress: .none, { n in made.append(n); return n }, check: { n in
            n < 2 ? [Finding(.refusal, .refusal("as an ai"))] : []
        })
        XCTAssertEqual(value, 2)
        XCTAssertEqual(made, [1, 2])
        XCTAssertEqual(verification, Verification(passed: true, attempts: 2, issues: []))
    }

    func testAttemptsReturnTheFewestIssuesWhenNonePass() async throws {
        let (value, verification) = try await Attempts(verify: true, maxAttempts: 3).run(progress: .none, { n in n }, check: { n in
            Array(repeating: Finding(.factMissing, .factsMissing(["£1,150"])), count: n == 2 ? 1 : 2)
        })
        XCTAssertEqual(value, 2)
        XCTAssertEqual(verification.attempts, 3)
        XCTAssertFalse(verification.passed)
        XCTAssertEqual(verification.issues.count, 1)
    }

    func testVerifyFalseReportsButNeverRetries() async throws {
        var made = 0
        let (_, verification) = try await Attempts(verify: false, maxAttempts: 5).run(progress: .none, { _ in made += 1 }, check: { _ in
            [Finding(.unchanged, .unchanged(revision: false))]
        })
        XCTAssertEqual(made, 1)
        XCTAssertEqual(verification.attempts, 1)
        XCTAssertFalse(verification.passed)
    }

    func testRepairedIssuesDoNotCauseRetries() async throws {
        var made = 0
        let (_, verification) = try await Attempts(verify: true, maxAttempts: 3).run(progress: .none, { _ in made += 1 }, check: { _ in
            [Finding(.unsupportedCitation, .weakCitations([1]), path: "citations", action: .removed)]
        })
        XCTAssertEqual(made, 1)
        XCTAssertTrue(verification.passed)
    }
}

extension VerifierTests {
    /// The stronger tone line of a retry and the turn asking for a sentence that mends a
    /// tone are the prompt's words too; the example phrases they quote are the tone's own.
    func testTheToneLineAndTheInsertionTurnsAreEchoes() {
        let original = "Your proposal is rejected. We can talk about it on Friday."
        func codes(_ rewrite: String, _ tone: Tone) -> [VerificationIssueCode] {
            RewriteVerifier.check(.init(original: original, rewrite: rewrite,
                                        instructions: ComposePrompt.instructionTexts(tone: tone, audience: .peer, languageName: "English"),
                                        language: "en")).map(\.code)
        }
        XCTAssertEqual(codes("Perhaps we could revisit the proposal. Could we talk about it on Friday? Soften it with tactful words.", .diplomatic),
                       [.instructionEcho])
        XCTAssertEqual(codes("Perhaps the proposal could be revisited. Would it be possible to talk about it on Friday?", .diplomatic), [])
        XCTAssertEqual(codes("I understand this is hard. We can talk about it on Friday, it acknowledges how the reader may feel.", .empathetic),
                       [.instructionEcho])
        XCTAssertEqual(codes("Your proposal is rejected, I'm afraid. Let's talk on Friday, it keeps it friendly and relaxed.", .casual), [.instructionEcho])
    }

    func testCopyingTheWorkedExampleIsAnEcho() {
        let examples = ["hey Jonas, the Oakridge invoice for €2,400 is late again. can u ping Magdalena before Thursday?"]
        func codes(_ rewrite: String) -> [VerificationIssueCode] {
            RewriteVerifier.check(.init(original: "The launch moves to March. Tell Ana.", rewrite: rewrite, instructions: [], language: "en",
                                        examples: examples)).map(\.code)
        }
        XCTAssertEqual(codes("Dear Jonas, the launch moves to March. Please tell Ana."), [.instructionEcho])
        XCTAssertEqual(codes("The launch may move to March, so please tell Ana."), [])
        // A sentence opening with the verb is not the month of "14 May"; the month is.
        let month = ["the quarterly review with Dr. Okafor has been rescheduled to 14 May."]
        func copied(_ rewrite: String) -> [String] { Facts.borrowed(from: month, in: rewrite, original: "The launch moves to March.").map(\.text) }
        XCTAssertEqual(copied("The launch moves to March. May it go well!"), [])
        XCTAssertEqual(copied("The launch moves to 1 May."), ["May"])
    }

    /// Every number and name of the compose prompt's own examples, put into a rewrite of a
    /// selection that does not have it, fails the rewrite: no output that passes copies them.
    func testNoFactOfThePromptsExamplesPasses() {
        let original = "hey team, we're moving the design review to friday, bring your mockups"
        let facts = Facts.extract(ComposePrompt.exampleTexts.joined(separator: "\n"))
        XCTAssertGreaterThanOrEqual(facts.count, 6, "\(facts.map(\.text))")
        for f in facts {
            let rewrite = "Dear team, we are moving the design review to Friday (\(f.text)). Please bring your mockups."
            let codes = RewriteVerifier.check(.init(original: original, rewrite: rewrite, instructions: [], language: "en",
                                                    examples: ComposePrompt.exampleTexts)).map(\.code)
            XCTAssertTrue(codes.contains(.instructionEcho), "\(f.text): \(codes)")
        }
        XCTAssertEqual(RewriteVerifier.check(.init(original: original, rewrite: "Dear team, we are moving the design review to Friday. Please bring your mockups.",
                                                   instructions: [], language: "en", examples: ComposePrompt.exampleTexts)).map(\.code), [])
    }
}

extension VerifierTests {
    func testToneMustMatchWhereFormalityMeasuresIt() {
        let original = "The invoice for €900 is overdue. Please pay it by Friday."
        func codes(_ rewrite: String, _ tone: Tone) -> [VerificationIssueCode] {
            RewriteVerifier.check(.init(original: original, rewrite: rewrite, instructions: [], language: "en", tone: tone)).map(\.code)
        }
        let chatty = "hey!! that €900 invoice is super late lol, can u pay it by Friday? thx!"
        let formal = "Please be advised that the invoice of €900 is overdue. We kindly request that payment be made by Friday."
        XCTAssertEqual(codes(chatty, .formal), [.toneMismatch])
        XCTAssertEqual(codes(formal, .formal), [])
        XCTAssertEqual(codes(formal, .casual), [.toneMismatch])
        XCTAssertEqual(codes(chatty, .casual), [])
        XCTAssertEqual(codes(chatty, .empathetic), [.toneMismatch], "an empathetic rewrite acknowledges the reader")
        XCTAssertEqual(codes("I know this is a nuisance: the €900 invoice is overdue. Could you pay it by Friday?", .empathetic), [])
    }

    func testSeverityCountsEachMissingFact() {
        let one = [Finding(.factMissing, .factsMissing(["£1,150"]))]
        XCTAssertLessThan(RewriteVerifier.severity(one, missingFacts: 1), RewriteVerifier.severity(one, missingFacts: 4))
        XCTAssertEqual(RewriteVerifier.severity([Finding(.refusal, .refusal("as an ai")),
                                                 Finding(.unsupportedCitation, .weakCitations([1]), path: "citations", action: .removed)], missingFacts: 0), 1_000)
    }

    /// Of two failed attempts, one that copied the prompt's example ("at 10:30") is never kept
    /// over one that left facts out: the result may be incomplete, not wrong.
    func testAnAttemptThatSaysSomethingWrongRanksBelowOneThatLeavesFactsOut() {
        let copied = [Finding(.instructionEcho, .copiesExample(["10:30"]))]
        let incomplete = [Finding(.factMissing, .factsMissing(["Thursday", "3pm", "Oslo"])), Finding(.toneMismatch, .tone(.formal, []))]
        XCTAssertLessThan(RewriteVerifier.severity(incomplete, missingFacts: 3), RewriteVerifier.severity(copied, missingFacts: 0))
        let invented = [Finding(.unsupportedFact, .factsNotInSelection(["Mark"]))]
        XCTAssertLessThan(RewriteVerifier.severity(invented, missingFacts: 0), RewriteVerifier.severity(invented + copied, missingFacts: 0))
    }

    /// "the 2% drop" for "the 12% drop" is a fact changed, though "2pm" is in the selection;
    /// "12 percent" and "12 %" keep "12%".
    func testAPercentageIsItsOwnNumber() {
        let original = "Can you cover my 2pm tomorrow? They want to go over the 12% drop in renewals."
        let facts = Facts.extract(original)
        XCTAssertEqual(Facts.missing(facts, in: "Could you cover my 2pm tomorrow? They want to discuss the 2% drop in renewals.").map(\.text), ["12%"])
        XCTAssertEqual(Facts.unsupported(in: "the 2% drop at 2pm", by: [original]).map(\.text), ["2%"])
        for kept in ["the 12 percent drop at 2pm", "the 12 % drop at 2pm", "the 12 per cent drop at 2pm"] {
            XCTAssertEqual(Facts.missing(facts, in: kept).map(\.text), [], kept)
        }
        XCTAssertEqual(Facts.missing(Facts.extract("The 12 hours."), in: "The 12% hours.").map(\.text), ["12"])
    }

    func testCommonWordsOpeningASentenceAreNotNames() {
        let facts = Facts.extract("Last month's payment was late. Work on the lift starts Monday. Drilling is loud. Tom will collect the keys.")
        XCTAssertEqual(Set(facts.filter { $0.kind == .name }.map(\.text)), ["Monday", "Tom"])
    }
}

extension VerifierTests {
    func testPlaceholdersFragmentsEchoedQuestionsAndBareNumbersAreDegenerate() {
        func codes(_ question: String, _ answer: String) -> [VerificationIssueCode] {
            AnswerVerifier.check(question: question, answer: answer, cited: [], shown: segments, instructions: []).issues
                .filter { $0.repaired != true }.map(\.code)
        }
        XCTAssertTrue(codes("Where are the hives?", "Ana's hives [id] are in Leeds.").contains(.degenerate))
        XCTAssertEqual(codes("Where are the hives?", ", Item eight, in Leeds"), [.degenerate, .unsupportedFact])
        XCTAssertEqual(codes("¿Cuántas colmenas tiene Ana?", "Cuántas colmenas tiene Ana"), [.degenerate])
        XCTAssertEqual(codes("In which year did Ana start?", "1740"), [.degenerate, .unsupportedFact])
        XCTAssertEqual(codes("Who keeps the hives?", "Ana"), [], "a one-word name from the segments answers a who-question")
        // The transcript continued: a shown line's number and its speaker, however it goes on.
        for opening in ["1) Host: Welcome back to Rooftop Hives. Ana keeps bees in Leeds.", "[2] Ana: We keep twelve hives on three roofs in Leeds.",
                        "3. Ana: We started testing mite counts every two weeks."] {
            XCTAssertEqual(codes("Where are the hives?", opening).first, .degenerate, opening)
        }
        // A number opening an answer, or a label that is not the line's speaker, is an answer.
        XCTAssertEqual(codes("How many hives does Ana keep?", "12 hives: she keeps twelve hives on three roofs in Leeds."), [])
        XCTAssertEqual(AnswerVerifier.transcriptLine(opening: "2) Host: twelve hives", shown: segments), nil)
        XCTAssertEqual(AnswerVerifier.transcriptLine(opening: "[3] Ana: mite counts", shown: segments), 3)
        // A shown speaker's label with no number is the transcript continued too; another label is an answer's.
        XCTAssertEqual(codes("Where are the hives?", "Ana: Ana, we keep twelve hives on three roofs in Leeds."), [.degenerate])
        XCTAssertEqual(codes("Where are the hives?", " host : the hives are on three roofs in Leeds."), [.degenerate])
        XCTAssertEqual(codes("Where are the hives?", "Short answer: on three roofs in Leeds."), [])
        XCTAssertEqual(codes("Where are the hives?", "On three roofs in Leeds, Ana says: twelve hives."), [])
        XCTAssertEqual(AnswerVerifier.speakerLabel(opening: "Ana: twelve hives", shown: segments), "Ana")
        XCTAssertNil(AnswerVerifier.speakerLabel(opening: "2) Host: twelve hives", shown: segments))
    }

    func testAnAnswerThatRestatesTheQuestionGivesNoAnswer() {
        func noAnswer(_ question: String, _ answer: String) -> Bool {
            AnswerVerifier.givesNoAnswer(AnswerVerifier.check(question: question, answer: answer, cited: [], shown: segments, instructions: []))
        }
        XCTAssertTrue(noAnswer("How often do they test mite counts?", "How often do they test mite counts?"))
        XCTAssertTrue(noAnswer("How often do they test mite counts?", "The transcript does not mention it."))
        XCTAssertFalse(noAnswer("How often do they test mite counts?", "Every two weeks, after a bad winter."))
        XCTAssertFalse(noAnswer("How often do they test mite counts?", "They test mite counts [id] every two weeks."), "a placeholder is a bad answer, not none")
    }

    func testQuantityAndTimeQuestionsNeedAFigure() {
        func codes(_ question: String, _ answer: String) -> [VerificationIssueCode] {
            AnswerVerifier.check(question: question, answer: answer, cited: [], shown: segments, instructions: []).issues
                .filter { $0.repaired != true }.map(\.code)
        }
        XCTAssertEqual(codes("How many hives does Ana keep?", "She keeps a lot of hives on the roofs."), [.notAnswered])
        XCTAssertEqual(codes("How many hives does Ana keep?", "She keeps twelve hives."), [])
        XCTAssertEqual(codes("How often are mite counts tested?", "Every two weeks."), [])
        XCTAssertEqual(codes("When did testing start?", "After a bad winter."), [])
        XCTAssertEqual(codes("When did testing start?", "It started on the roof in Leeds."), [.notAnswered])
        XCTAssertEqual(codes("¿Cuántas colmenas hay?", "Hay muchas colmenas en Leeds."), [.notAnswered])
        XCTAssertEqual(codes("Why do they test?", "Because of a bad winter."), [], "other questions ask for no figure")
        XCTAssertEqual(codes("Who tested the hives when winter came?", "Ana tested the hives in Leeds."), [], "a name is asked; 'when' only places it")
        XCTAssertEqual(codes("¿Quiénes cocinaban cuando abrió?", "Ana y el anfitrión."), [])
    }

    func testRelevantSegmentsFollowAnInterviewersQuestionToItsReply() {
        let interview = [
            Segment(id: 1, speaker: "Host", text: "Welcome to the show.", startOffset: 0, endOffset: 1),
            Segment(id: 2, speaker: "Host", text: "How many rooftop hives do you keep now?", startOffset: 1, endOffset: 2),
            Segment(id: 3, speaker: "Ana", text: "Twenty-three, on nine roofs.", startOffset: 2, endOffset: 3),
        ]
        XCTAssertEqual(AnswerVerifier.relevant(question: "How many rooftop hives does Ana keep?", shown: interview).first?.id, 3)
    }
}

extension VerifierTests {
    func testRewritesMustNotInventNumbersOrNames() {
        let original = "I'm delighted to offer you the role at Elmwood Clinic, starting on 2 September."
        func codes(_ rewrite: String) -> [VerificationIssueCode] {
            RewriteVerifier.check(.init(original: original, rewrite: rewrite, instructions: ["Tone: empathetic."], language: "en")).map(\.code)
        }
        XCTAssertEqual(codes("Dear Mark, I am delighted to offer you the role at Elmwood Clinic, starting on 2 September."), [.unsupportedFact])
        XCTAssertEqual(codes("I'm delighted to offer you the role at Elmwood Clinic from 2 September. It has exactly 3 sentences."), [.unsupportedFact])
        XCTAssertEqual(codes("We are delighted to offer you the role at Elmwood Clinic, starting on 2 September."), [])
    }
}

extension VerifierTests {
    func testListItemsLoseEnumeratorsAndTranscriptLinesAndPlaceholdersGo() {
        let r = ListItemRules.repair(
            ["1. Vets see about 350 appointments a week.", "2) A new X-ray machine cost £48,000.",
             "Sam: Thanks for making time, Fiona.", "A guide to smartphones, by [Your Name]"],
            field: .init("keyTakeaways", .sentence, minItems: 1), labels: [], names: ["sam", "fiona"])
        let (kept, issues) = (r.value, r.issues)
        XCTAssertEqual(kept, ["Vets see about 350 appointments a week.", "A new X-ray machine cost £48,000."])
        XCTAssertEqual(issues.map(\.code), [.labelItem, .labelItem])
    }
}

extension VerifierTests {
    func testReportModeFindsWhatRepairFindsAndChangesNothing() {
        let repaired = AnswerVerifier.check(question: "How often do they test mite counts?", answer: "They test mite counts every two weeks.",
                                            cited: [1], shown: segments, instructions: [])
        let reported = AnswerVerifier.check(question: "How often do they test mite counts?", answer: "They test mite counts every two weeks.",
                                            cited: [1], shown: segments, instructions: [], mode: .report)
        XCTAssertEqual(reported.citations, [1], "as cited")
        XCTAssertEqual(reported.findings.map(\.subject), repaired.findings.map(\.subject))
        XCTAssertTrue(reported.issues.allSatisfy { $0.repaired == nil && !$0.message.hasSuffix(": removed") && !$0.message.hasSuffix(": added") },
                      "\(reported.issues)")
        XCTAssertTrue(reported.blocking)
        XCTAssertEqual(reported.answerPassed, repaired.answerPassed, "the answer itself passed either way")
        // Proposing (compare, highlights with verify: false): what would go is said, nothing goes.
        let items = ["Bees need care.", "Bees need care.", "Transcript: 1"]
        let proposed = ListItemRules.repair(items, field: .init("themes", .phrase, minItems: 1), labels: [], names: [], mode: .propose)
        XCTAssertEqual(proposed.value, items)
        XCTAssertEqual(proposed.issues.map(\.message), ["\"Bees need care.\" repeats an earlier item: removed",
                                                        "\"Transcript: 1\" is a prompt label or a repeated word, not content: removed"])
        XCTAssertTrue(proposed.issues.allSatisfy { $0.repaired == nil })
        XCTAssertEqual(Verification(checked: proposed.findings), Verification(passed: false, attempts: 1, issues: proposed.issues))
        let done = ListItemRules.repair(items, field: .init("themes", .phrase, minItems: 1), labels: [], names: [])
        XCTAssertEqual(done.value, ["Bees need care."])
        XCTAssertEqual(Verification(checked: done.findings), Verification(passed: true, attempts: 1, issues: done.issues, fallback: .repaired))
    }

    func testARewriteIsRepairedOnlyWhenRepairing() {
        let original = "The rent of £1,150 is due on 3 March."
        let input = RewriteVerifier.Input(original: original, rewrite: "Dear Sarah, the rent of £1,200 is due on 3 March.", instructions: [], language: "en")
        let repaired = RewriteVerifier.verify(input, mode: .repair)
        XCTAssertEqual(repaired.value, "Hello, the rent of £1,150 is due on 3 March.")
        XCTAssertEqual(repaired.issues.map(\.message), ["the output changed \"£1,150\" to \"£1,200\": restored",
                                                        "the output greets \"Sarah\", a name not in the selection: dropped"])
        let reported = RewriteVerifier.verify(input, mode: .report)
        XCTAssertEqual(reported.value, input.rewrite)
        XCTAssertEqual(reported.findings.map(\.code), [.factMissing, .unsupportedFact], "the checks report what the repairs would mend")
        XCTAssertTrue(reported.findings.allSatisfy(\.isOpen))
    }
}

extension VerifierTests {
    /// Entities' grounding says what it moved in the one Finding shape, with the words it always had.
    func testNamesNotInTheTranscriptAreAFinding() {
        XCTAssertEqual(Finding(.unsupportedFact, .namesNotInTranscript(["Acme", "Bo"]), path: "unverified", action: .removed).issue,
                       VerificationIssue(.unsupportedFact, "not in the transcript, moved to unverified: Acme, Bo", path: "unverified", repaired: true))
    }
}

extension VerifierTests {
    /// "moving the design review to friday": the weekday is a fact though it is written in
    /// lower case, so a rewrite that says "tomorrow" instead does not pass; "may" the verb is not.
    func testLowerCaseWeekdaysAndMonthsAreFacts() {
        let original = "hey team, we're moving the design review to friday, bring your mockups"
        XCTAssertEqual(Facts.extract(original).map(\.text), ["friday"])
        func codes(_ rewrite: String) -> [VerificationIssueCode] {
            RewriteVerifier.check(.init(original: original, rewrite: rewrite, instructions: [], language: "en")).map(\.code)
        }
        XCTAssertTrue(codes("Team, welcome to the design review. Please bring your mockups tomorrow.").contains(.factMissing))
        XCTAssertFalse(codes("Dear team, we are moving the design review to Friday. Please bring your mockups.").contains(.factMissing))
        XCTAssertEqual(Facts.extract("you may march on, the meeting is el 14 de junio").map(\.text), ["14", "junio"])
    }
}
