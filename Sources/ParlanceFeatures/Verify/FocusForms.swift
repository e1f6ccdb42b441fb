import Foundation

/// How a question's focus word is found among a passage's terms (retrieval's stems): the
/// same stem, or a form of it (`Answerability.sameWord`: "contract" of "contractor"). In
/// Spanish, French, Italian and Portuguese, whose verbs change their endings more than
/// English stems undo, also a word with the same root: the two share their first four
/// letters or more, and neither has more than four letters beyond that ("abrió",
/// "abrimos", "abristeis"). English keeps the stricter test ("model" is not "modern").
struct FocusForms {
    let romance: Bool

    init(language: String) {
        let base = language.lowercased().split(separator: "-").first.map(String.init) ?? ""
        romance = ["es", "fr", "it", "pt", "ca"].contains(base)
    }

    /// Whether `term` (of the passage) is a form of the focus word `focus`.
    func matches(_ focus: String, _ term: String) -> Bool {
        if Answerability.sameWord(focus, term) { return true }
        guard romance else { return false }
        let shared = zip(focus, term).prefix { $0 == $1 }.count
        return shared >= 4 && focus.count - shared <= 4 && term.count - shared <= 4
    }

    /// Share of `focus` with a form among `terms` (0 when `focus` is empty).
    func share(of focus: Set<String>, in terms: Set<String>) -> Double {
        guard !focus.isEmpty else { return 0 }
        let found = focus.filter { f in terms.contains(f) || terms.contains { matches(f, $0) } }
        return Double(found.count) / Double(focus.count)
    }
}
