import Foundation
import ParlanceProtocol

/// The selection's analysis for compose/variations, computed without the model: with a
/// 135M-parameter default model, a schema-guided call invents key points and guesses the
/// sentiment, while these heuristics are instant, reproducible and only ever quote the
/// selection — so "key point preserved" can be checked against the selection's own words.
public enum ComposeAnalyzer {
    public static func analyze(_ text: String) -> ComposeAnalysis {
        ComposeAnalysis(sentiment: sentiment(text), detectedAudience: audience(text), keyPoints: keyPoints(text))
    }

    // MARK: Key points

    /// Up to `limit` sentences (long ones split at semicolons), the most informative first
    /// chosen, then given back in their original order. Greetings and sign-offs are skipped.
    public static func keyPoints(_ text: String, limit: Int = 5) -> [String] {
        var candidates: [String] = []
        for s in Lexicon.sentences(text) {
            let parts = s.count > 140 ? s.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) } : [s]
            candidates += parts.filter { !$0.isEmpty }
        }
        let scored = candidates.enumerated().compactMap { i, s -> (Int, Double, String)? in
            let content = Lexicon.contentWords(s)
            let numbers = Lexicon.numbers(in: s)
            guard content.count >= 2 || (!numbers.isEmpty && !content.isEmpty) else { return nil }
            if isGreetingOrSignOff(s) { return nil }
            let words = Lexicon.words(s)
            let names = words.dropFirst().filter { $0.first?.isUppercase ?? false }.count
            let lower = Set(words.map { $0.lowercased() })
            let action = lower.isDisjoint(with: actionCues) ? 0.0 : 1.5
            let score = Double(Set(content.map(Lexicon.stem)).count) + 2 * Double(numbers.count) + Double(names) + action
            return (i, score, clip(s))
        }
        let chosen = scored.sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0 < $1.0 }.prefix(limit).sorted { $0.0 < $1.0 }
        if chosen.isEmpty, let only = candidates.first { return [clip(only)] }
        return chosen.map(\.2)
    }

    static let actionCues: Set<String> = [
        "must", "need", "needs", "needed", "will", "should", "deadline", "due", "by", "please", "required", "decided", "agreed",
        "moved", "move", "cancel", "cancelled", "delayed", "approved", "launch", "ship", "send", "review", "schedule",
    ]

    static func isGreetingOrSignOff(_ s: String) -> Bool {
        let lower = s.lowercased().trimmingCharacters(in: .punctuationCharacters.union(.whitespaces))
        let openers = ["hi", "hello", "hey", "dear", "good morning", "good afternoon", "thanks", "thank you", "best", "regards",
                       "cheers", "kind regards", "best regards", "sincerely", "all the best"]
        return Lexicon.words(s).count <= 5 && openers.contains { lower == $0 || lower.hasPrefix($0 + " ") || lower.hasPrefix($0 + ",") }
    }

    static func clip(_ s: String, max: Int = 200) -> String {
        guard s.count > max else { return s }
        let cut = s.prefix(max)
        return String(cut[..<(cut.lastIndex(of: " ") ?? cut.endIndex)]) + "…"
    }

    // MARK: Preservation

    /// A key point is kept when every number in it occurs in the text (digits or number
    /// words) and at least half its content words do (compared by crude stems).
    public static func isPreserved(_ point: String, in text: String) -> Bool {
        let have = Set(Lexicon.words(text).map(Lexicon.stem))
        let haveNumbers = Set(Lexicon.numbers(in: text))
        let numbers = Set(Lexicon.numbers(in: point))
        guard numbers.isSubset(of: haveNumbers) else { return false }
        let content = Set(Lexicon.contentWords(point.replacingOccurrences(of: "…", with: "")).map(Lexicon.stem))
        guard !content.isEmpty else { return true }
        let found = content.filter { have.contains($0) }.count
        return Double(found) >= 0.5 * Double(content.count)
    }

    public static func check(_ points: [String], against text: String) -> (preserved: [String], missing: [String]) {
        var kept: [String] = [], missing: [String] = []
        for p in points {
            if isPreserved(p, in: text) { kept.append(p) } else { missing.append(p) }
        }
        return (kept, missing)
    }

    // MARK: Sentiment

    /// Counts positive and negative words (a word after not/no/never flips); mixed when
    /// both sides are close.
    public static func sentiment(_ text: String) -> Sentiment {
        let words = Lexicon.words(text).map { $0.lowercased() }
        var pos = 0, neg = 0
        for (i, w) in words.enumerated() {
            let negated = (max(0, i - 2)..<i).contains { ["not", "no", "never", "isn't", "wasn't", "don't", "didn't", "won't", "can't", "hardly"].contains(words[$0]) }
            let s = Lexicon.stem(w)
            var polarity = 0
            if positiveWords.contains(w) || positiveWords.contains(s) { polarity = 1 }
            if negativeWords.contains(w) || negativeWords.contains(s) { polarity = -1 }
            if negated { polarity = -polarity }
            if polarity > 0 { pos += 1 } else if polarity < 0 { neg += 1 }
        }
        if pos == 0, neg == 0 { return .neutral }
        let balance = Double(pos - neg) / Double(pos + neg)
        if pos > 0, neg > 0, abs(balance) < 0.34 { return .mixed }
        return balance > 0 ? .positive : .negative
    }

    static let positiveWords: Set<String> = [
        "great", "good", "glad", "happy", "pleased", "thank", "thanks", "appreciate", "excellent", "success", "successful",
        "improv", "improve", "win", "excit", "excited", "love", "wonderful", "progress", "congratulation", "congratulations",
        "proud", "delight", "delighted", "fantastic", "amazing", "awesome", "nice", "best", "benefit", "ahead", "achiev",
        "achieved", "welcome", "grateful", "perfect", "easy", "resolved", "fix", "fixed", "celebrat", "record", "growth", "enjoy",
        "support", "helpful", "smooth", "approv", "approved", "thrilled", "well", "better",
    ]

    static let negativeWords: Set<String> = [
        "delay", "problem", "issue", "fail", "failed", "failure", "bug", "late", "sorry", "unfortunately", "concern", "risk",
        "block", "blocked", "miss", "missed", "broken", "wrong", "bad", "angry", "disappoint", "disappointed", "frustrat",
        "frustrated", "cancel", "cancelled", "unacceptable", "worri", "worried", "loss", "declin", "decline", "behind", "outage",
        "error", "complaint", "regret", "upset", "difficult", "hard", "poor", "worse", "worst", "crash", "slip", "slipped",
        "overdue", "damage", "annoy", "annoyed", "confus", "confused", "terrible", "awful", "hate", "stress", "stressed",
    ]

    // MARK: Audience

    /// The audience whose cue words occur most (weighted), peer when none do.
    public static func audience(_ text: String) -> Audience {
        let lower = " " + Lexicon.words(text).map { $0.lowercased() }.joined(separator: " ") + " "
        var best: (Audience, Double) = (.peer, 0.5)
        for (a, cues) in audienceCues {
            let weight = a == .peer ? 0.5 : 1.0  // "you" is in almost every message
            let hits = weight * cues.reduce(0.0) { n, cue in n + Double(lower.components(separatedBy: " \(cue) ").count - 1) }
            if hits > best.1 { best = (a, hits) }
        }
        return best.0
    }

    static let audienceCues: [(Audience, [String])] = [
        (.executive, ["board", "revenue", "roi", "budget", "quarter", "quarterly", "q1", "q2", "q3", "q4", "strategy", "strategic",
                      "forecast", "stakeholders", "margin", "margins", "investment", "kpi", "kpis", "growth", "leadership", "ceo",
                      "cfo", "cto", "executive", "executives", "headcount", "bottom line", "market share", "profit", "approval"]),
        (.client, ["client", "clients", "customer", "your order", "your account", "invoice", "contract", "subscription", "refund",
                   "proposal", "sla", "deliverable", "deliverables", "your team", "our services", "we apologize", "your project",
                   "billing", "renewal"]),
        (.team, ["team", "everyone", "all hands", "folks", "sprint", "standup", "stand-up", "retro", "let's", "our team", "we need",
                 "we will", "we'll", "tasks", "on-call", "backlog", "ticket", "tickets", "marketing", "engineering", "support"]),
        (.public, ["announce", "announcing", "community", "users", "public", "introducing", "proud to", "today we", "press",
                   "available now", "visitors", "citizens", "residents", "website", "everyone can", "our customers"]),
        (.peer, ["can you", "could you", "you", "your", "quick question", "pr", "review", "lunch", "buddy", "mate", "i think"]),
    ]
}
