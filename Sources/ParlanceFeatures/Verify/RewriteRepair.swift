import ParlanceProtocol

/// The deterministic repairs of a rewrite (a compose variation or refinement), made without
/// the model before `RewriteVerifier` checks it.
public enum RewriteRepair {
    /// In order: facts changed in place put back (`FactRepair`), an invented name in the
    /// greeting dropped, then the tone's lexical repair (`ToneCheck`), kept only when it
    /// loses no fact. Each repair made is a finding.
    ///
    /// `.report` (and `.propose`) change nothing and find nothing: every problem these repair
    /// is one `RewriteVerifier.check` reports anyway (a fact missing or changed, a name not in
    /// the selection, a tone marker).
    public static func repair(_ text: String, original: String, tone: Tone?, mode: VerifyMode) -> Repaired<String> {
        guard mode == .repair, !Ablation.off("rewrite.facts") else { return Repaired(text) }
        var out = FactRepair.repair(original: original, rewrite: text)
        // "Dear Sarah," to a reader the selection never names: the name goes.
        let greeting = FactRepair.dropInventedGreetingName(original: original, rewrite: out.value)
        if !greeting.findings.isEmpty, TextChecks.isLanguage(greeting.value) {
            out.value = greeting.value
            out.findings += greeting.findings
        }
        if let tone {
            let toned = ToneCheck.repair(out.value, tone: tone)
            let facts = Facts.extract(original)
            if !toned.findings.isEmpty, TextChecks.isLanguage(toned.value),
               Facts.missing(facts, in: toned.value).count <= Facts.missing(facts, in: out.value).count {
                out.value = toned.value
                out.findings += toned.findings
            }
        }
        return out
    }
}
