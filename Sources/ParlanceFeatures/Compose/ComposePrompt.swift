import ParlanceDocuments
import ParlanceEngine
import ParlanceProtocol

/// The prompts of compose/variations and compose/refine. Everything every variation
/// shares — system line, audience, instructions, language, the selection — comes first;
/// the tone is the last line of the user turn. So the variations' token sequences share
/// all but a short tail: the engine evaluates that prefix once and copies it to each
/// variation's sequence.
enum ComposePrompt {
    static let system = "You rewrite text. Keep its meaning and every fact, name, number and date. Reply with the rewritten text only."

    static func messages(text: String, tone: Tone, audience: Audience, instructions: String?, languageName: String,
                         strict: [String]? = nil, toneHint: String? = nil, examples withExamples: Bool = true) -> [ChatMessage] {
        var user = task(audience: audience, languageName: languageName)
        if let i = instructions?.trimmingCharacters(in: .whitespacesAndNewlines), !i.isEmpty { user += " \(i)" }
        user += "\n\nText:\n\(text)\n\nTone: \(describe(tone))"
        if let strict { user += "\n" + stricter(facts: strict) }
        if let toneHint { user += "\n" + toneHint }
        return [ChatMessage(.system, system)] + (withExamples ? examples : []) + [ChatMessage(.user, user)]
    }

    /// Two worked examples before every request: the rewrite only, names and figures kept
    /// letter for letter, the tone changed. The second gives a date but no clock time: with
    /// "14 May at 10:30" it put "at 10:30" into rewrites of "the review moves to Friday".
    /// (Measured on `make eval`'s compose set: a warehouse-closing example in its place was
    /// copied into 8 of 160 variations, this one into 3; without examples key facts fell
    /// from 0.66 to 0.59 and refusals, echoes and copies rose from 2 to 11.)
    /// They are the same for every compose request, so their KV state is the cached prefix: they cost nothing after the first request.
    /// The examples' selections and rewrites, for the check that an output did not copy them.
    static let exampleTexts = [
        "hey Jonas, the Oakridge invoice for €2,400 is late again. can u ping Magdalena before Thursday?",
        "Dear Jonas, the Oakridge invoice for €2,400 is overdue again. Could you please contact Magdalena before Thursday?",
        "Please be advised that the quarterly review with Dr. Okafor has been rescheduled to 14 May.",
        "Heads up, team: the quarterly review with Dr. Okafor has moved to 14 May.",
    ]

    /// The names of the worked examples ("Jonas", "Oakridge", "Dr", "Okafor") that `source`
    /// does not say: a rewrite never writes them (`WordGuard`, at decoding time), so it cannot
    /// copy an example's people into its own text. Calendar words are `Facts.absentCalendarWords`'.
    /// Also the examples' subjects (`exampleSubjects`) that `source` does not say: "the
    /// quarterly review" came into rewrites of three different quotes on the 0.5B and 1.5B
    /// models (issue 77), where no name of the examples did.
    static func exampleNames(absentFrom source: String) -> [String] {
        let lowered = source.lowercased()
        return Facts.extract(exampleTexts.joined(separator: "\n"))
            .filter { $0.kind == .name && !Lexicon.timeWords.contains($0.key) && !Facts.missing([$0], in: source).isEmpty }
            .map(\.text) + exampleSubjects.filter { !lowered.contains($0) }
    }

    /// The words of the examples' subjects, rare in a rewrite that was not about them.
    static let exampleSubjects = ["quarterly", "invoice"]

    static let examples: [ChatMessage] = [
        ChatMessage(.user, """
            Rewrite the text below for a colleague, in the tone given after it. Keep every fact; add nothing.

            Text:
            hey Jonas, the Oakridge invoice for €2,400 is late again. can u ping Magdalena before Thursday?

            Tone: formal. Polite and professional, complete sentences, no contractions or slang.
            """),
        ChatMessage(.assistant, "Dear Jonas, the Oakridge invoice for €2,400 is overdue again. Could you please contact Magdalena before Thursday?"),
        ChatMessage(.user, """
            Rewrite the text below for the whole team, in the tone given after it. Keep every fact; add nothing.

            Text:
            Please be advised that the quarterly review with Dr. Okafor has been rescheduled to 14 May.

            Tone: casual. Friendly and relaxed, simple words, contractions are fine.
            """),
        ChatMessage(.assistant, "Heads up, team: the quarterly review with Dr. Okafor has moved to 14 May."),
    ]

    static func task(audience: Audience, languageName: String) -> String {
        var t = "Rewrite the text below for \(describe(audience)), in the tone given after it. Keep every fact; add nothing."
        if languageName != "English" { t += " Write in \(languageName)." }
        return t
    }

    /// The line after the tone on a second or later attempt (the prompts still share all
    /// but their tail, so the cached prefix serves them).
    static func stricter(facts: [String]) -> String {
        var s = "Write the message itself, as its author would send it: do not describe, refuse or comment on the task, and do not copy the text unchanged."
        if !facts.isEmpty { s += " Keep exactly: " + facts.joined(separator: ", ") + "." }
        return s
    }

    /// The prompt's own words, which an output must not repeat (the echo check): those of
    /// every attempt's turn, the stronger tone line and the turn that asks for a sentence
    /// mending a tone (`FactInsertion`) included, less the example phrases they quote ("perhaps",
    /// "would it be possible"), which an output of the tone may well use.
    static func instructionTexts(tone: Tone, audience: Audience, languageName: String) -> [String] {
        [system, task(audience: audience, languageName: languageName), "Text:", "Tone: " + describe(tone), stricter(facts: []),
         "Rewritten text:", "Here is the rewritten text", unquoted(ToneCheck.instruction(tone)),
         FactInsertion.toneRequest(tone).replacingOccurrences(of: FactInsertion.toneRequestOpening, with: "")]
    }

    /// `s` without its quoted parts.
    static func unquoted(_ s: String) -> String {
        s.replacingOccurrences(of: #""[^"]*""#, with: "", options: .regularExpression)
    }

    static func describe(_ tone: Tone) -> String {
        switch tone {
        case .formal: return "formal. Polite and professional, complete sentences, no contractions or slang."
        case .casual: return "casual. Friendly and relaxed, simple words, contractions are fine."
        case .empathetic: return "empathetic. Warm and understanding, acknowledge how the reader may feel."
        case .direct: return "direct. Short and clear, the main point first, no filler."
        case .diplomatic: return "diplomatic. Tactful and constructive, soften bad news, stay positive."
        }
    }

    static func describe(_ audience: Audience) -> String {
        switch audience {
        case .executive: return "an executive (brief, outcomes and decisions first)"
        case .peer: return "a colleague"
        case .client: return "a client (courteous, no internal jargon)"
        case .team: return "the whole team"
        case .public: return "the general public (plain language, no internal details)"
        }
    }

    /// The user turn that asks for a revision of the previous answer.
    static func refinement(_ instruction: String) -> String {
        let i = instruction.trimmingCharacters(in: .whitespacesAndNewlines)
        let known: [String: String] = [
            "shorter": "Make it shorter. Keep every key fact.",
            "longer": "Make it a little longer and more detailed, without adding new facts.",
            "warmer": "Make it warmer and friendlier.",
            "friendlier": "Make it warmer and friendlier.",
            "more formal": "Make it more formal.",
            "less formal": "Make it more casual.",
            "more casual": "Make it more casual.",
            "simpler": "Use simpler words and shorter sentences.",
            "clearer": "Make it clearer.",
        ]
        let ask = known[i.lowercased()] ?? "Revise it: \(i)"
        return ask + " Reply with the revised text only."
    }

    /// The conversation that produced a variation: its tone's prompt, then for a
    /// refinement every earlier answer and instruction.
    static func conversation(for v: ComposeVariation, in entry: ComposeHistoryEntry) -> [ChatMessage] {
        guard let parentId = v.parentId, let instruction = v.instruction,
              let parent = entry.variations.first(where: { $0.id == parentId }) else {
            return messages(text: entry.text.trimmingCharacters(in: .whitespacesAndNewlines), tone: v.tone, audience: v.audience,
                            instructions: entry.instructions, languageName: LanguageSupport.displayName(entry.language))
        }
        return conversation(for: parent, in: entry) + [ChatMessage(.assistant, parent.text), ChatMessage(.user, refinement(instruction))]
    }

    /// The model's answer as a clean rewrite: no "Here is…:" preamble, no echo of the
    /// prompt's labels or commentary after it, no wrapping quotes. (The small default
    /// model often writes "Tone: …" or "Rewritten text:" after its answer.)
    static func clean(_ raw: String) -> String {
        var lines = raw.trimmingCharacters(in: .whitespacesAndNewlines).components(separatedBy: "\n")
        if let first = lines.first, lines.count > 1, introducesTheAnswer(first) { lines.removeFirst() }
        var kept: [String] = []
        for line in lines {
            let l = line.trimmingCharacters(in: .whitespaces).lowercased()
            let hasContent = kept.contains { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            if hasContent, echoMarkers.contains(where: l.hasPrefix) { break }
            kept.append(line)
        }
        var t = kept.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
        for (open, close) in [("\"", "\""), ("\u{201C}", "\u{201D}")] where t.count > 2 && t.hasPrefix(open) && t.hasSuffix(close) {
            let inner = t.dropFirst().dropLast()
            if !inner.contains(Character(open)) { t = String(inner).trimmingCharacters(in: .whitespacesAndNewlines) }
        }
        return t
    }

    /// A first line that only announces the answer below it: "Here is the rewritten text:",
    /// or words about the task ending in one ("I'd like to make sure the message is
    /// diplomatic. Here's a rewritten version:").
    static func introducesTheAnswer(_ line: String) -> Bool {
        let l = line.trimmingCharacters(in: .whitespaces).lowercased()
        guard l.hasSuffix(":") else { return false }
        if l.count < 80 { return ["here", "rewrit", "revis", "version", "tone", "text"].contains(where: l.contains) }
        // Longer: its last sentence names the rewrite.
        let last = l.split(whereSeparator: { ".!?".contains($0) }).last.map(String.init) ?? l
        return l.count < 400 && last.count < 80 && ["rewrit", "revis", "version"].contains(where: last.contains)
    }

    static let echoMarkers = ["tone:", "text:", "rewrite", "rewritten", "this is a rewritten", "this rewritten", "i made changes",
                              "i made the", "note:", "original:", "revised:", "explanation:", "changes made"]
}
