import Foundation
import ParlanceProtocol

/// One fitted answerability model: a logistic regression's bias and weights over
/// `Answerability.Features` (by name), its "not found" threshold, and where the numbers came
/// from. The profiles live in `eval/fitted/answerability.json`, which `eval/fit_abstention.py
/// --write` writes and embeds in `AnswerabilityFitted.swift` (no Swift source is rewritten by
/// pattern); the eval reads the same file. A model file is matched by its SHA-256 (what the
/// fit saw); any other model uses the default profile.
public struct AnswerabilityProfile: Sendable, Decodable {
    public let name: String
    public let modelSha256: [String]
    public let bias: Double
    public let weights: [String: Double]
    /// Below this probability the answer is "not found in the document".
    public let threshold: Double
    public let provenance: Provenance

    public struct Provenance: Sendable, Decodable {
        public let model: String
        public let dataset: String
        public let questions: Int
        public let fitted: String
    }

    struct File: Decodable {
        let features: [String]
        let `default`: String
        let profiles: [AnswerabilityProfile]
    }

    /// The file's profiles and the default, read once.
    static let file: File = {
        do {
            return try JSONDecoder().decode(File.self, from: Data(Answerability.fittedJSON.utf8))
        } catch {
            fatalError("eval/fitted/answerability.json, as embedded in AnswerabilityFitted.swift, does not decode: \(error)")
        }
    }()

    /// The profile of models without one of their own.
    public static let fallback: AnswerabilityProfile = file.profiles.first { $0.name == file.default } ?? file.profiles[0]

    /// The profile fitted for the model whose weights `identity` names (a GGUF's SHA-256), else the default.
    public static func of(model identity: String) -> AnswerabilityProfile {
        file.profiles.first { $0.modelSha256.contains(identity) } ?? fallback
    }

    public func weight(_ feature: String) -> Double { weights[feature] ?? 0 }

    /// The weighted sum of `f`'s features (booleans count 1 when true), the bias first.
    func logit(_ f: Answerability.Features) -> Double {
        let values: [String: Double] = [
            "questionCoverage": f.questionCoverage, "focusCoverage": f.focusCoverage, "typedCoverage": f.typedCoverage,
            "typeMissing": f.typeMissing ? 1 : 0, "modelPassed": f.modelPassed ? 1 : 0, "modelSaysNotFound": f.modelSaysNotFound ? 1 : 0,
            "answerSupport": f.answerSupport, "relationMissing": f.relationMissing == true ? 1 : 0, "sentenceCoverage": f.sentenceCoverage,
        ]
        return weights.reduce(bias) { $0 + $1.value * (values[$1.key] ?? 0) }
    }
}
