import Foundation

/// What kind of answer a question asks for, when its wording says so: a quantity ("how
/// many", "what price", "cuánto", "combien") must be answered with a number, a time ("when",
/// "what year", "cuándo", "quand") with a number, a month, a weekday or a time word.
enum QuestionKind: String, Sendable {
    case quantity = "a number"
    case time = "a date or time"

    static func expected(_ question: String) -> QuestionKind? {
        let q = " " + TextChecks.normalized(question) + " "
        if quantityCues.contains(where: { q.contains(" \($0) ") }) { return .quantity }
        if timeCues.contains(where: { q.contains(" \($0) ") }) { return .time }
        return nil
    }

    static func answers(_ answer: String, _ kind: QuestionKind) -> Bool {
        if !Facts.numberSpans(answer).isEmpty { return true }
        guard kind == .time else { return false }
        let words = Set(TextChecks.normalized(answer).split(separator: " ").map(String.init))
        return !words.isDisjoint(with: timeWords)
    }

    static let quantityCues = [
        "how much", "how many", "how long", "how old", "how far", "how big", "how large", "how tall", "what price", "what is the price",
        "what percentage", "what share", "how often", "what size", "what number", "how heavy",
        "cuanto", "cuantos", "cuantas", "cuanta", "que precio", "combien", "quel prix", "quel est le prix", "quel pourcentage",
    ]
    static let timeCues = [
        "when", "what year", "which year", "in which year", "what date", "what time", "since when", "cuando", "que ano", "en que ano",
        "en que fecha", "que fecha", "a que hora", "quand", "quelle annee", "en quelle annee", "depuis quand", "quelle date",
    ]
    static let timeWords: Set<String> = [
        "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december",
        "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "today", "tomorrow", "yesterday", "tonight",
        "morning", "afternoon", "evening", "night", "noon", "midnight", "week", "weeks", "month", "months", "year", "years", "spring",
        "summer", "autumn", "fall", "winter", "weekend", "daily", "weekly", "monthly", "yearly", "annually",
        "enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre",
        "lunes", "martes", "miercoles", "jueves", "viernes", "sabado", "domingo", "hoy", "manana", "ayer", "semana", "mes", "ano",
        "janvier", "fevrier", "mars", "avril", "mai", "juin", "juillet", "aout", "septembre", "octobre", "novembre", "decembre",
        "lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche", "aujourd", "demain", "hier", "semaine", "mois", "an", "annee",
    ]
}
