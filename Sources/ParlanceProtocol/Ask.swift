import ParlanceJSON
import ParlanceSchema

/// Questions about a document (the seed's EpisodeAnswer), answered from the segments a
/// BM25 ranking retrieves, streamed, with citations that are real segments.
public enum AskStream: GeneratingMethod {
    public static let name = "ask/stream"
    public static let summary = "Ask a question about a document: relevant segments are retrieved (BM25), the answer streams as $/progress deltas, and every citation is a real segment. Pass sessionId to ask a follow-up."

    public struct Input: GenerationInput {
        public var uri: String?
        /// Several open documents asked about at once (`maxDocuments` at most).
        public var uris: [String]?
        public var text: String?
        public var question: String
        public var sessionId: String?
        public var language: String?
        public var languageFallback: LanguageFallback?
        public static let controls = GenerationControls.Key.allCases
        public static let schemaHints: [String: SchemaHint] = [
            "uri": SchemaHint(description: "An open document (document/open). Give uri, uris or text; a follow-up (sessionId) may give none and continues on its conversation's document or documents."),
            "uris": SchemaHint(description: "Several open documents (document/open), each once, instead of uri or text: retrieval runs across all of their segments and every citation names its document (citations[].uri).",
                               minItems: 2, maxItems: AskStream.maxDocuments),
            "text": SchemaHint(description: "A transcript given inline instead of uri."),
            "question": SchemaHint(minLength: 1, maxLength: 2000),
            "sessionId": SchemaHint(description: "A previous answer's sessionId: this question is a follow-up in that conversation (its KV state is reused)."),
            "language": SchemaHint(description: "Answer language (BCP-47). Default: the document's."),
            "languageFallback": .languageFallback,
            "maxTokens": SchemaHint(description: "Upper bound on generated tokens.", minimum: 64, maximum: 1024),
            "workDoneToken": SchemaHint(description: "LSP work-done token: the answer text streams as $/progress `delta`s."),
            "refresh": SchemaHint(description: "A first question: answer it again instead of from the analysis cache; the new answer replaces the cached one. Default false."),
        ]
    }

    /// The most documents one question is asked over (`uris`).
    public static let maxDocuments = 16

    public struct Citation: Codable, Sendable, Hashable, Schematic {
        /// The document the segment belongs to (set when the question was asked over `uris`).
        public var uri: String?
        public var segmentId: Int
        public var start: Double?
        public var end: Double?
        public var speaker: String?
        public var text: String
        public var startOffset: Int?
        public var endOffset: Int?
        public init(uri: String? = nil, segmentId: Int, start: Double? = nil, end: Double? = nil, speaker: String? = nil, text: String,
                    startOffset: Int? = nil, endOffset: Int? = nil) {
            self.uri = uri
            self.segmentId = segmentId
            self.start = start
            self.end = end
            self.speaker = speaker
            self.text = text
            self.startOffset = startOffset
            self.endOffset = endOffset
        }
        public static let schemaHints: [String: SchemaHint] = sourceOffsetHints.merging([
            "uri": SchemaHint(description: "The document the segment belongs to: set when the question was asked over uris (segmentId, text, times and offsets are that document's)."),
            "segmentId": SchemaHint(description: "The segment's id in its document (document/segments)."),
            "text": SchemaHint(description: "The segment's text, verbatim."),
        ]) { a, _ in a }
    }

    public enum Confidence: String, Codable, Sendable, SchemaEnum { case low, medium, high }

    /// What a question asks for, when its wording says: an amount ("how much does it
    /// cost"), a quantity ("how many tonnes"), a time ("when"), a name ("who", "the name of").
    public enum AnswerType: String, Codable, Sendable, SchemaEnum { case amount, quantity, time, name }

    /// The evidence that the document answers the question, and the calibrated
    /// probability read from it.
    public struct Answerability: Codable, Sendable, Hashable, Schematic {
        public var probability: Double
        public var expects: AnswerType?
        public var questionCoverage: Double
        public var focusCoverage: Double
        public var typedCoverage: Double
        public var typeMissing: Bool
        public var modelPassed: Bool
        public var modelSaysNotFound: Bool
        public var answerSupport: Double
        /// Best share of the focus words beside an answer of the expected kind (see its hint).
        public var sentenceCoverage: Double = 0
        /// Present (true) for a near miss of the relation (see its hint).
        public var relationMissing: Bool? = nil
        public init(probability: Double = 0, expects: AnswerType?, questionCoverage: Double, focusCoverage: Double, typedCoverage: Double,
                    typeMissing: Bool, modelPassed: Bool, modelSaysNotFound: Bool, answerSupport: Double) {
            self.probability = probability
            self.expects = expects
            self.questionCoverage = questionCoverage
            self.focusCoverage = focusCoverage
            self.typedCoverage = typedCoverage
            self.typeMissing = typeMissing
            self.modelPassed = modelPassed
            self.modelSaysNotFound = modelSaysNotFound
            self.answerSupport = answerSupport
        }
        public static let schemaHints: [String: SchemaHint] = [
            "probability": SchemaHint(description: "Calibrated probability that the document answers the question (a logistic model over those of the fields below that eval/fit_abstention.py keeps by cross-validated log loss, fitted on a labeled set). Below the threshold fitted with it the answer is not found; when no answer of the model could reach it, the model is not asked (verification.attempts 0).", minimum: 0, maximum: 1),
            "expects": SchemaHint(description: "The kind of answer the question's wording asks for; absent when it does not say."),
            "questionCoverage": SchemaHint(description: "Share of the question's content words found anywhere in the document.", minimum: 0, maximum: 1),
            "focusCoverage": SchemaHint(description: "Best share of the question's focus words (its content words without those that only say what is asked, such as cost or name) in one passage of one or two segments.", minimum: 0, maximum: 1),
            "typedCoverage": SchemaHint(description: "The same, over passages that also hold an answer of the expected kind (equal to focusCoverage when none is expected).", minimum: 0, maximum: 1),
            "typeMissing": SchemaHint(description: "The question expects a kind of answer and no passage shown holds one."),
            "modelPassed": SchemaHint(description: "The model's own answer passed every check."),
            "modelSaysNotFound": SchemaHint(description: "The model gave no answer of its own: it answered that the document does not say, or only restated the question."),
            "answerSupport": SchemaHint(description: "Share of the model answer's own content words (beyond the question's) found in the segments shown.", minimum: 0, maximum: 1),
            "sentenceCoverage": SchemaHint(description: "Best share of the question's focus words in a sentence that holds an answer of the expected kind (any sentence when none is expected), read with the sentence before it and its speaker: what is asked stated beside its value, not only somewhere in the same passage.", minimum: 0, maximum: 1),
            "relationMissing": SchemaHint(description: "Present (true) when the question names what it asks the value of (a price, a budget, the unit of how many), passages hold an answer of the expected kind, and none holds it in that relation: the noun or a form of it in the answer's sentence."),
        ]
    }

    public struct Retrieval: Codable, Sendable, Hashable, Schematic {
        public var method: String
        public var wholeDocument: Bool
        public var segmentsSearched: Int
        public var segmentsUsed: [Int]
        public var topScore: Double
        public var termCoverage: Double
        /// Per document, for a question over `uris`.
        public var documents: [DocumentRetrieval]?
        public init(method: String, wholeDocument: Bool, segmentsSearched: Int, segmentsUsed: [Int], topScore: Double, termCoverage: Double,
                    documents: [DocumentRetrieval]? = nil) {
            self.documents = documents
            self.method = method
            self.wholeDocument = wholeDocument
            self.segmentsSearched = segmentsSearched
            self.segmentsUsed = segmentsUsed
            self.topScore = topScore
            self.termCoverage = termCoverage
        }
        public static let schemaHints: [String: SchemaHint] = [
            "method": SchemaHint(description: "bm25: Okapi BM25 over segments, best segments and their neighbours."),
            "wholeDocument": SchemaHint(description: "True when the whole document (over uris: every document) fit the question budget and was given to the model."),
            "segmentsSearched": SchemaHint(description: "Segments ranked (over uris: of every document)."),
            "segmentsUsed": SchemaHint(description: "Ids of the segments in the model's context for this question (a follow-up keeps earlier ones): the only ids it can cite. Empty over uris, where segment ids are per document: see documents."),
            "termCoverage": SchemaHint(description: "Share of the question's content words that occur in the document (over uris: in any of them; below 0.4: not found, with no model call)."),
            "documents": SchemaHint(description: "Present for a question over uris: each document's segments searched and used, in the order of uris."),
        ]
    }

    /// One document's part in a question over `uris`.
    public struct DocumentRetrieval: Codable, Sendable, Hashable, Schematic {
        public var uri: String
        public var segmentsSearched: Int
        public var segmentsUsed: [Int]
        public init(uri: String, segmentsSearched: Int, segmentsUsed: [Int]) {
            self.uri = uri
            self.segmentsSearched = segmentsSearched
            self.segmentsUsed = segmentsUsed
        }
        public static let schemaHints: [String: SchemaHint] = [
            "segmentsUsed": SchemaHint(description: "Ids (this document's) of its segments in the model's context for this question."),
        ]
    }

    public struct Result: Codable, Sendable, Schematic {
        public var answer: String
        public var found: Bool
        public var citations: [Citation]
        public var confidence: Confidence
        public var confidenceScore: Double?
        public var answerability: Answerability?
        public var relatedTopics: [String]
        public var timestamp: String?
        public var sessionId: String
        public var turn: Int
        public var retrieval: Retrieval
        public var language: String
        public var fallbackFrom: String?
        public var cached: Bool
        public var verification: Verification
        public var usage: Usage
        public var provenance: Provenance
        public init(answer: String, found: Bool, citations: [Citation], confidence: Confidence, confidenceScore: Double? = nil,
                    answerability: Answerability? = nil, relatedTopics: [String], timestamp: String? = nil, sessionId: String, turn: Int,
                    retrieval: Retrieval, language: String, fallbackFrom: String? = nil, cached: Bool, verification: Verification,
                    usage: Usage, provenance: Provenance) {
            self.answer = answer
            self.found = found
            self.citations = citations
            self.confidence = confidence
            self.confidenceScore = confidenceScore
            self.answerability = answerability
            self.relatedTopics = relatedTopics
            self.timestamp = timestamp
            self.sessionId = sessionId
            self.turn = turn
            self.retrieval = retrieval
            self.language = language
            self.fallbackFrom = fallbackFrom
            self.cached = cached
            self.verification = verification
            self.usage = usage
            self.provenance = provenance
        }
        public static let schemaHints: [String: SchemaHint] = [
            "answer": SchemaHint(description: "The answer, or \"not found in the document\" (localized) when no segment is relevant."),
            "found": SchemaHint(description: "False when the document does not answer the question: retrieval found nothing relevant (no model call), the model said so, or the evidence does not hold the kind of answer asked for (answerability.probability below the fitted threshold). No citations then."),
            "confidence": SchemaHint(description: "confidenceScore in words: high from 0.8, medium from 0.5, low below."),
            "confidenceScore": SchemaHint(description: "Calibrated probability that the result is right: for an answer, that the document answers the question; for not found, that it does not. Absent when retrieval found nothing (no evidence read).", minimum: 0, maximum: 1),
            "answerability": SchemaHint(description: "The evidence confidenceScore was read from. Absent when retrieval found nothing."),
            "citations": SchemaHint(description: "Segments supporting the answer; the model can only pick ids of segments it was shown."),
            "timestamp": SchemaHint(description: "The cited span as MM:SS-MM:SS (the seed's EpisodeAnswer.timestamp); absent without times, and when the citations are in more than one document."),
            "turn": SchemaHint(description: "1 for a new conversation, then 2, 3… for follow-ups."),
            "cached": SchemaHint(description: "True when a first question was answered from the analysis cache."),
            "verification": SchemaHint(description: "The answer checked against the segments shown: it is language (not punctuation, a timestamp or the prompt's words), its numbers and names occur in those segments, each citation shares content with the answer or the question (unsupported ones replaced by the best supporting segment). After maxAttempts without a usable answer: fallback notFound when the question asks about something the document never mentions, else an extractive answer quoting the best segments."),
        ]
    }
}
