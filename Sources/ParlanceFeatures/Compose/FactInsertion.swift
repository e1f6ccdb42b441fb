import Foundation
import ParlanceDocuments
import ParlanceEngine
import ParlanceProtocol
import ParlanceSchema

/// Facts a variation left out, put back by the model itself instead of a whole new
/// variation: the variation's body stays as it was written, the model is asked in a new
/// turn for one more sentence saying what the selection's sentences with those facts say,
/// and a grammar makes that sentence carry the facts verbatim, in the selection's order;
/// the closing lines (a sign-off) follow it again. Only the new turn is evaluated (the
/// prompt and the body are a cached prefix) and one sentence generated: a fraction of a
/// regeneration, which rescued one failing variation in eight (eval, 2026-11-27).
enum FactInsertion {
    /// The closing of a letter: at most this many trailing lines (not blank) without a sentence end.
    static let closingLines = 3
    /// The free text before the first fact, and after the last, in characters. (At 80, with
    /// gaps between facts of twice their distance in the selection and 20 more, the
    /// sentence took about as many tokens as the variation it completed: 55 against 60 on
    /// four tuning items, most of compose's cost with verification on.)
    static let gap = 48
    /// What a gap between two facts may add to their distance in the selection, in characters.
    static let slack = 12
    /// One sentence says again at most this many of the selection's: more, and the small
    /// model strews the facts through a sentence that says nothing ("your 1 £35 year journey").
    static let maxSentences = 2

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

    /// The sentence's grammar: free words with each of `units` verbatim in order, then the
    /// sentence's end. A gap between two facts is bounded by their distance in the
    /// selection and `slack`; a fact sticks to no word before or after it; free text has no sentence
    /// end, no line break, no quote or bracket, so it stays one plain sentence.
    static func grammar(_ units: [FactGrammar.Unit]) -> String? {
        guard let first = units.first else { return nil }
        var root: [String] = []
        var rules: [String] = []
        var previousEnd = first.range.location
        for (i, u) in units.enumerated() {
            let bound = i == 0 ? gap : min(gap, max(0, u.range.location - previousEnd) + slack)
            // After a name, its word ends ("Elm" never runs on into "Elmarion"); a number may take a unit ("9am").
            rules.append("g\(i) ::= " + (i == 0 ? "(w{0,\(bound)} \" \")?" : "(\(after(units[i - 1], except: " ")) w{0,\(bound)})? \" \" | [ ] w{0,\(bound)} \" \""))
            root += ["g\(i)", GrammarBuilder.literal(u.text)]
            previousEnd = u.range.location + u.range.length
        }
        root.append("end")
        rules.append("end ::= (\(after(units[units.count - 1], except: "")) w{0,\(gap)})? [.!?]")
        rules.append(#"w ::= [^\x00-\x1F.!?"()]"#)
        return (["root ::= " + root.joined(separator: " ")] + rules).joined(separator: "\n")
    }

    /// The character class that may follow `unit`: after a name, only punctuation or a
    /// space; after a number, any free-text character but `except` (a unit: "9am").
    private static func after(_ unit: FactGrammar.Unit, except: String) -> String {
        unit.text.last?.isLetter == true ? "[ ,;:]" : #"[^\x00-\x1F.!?"()"# + except + "]"
    }

    /// The selection's sentences that carry `units`.
    static func sentences(carrying units: [FactGrammar.Unit], in selection: String) -> [String] {
        var said: [String] = []
        var offset = 0
        let ns = selection as NSString
        for sentence in Sentences.split(selection) {
            let r = ns.range(of: sentence, range: NSRange(location: offset, length: ns.length - offset))
            guard r.location != NSNotFound else { continue }
            offset = r.location + r.length
            if units.contains(where: { NSIntersectionRange($0.range, r).length > 0 }) { said.append(sentence.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        return said
    }

    /// The new turn: the selection's sentences that carry `units`, to say once more.
    static func request(_ units: [FactGrammar.Unit], selection: String) -> String {
        "Add one sentence to your message, in the same tone, that also says: " + sentences(carrying: units, in: selection).joined(separator: " ")
    }

    /// Tokens the sentence may take: its facts and a clause around each.
    static func maxTokens(_ units: [FactGrammar.Unit]) -> Int {
        24 + units.reduce(0) { $0 + 12 + $1.text.count / 2 }
    }

    /// `last`'s text with one sentence carrying `units` (not empty, of `selection`) after its
    /// body, asked of `engine` (a local one: it takes grammars) after `last`'s conversation,
    /// and the generation it took. `text` is nil when the sentence did not end within its
    /// tokens or lacks a fact.
    static func run(_ units: [FactGrammar.Unit], selection: String, into last: Compose.Attempt, engine: any LanguageModel, options: ResolvedOptions,
                    ctx: RequestContext, part: String) async throws -> (out: Generated, text: String?) {
        let grammar = grammar(units)
        let (body, tail) = split(last.text)
        let messages = last.out.prompt.messages + [ChatMessage(.assistant, body), ChatMessage(.user, request(units, selection: selection))]
        let prompt = engine.render(messages)
        var o = options
        o.maxTokens = min(options.maxTokens, maxTokens(units))
        o.noRepeatRun = Compose.RetryPolicy.grammarRepeatRun
        let out = try await Generation.run(engine, prompt: prompt, grammar: grammar, options: o, progress: ctx.progress, part: part)
        let sentence = out.text.trimmingCharacters(in: .whitespaces)
        guard out.finishReason != .length, let end = sentence.last, ".!?".contains(end),
              FactGrammar.missing(units, in: sentence).isEmpty else { return (out, nil) }
        return (out, body + " " + sentence + tail)
    }
}
