import Foundation

/// Checks, repairs and decoding-time guards switched off for an eval's ablation run: the ids
/// in `PARLANCE_DISABLE_CHECKS` (comma-separated), read once when the daemon starts. Nothing
/// a client sends can switch a check off: an ablation measures what a check is worth per
/// model (`make eval EVAL_ARGS="--ablate …"`), it is not a feature.
/// Every id is listed in `known`, with where it acts; an unknown id is reported at start-up.
public enum Ablation {
    public static let known: [String: String] = [
        "summary.support": "prose sentences of a summary the transcript does not support are dropped (AnalysisVerifier.checkProseSupport)",
        "summary.subject": "a summary that names none of the transcript's subject terms fails (AnalysisVerifier.scalarFindings)",
        "summary.outline": "prose that fails every attempt is replaced by an outline of the transcript (AnalysisVerifier.finalRepair)",
        "list.support": "list items the transcript does not support are dropped (ListItemRules.problem)",
        "list.fill": "dropped list items are replaced by the transcript's sentences or phrases (ListItemRules.repair)",
        "answer.degenerate": "answers that are no language, echo the prompt, loop or copy a segment fail (AnswerVerifier.degenerate)",
        "answer.type": "answers that do not give the kind of value asked fail (AnswerVerifier.check)",
        "answer.facts": "answers with numbers or names not in the segments shown fail (AnswerVerifier.check)",
        "answer.citations": "citations are repaired to the segments that hold the answer (AnswerVerifier.repairCitations)",
        "answer.answerability": "the answerability model turns answers the evidence does not support into not found (AskDecision, AskTurn)",
        "answer.extractive": "failed answers are replaced by a quote of the passage that holds the answer (AskDecision.quoted)",
        "rewrite.tone": "rewrites that miss their tone's markers fail (RewriteVerifier, ToneCheck)",
        "rewrite.invented": "sentences of a rewrite with facts the selection does not have are removed (InventedSentences)",
        "rewrite.facts": "facts a rewrite changed are put back (RewriteRepair)",
        "compose.insertion": "facts a rewrite lacks are put back with the selection's sentences (FactInsertion)",
        "guard.number": "no number the source does not start (NumberGuard, at decoding time)",
        "guard.word": "no calendar word or example name the source does not say (WordGuard, at decoding time)",
        "guard.fact": "a source fact, once begun, is finished exactly (FactGuard, at decoding time)",
    ]

    /// The ids switched off in this process.
    public static let disabled: Set<String> = parse(ProcessInfo.processInfo.environment["PARLANCE_DISABLE_CHECKS"])

    static func parse(_ value: String?) -> Set<String> {
        Set((value ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
    }

    /// Whether the check `id` is switched off.
    @inline(__always) public static func off(_ id: String) -> Bool { !disabled.isEmpty && disabled.contains(id) }

    /// Ids switched off that name no check.
    public static var unknown: [String] { disabled.filter { known[$0] == nil }.sorted() }
}
