import JSONRPC
import ParlanceDocuments
import ParlanceFeatures
import ParlanceProtocol

/// One rewrite of an editor selection through `compose/variations` (one tone, verified
/// and retried like any variation), ready to replace the selection: its leading and
/// trailing whitespace kept, refused when the result is no rewrite at all.
enum Rewriter {
    /// Checks after which the text is not put into the writer's buffer.
    static let refused: Set<VerificationIssueCode> = [.refusal, .instructionEcho, .unchanged, .degenerate, .wrongLanguage]

    /// The replacement text, and what the checks found in it when it is usable anyway
    /// (shown to the writer once the edit is made).
    static func rewrite(_ a: RewriteAction, selection: String, ctx: RequestContext, lsp: LanguageServer) async throws -> (text: String, warning: String?) {
        let core = selection.trimmingCharacters(in: .whitespacesAndNewlines)
        let leading = String(selection.prefix { $0.isWhitespace }), trailing = String(selection.reversed().prefix { $0.isWhitespace }.reversed())
        let settings = lsp.client.settings
        // A refinement keeps the selection's own tone.
        let tone = a.tone ?? ownTone(core, language: settings.language)
        let instructions: String? = switch a.refine {
        case .shorter: "Make it shorter: fewer words, every fact, name and number kept."
        case .clearer: "Make it clearer: plain words and short sentences, every fact, name and number kept."
        case nil: nil
        }
        var params = ComposeVariations.Params(.init(text: core, tones: [tone], audience: settings.audience, count: 1, instructions: instructions,
                                                    language: settings.language))
        params.maxTokens = settings.maxTokens
        let result = try await Compose.variations(params, ctx)()
        guard let v = result.variations.first else { throw ResponseError(.internalError, "compose returned no variation") }
        let open = v.verification?.issues.filter { $0.repaired != true } ?? []
        if let bad = open.first(where: { refused.contains($0.code) }) {
            throw rejected("the model did not produce a usable rewrite (\(bad.message))", code: bad.code.rawValue)
        }
        if a.refine == .shorter, words(v.text) >= words(core) {
            throw rejected("the model could not make it shorter (\(words(v.text)) words for \(words(core)))", code: VerificationIssueCode.length.rawValue)
        }
        // Usable, but the checks found something: the writer is told what, beside the edit.
        let warning = open.isEmpty ? nil
            : "Parlance: rewrite applied, but check it: \(open.prefix(2).map(\.message).joined(separator: "; ")). Undo restores your text."
        return (leading + v.text + trailing, warning)
    }

    /// The selection's own tone, formal or casual, scored with the markers of its language
    /// (the configured one, else the one it is written in, as compose resolves it): English
    /// markers read a Spanish letter ("Estimado señor García: le ruego…") as casual.
    static func ownTone(_ text: String, language: String?) -> Tone {
        let tag = language ?? LanguageDetector.detect(String(text.prefix(4000))).code
        return Formality.score(text, language: tag) >= 0.5 ? .formal : .casual
    }

    static func rejected(_ message: String, code: String) -> ResponseError {
        ResponseError(.requestFailed, message + "; nothing was changed: try again or choose another action",
                      data: ["error": "rewriteRejected", "code": .string(code)])
    }

    static func words(_ s: String) -> Int { s.split(whereSeparator: { $0.isWhitespace }).count }
}
