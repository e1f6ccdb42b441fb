import Foundation
import ParlanceDocuments
import ParlanceEngine
import ParlanceProtocol
import ParlanceSchema

/// Facts a variation left out, put back instead of a whole new variation: the variation's
/// body stays as it was written, and the selection's own sentences that carry those facts
/// follow it, after a connector (a marker of the tone when the tone was off too), before
/// its closing lines (a sign-off). No model call: the facts are the selection's, verbatim,
/// in the words that said them. A tone that was off alone gets one short sentence from the
/// model, opening with a marker phrase under a grammar (`toneGrammar`).
enum FactInsertion {
    /// The closing of a letter: at most this many trailing lines (not blank) without a sentence end.
    static let closingLines = 3
    /// An insertion copies at most this many of the selection's sentences (more, and the
    /// variation becomes the selection again); the facts of later ones stay missing.
    static let maxSentences = 3

    /// `text` cut before its closing: trailing short lines with no sentence end ("Best
    /// regards,", "Priya", blank lines) and the whitespace before them, when a body with a
    /// sentence end is left. No closing: `tail` is empty.
    static func split(_ text: String) -> (body: String, tail: String) {
        let trimmed = text.replacingOccurrences(of: #"\s+$"#, with: "", options: .regularExpression)
        var lines = trimmed.components(separatedBy: "\n")
        var closing = 0
        while let last = lines.last?.trimmingCharacters(in: .whitespaces), lines.count > 1 {
            if last.isEmpty { lines.removeLast(); continue }
            guard closing < closingLines, last.split(separator: " ").count <= 5, !".!?".contains(last.last!) else { break }
            lines.removeLast()
            closing += 1
        }
        let body = lines.joined(separator: "\n")
        guard closing > 0, body.contains(where: { ".!?".contains($0) }) else { return (trimmed, "") }
        return (body, String(trimmed.dropFirst(body.count)))
    }

    /// What the sentences put back open with, when the variation's tone was fine (or is not
    /// mended: not English), in the selection's language ("In addition," opened a French
    /// sentence); nil: the sentences follow without one.
    static func lead(_ language: String) -> String? {
        switch language.split(separator: "-").first.map(String.init) ?? language {
        case "en": "In addition,"
        case "es": "Además,"
        case "fr": "De plus,"
        case "it": "Inoltre,"
        case "pt": "Além disso,"
        // German, Norwegian, Dutch: a connector puts the verb before the subject, which a
        // sentence copied as it is does not; the sentences stand alone.
        default: nil
        }
    }

    /// The connectors of a variation whose `tone` was also off: each a marker of the tone
    /// (`ToneCheck`), so the sentences that put the facts back mend the tone as well (the
    /// first is used). Other tones: `lead`.
    static func leads(mending tone: Tone) -> [String] {
        switch tone {
        case .empathetic: return ["I understand that", "I know that", "We appreciate that", "I realise that"]
        case .diplomatic: return ["Kindly note that", "It might help to know that", "It would be worth noting that"]
        case .formal: return ["Please note that", "Kindly note that", "I would like to inform you that"]
        // Each with "you" or a contraction, casual's markers ("And heads up," had neither).
        case .casual: return ["Just so you know,", "And don't forget,", "Oh, and you'll want to know that"]
        default: return ["In addition,"]
        }
    }

    /// Whether `selection` is a message to a reader, where a sentence of a tone's phrases
    /// ("Let me know if you've…", "I understand…", "Could we…") may be added: it greets or
    /// thanks someone, or says "you" other than as a filler ("you know"). A passage quoted
    /// from a transcript is not: the 0.5B's casual rewrite of a podcast's "He actually
    /// started his career in marine mechanics…" came back with "Let me know if you've been
    /// working on any projects or have any questions." added, and passed (2026-12-08).
    static func addressesReader(_ selection: String) -> Bool {
        let greeting = #"^\s*((hi|hello|hey|dear|good (morning|afternoon|evening))\b|(team|folks|all|everyone)\s*[,:!])"#
        if selection.range(of: greeting, options: [.regularExpression, .caseInsensitive]) != nil { return true }
        // The fillers taken out hold no word of thanks; "you're", however split, holds "you" or "youre".
        let words = TextChecks.wordsWithoutYouFillers(selection)
        return words.contains { ["thanks", "thank", "regards", "cheers", "please", "you", "your", "yours", "youre", "youll", "youve"].contains($0) }
    }

    /// The longest word a sentence mending a tone may write, in characters.
    static let maxWord = 24

    /// The selection's sentences that carry `units`, each with the units it carries, in order.
    static func groups(_ units: [FactGrammar.Unit], in selection: String) -> [(sentence: String, units: [FactGrammar.Unit])] {
        var out: [(sentence: String, units: [FactGrammar.Unit])] = []
        var offset = 0
        var left = units
        let ns = selection as NSString
        for sentence in Sentences.split(selection) {
            let r = ns.range(of: sentence, range: NSRange(location: offset, length: ns.length - offset))
            guard r.location != NSNotFound else { continue }
            offset = r.location + r.length
            // A unit belongs to the first sentence it meets (a date may straddle a split).
            let carried = left.filter { NSIntersectionRange($0.range, r).length > 0 }
            left.removeAll { u in carried.contains { $0.range == u.range } }
            if !carried.isEmpty { out.append((sentence.trimmingCharacters(in: .whitespacesAndNewlines), carried)) }
        }
        return out
    }

    /// The selection's sentences that carry `units`.
    static func sentences(carrying units: [FactGrammar.Unit], in selection: String) -> [String] {
        groups(units, in: selection).map(\.sentence)
    }

    /// `units` without those of the selection's sentences after the first `maxSentences` that carry any.
    static func sayable(_ units: [FactGrammar.Unit], in selection: String) -> [FactGrammar.Unit] {
        groups(units, in: selection).prefix(maxSentences).flatMap(\.units)
    }

    /// The grammar of a sentence that only mends a tone: one of the tone's marker phrases
    /// (`FactGrammar.mendingOpeners`), then at most `toneWords` words and the sentence's end.
    static func toneGrammar(_ tone: Tone) -> String? {
        let openers = FactGrammar.mendingOpeners(for: tone)
        guard !openers.isEmpty else { return nil }
        return ["root ::= (" + openers.map(GrammarBuilder.literal).joined(separator: " | ") + ") spw{1,\(toneWords)} [.!?]",
                #"v ::= [^\x00-\x20.!?"()]"#, "spw ::= \" \" v{1,\(maxWord)}"].joined(separator: "\n")
    }

    /// Words a sentence that mends a tone may take after its marker phrase.
    static let toneWords = 12

    /// The turn that asks for a sentence mending `tone`.
    static func toneRequest(_ tone: Tone) -> String {
        let does = switch tone {
        case .diplomatic: "softens it and stays positive."
        case .formal: "keeps it polite and formal."
        case .casual: "keeps it friendly and relaxed."
        default: "acknowledges how the reader may feel."
        }
        return toneRequestOpening + does
    }

    static let toneRequestOpening = "Add one short sentence to your message that "

    /// `last`'s text with one more sentence after its body (before its closing): the
    /// selection's own sentences that carry `units` (`copied`), after a lead that marks
    /// `mending` when its tone was off too; without units, a sentence mending that tone alone
    /// (`toneGrammar`), asked of `engine` (a local one: it takes grammars) after `last`'s
    /// conversation, with the generation it took. `text` is nil when that sentence did not
    /// end within its tokens.
    static func run(_ units: [FactGrammar.Unit], mending tone: Tone?, selection: String, language: String, into last: Compose.Attempt, engine: any LanguageModel,
                    options: ResolvedOptions, ctx: RequestContext, part: String) async throws -> (out: Generated, text: String?) {
        let (cut, tail) = split(last.text)
        let body = closed(cut)
        if !units.isEmpty {
            // Copied, not generated: the model's sentences put facts back among words it
            // strewed around them ("your personal journey of 1 April", "we would have a day
            // off, if you had to, October 5pm on Friday"), and took 40 to 70 tokens each, most
            // of compose's cost with verification on (eval, 2026-12-01).
            var out = last.out
            out.usage = Usage(promptTokens: 0, cachedPromptTokens: 0, generatedTokens: 0, firstTokenMs: last.out.usage.firstTokenMs, totalMs: 0)
            let lead = tone.map { leads(mending: $0)[0] } ?? lead(language)
            return (out, copied(units, selection: selection, lead: lead).map { body + " " + $0 + tail })
        }
        guard let tone, let grammar = toneGrammar(tone) else {
            return (Generated(text: "", json: nil, tokens: [], prompt: last.out.prompt, usage: .zero, finishReason: .stop), nil)
        }
        let ask = toneRequest(tone)
        // The model's turn as it wrote it, token for token (their state is cached; rendered
        // anew from the repaired text, the whole body was evaluated again). The sentence still
        // goes into the repaired text. Not when a sentence was taken out: the model would go
        // on from what it said there.
        let own = last.out.stoppedBy == nil && !last.out.tokens.isEmpty && !last.findings.contains {
            if case .inventedSentence = $0.subject { true } else { false }
        }
        let messages = last.out.prompt.messages + [ChatMessage(.assistant, own ? last.out.text : body), ChatMessage(.user, ask)]
        let prompt = own ? engine.render(messages, history: last.out.prompt.tokens + last.out.tokens, after: messages.count - 2) : engine.render(messages)
        var o = options
        o.maxTokens = min(options.maxTokens, 2 * toneWords + 8)
        o.noRepeatRun = Compose.RetryPolicy.grammarRepeatRun
        let out = try await Generation.run(engine, prompt: prompt, grammar: grammar, options: o, progress: ctx.progress, part: part)
        let sentence = out.text.trimmingCharacters(in: .whitespaces)
        guard out.finishReason != .length, let end = sentence.last, ".!?".contains(end) else { return (out, nil) }
        return (out, body + " " + sentence + tail)
    }

    /// The selection's sentences that carry `units` (at most `maxSentences`), as they are,
    /// after `lead` (nil: none): a greeting before the first one's first comma is cut when it carries
    /// none of the units ("Hi Priyanka, just a reminder…"), and its first word is lower case
    /// after the lead unless it is "I" or a name (capitalised inside a sentence of the
    /// selection, or with a capital inside it: "HeatRight"). Nil without such a sentence.
    static func copied(_ units: [FactGrammar.Unit], selection: String, lead: String?) -> String? {
        let said = groups(units, in: selection).prefix(maxSentences)
        guard var first = said.first?.sentence else { return nil }
        if let comma = first.firstIndex(of: ","), greetings.contains(where: { first.lowercased().hasPrefix($0) }) {
            let greeting = String(first[..<comma])
            let rest = first[first.index(after: comma)...].trimmingCharacters(in: .whitespaces)
            if !rest.isEmpty, !said[said.startIndex].units.contains(where: { greeting.contains($0.text) }) { first = rest }
        }
        let word = String(first.prefix { !$0.isWhitespace && $0 != "," })
        if lead == nil { first = first.prefix(1).uppercased() + first.dropFirst() }
        else if !keepsCapital(word, in: selection) { first = first.prefix(1).lowercased() + first.dropFirst() }
        return ([(lead.map { $0 + " " } ?? "") + first] + said.dropFirst().map(\.sentence)).joined(separator: " ")
    }

    /// `body` with its last sentence ended: one the model left unfinished (at its tokens'
    /// end, or mid-clause: "…with careful planning,") gets a full stop, so what follows opens
    /// a sentence of its own. Run on, "…careful planning, In addition, revenue…" read "In"
    /// as a name inside a sentence, and the sentence carrying the facts was taken out as
    /// invented (eval, 2026-12-06).
    static func closed(_ body: String) -> String {
        let open: Set<Character> = [",", ";", "-", "\u{2013}", "\u{2014}"]
        let trimmed = String(body.reversed().drop(while: \.isWhitespace).reversed())
        guard let last = trimmed.last, last.isLetter || last.isNumber || open.contains(last) else { return body }
        return String(trimmed.reversed().drop { $0.isWhitespace || open.contains($0) }.reversed()) + "."
    }

    /// How a sentence that opens with a greeting begins (lower case).
    static let greetings = ["hi ", "hello", "hey ", "dear ", "good morning", "good afternoon", "good evening", "greetings",
                            "hola", "querid", "estimad", "buenos días", "bonjour", "bonsoir", "cher ", "chère", "chers ", "chères",
                            "hallo", "liebe", "sehr geehrte", "ciao", "caro ", "cara ", "cari ", "gentile", "olá", "prezad", "hei ", "kjære"]

    /// Whether `word`, opening a sentence, stays capitalised after a lead: "I" ("I'm", "I'll"),
    /// a word with a capital after its first letter, or one `selection` writes capitalised
    /// after a lower-case word.
    static func keepsCapital(_ word: String, in selection: String) -> Bool {
        guard let c = word.first, c.isUppercase else { return true }
        if word == "I" || word.hasPrefix("I'") || word.hasPrefix("I’") || word.dropFirst().contains(where: \.isUppercase) { return true }
        let pattern = "[a-z,;:] " + NSRegularExpression.escapedPattern(for: word) + "\\b"
        return selection.range(of: pattern, options: .regularExpression) != nil
    }
}
