import Foundation
import ParlanceDocuments
import ParlanceEngine
import ParlanceProtocol
import ParlanceSchema

/// Facts a variation left out, put back by the model itself instead of a whole new
/// variation: the variation's body stays as it was written, the model is asked in a new
/// turn for one more sentence per sentence of the selection with those facts, saying what
/// it says, and a grammar makes each of those sentences carry its facts verbatim, in the
/// selection's order; the closing lines (a sign-off) follow them again. Only the new turn
/// is evaluated (the prompt and the body are a cached prefix) and a sentence or a few
/// generated: a fraction of a regeneration, which rescued one failing variation in eight
/// (eval, 2026-11-27).
enum FactInsertion {
    /// The closing of a letter: at most this many trailing lines (not blank) without a sentence end.
    static let closingLines = 3
    /// The free text before the first fact, and after the last, in characters, bounded in
    /// words (`words`: ten). (At 80, with gaps between facts of twice their distance in the
    /// selection and 20 more, the sentence took about as many tokens as the variation it
    /// completed: 55 against 60 on four tuning items, most of compose's cost with
    /// verification on.)
    static let gap = 48
    /// What a gap between two facts may add to their distance in the selection, in characters.
    static let slack = 12
    /// An insertion says again at most this many of the selection's sentences, one sentence
    /// each (the facts of several in one sentence, the small model strewed through a sentence
    /// that says nothing: "your 1 £35 year journey"); the facts of later ones stay missing.
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

    /// The grammar of the sentences put back: for each group of `units` (the facts of one
    /// of the selection's sentences, `groups`), one sentence carrying them (`sentence`),
    /// the sentences separated by a space.
    static func grammar(_ units: [FactGrammar.Unit], selection: String, leads: [String] = leads) -> String? {
        grammar(groups(units, in: selection).map(\.units), selection: selection, leads: leads)
    }

    /// One sentence per group of units, in order, the first opening with one of `leads`;
    /// nil when there is none.
    static func grammar(_ groups: [[FactGrammar.Unit]], selection: String, leads: [String] = leads) -> String? {
        let groups = groups.filter { !$0.isEmpty }
        guard !groups.isEmpty else { return nil }
        let rules = groups.indices.flatMap { sentence(groups[$0], name: "s\($0)", selection: selection) }
        let root = "root ::= lead " + groups.indices.map { "s\($0)" }.joined(separator: " \" \" ")
        return ([root, "lead ::= (" + leads.map(GrammarBuilder.literal).joined(separator: " | ") + ") \" \""] + rules
                + [#"v ::= [^\x00-\x20.!?"()]"#, "wsp ::= v{1,\(maxWord)} \" \"", "spw ::= \" \" v{1,\(maxWord)}"]).joined(separator: "\n")
    }

    /// What the sentences put back open with: without one, the small model began its message
    /// again ("Dear residents of Canal House, welcome to the lu 4pm.").
    static let leads = ["Also,", "In addition,", "Please note that", "Note that"]

    /// The connectors of a variation whose `tone` was also off: each a marker of the tone
    /// (`ToneCheck`), so the sentences that put the facts back mend the tone as well.
    /// Other tones: `leads`.
    static func leads(mending tone: Tone) -> [String] {
        switch tone {
        case .empathetic: return ["I understand that", "I know that", "We appreciate that", "I realise that"]
        case .diplomatic: return ["Kindly note that", "It might help to know that", "It would be worth noting that"]
        case .formal: return ["Please note that", "Kindly note that", "I would like to inform you that"]
        // Each with "you" or a contraction, casual's markers ("And heads up," had neither).
        case .casual: return ["Just so you know,", "And don't forget,", "Oh, and you'll want to know that"]
        default: return leads
        }
    }

    /// The rules of rule `name`: free words with each of `units` verbatim in order, then the
    /// sentence's end. A gap between two facts is bounded, in words, by their distance in
    /// the selection and `slack`, so a bound reached never cuts a word; a fact sticks to no
    /// word before it, and after it only punctuation or the letters that follow it in the
    /// selection (the unit of "9am": never "9pm" for "9am");
    /// free text has no sentence end, no line break, no quote or bracket, so it stays one
    /// plain sentence.
    private static func sentence(_ units: [FactGrammar.Unit], name: String, selection: String) -> [String] {
        var root: [String] = []
        var rules: [String] = []
        var previousEnd = units[0].range.location
        for (i, u) in units.enumerated() {
            let bound = words(i == 0 ? gap : min(gap, max(0, u.range.location - previousEnd) + slack))
            let free = "wsp{0,\(bound)}"
            rules.append("\(name)g\(i) ::= " + (i == 0 ? free : after(units[i - 1], in: selection) + "? \" \" " + free))
            root += ["\(name)g\(i)", GrammarBuilder.literal(u.text)]
            previousEnd = u.range.location + u.range.length
        }
        root.append("\(name)end")
        rules.append("\(name)end ::= " + after(units[units.count - 1], in: selection) + "? spw{0,\(words(gap))} [.!?]")
        return ["\(name) ::= " + root.joined(separator: " ")] + rules
    }

    /// The longest word free text may write, in characters.
    static let maxWord = 24

    /// Words a gap of `characters` may take.
    static func words(_ characters: Int) -> Int { max(1, (characters + 4) / 5) }

    /// What may follow `unit` directly, as a group: punctuation, or the letters that follow
    /// it in `selection` (a number's unit, "am" of "9am") and punctuation after them.
    private static func after(_ unit: FactGrammar.Unit, in selection: String) -> String {
        let ns = selection as NSString
        let rest = ns.substring(from: min(ns.length, unit.range.location + unit.range.length))
        let letters = String(rest.prefix { $0.isLetter })
        return letters.isEmpty || unit.text.last?.isLetter == true ? "([,;:])" : "(" + GrammarBuilder.literal(letters) + " [,;:]? | [,;:])"
    }

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

    /// The new turn: the selection's sentences that carry `units`, to say once more, one sentence each.
    static func request(_ units: [FactGrammar.Unit], selection: String) -> String {
        let said = sentences(carrying: units, in: selection)
        let count = said.count == 1 ? "one sentence" : (said.count <= 3 ? ["two", "three"][said.count - 2] : "\(said.count)") + " sentences"
        return "Add \(count) to your message, \(requestFrame)\(said.count == 1 ? "s" : ""): " + said.joined(separator: " ")
    }

    /// The words of `request` an output must not repeat (its opening is everyday English).
    static let requestFrame = "in the same tone, that also say"

    /// Tokens the sentence may take: its facts and a clause around each.
    static func maxTokens(_ units: [FactGrammar.Unit], selection: String) -> Int {
        groups(units, in: selection).reduce(0) { $0 + 24 + $1.units.reduce(0) { $0 + 12 + $1.text.count / 2 } }
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

    /// `last`'s text with one more sentence after its body (before its closing), asked of
    /// `engine` (a local one: it takes grammars) after `last`'s conversation, and the
    /// generation it took: the sentences carrying `units` (of `selection`), opening with a
    /// marker of `mending` when its tone was off too; without units, a sentence mending that
    /// tone alone (`toneGrammar`). `text` is nil when the sentence did not end within its
    /// tokens or lacks a fact.
    static func run(_ units: [FactGrammar.Unit], mending tone: Tone?, selection: String, into last: Compose.Attempt, engine: any LanguageModel,
                    options: ResolvedOptions, ctx: RequestContext, part: String) async throws -> (out: Generated, text: String?) {
        let grammar = units.isEmpty ? tone.flatMap(toneGrammar) : grammar(units, selection: selection, leads: tone.map(leads(mending:)) ?? leads)
        let ask = units.isEmpty ? tone.map(toneRequest) : request(units, selection: selection)
        guard let grammar, let ask else { return (Generated(text: "", json: nil, tokens: [], prompt: last.out.prompt, usage: .zero, finishReason: .stop), nil) }
        let (body, tail) = split(last.text)
        // The model's turn as it wrote it, token for token (their state is cached; rendered
        // anew from the repaired text, the whole body was evaluated again: about 70 tokens
        // of each insertion's 105, 2026-12-01). The sentences still go into the repaired text.
        // Not when a sentence was taken out: the model would go on from what it said there.
        let own = last.out.stoppedBy == nil && !last.out.tokens.isEmpty && !last.findings.contains {
            if case .inventedSentence = $0.subject { true } else { false }
        }
        let messages = last.out.prompt.messages + [ChatMessage(.assistant, own ? last.out.text : body), ChatMessage(.user, ask)]
        let prompt = own ? engine.render(messages, history: last.out.prompt.tokens + last.out.tokens, after: messages.count - 2) : engine.render(messages)
        var o = options
        o.maxTokens = min(options.maxTokens, units.isEmpty ? 2 * toneWords + 8 : maxTokens(units, selection: selection))
        o.noRepeatRun = Compose.RetryPolicy.grammarRepeatRun
        let out = try await Generation.run(engine, prompt: prompt, grammar: grammar, options: o, progress: ctx.progress, part: part)
        let sentence = out.text.trimmingCharacters(in: .whitespaces)
        guard out.finishReason != .length, let end = sentence.last, ".!?".contains(end),
              FactGrammar.missing(units, in: sentence).isEmpty else { return (out, nil) }
        return (out, body + " " + sentence + tail)
    }
}
