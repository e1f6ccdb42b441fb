import ParlanceProtocol

extension Finding {
    /// What a check found, with what the message needs; the message itself is written by
    /// `message`, below, and nowhere else.
    public enum Subject: Hashable, Sendable {
        // MARK: A rewrite (RewriteVerifier, RewriteRepair)
        /// The output is empty or not language.
        case notARewrite(String)
        /// The refusal phrase the output uses.
        case refusal(String)
        /// A run of the prompt's own words the output repeats.
        case rewriteEchoesPrompt(String)
        /// Facts of the prompt's worked example the output copied.
        case copiesExample([String])
        /// The output is the selection unchanged (or, `revision`, the text it was asked to revise).
        case unchanged(revision: Bool)
        case factsMissing([String])
        /// The rewrite keeps `kept` of the selection's `of` content words: it says something else.
        case contentLost(kept: Int, of: Int)
        /// The rewrite speaks to "you" about what the selection says of someone else.
        case personChanged(from: String)
        /// A person's family name after another person's first name.
        case mixedName(key: String, written: String, person: String)
        case factsNotInSelection([String])
        case length(words: Int, selectionWords: Int, bounds: ClosedRange<Double>)
        case tone(Tone, [ToneCheck.Failure])
        case wrongLanguage(found: String, wanted: String)
        /// A fact the output wrote differently from the selection.
        case factChanged(FactRepair.Change)
        /// A name the output greets that the selection does not have.
        case greetingName(String)
        /// A sentence of the output holding these numbers or names, which the selection does not have.
        case inventedSentence(String, facts: [String])
        /// The tone's lexical repairs.
        case toneWording(Tone, [ToneCheck.Change])
        /// A variation that reads nearly word for word like the variation of this other tone.
        case sameAsOtherTone(Tone)
        /// Of a formal and a casual variation of one composition, the formal one scores no more
        /// formal than the casual one (each variation names the other's tone).
        case toneOrder(Tone)

        // MARK: Any generated text, while it streams (StreamWatch)
        /// The run of words the output repeats back to back (or a sentence written again).
        case loop(String)

        // MARK: An answer (AnswerVerifier)
        case answerNotLanguage(String)
        case answerEchoesPrompt(String)
        case answerPlaceholder(String)
        /// The answer starts with this mark.
        case answerFragment(String)
        case answerRepeatsQuestion
        /// An extractive answer to a question that asks for no kind of value: whether the
        /// quote answers it cannot be checked.
        case quoteUnchecked
        /// A run of words the answer writes three times back to back.
        case answerLoops(String)
        /// The id of the segment the answer copies.
        case answerCopiesSegment(Int)
        /// The speaker's label the answer opens with, as a line of the transcript does.
        case answerOpensWithLabel(String)
        /// What the question asks for, which the answer does not give.
        case notAnswered(AskStream.AnswerType)
        /// The question counts a unit ("how many nurses") and no sentence of the answer gives a number of it.
        case countOfOther(String)
        /// The answer's figures or names, which the segments say only of something else (`AnswerVerifier.saidOfOther`).
        case valueOfOther([String])
        case factsNotInSegments([String])
        /// Cited segments that share little with the question and the answer.
        case weakCitations([Int])
        /// Segments that best match the question, not cited.
        case uncitedSegments([Int])
        /// The evidence that the document does not answer: what the question asks for, and
        /// the answerability probability.
        case notInDocument(expects: AskStream.AnswerType?, answerability: Double)

        // MARK: A list (ListItemRules)
        /// A list item failing the rule its finding's code names.
        case listItem(String)
        /// The title of a key moment failing the rule its finding's code names.
        case keyMoment(String)
        /// A chapter's title failing the rule its finding's code names.
        case chapterTitle(String)
        /// A chapter's title longer than `ChapterRules.maxWords` words (its word count).
        case chapterTitleWords(String, words: Int)
        /// Chapters out of order, overlapping, leaving a gap, or not reaching an end: what is wrong.
        case chapterLayout(String)
        /// A sentence of the transcript standing in for a dropped item (its index).
        case transcriptSentence(String, inPlaceOf: Int)

        // MARK: Entities (grounding)
        /// Names the model gave that the transcript does not have (moved out of the lists).
        case namesNotInTranscript([String])

        // MARK: An analysis result (AnalysisVerifier)
        case audienceEmpty
        case audienceIsName(String)
        case audienceNotPeople(String)
        /// A prose field (its key) that is not language.
        case proseNotLanguage(key: String, text: String)
        /// A prose field that copies a transcript line or holds a placeholder.
        case proseCopiesLine(key: String, text: String)
        /// Sentences of a prose field the transcript does not support: how many, of how many, the first.
        case proseUnsupported(key: String, unsupported: Int, of: Int, first: String)
        /// A prose field that stops mid-sentence (its length or the token budget ran out): the fragment.
        case proseCut(key: String, fragment: String)
        /// Prose that names nothing the transcript is about ("Here's the episode.").
        case proseVacuous(key: String, text: String)
    }

    /// The message of the wire's `VerificationIssue`: what was found, then what was done.
    public var message: String { found + done }

    /// What was found.
    var found: String {
        switch subject {
        case .notARewrite(let text): "the output is not a rewrite: " + (text.isEmpty ? "empty" : "\"\(Finding.clip(text))\"")
        case .refusal(let phrase): "the model refused or talked about itself instead of rewriting (\"\(phrase)\")"
        case .rewriteEchoesPrompt(let echo): "the output repeats the prompt's instructions (\"\(Finding.clip(echo))\")"
        case .copiesExample(let facts): "the output copies the prompt's example (" + facts.joined(separator: ", ") + ")"
        case .loop(let run): "the output repeats itself (\"\(Finding.clip(run))\"); stopped while it streamed"
        case .unchanged(let revision): revision ? "the output is the text it was asked to revise, unchanged" : "the output is the selection unchanged"
        case .factsMissing(let facts): "facts of the selection missing or changed: " + facts.joined(separator: ", ")
        case .contentLost(let kept, let of): "keeps \(kept) of the selection's \(of) content words: it says something else, not the selection"
        case .mixedName(let key, let written, let person): "\(key) names \"\(written)\", who is not in the transcript: \"\(person)\" is someone else"
        case .personChanged(let from): "says \"you\" of what the selection says of \"\(from)\": it is about someone else"
        case .factsNotInSelection(let facts): "not in the selection: " + facts.joined(separator: ", ")
        case .length(let words, let selection, let bounds):
            "the output has \(words) words for a selection of \(selection) (outside \(bounds.lowerBound)–\(bounds.upperBound)×)"
        case .tone(let tone, let failures):
            "asked for \(tone.rawValue): " + failures.map(\.detail).joined(separator: "; ") + " [marker: " + failures.map(\.marker).joined(separator: ", ") + "]"
        case .wrongLanguage(let found, let wanted): "the output is in \(found), not \(wanted)"
        case .factChanged(let c): "the output changed \"\(c.restored)\" to \"\(c.changed)\""
        case .greetingName(let name): "the output greets \"\(name)\", a name not in the selection"
        case .inventedSentence(let sentence, let facts):
            "the sentence \"\(Finding.clip(sentence, 60))\" says what the selection does not (" + facts.joined(separator: ", ") + ")"
        case .toneWording(let tone, let changes): "\(tone.rawValue): " + changes.map(\.description).joined(separator: ", ")
        case .sameAsOtherTone(let other): "reads nearly word for word like the \(other.rawValue) variation"
        case .toneOrder(let other): other == .casual ? "scores no more formal than the casual variation" : "scores no less formal than the formal variation"
        case .answerNotLanguage(let text): "the answer is not language: \"\(Finding.clip(text))\""
        case .answerEchoesPrompt(let echo): "the answer repeats the prompt's instructions (\"\(Finding.clip(echo))\")"
        case .answerPlaceholder(let p): "the answer contains a placeholder (\(p))"
        case .answerFragment(let first): "the answer is a fragment (it starts with \"\(first)\")"
        case .answerRepeatsQuestion: "the answer repeats the question"
        case .quoteUnchecked:
            "no model answer passed; the quote is the passage that best matches the question's words, and whether it answers a question that asks for no amount, time or name cannot be checked"
        case .answerLoops(let run): "the answer repeats itself (\"\(Finding.clip(run))\" three times)"
        case .answerCopiesSegment(let id): "the answer copies segment \(id), which has nothing in common with the question"
        case .answerOpensWithLabel(let label): "the answer opens with a speaker's label (\"\(Finding.clip(label)):\"): it goes on writing the transcript"
        case .notAnswered(let type): "the question asks for \(type.phrase) and the answer gives none"
        case .countOfOther(let unit): "the question asks how many (\(unit)) and no sentence of the answer gives a number of them"
        case .valueOfOther(let facts):
            "the segments give " + facts.joined(separator: ", ") + " only in sentences that name nothing the question asks about: the value of something else"
        case .factsNotInSegments(let facts): "not in the segments shown: " + facts.joined(separator: ", ")
        case .namesNotInTranscript(let names): "not in the transcript, moved to unverified: " + names.joined(separator: ", ")
        case .weakCitations(let ids):
            "cited segment\(ids.count == 1 ? "" : "s") \(Finding.list(ids)) share\(ids.count == 1 ? "s" : "") little with the question and the answer"
        case .uncitedSegments(let ids):
            "segment\(ids.count == 1 ? "" : "s") \(Finding.list(ids)) best match\(ids.count == 1 ? "es" : "") the question and \(ids.count == 1 ? "was" : "were") not cited"
        case .notInDocument(let expects, let p):
            (expects.map { "no segment shown gives \($0.phrase) next to the question's subject" } ?? "the segments shown do not hold the question's subject")
                + " (answerability \(p))"
        case .listItem(let item), .keyMoment(let item): Finding.describe(code, item)
        case .chapterTitle(let title): code == .nameOnlyItem ? "\"\(Finding.clip(title, 60))\" is only a name, not what the chapter is about" : Finding.describe(code, title)
        case .chapterTitleWords(let title, let words): "\"\(Finding.clip(title, 60))\" has \(words) words (at most \(ChapterRules.maxWords))"
        case .chapterLayout(let what): "the chapters \(what)"
        case .transcriptSentence(let s, let index): "\"\(Finding.clip(s, 60))\", from the transcript, in place of item \(index + 1)"
        case .audienceEmpty: "targetAudience is empty"
        case .audienceIsName(let a): "targetAudience \"\(Finding.clip(a, 60))\" is a name from the text, not a description of people"
        case .audienceNotPeople(let a): "targetAudience \"\(Finding.clip(a, 60))\" does not describe a kind of person"
        case .proseNotLanguage(let key, let text): "\(key) is not language: \"\(Finding.clip(text))\""
        case .proseCopiesLine(let key, let text): "\(key) copies a transcript line or holds a placeholder: \"\(Finding.clip(text))\""
        case .proseUnsupported(let key, let n, let of, let first):
            "\(n) of \(of) sentences of \(key) not supported by the transcript (\"\(Finding.clip(first, 50))\")"
        case .proseCut(let key, let fragment): "\(key) stops mid-sentence: \"\(Finding.clip(fragment, 50))\""
        case .proseVacuous(let key, let text): "\(key) names nothing the transcript is about: \"\(Finding.clip(text))\""
        }
    }

    /// What was done (or, proposed, would be): empty when only reported.
    var done: String {
        switch action {
        case nil: ""
        case .removed?:
            switch subject {
            case .greetingName: ": dropped"
            case .keyMoment: ": moment removed"
            case .chapterTitle, .chapterTitleWords: ": chapter merged into the one before it (the first: into the next)"
            case .namesNotInTranscript: ""  // the found text says where they went
            default: ": removed"
            }
        case .added?: ": added"
        case .restored?: ": restored"
        case .replaced(.rewording)?: ": repaired"
        case .replaced(.centralSentences)?: ": replaced by the transcript's own statements, part by part, with who said them"
        case .replaced(.text(let text))?: ": replaced by \"\(text)\""
        case .replaced(.notFound)?: ": not found"
        }
    }

    /// A list item quoted, with the rule `code` says it fails.
    static func describe(_ code: VerificationIssueCode, _ item: String) -> String {
        let q = "\"\(clip(item, 60))\""
        switch code {
        case .duplicateItem: return "\(q) repeats an earlier item"
        case .labelItem: return "\(q) is a prompt label or a repeated word, not content"
        case .nameOnlyItem: return "\(q) is a name, not a sentence"
        case .instructionEcho: return "\(q) repeats the prompt's own words"
        case .unsupportedFact: return "\(q) is not supported by the transcript"
        case .length: return "\(q) stops mid-phrase"
        default: return q
        }
    }

    /// At most `n` characters of `s`, with "…" when cut.
    static func clip(_ s: String, _ n: Int = 80) -> String { s.count > n ? String(s.prefix(n)) + "…" : s }

    static func list(_ ids: [Int]) -> String { ids.map(String.init).joined(separator: ", ") }
}

extension ToneCheck.Failure {
    /// Why the marker failed, in words.
    public var detail: String {
        switch self {
        case .contractions(let words): "contractions (" + words.joined(separator: ", ") + ")"
        case .slang(let words): "slang (" + words.joined(separator: ", ") + ")"
        case .notFullSentences(let first): "not full sentences (\"\(Finding.clip(first, 40))\")"
        case .readsCasual(let formality): "reads casual (formality \(formality), below \(ToneCheck.formalAtLeast))"
        case .readsFormal(let formality): "reads formal (formality \(formality), above \(ToneCheck.casualAtMost))"
        case .notConversational(let missing): "not conversational (no " + missing.map(ToneCheck.Failure.describeCasual).joined(separator: ", no ") + ")"
        case .noAcknowledgement: "does not acknowledge the reader (no \"I understand\", \"thank you for\", \"I'm sorry\"…)"
        case .noFactFirst(let example): "the first sentence has none of the selection's facts (such as \(example))"
        case .noMainWordsFirst: "the first sentence does not carry the selection's main words"
        case .notShorter(let words, let selectionWords): "not shorter than the selection (\(words) words for \(selectionWords))"
        case .noHedge: "no hedge or softener (\"perhaps\", \"might\", \"could we\", \"would it be possible\"…)"
        }
    }

    static func describeCasual(_ marker: String) -> String {
        switch marker {
        case "contractions": return "contractions"
        case "secondPerson": return "\"you\""
        case "informalAddress": return "informal address or casual word (\"tú\", \"tu\", \"du\"…)"
        default: return "short sentences"
        }
    }
}

extension ToneCheck.Change: CustomStringConvertible {
    /// `"don't" → "do not"`.
    public var description: String { "\"\(from)\" → \"\(to)\"" }
}

extension AskStream.AnswerType {
    /// What a question of this type asks for, in words: "an amount", "a number", "a date or
    /// time", "a name".
    public var phrase: String {
        switch self {
        case .amount: "an amount"
        case .quantity: "a number"
        case .time: "a date or time"
        case .name: "a name"
        }
    }
}
