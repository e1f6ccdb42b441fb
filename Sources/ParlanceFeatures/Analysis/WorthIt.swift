import Foundation
import ParlanceDocuments
import ParlanceEngine
import ParlanceJSON
import ParlanceProtocol
import ParlanceSchema

/// `analysis/worthIt`: the WorthIt seed's analysis. One call over the transcript (depth,
/// long summary, takeaways, gems, questions), one over the comments when there are any
/// (sentiment, themes with an example comment picked by index, a category per comment),
/// then the seed's score, computed here rather than by the model.
public enum WorthIt {
    struct TranscriptDraft: Codable, Sendable, Schematic {
        var longSummary: String
        var takeaways: [String]
        var gemsOfWisdom: [String]
        var contentDepthScore: Double
        var suggestedQuestions: [String]
        static let schemaHints: [String: SchemaHint] = [
            "longSummary": SchemaHint(minLength: 40, maxLength: 700),
            "takeaways": SchemaHint(minItems: 3, maxItems: 5, minLength: 5, maxLength: 150),
            "gemsOfWisdom": SchemaHint(minItems: 1, maxItems: 3, minLength: 5, maxLength: 150),
            "contentDepthScore": SchemaHint(minimum: 0, maximum: 1),
            "suggestedQuestions": SchemaHint(maxItems: 4, minLength: 10, maxLength: 100),
        ]
    }

    static let transcriptTokens = 700
    /// The transcript's task, with its list sizes (takeaways 3-5, gems 1-3, unless it is shorter).
    static func transcriptTask(takeaways: ListSize, gems: ListSize) -> String {
        """
        Judge whether this is worth watching. Give longSummary (a detailed paragraph), takeaways (\(takeaways.words) concrete lessons), \
        gemsOfWisdom (\(gems.words) memorable insights), contentDepthScore (0 = shallow, 1 = deep and substantive) and \
        suggestedQuestions (2-4 questions a viewer could ask about it).
        """
    }

    public static func worthIt(_ p: AnalyzeWorthIt.Params, _ ctx: RequestContext) async throws -> AnalyzeWorthIt.Result {
        let comments = (p.comments ?? []).map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        let hasComments = comments.contains { !$0.isEmpty }
        return try await AnalysisJob.run(AnalyzeWorthIt.self, p, maxTokens: transcriptTokens, ctx: ctx) { job in
            let takeaways = job.listSize(3...5), gems = job.listSize(1...3)
            let transcriptTask = transcriptTask(takeaways: takeaways, gems: gems)
            let schema = gems.applied(to: takeaways.applied(to: SchemaDeriver.schema(for: TranscriptDraft.self), at: "takeaways",
                                                            sentencesOf: job.input.transcript.segments), at: "gemsOfWisdom")
            let check = AnalysisVerifier(fields: [.init("takeaways", .sentence, minItems: takeaways.minItems),
                                                  .init("gemsOfWisdom", .sentence, minItems: gems.minItems)],
                                  proseKeys: ["longSummary"], labels: ["longSummary", "takeaways", "gemsOfWisdom", "contentDepthScore", "suggestedQuestions"],
                                  names: job.names, source: job.source, instructions: [transcriptTask, AnalysisJob.stricter] + job.userInstructions,
                                  language: job.input.language.language)
            var out = try await job.verifiedAnalysis(task: transcriptTask, schema: schema,
                                                     maxTokens: transcriptTokens, expectedChars: 1500, check: check,
                                                     whole: 5...(hasComments ? 70 : 99), condensed: 80...(hasComments ? 90 : 99))
            var insights: (value: JSONValue, sentiment: Double)?
            if hasComments {
                let (v, s, cu) = try await commentInsights(comments, job: job, range: out.chunks > 1 ? 90...99 : 70...99)
                insights = (v, s)
                out.usage = out.usage + cu
            }
            out.content = try result(draft: .object(out.content), insights: insights, input: job.input)
            return out
        }
    }

    /// The result's fields from the transcript draft and the comment insights: the score
    /// computed from depth and sentiment, the suggested questions topped up when short.
    static func result(draft: JSONValue, insights: (value: JSONValue, sentiment: Double)?, input: AnalysisInput) throws -> JSONObject {
        let depth = min(1, max(0, draft["contentDepthScore"]?.doubleValue ?? 0))
        let breakdown = score(depth: depth, sentiment: insights?.sentiment)
        let (questions, source) = suggestedQuestions(draft["suggestedQuestions"]?.arrayValue?.compactMap(\.stringValue) ?? [], input)
        var content = JSONObject()
        content["score"] = .int(breakdown.finalScore)
        content["scoreBreakdown"] = try JSONValue(encoding: breakdown)
        content["contentDepthScore"] = .double(depth)
        content["longSummary"] = draft["longSummary"] ?? ""
        content["takeaways"] = draft["takeaways"] ?? []
        content["gemsOfWisdom"] = draft["gemsOfWisdom"] ?? []
        content["suggestedQuestions"] = .array(questions.map { .string($0) })
        content["suggestedQuestionsSource"] = .string(source.rawValue)
        if let insights { content["commentInsights"] = insights.value }
        return content
    }

    // MARK: Comments

    static func commentSchema(count n: Int) -> JSONValue {
        let indices = JSONValue.array((0..<n).map { .int($0) })
        var cats = JSONObject()
        for i in 0..<n { cats[String(i)] = ["type": "string", "enum": .array(CommentCategory.allCases.map { .string($0.rawValue) })] }
        return [
            "type": "object",
            "properties": [
                "overallCommentSentimentScore": ["type": "number", "minimum": 0, "maximum": 1],
                "sentimentSummary": ["type": "string", "minLength": 10, "maxLength": 200],
                "themes": ["type": "array", "minItems": 1, "maxItems": 4, "items": [
                    "type": "object",
                    "properties": ["theme": ["type": "string", "minLength": 3, "maxLength": 60], "exampleCommentIndex": ["type": "integer", "enum": indices]],
                    "required": ["theme", "exampleCommentIndex"], "additionalProperties": false,
                ]],
                "categories": ["type": "object", "properties": .object(cats), "required": .array((0..<n).map { .string(String($0)) }),
                               "additionalProperties": false],
            ],
            "required": ["overallCommentSentimentScore", "sentimentSummary", "themes", "categories"],
            "additionalProperties": false,
        ]
    }

    /// Sentiment, themes and categories. Example comments and categorized comments are
    /// the input comments themselves (the model gives indices), so they always validate.
    static func commentInsights(_ comments: [String], job: AnalysisJob, range: ClosedRange<Int>) async throws -> (JSONValue, Double, Usage) {
        try Task.checkCancellation()
        let n = comments.count
        // About 1,500 tokens of comments in the prompt, shared evenly; longer ones shortened there.
        let perComment = max(80, 6000 / max(1, n))
        let listed = comments.enumerated().map { i, c in
            let flat = c.replacingOccurrences(of: "\n", with: " ")
            return "[\(i)] " + (flat.count > perComment ? String(flat.prefix(perComment)) + "…" : flat)
        }.joined(separator: "\n")
        let task = """
            Give overallCommentSentimentScore (0 = negative, 1 = positive), sentimentSummary (one sentence on how viewers \
            feel), themes (1-4 recurring themes, each with the [number] of a comment that illustrates it) and categories \
            (for every comment number: humor, insightful, controversial, spam or neutral). Write in \(job.input.languageName).
            """
        let messages = [ChatMessage(.system, AnalysisPrompt.system), ChatMessage(.user, "Viewer comments:\n\(listed)\n\n---\n\(task)")]
        var o = job.options
        o.maxTokens = 160 + 8 * n
        let out = try await Generation.run(job.engine, prompt: job.engine.render(messages), schema: commentSchema(count: n),
                                           options: o, progress: job.ctx.progress.scaled(range, expectedChars: 300 + 12 * n), part: "comments")
        let d = out.json ?? [:]
        let sentiment = min(1, max(0, d["overallCommentSentimentScore"]?.doubleValue ?? 0.5))
        var themes: [JSONValue] = []
        var seenThemes = Set<String>()
        for t in d["themes"]?.arrayValue ?? [] {
            guard let i = t["exampleCommentIndex"]?.intValue, comments.indices.contains(i), let name = t["theme"]?.stringValue,
                  seenThemes.insert(name.lowercased()).inserted else { continue }
            themes.append(["theme": .string(name), "exampleComment": .string(comments[i]), "exampleCommentIndex": .int(i)])
        }
        let categorized: [JSONValue] = comments.enumerated().map { i, c in
            ["index": .int(i), "comment": .string(c), "category": d["categories"]?[String(i)] ?? "neutral"]
        }
        let v: JSONValue = [
            "overallCommentSentimentScore": .double(sentiment), "sentimentSummary": d["sentimentSummary"] ?? "",
            "themes": .array(themes), "categorizedComments": .array(categorized),
        ]
        return (v, sentiment, out.usage)
    }

    // MARK: Score

    /// The seed's score: round(100 × (0.6 × depth + 0.4 × sentiment)); +5 when both are
    /// ≥ 0.8; −10 when depth < 0.3; depth alone (flagged) without comments; 0...100.
    public static func score(depth: Double, sentiment: Double?) -> ScoreBreakdown {
        let base = sentiment.map { Int((100 * (0.6 * depth + 0.4 * $0)).rounded()) } ?? Int((100 * depth).rounded())
        var adjustment = 0
        var reasons: [String] = []
        if let s = sentiment, depth >= 0.8, s >= 0.8 {
            adjustment += 5
            reasons.append("bonus: high content depth and high comment sentiment")
        }
        if depth < 0.3 {
            adjustment -= 10
            reasons.append("penalty: low content depth")
        }
        return ScoreBreakdown(
            contentDepthScore: depth, commentSentimentScore: sentiment, depthWeight: sentiment == nil ? 1 : 0.6,
            sentimentWeight: sentiment == nil ? 0 : 0.4, baseScore: base, adjustment: adjustment, adjustmentReasons: reasons,
            finalScore: max(0, min(100, base + adjustment)), usedComments: sentiment != nil,
            note: sentiment == nil ? "no comments were given: the score is content depth alone" : nil)
    }

    // MARK: Suggested questions

    /// The model's questions when it gave at least 2; otherwise topped up to 3 from
    /// templates in the output language (a topic taken from the transcript when possible).
    static func suggestedQuestions(_ proposed: [String], _ input: AnalysisInput) -> ([String], QuestionSource) {
        let model = Array(Analyses.dedupe(proposed).prefix(4))
        if model.count >= 2 { return (model, .model) }
        var out = model
        for q in fallbackQuestions(input.language.language, topic: topic(input.transcript.segments)) where out.count < 3 {
            if !out.contains(where: { $0.lowercased() == q.lowercased() }) { out.append(q) }
        }
        return (out, model.isEmpty ? .fallback : .mixed)
    }

    static func fallbackQuestions(_ language: String, topic: String?) -> [String] {
        let templates: [String: (main: String, topic: String, audience: String, tips: String)] = [
            "en": ("What is the main message of this video?", "What does it say about %@?", "Who is this video for?", "What are the most practical tips?"),
            "fr": ("Quel est le message principal de cette vidéo ?", "Que dit-elle à propos de %@ ?", "À qui s'adresse cette vidéo ?", "Quels sont les conseils les plus pratiques ?"),
            "de": ("Was ist die Hauptaussage dieses Videos?", "Was sagt es über %@?", "Für wen ist dieses Video gedacht?", "Was sind die praktischsten Tipps?"),
            "es": ("¿Cuál es el mensaje principal de este video?", "¿Qué dice sobre %@?", "¿Para quién es este video?", "¿Cuáles son los consejos más prácticos?"),
            "it": ("Qual è il messaggio principale di questo video?", "Cosa dice su %@?", "A chi è rivolto questo video?", "Quali sono i consigli più pratici?"),
            "pt": ("Qual é a mensagem principal deste vídeo?", "O que ele diz sobre %@?", "Para quem é este vídeo?", "Quais são as dicas mais práticas?"),
            "ja": ("この動画の主なメッセージは何ですか？", "%@について何と言っていますか？", "この動画は誰に向けたものですか？", "最も実践的なヒントは何ですか？"),
            "ko": ("이 영상의 핵심 메시지는 무엇인가요?", "%@에 대해 무엇을 말하나요?", "이 영상은 누구를 위한 것인가요?", "가장 실용적인 팁은 무엇인가요?"),
            "zh": ("这个视频的主要观点是什么？", "关于%@，视频说了什么？", "这个视频适合谁看？", "最实用的建议是什么？"),
            "nb": ("Hva er hovedbudskapet i denne videoen?", "Hva sier den om %@?", "Hvem er denne videoen for?", "Hva er de mest praktiske rådene?"),
        ]
        let base = String(language.split(separator: "-").first ?? "en")
        let t = templates[base] ?? templates["en"]!
        var out = [t.main]
        if let topic { out.append(t.topic.replacingOccurrences(of: "%@", with: topic)) }
        out += [t.audience, t.tips]
        return out
    }

    /// The most frequent capitalized word that is not at the start of a sentence (a name
    /// or product), seen at least twice; nil when there is none (e.g. CJK text).
    static func topic(_ segments: [Segment]) -> String? {
        var counts: [String: Int] = [:]
        for s in segments.prefix(2000) {
            let words = s.text.split(whereSeparator: { $0.isWhitespace })
            for (i, w) in words.enumerated() where i > 0 {
                let prev = words[i - 1]
                if let last = prev.last, ".!?:".contains(last) { continue }
                let word = w.trimmingCharacters(in: .punctuationCharacters.union(.symbols))
                guard word.count >= 3, let f = word.first, f.isUppercase, word.dropFirst().contains(where: \.isLowercase) else { continue }
                counts[word, default: 0] += 1
            }
        }
        return counts.filter { $0.value >= 2 }.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key
    }
}
