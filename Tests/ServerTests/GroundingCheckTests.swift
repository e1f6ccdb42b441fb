import ParlanceDocuments
@testable import ParlanceFeatures
import ParlanceJSON
import ParlanceProtocol
import XCTest

/// Answerability (does the document answer the question?), list items supported by the
/// transcript, and target audiences that describe people: cases that pass and cases that fail.
final class GroundingCheckTests: XCTestCase {
    let council = [
        Segment(id: 1, speaker: "Chair", text: "Item four is the Riverside shuttle trial.", startOffset: 0, endOffset: 1),
        Segment(id: 2, speaker: "Officer", text: "The trial runs for six months from March, with buses every twenty minutes.", startOffset: 1, endOffset: 2),
        Segment(id: 3, speaker: "Officer", text: "Last winter we spread 410 tonnes of salt on the roads.", startOffset: 2, endOffset: 3),
        Segment(id: 4, speaker: "Chair", text: "The new library roof cost £86,000 in the end.", startOffset: 3, endOffset: 4),
        Segment(id: 5, speaker: "Officer", text: "Greenway Fencing will build the dog park fence next spring.", startOffset: 4, endOffset: 5),
    ]

    func testAnswerTypes() {
        XCTAssertEqual(Answerability.AnswerType.asked(by: "How much will the Riverside shuttle trial cost the council?"), .amount)
        XCTAssertEqual(Answerability.AnswerType.asked(by: "What is the budget for the campaign?"), .amount)
        XCTAssertEqual(Answerability.AnswerType.asked(by: "How many tonnes of salt did the council use?"), .quantity)
        XCTAssertEqual(Answerability.AnswerType.asked(by: "When does the trial start?"), .time)
        XCTAssertEqual(Answerability.AnswerType.asked(by: "Which contractor will put up the fencing?"), .name)
        XCTAssertEqual(Answerability.AnswerType.asked(by: "¿Cuánto cuesta el nuevo postre?"), .amount)
        XCTAssertNil(Answerability.AnswerType.asked(by: "Why was the trial proposed?"))
        // "How much" asks for money only beside a money word: a colony makes kilos.
        XCTAssertEqual(Answerability.AnswerType.asked(by: "Which colony was the most productive, and how much did it make?"), .quantity)
        XCTAssertEqual(Answerability.AnswerType.asked(by: "How much does a jar of the rooftop honey sell for?"), .amount)
    }

    func testHowMuchOfAThingIsAnsweredByItsQuantity() {
        let bees = [
            Segment(id: 9, speaker: "Hannah", text: "Let's talk about honey. What did a rooftop hive give you last year?", startOffset: 0, endOffset: 1),
            Segment(id: 10, speaker: "Tomasz", text: "The average was eighteen kilos per hive. Our best colony, on the bakery roof, made thirty-one kilos.",
                    startOffset: 1, endOffset: 2),
            Segment(id: 11, speaker: "Hannah", text: "Is city honey different from countryside honey?", startOffset: 2, endOffset: 3),
        ]
        let e = Answerability.evidence(question: "Which colony was the most productive, and how much did it make?", segments: bees)
        XCTAssertEqual(e.passage, [10], "\(e)")
        XCTAssertGreaterThan(e.typedCoverage, 0, "\(e)")
    }

    /// The extractive answer quotes the segment with the count, not the opening line that
    /// named the product: "Aero 2 headphones" is a name, not two headphones, and "2,400 of
    /// the 2,500 units" counts the headphones of the question (held-out product-1).
    func testTheQuoteIsTheSegmentWithTheCountNotTheLineThatNamedTheProduct() {
        let launch = [
            Segment(id: 1, speaker: "Nadia", text: "Right, let's begin. This is the launch review for the Aero 2 headphones. We have forty minutes.",
                    startOffset: 0, endOffset: 1),
            Segment(id: 2, speaker: "Felix", text: "Hardware first. The second production run finished on Friday, and 2,400 of the 2,500 units passed final testing.",
                    startOffset: 1, endOffset: 2),
            Segment(id: 3, speaker: "Nadia", text: "What went wrong with the other hundred?", startOffset: 2, endOffset: 3),
        ]
        let e = Answerability.evidence(question: "How many headphones from the second production run passed final testing?", segments: launch)
        XCTAssertEqual(e.expects, .quantity)
        XCTAssertEqual(e.quote, [2], "\(e)")
        XCTAssertFalse(e.relationMissing, "\(e)")
        XCTAssertEqual(e.typedCoverage, 1, "\(e)")
        XCTAssertEqual(Ask.extractive(question: "How many headphones from the second production run passed final testing?", evidence: e,
                                      passages: AnswerVerifier.Passages(launch), openings: [1]).map(\.id), [2])
        // The opening line names the product and answers nothing: never quoted, whatever matches it.
        let journalists = "Which journalists received the Aero 2 headphones for the launch review?"
        let opening = Answerability.evidence(question: journalists, segments: launch)
        // No passage gives names of journalists: nothing is quoted (the answer is "not found"),
        // not even the line that shares the question's words (issue 77).
        XCTAssertEqual(Ask.extractive(question: journalists, evidence: opening, passages: AnswerVerifier.Passages(launch), openings: []), [],
                       "\(opening)")
        XCTAssertEqual(Ask.extractive(question: journalists, evidence: opening, passages: AnswerVerifier.Passages(Array(launch.prefix(1))), openings: [1]), [])
        // The model number alone answers no count.
        let named = Answerability.evidence(question: "How many headphones were reviewed?", segments: [launch[0]])
        XCTAssertTrue(named.passage.isEmpty, "\(named)")
        // A pair whose answer straddles it is quoted whole.
        let split = [Segment(id: 7, speaker: "A", text: "Last winter the depot used 410", startOffset: 0, endOffset: 1),
                     Segment(id: 8, speaker: "A", text: "tonnes of salt on the roads.", startOffset: 1, endOffset: 2)]
        let whole = Answerability.evidence(question: "How many tonnes of salt did the depot use last winter?", segments: split)
        XCTAssertEqual(whole.quote, [7, 8], "\(whole)")
    }

    func testANearMissHasTheSubjectButNotTheAnswer() {
        // The trial is discussed (months, minutes) but no amount is given.
        let miss = Answerability.evidence(question: "How much will the Riverside shuttle trial cost the council?", segments: council)
        XCTAssertEqual(miss.expects, .amount)
        XCTAssertGreaterThanOrEqual(miss.focusCoverage, 0.5)
        XCTAssertTrue(miss.passage.isEmpty, "no passage holds an amount next to the trial: \(miss)")
        let hit = Answerability.evidence(question: "How much did the library roof cost?", segments: council)
        XCTAssertEqual(hit.passage.first, 4)
        XCTAssertEqual(hit.typedCoverage, 1)
    }

    /// A passage can hold the subject and a value of the right kind in different sentences:
    /// the value beside the subject is what `sentenceCoverage` measures.
    func testSentenceCoverageWantsTheSubjectBesideTheValue() {
        let call = [
            Segment(id: 1, speaker: "Agent", text: "You made calls to Canada on the 14th and 15th of May, each minute at the standard rate. "
                    + "Your router restarted six times. The line rental is 45 pounds.", startOffset: 0, endOffset: 1),
        ]
        let q = "How much did each minute of the calls to Canada cost?"
        let miss = Answerability.evidence(question: q, segments: call)
        XCTAssertEqual(miss.typedCoverage, 1, "the passage holds the calls and an amount: \(miss)")
        XCTAssertEqual(miss.sentenceCoverage, 0, "the amount's sentence, with the one before it, holds none of it: \(miss)")
        let stated = [Segment(id: 1, speaker: "Agent", text: "The calls to Canada cost 9 pence a minute.", startOffset: 0, endOffset: 1)]
        XCTAssertEqual(Answerability.evidence(question: q, segments: stated).sentenceCoverage, 1)
        // The turn that asked counts as the sentence before the reply's first.
        let asked = [Segment(id: 1, speaker: "Host", text: "And each minute of the calls to Canada?", startOffset: 0, endOffset: 1),
                     Segment(id: 2, speaker: "Agent", text: "Nine pence.", startOffset: 1, endOffset: 2)]
        XCTAssertEqual(Answerability.evidence(question: q, segments: asked).sentenceCoverage, 1)
        XCTAssertEqual(Answerability.evidence(question: q, segments: [asked[1]]).sentenceCoverage, 0)
    }

    /// "I started in 2016", said by Tomasz, is about Tomasz; the opening that introduces him
    /// names him too and is never the passage quoted (tuning bees-7).
    func testAFirstPersonStatementIsAboutItsSpeaker() {
        let bees = [
            Segment(id: 1, speaker: "Hannah", text: "Welcome back. Today I'm talking to Tomasz Nowak, who keeps bees on office roofs.", startOffset: 0, endOffset: 1),
            Segment(id: 2, speaker: "Tomasz", text: "Thanks for having me. I started in 2016 with two hives on top of a print shop.", startOffset: 1, endOffset: 2),
            Segment(id: 10, speaker: "Tomasz", text: "The average was eighteen kilos per hive.", startOffset: 2, endOffset: 3),
        ]
        let q = "In which year did Tomasz take up beekeeping?"
        let e = Answerability.evidence(question: q, segments: bees, openings: [1])
        XCTAssertEqual(e.quote, [2], "\(e)")
        XCTAssertGreaterThan(e.sentenceCoverage, 0, "\(e)")
        XCTAssertEqual(Ask.extractive(question: q, evidence: e, passages: AnswerVerifier.Passages(bees), openings: [1]).map(\.id), [2])
        // Without its speaker the year's sentence is about no one the question names.
        let unnamed = bees.map { Segment(id: $0.id, speaker: nil, text: $0.text, startOffset: $0.startOffset, endOffset: $0.endOffset) }
        XCTAssertNotEqual(Answerability.evidence(question: q, segments: unnamed, openings: [1]).quote, [2])
    }

    /// A real talk's extractive answer: "There are three main sources of a discrimination."
    /// restates the question and was returned as found; a quote must say two content words
    /// the question does not, so the segment that lists the sources is quoted, or nothing.
    func testAQuoteThatRestatesTheQuestionIsNoAnswer() {
        let q = "What are the three main sources of discrimination against minority groups that Jutta lists?"
        XCTAssertFalse(Ask.addsToQuestion("There are three main sources of a discrimination.", q))
        XCTAssertTrue(Ask.addsToQuestion("Discrimination may happen because of data gaps and biased training data.", q))
        let talk = [
            Segment(id: 1, speaker: "Jutta", text: "Welcome, everyone, to this talk about data and fairness.", startOffset: 0, endOffset: 1),
            Segment(id: 126, speaker: "Jutta", text: "There are three main sources of a discrimination.", startOffset: 1, endOffset: 2),
        ]
        let e = Answerability.evidence(question: q, segments: talk, openings: [1])
        XCTAssertEqual(Ask.extractive(question: q, evidence: e, passages: AnswerVerifier.Passages(talk), openings: [1]), [], "\(e)")
    }

    /// A French question's evidence and citations follow what it asks about ("l'architecte",
    /// "gare"), not its function words ("qui", "de", "la", "en"), which the segment that
    /// repeats "en" twice would otherwise win on; a Spanish date question's focus is its
    /// subject, not "fecha".
    func testOtherLanguagesAreReadByWhatTheyAskAbout() {
        let shown = [
            Segment(id: 1, speaker: "Prof", text: "Bonjour à tous, nous parlons de la gare de Lorval.", startOffset: 0, endOffset: 1),
            Segment(id: 2, speaker: "Prof", text: "Elle a été repeinte en bleu en 1990, ce qui explique sa couleur.", startOffset: 1, endOffset: 2),
            Segment(id: 3, speaker: "Prof", text: "L'architecte de la gare s'appelait Marie Dubois.", startOffset: 2, endOffset: 3),
            Segment(id: 4, speaker: "Prof", text: "En 1944, la ville a été libérée en août.", startOffset: 3, endOffset: 4),
        ]
        let question = "Qui était l'architecte de la gare en brique ?"
        XCTAssertEqual(Answerability.focusTerms(question), Set(Lexicon.words("architecte gare brique", .terms)))
        XCTAssertEqual(Answerability.evidence(question: question, segments: shown).passage, [3])
        // Retrieval's best segment leads the citations: the one with "en" twice and "qui" did.
        XCTAssertEqual(AnswerVerifier.relevance(question: question, passages: .init(shown)).first?.id, 3)
        let verdict = AnswerVerifier.check(question: question, answer: "Elle a été repeinte en 1990.", cited: [], shown: shown, instructions: [])
        XCTAssertTrue(verdict.citations.contains(3), "\(verdict.citations)")
        XCTAssertEqual(Answerability.focusTerms("¿En qué fecha abrió Casa Brasa?"), Set(Lexicon.words("abrió Casa Brasa", .terms)))
    }

    /// What a question asks is found in the forms a transcript says it in: a Spanish verb in
    /// another person ("abrió", "abrimos"), French numbers written as words ("dix-neuf ans"),
    /// old money ("deux sous"), a duration for "combien de temps", an English compound's head
    /// ("support tickets"), and a name that opens its sentence when it is someone's name.
    /// English word forms stay strict ("model" is not "modern").
    func testAnswersAreFoundInTheFormsTheTranscriptSaysThem() {
        let cocina = [
            Segment(id: 1, speaker: "Lucía", text: "Gracias por recibirnos en Casa Brasa.", startOffset: 0, endOffset: 1),
            Segment(id: 2, speaker: "Lucía", text: "¿Cuándo abristeis el restaurante?", startOffset: 1, endOffset: 2),
            Segment(id: 3, speaker: "Andrés", text: "Abrimos el 3 de marzo de 2019, con solo ocho mesas.", startOffset: 2, endOffset: 3),
        ]
        let opened = Answerability.evidence(question: "¿En qué fecha abrió Casa Brasa?", segments: cocina, language: "es")
        XCTAssertFalse(opened.passage.isEmpty, "\(opened)")
        XCTAssertTrue(opened.passage.contains(3), "\(opened)")
        XCTAssertTrue(Answerability.evidence(question: "¿En qué fecha abrió Casa Brasa?", segments: cocina, language: "en").passage.isEmpty,
                      "outside the Romance languages a verb's other person is another word")
        XCTAssertEqual(FocusForms(language: "en").share(of: ["model"], in: ["modern"]), 0)
        XCTAssertEqual(FocusForms(language: "fr-FR").share(of: ["traverser"], in: ["traversait"]), 1)
        XCTAssertEqual(FocusForms(language: "en").share(of: ["contract"], in: ["contractor"]), 1)

        XCTAssertEqual(Answerability.numberSpans("Il a fallu dix-neuf ans.").map(\.key), ["19"])
        XCTAssertEqual(Answerability.compoundNumber("quatre-vingt-dix"), "90")
        XCTAssertEqual(Answerability.compoundNumber("vingt-et-un"), "21")
        XCTAssertNil(Answerability.compoundNumber("re-run"))
        XCTAssertTrue(Answerability.numberSpans("We met once.").isEmpty, "the Spanish eleven is not an English word's number")

        let pont = [
            Segment(id: 8, speaker: "Claire", text: "Avant le pont, on traversait la Vière en bac, et le passage coûtait deux sous par personne.", startOffset: 0, endOffset: 1),
            Segment(id: 9, speaker: "Claire", text: "Il a fallu dix-neuf ans pour construire le pont de pierre.", startOffset: 1, endOffset: 2),
        ]
        XCTAssertEqual(Answerability.evidence(question: "Combien fallait-il payer pour traverser la Vière en bac ?", segments: pont, language: "fr").passage, [8])
        XCTAssertEqual(Answerability.unitTerm("Combien de temps a duré la construction du pont ?"), Answerability.durationUnit)
        XCTAssertEqual(Answerability.evidence(question: "Combien de temps a duré la construction du pont de pierre ?", segments: pont, language: "fr").passage, [9])
        XCTAssertEqual(Answerability.unitTerm("How long did the build take?"), Answerability.durationUnit)
        XCTAssertNotEqual(Answerability.unitTerm("How long is the bridge?"), Answerability.durationUnit)
        XCTAssertNil(AnswerVerifier.uncounted(question: "Combien de temps a duré la construction ?", answer: "La construction a duré dix-neuf ans en tout."))

        let standup = [
            Segment(id: 12, speaker: "Ines", text: "Support had logged 37 tickets about it by this morning.", startOffset: 0, endOffset: 1),
            Segment(id: 29, speaker: "Dana", text: "Also, the on-call rota. Ines is on call this weekend.", startOffset: 1, endOffset: 2),
        ]
        XCTAssertEqual(Answerability.unitTerms("How many support tickets were raised?"), ["support", "ticket"].map(Answerability.stemmed))
        XCTAssertEqual(Answerability.evidence(question: "How many support tickets were raised about the label problem?", segments: standup).passage, [12])
        XCTAssertEqual(Answerability.evidence(question: "Who is on call this weekend?", segments: standup).passage, [29])
        XCTAssertTrue(Answerability.evidence(question: "Who is on call this weekend?", segments: [standup[1]].map {
            Segment(id: $0.id, speaker: $0.speaker, text: $0.text.replacingOccurrences(of: "Ines", with: "Someone"), startOffset: 0, endOffset: 1)
        }).passage.isEmpty, "a capitalised word opening a sentence is not a name by itself")
    }

    /// A near miss of the other kind: an amount beside the subject, but not the one asked for.
    /// The passage quoted holds the amount in the asked relation ("price"), though another
    /// passage shares more of the question's words (the launch budget).
    func testThePassageQuotedHoldsTheAnswerInTheAskedRelation() {
        let launch = [
            Segment(id: 1, speaker: "Beatriz", text: "At launch we had settled the tooling budget at 180,000 euros.", startOffset: 0, endOffset: 1),
            Segment(id: 2, speaker: "Chair", text: "Let us move on to the colours.", startOffset: 1, endOffset: 2),
            Segment(id: 3, speaker: "Chair", text: "For the launch, the price is 249 euros.", startOffset: 2, endOffset: 3),
        ]
        let e = Answerability.evidence(question: "What price did they settle on for the launch?", segments: launch)
        XCTAssertEqual(e.expects, .amount)
        XCTAssertEqual(e.passage, [3], "\(e)")
        XCTAssertEqual(e.typedCoverage, 1, "the coverage the probability reads is the best typed passage's, as before")
        // No head noun in the question: the passage is the best typed one, as before.
        XCTAssertEqual(Answerability.evidence(question: "How much did they settle on for the launch?", segments: launch).passage, [1])
        XCTAssertFalse(e.relationMissing)
        // Without the price, only the budget stands beside the launch: an amount, but not in the
        // asked relation. The probability reads it as a feature of its own.
        let budgetOnly = Answerability.evidence(question: "What price did they settle on for the launch?", segments: Array(launch.prefix(2)))
        XCTAssertEqual(budgetOnly.passage, [1])
        XCTAssertTrue(budgetOnly.relationMissing, "\(budgetOnly)")
        XCTAssertFalse(Answerability.evidence(question: "How much did they settle on for the launch?", segments: Array(launch.prefix(2))).relationMissing,
                       "no noun says what the value is of: nothing to miss")
    }

    func testHowManyWantsTheNumberNextToItsUnit() {
        let salt = Answerability.evidence(question: "How many tonnes of salt did the council use last winter?", segments: council)
        XCTAssertEqual(salt.passage.first, 3)
        // Numbers are there (six, twenty) but none counts buses.
        let buses = Answerability.evidence(question: "How many buses run on the Riverside shuttle?", segments: council)
        XCTAssertFalse(buses.passage.contains(2), "\(buses)")
        // The unit in another form of the word: "roofs" asked, "rooftops" said.
        let hives = [Segment(id: 1, speaker: "Keeper", text: "We keep bees on 14 rooftops across the city.", startOffset: 0, endOffset: 1),
                     Segment(id: 2, speaker: "Keeper", text: "The roofs are mostly flat and owned by the council.", startOffset: 1, endOffset: 2)]
        let roofs = Answerability.evidence(question: "On how many roofs does the project keep bees?", segments: hives)
        XCTAssertTrue(roofs.passage.contains(1), "the count of rooftops answers it: \(roofs)")
        XCTAssertFalse(roofs.relationMissing)
        // A three-letter head noun is not the start of a longer word: "fee" is not in "feedback".
        XCTAssertFalse(Answerability.sameWord("fee", "feedback"))
        XCTAssertTrue(Answerability.sameWord("roof", "rooftop"))
    }

    func testNamesMustBeNewToTheQuestion() {
        XCTAssertEqual(Answerability.evidence(question: "Which contractor will build the dog park fence?", segments: council).passage, [5])
        let none = Answerability.evidence(question: "Who chairs the Riverside shuttle trial?", segments: Array(council.prefix(2)))
        XCTAssertFalse(none.passage.contains(2), "\(none)")
    }

    func testProbabilityRisesWithEvidenceAndASupportedAnswer() {
        func x(_ typed: Double, missing: Bool, passed: Bool, notFound: Bool, support: Double) -> Answerability.Features {
            // The focus words stand beside the amount when a passage holds one (`sentenceCoverage`).
            var features = Answerability.Features(expects: .amount, questionCoverage: 1, focusCoverage: 1, typedCoverage: typed, typeMissing: missing,
                                                  modelPassed: passed, modelSaysNotFound: notFound, answerSupport: support)
            features.sentenceCoverage = typed
            return features
        }
        func f(_ typed: Double, missing: Bool, passed: Bool, notFound: Bool, support: Double) -> Double {
            Answerability.probability(x(typed, missing: missing, passed: passed, notFound: notFound, support: support))
        }
        let answered = f(1, missing: false, passed: true, notFound: false, support: 1)
        let nearMiss = f(0, missing: true, passed: true, notFound: false, support: 0.3)
        XCTAssertGreaterThanOrEqual(answered, AnswerabilityProfile.fallback.threshold)
        XCTAssertLessThan(nearMiss, AnswerabilityProfile.fallback.threshold)
        // Whatever the model's answer did, the probability stays at or below the evidence's
        // ceiling: below the threshold the model need not be asked.
        for typed in [0.0, 0.5, 1] {
            for passed in [false, true] {
                for notFound in [false, true] {
                    for support in [0.0, 0.5, 1] {
                        let features = x(typed, missing: typed == 0, passed: passed, notFound: notFound, support: support)
                        XCTAssertLessThanOrEqual(Answerability.probability(features), Answerability.ceiling(features) + 1e-12)
                    }
                }
            }
        }
        XCTAssertLessThan(Answerability.ceiling(x(0, missing: true, passed: false, notFound: true, support: 0)), AnswerabilityProfile.fallback.threshold)
        XCTAssertEqual(Answerability.answerTermsFound(answer: "It cost £86,000 for the roof.", question: "What did the library roof cost?", segments: council), 1)
        XCTAssertEqual(Answerability.answerTermsFound(answer: "A grant from the lottery fund.", question: "What did the roof cost?", segments: council), 0)
    }

    // MARK: Lists

    let podcast = [
        Segment(id: 1, speaker: "Maya", text: "Welcome to The Local Loop, where we talk about running language models on your own laptop.", startOffset: 0, endOffset: 1),
        Segment(id: 2, speaker: "Dev", text: "We moved our transcription to a local model and cut our cloud bill by half.", startOffset: 1, endOffset: 2),
        Segment(id: 3, speaker: "Dev", text: "Small models need careful prompts, and they still loop if you let them.", startOffset: 2, endOffset: 3),
        Segment(id: 4, speaker: "Maya", text: "So, privacy was the main reason our users asked for local models in the first place.", startOffset: 3, endOffset: 4),
    ]

    func testUnsupportedAndPromptWordItemsAreReplacedByCentralSentences() {
        let source = SourceSupport(segments: podcast)
        XCTAssertTrue(source.supported("Running a local model cut the cloud bill by half."))
        XCTAssertFalse(source.supported("AI can be used to improve everything from healthcare to education."))
        let items = ["Running a local model cut the cloud bill by half.",
                     "AI can be used to improve everything from healthcare to education.",
                     "How to use the local loop, 3-5 key takeaways for your next project."]
        let r = ListItemRules.repair(items, field: .init("keyTakeaways", .sentence, minItems: 3), labels: ["keyTakeaways"], names: [],
                                     source: source, instructions: ["Give keyTakeaways (3-5 concrete takeaways)."], fill: source.centralSentences())
        let (kept, issues) = (r.value, r.issues)
        XCTAssertEqual(kept.first, items[0])
        XCTAssertEqual(kept.count, 3, "\(kept)")
        XCTAssertFalse(kept.contains(items[1]))
        XCTAssertFalse(kept.contains(items[2]))
        XCTAssertTrue(issues.contains { $0.code == .unsupportedFact && $0.message.contains("healthcare") && $0.repaired == true })
        XCTAssertTrue(issues.contains { $0.code == .instructionEcho && $0.repaired == true })
        XCTAssertTrue(kept.dropFirst().allSatisfy { source.supported($0) })
    }

    func testTopicsThatAreOnlyNamesGiveWayToKeyPhrases() {
        let segs = podcast + [Segment(id: 5, speaker: "Dev", text: "A local model on a laptop keeps the cloud bill small.", startOffset: 5, endOffset: 6)]
        let source = SourceSupport(segments: segs)
        let names = ListItemRules.names(in: segs.map(\.text).joined(separator: "\n"), speakers: ["Maya", "Dev"])
        XCTAssertTrue(source.keyPhrases(excluding: names).contains("Local model"), "\(source.keyPhrases(excluding: names))")
        let r = ListItemRules.repair(["The Local Loop", "Cloud bill", "Dev"], field: .init("mainTopics", .phrase, minItems: 2), labels: [],
                                     names: names, source: source, fill: source.keyPhrases(excluding: names))
        let (kept, issues) = (r.value, r.issues)
        XCTAssertEqual(kept.first, "Cloud bill")
        XCTAssertFalse(kept.contains("The Local Loop"))
        XCTAssertEqual(kept.count, 2, "\(kept)")
        XCTAssertTrue(issues.contains { $0.code == .nameOnlyItem && $0.message.contains("Local Loop") })
    }

    func testTidyMakesASpokenSentenceWritten() {
        XCTAssertEqual(SourceSupport.tidy("so, privacy was the main reason "), "Privacy was the main reason.")
        XCTAssertEqual(SourceSupport.tidy("Yeah, I mean, small models loop."), "Small models loop.")
        XCTAssertEqual(SourceSupport.tidy("Solar panels work."), "Solar panels work.")
    }

    func testAudienceMustDescribePeople() {
        let names = ListItemRules.names(in: podcast.map(\.text).joined(separator: "\n"), speakers: ["Maya", "Dev"])
        XCTAssertNil(ListItemRules.audienceProblem("Developers who want to run models on their own laptops", names: names))
        XCTAssertNil(ListItemRules.audienceProblem("Anyone curious about local AI", names: names))
        XCTAssertNotNil(ListItemRules.audienceProblem("The Local Loop", names: names))
        XCTAssertNotNil(ListItemRules.audienceProblem("", names: names))
        XCTAssertNotNil(ListItemRules.audienceProblem("Local language models and privacy", names: names))
        XCTAssertEqual(ListItemRules.audience(topics: ["Local models", "Privacy"], language: "en"), "People interested in local models and privacy")
        XCTAssertEqual(ListItemRules.audience(topics: ["Fernhill Labs", "AI tools"], language: "en"), "People interested in Fernhill Labs and AI tools")
        XCTAssertEqual(ListItemRules.audience(topics: ["Cocina"], language: "es"), "Personas interesadas en cocina")
    }

    func testEachAddedSentenceCarriesTheCodeOfTheItemItReplaces() {
        let source = SourceSupport(segments: podcast)
        let items = ["How to use the local loop, 3-5 key takeaways for your next project.",
                     "AI can be used to improve everything from healthcare to education."]
        let r = ListItemRules.repair(items, field: .init("keyTakeaways", .sentence, minItems: 2), labels: ["keyTakeaways"], names: [],
                                     source: source, instructions: ["Give keyTakeaways (3-5 concrete takeaways)."], fill: source.centralSentences())
        let (kept, issues) = (r.value, r.issues)
        XCTAssertEqual(kept.count, 2, "\(kept)")
        let added = issues.filter { $0.message.hasSuffix(": added") }
        XCTAssertEqual(added.map(\.code), [.instructionEcho, .unsupportedFact], "\(added)")
        XCTAssertTrue(added[0].message.contains("in place of item 1"))
        // Nothing is dropped: the fill is never worked out.
        let fine = ListItemRules.repair(["Running a local model cut the cloud bill by half."], field: .init("keyTakeaways", .sentence, minItems: 1),
                                       labels: [], names: [], source: source, fill: { XCTFail("fill read"); return [] }())
        XCTAssertEqual(fine.issues, [])
    }

    func testExtractiveSummaryKeepsTheOrderSaid() throws {
        let source = SourceSupport(segments: podcast)
        let summary = try XCTUnwrap(source.extractiveSummary(sentences: 2))
        let sentences = source.centralSentences().prefix(2)
        XCTAssertTrue(sentences.allSatisfy { summary.contains($0) }, summary)
        let positions = sentences.map { summary.range(of: $0)!.lowerBound }
        let said = sentences.map { s in podcast.firstIndex { SourceSupport.tidy($0.text) == s || $0.text.contains(s.dropLast()) } ?? 0 }
        XCTAssertEqual(positions[0] < positions[1], said[0] <= said[1], summary)
        XCTAssertNil(SourceSupport(segments: [Segment(id: 1, speaker: nil, text: "Hi.", startOffset: 0, endOffset: 1)]).extractiveSummary(sentences: 2))
    }

    /// A two-line note ("Maya: … Theo: …" on one line, a turn each): a summary that copies its
    /// lines under a speaker's label, mid-prose too, becomes the note's own statements (its
    /// sentences are too short to be central ones), and a topic chosen twice gives way to
    /// another of the note's phrases (it has no recurring key phrase).
    func testAShortNotesCopiedLinesAndRepeatedTopicAreRepairedFromItsOwnWords() throws {
        let segments = try TranscriptParser.parse("Maya: the release moves to May. Theo: then docs need an update by Friday.", format: nil).segments
        XCTAssertEqual(segments.map(\.speaker), ["Maya", "Theo"])
        let names = ListItemRules.names(in: segments.map(\.text).joined(separator: "\n"), speakers: ["Maya", "Theo"])
        let source = SourceSupport(segments: segments)
        XCTAssertTrue(source.centralSentences().isEmpty)
        let check = AnalysisVerifier(fields: [.init("mainTopics", .phrase, minItems: 2)], proseKeys: ["summary"],
                                     labels: ["summary", "mainTopics"], names: names, source: source, topicsKey: "mainTopics")
        let bad: JSONObject = ["summary": "The release moves to May. Theo: then docs need an update by Friday, Maya: the release needs an update by Friday.",
                               "mainTopics": ["Docs need an update", "Docs need an update"]]
        // The copied prose stays open (another attempt is asked first), then the note's own statements stand in.
        XCTAssertTrue(check.apply(bad).findings.contains { $0.path == "summary" && $0.isOpen })
        let applied = check.finalRepair(check.apply(bad)).result
        XCTAssertEqual(applied.value["summary"], "The release moves to May. Then docs need an update by Friday.")
        let topics = applied.value["mainTopics"]?.arrayValue?.compactMap(\.stringValue) ?? []
        XCTAssertEqual(topics.count, 2, "\(topics)")
        XCTAssertEqual(topics.first, "Docs need an update")
        XCTAssertEqual(Set(topics.map(TextChecks.normalized)).count, 2, "\(topics)")
        XCTAssertFalse(applied.blocking, "\(applied.issues)")
        // Without the label, the same prose is no copy.
        XCTAssertFalse(AnalysisVerifier.copiesLines("The release moves to May. Then docs need an update by Friday.", speakers: ["maya", "theo"]))
        XCTAssertTrue(AnalysisVerifier.copiesLines("The release moves to May. Theo: then docs need an update.", speakers: ["maya", "theo"]))
    }

    /// A summary cut mid-sentence by its length or the token budget ("The new launch is on",
    /// which passed) keeps its whole sentences; with none, it is the transcript's central
    /// sentences. `verify: false` reports the cut and changes nothing.
    func testASummaryCutMidSentenceKeepsItsWholeSentences() throws {
        let segments = try TranscriptParser.parse(
            "Alice: We moved the launch to March because the battery tests failed twice. Bob: Then marketing needs the new date by Friday, and support needs a FAQ.",
            format: nil).segments
        let names = ListItemRules.names(in: segments.map(\.text).joined(separator: "\n"), speakers: ["Alice", "Bob"])
        let check = AnalysisVerifier(fields: [], proseKeys: ["summary"], labels: ["summary"], names: names, source: SourceSupport(segments: segments))
        let two = check.apply(["summary": "The launch moved to March because the battery tests failed twice. Marketing needs the new date by"])
        XCTAssertEqual(two.value["summary"], "The launch moved to March because the battery tests failed twice.")
        XCTAssertEqual(two.findings.map(\.code), [.length])
        XCTAssertFalse(two.blocking)
        let one = check.finalRepair(check.apply(["summary": "The new launch is scheduled for ["])).result
        XCTAssertEqual(one.value["summary"], .string(try XCTUnwrap(SourceSupport(segments: segments).extractiveSummary(sentences: 2))))
        XCTAssertEqual(one.findings.map(\.code), [.degenerate])
        XCTAssertFalse(one.blocking)
        let reported = check.apply(["summary": "Launch moved. Marketing needs the new date by"], mode: .report)
        XCTAssertEqual(reported.value["summary"], "Launch moved. Marketing needs the new date by")
        XCTAssertEqual(reported.findings.map(\.code), [.length])
        // List items cut at their fitted length end with an article, "of", a conjunction or a
        // possessive; a phrasal verb's preposition is an ending.
        for cut in ["The Power of a", "Building a new and", "Moved the launch to the"] {
            XCTAssertEqual(ListItemRules.problem(cut, kind: .phrase, before: [], labels: [], names: []), .length, cut)
        }
        for whole in ["Things to look out for", "Battery tests failed twice", "A"] {
            XCTAssertNil(ListItemRules.problem(whole, kind: .phrase, before: [], labels: [], names: []), whole)
        }
        // Cut inside a word of the transcript ("F" for Fernhill); a short word it says is whole.
        let labs = SourceSupport(segments: [Segment(id: 1, speaker: "Maya", text: "Priya works at Fernhill Labs on Plan B for AI models.",
                                                    startOffset: 0, endOffset: 53)])
        XCTAssertTrue(labs.endsMidWord("Priya's work at F"))
        for whole in ["Priya's work at Fernhill", "Plan B", "Models for AI", "Work at Fernhill."] { XCTAssertFalse(labs.endsMidWord(whole), whole) }
        XCTAssertEqual(ListItemRules.problem("Priya's work at F", kind: .phrase, before: [], labels: [], names: [], source: labs), .length)
        // Ended sentences: a closing quote or bracket after the stop, a CJK full stop.
        for whole in ["They said \"ship it.\"", "It works (mostly.)", "发布推迟到三月。", "Really?"] { XCTAssertNil(AnalysisVerifier.cut(whole), whole) }
    }

    func testACopiedLineSummaryAndANameAudienceAreRepairedFromTheTranscript() {
        let names = ListItemRules.names(in: podcast.map(\.text).joined(separator: "\n"), speakers: ["Maya", "Dev"])
        let check = AnalysisVerifier(fields: [.init("mainTopics", .phrase, minItems: 2)], audienceKey: "targetAudience", proseKeys: ["summary"],
                              labels: ["summary", "mainTopics", "targetAudience"], names: names, source: SourceSupport(segments: podcast),
                              topicsKey: "mainTopics")
        let bad: JSONObject = ["summary": "Maya: Welcome to The Local Loop", "mainTopics": ["Maya: Welcome", "The Local Loop"], "targetAudience": "The Local Loop"]
        let applied = check.finalRepair(check.apply(bad)).result
        let (fixed, issues) = (applied.value, applied.issues)
        let summary = fixed["summary"]?.stringValue ?? ""
        XCTAssertFalse(summary.contains("Maya:"), summary)
        XCTAssertEqual(summary, SourceSupport(segments: podcast).fallbackSummary(), summary)
        XCTAssertTrue(issues.contains { $0.code == .degenerate && $0.repaired == true }, "\(issues)")
        let audience = fixed["targetAudience"]?.stringValue ?? ""
        // No topic passed: the audience comes from the transcript's key phrases, never a name.
        XCTAssertEqual(audience, "People interested in local model")
        XCTAssertNil(ListItemRules.audienceProblem(audience, names: names))
        // verify: false reports and changes nothing.
        let report = check.apply(bad, mode: .report)
        let (same, reported) = (report.value, report.issues)
        XCTAssertEqual(same, bad)
        XCTAssertTrue(reported.allSatisfy { $0.repaired == nil }, "\(reported)")
        XCTAssertFalse(reported.contains { $0.message.hasSuffix(": added") })
        // An invented sentence of the summary goes; the supported one stays.
        let mixed: JSONObject = ["summary": "Dev moved transcription to a local model and cut the cloud bill by half. AI will cure every disease by next year.",
                                 "mainTopics": ["Local models", "Cloud costs"], "targetAudience": "Developers who run models on their own laptops"]
        let mixedApplied = check.apply(mixed)
        let (trimmed, found) = (mixedApplied.value, mixedApplied.issues)
        XCTAssertEqual(trimmed["summary"]?.stringValue, "Dev moved transcription to a local model and cut the cloud bill by half.")
        XCTAssertTrue(found.contains { $0.code == .unsupportedFact && $0.path == "summary" && $0.repaired == true && $0.message.contains("disease") }, "\(found)")
        XCTAssertTrue(check.apply(mixed, mode: .report).issues.contains { $0.code == .unsupportedFact && $0.repaired == nil })
        // A good result passes untouched.
        let good: JSONObject = ["summary": "Dev explains how a local model halved their cloud bill.", "mainTopics": ["Local models", "Cloud costs"],
                                "targetAudience": "Developers who run models on their own laptops"]
        let goodApplied = check.apply(good)
        let (kept, none) = (goodApplied.value, goodApplied.issues)
        XCTAssertEqual(kept, good)
        XCTAssertEqual(none, [], "\(none)")
    }
}
