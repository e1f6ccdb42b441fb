import ParlanceEngine
import ParlanceProtocol

/// Variations of one composition in different tones must not say the same thing the same
/// way: a formal and a casual text that differ by a word are one text offered twice, and a
/// formal text that reads no more formal than the casual one offers no choice either.
extension Compose {
    /// Word overlap at which two variations read alike.
    static let alikeOverlap = 0.85

    /// Jaccard overlap of the two texts' words, every word counted (a greeting, "we are"
    /// against "we're" and "please" make the difference between two tones).
    static func overlap(_ a: String, _ b: String) -> Double {
        let x = Set(Lexicon.words(a, .normalized)), y = Set(Lexicon.words(b, .normalized))
        guard !x.isEmpty || !y.isEmpty else { return 1 }
        return Double(x.intersection(y).count) / Double(x.union(y).count)
    }

    /// Phrases a variation opens with, under a grammar, when it is generated again because
    /// it read like another tone: a marker of its own tone in its first words. Direct has
    /// none (its marker is the selection's fact first). In a language with its own formality
    /// markers, formal and casual open with that language's phrases, and the other tones
    /// with none (their phrases are English).
    static func distinctOpeners(_ tone: Tone, language: String = "en") -> [String] {
        let code = language.split(separator: "-").first.map(String.init) ?? language
        if FormalityMarkers.of(code) != nil {
            switch tone {
            case .formal: return localOpeners[code]?.formal ?? []
            case .casual: return localOpeners[code]?.casual ?? []
            default: return []
            }
        }
        switch tone {
        case .formal: return ["Dear team,", "Please note that", "I would like to inform you that", "Kindly note that"]
        case .casual: return ["Hey,", "Hey team,", "Heads up:", "Quick update:", "Just so you know,"]
        case .direct: return []
        case .empathetic, .diplomatic: return FactGrammar.openers(for: tone)
        }
    }

    /// Formal and casual opening phrases of the languages with their own formality markers:
    /// each has one of its tone's markers (the formal or the informal address, a greeting).
    static let localOpeners: [String: (formal: [String], casual: [String])] = [
        "es": (["Estimados:", "Le informamos de que", "Nos complace informarle de que"], ["¡Hola!", "Oye,", "¡Hola a todos!"]),
        "fr": (["Madame, Monsieur,", "Nous vous informons que", "Veuillez noter que"], ["Salut !", "Coucou,", "Salut à tous,"]),
        "de": (["Sehr geehrte Damen und Herren,", "Wir möchten Ihnen mitteilen, dass", "Bitte beachten Sie, dass"], ["Hallo,", "Hey,", "Hallo zusammen,"]),
        "it": (["Gentili colleghi,", "Desideriamo comunicarLe che", "La preghiamo di notare che"], ["Ciao!", "Ehi,", "Ciao a tutti,"]),
        "pt": (["Prezados,", "Informamos que", "Gostaríamos de informar que"], ["Oi!", "Oi, pessoal,", "Olha,"]),
        "nb": (["Vi vil herved informere om at", "Vennligst merk at", "Vi ønsker å opplyse om at"], ["Hei!", "Heisann,", "Hei alle sammen,"]),
    ]

    /// Pairs of variations, of different tones, that read alike (`conflict`).
    static func alike(_ vs: [ComposeVariation], language: String = "en") -> [(Int, Int)] {
        var pairs: [(Int, Int)] = []
        for i in vs.indices {
            for j in vs.indices where j > i && vs[j].tone != vs[i].tone {
                if conflict(vs[i], vs[j], language: language) != nil { pairs.append((i, j)) }
            }
        }
        return pairs
    }

    /// How `x` reads like `y`, told from `x`'s side: nearly word for word, or, for a formal
    /// and a casual variation, in the wrong order (the formal one scoring no more formal than
    /// the casual one: each passed its own bound, 0.45 and 0.6, at 0.59 and 0.60). Nil when
    /// they differ.
    static func conflict(_ x: ComposeVariation, _ y: ComposeVariation, language: String) -> Finding.Subject? {
        if overlap(x.text, y.text) >= alikeOverlap { return .sameAsOtherTone(y.tone) }
        let pair = [x, y]
        guard let formal = pair.first(where: { $0.tone == .formal }), let casual = pair.first(where: { $0.tone == .casual }) else { return nil }
        return Formality.score(formal.text, language: language) <= Formality.score(casual.text, language: language) ? .toneOrder(y.tone) : nil
    }

    /// For each pair that reads alike: the variation whose tone markers miss (both when both
    /// do; the later one when neither does) is generated again by `regenerate(v, seed)`,
    /// opening with a phrase of its tone, and kept when it no longer reads like the other.
    /// A pair still alike fails together: each says so in its verification. The usage of
    /// a variation generated again includes the first one's. A variation is generated again
    /// once at most, however many others it reads like, and a pair is judged on the texts
    /// it has by then.
    /// `report(v)` is called once, at the end, for each variation generated again or failed
    /// together with another, with the variation as it is returned (streamed again, and its
    /// done report sent again).
    static func separateTones(_ results: inout [(Int, ComposeVariation, [Token])], original: String, language: String = "en",
                              regenerate: (ComposeVariation, UInt32) async throws -> (ComposeVariation, [Token]),
                              report: (ComposeVariation) -> Void = { _ in }) async throws {
        var regenerated: Set<Int> = []
        var changed: [Int] = []
        for (a, b) in alike(results.map(\.1), language: language) where conflict(results[a].1, results[b].1, language: language) != nil {
            let misses = [a, b].filter { i in
                let v = results[i].1
                return !ToneCheck.check(v.text, tone: v.tone, original: original, language: language).isEmpty
            }
            // What each side read like before either is generated again.
            let before = [a: conflict(results[a].1, results[b].1, language: language), b: conflict(results[b].1, results[a].1, language: language)]
            for i in misses.isEmpty ? [b] : misses where !regenerated.contains(i) {
                regenerated.insert(i)
                let old = results[i].1
                let other = results[i == a ? b : a].1
                guard let was = before[i] ?? nil else { continue }
                var (v, tokens) = try await regenerate(old, UInt32(truncatingIfNeeded: old.seed) &+ 104_729)
                if !changed.contains(i) { changed.append(i) }  // the retry streamed over it: the variation kept is streamed again
                guard conflict(v, other, language: language) == nil else { continue }
                v.usage = old.usage + v.usage
                v.verification?.attempts += old.verification?.attempts ?? 0
                v.verification?.issues.insert(Finding(.toneMismatch, was, action: .replaced(by: .rewording)).issue, at: 0)
                results[i] = (results[i].0, v, tokens)
            }
            for (i, j) in [(a, b), (b, a)] {
                guard let detail = conflict(results[i].1, results[j].1, language: language) else { continue }
                results[i].1.verification?.issues.append(Finding(.toneMismatch, detail).issue)
                results[i].1.verification?.passed = false
                if !changed.contains(i) { changed.append(i) }
            }
        }
        for i in changed { report(results[i].1) }
    }
}
