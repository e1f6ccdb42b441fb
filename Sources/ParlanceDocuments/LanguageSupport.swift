import Foundation

/// Output languages the product supports, and the seed's rules for mapping any requested
/// BCP-47 tag onto one of them. Every fallback is reported (`fallbackFrom` + `reason`).
public enum LanguageSupport {
    public static let supported: [String] = [
        "en-us", "en-gb", "en-au", "fr-fr", "fr-ca", "de-de", "it-it", "pt-br", "es-es", "es-us", "es-419",
        "zh-hans", "ja-jp", "ko-kr", "nb-no",
    ]

    public struct Resolution: Sendable, Equatable, Codable {
        /// One of `supported`.
        public var language: String
        /// The requested tag (lowercased, `_` → `-`) when it could not be honoured as asked.
        public var fallbackFrom: String?
        /// Why, in words a user can read.
        public var reason: String?
        /// Kept though the model does not write it well (`keep`): what the fallback would
        /// have used.
        public var kept: Kept? = nil

        public struct Kept: Sendable, Equatable, Codable {
            public var fallbackWouldUse: String
        }

        public init(language: String, fallbackFrom: String? = nil, reason: String? = nil) {
            self.language = language
            self.fallbackFrom = fallbackFrom
            self.reason = reason
        }
    }

    /// Languages with a supported variant, and the variant a bare code means.
    static let defaultRegion: [String: String] = [
        "en": "en-us", "fr": "fr-fr", "de": "de-de", "it": "it-it", "es": "es-es", "pt": "pt-br",
        "ja": "ja-jp", "ko": "ko-kr", "zh": "zh-hans", "nb": "nb-no",
    ]

    /// English names of languages by ISO 639 code: what reasons and prompts call them.
    static let names: [String: String] = [
        "en": "English", "fr": "French", "de": "German", "it": "Italian", "es": "Spanish", "pt": "Portuguese",
        "ja": "Japanese", "ko": "Korean", "zh": "Chinese", "sv": "Swedish", "da": "Danish", "nl": "Dutch",
        "tr": "Turkish", "vi": "Vietnamese", "nb": "Norwegian", "nn": "Norwegian", "no": "Norwegian",
        "ru": "Russian", "ar": "Arabic", "hi": "Hindi", "pl": "Polish", "uk": "Ukrainian", "cs": "Czech",
        "el": "Greek", "he": "Hebrew", "hu": "Hungarian", "ro": "Romanian", "fi": "Finnish", "id": "Indonesian",
        "ms": "Malay", "th": "Thai", "fa": "Persian", "bn": "Bengali", "ur": "Urdu", "ta": "Tamil", "te": "Telugu",
        "mr": "Marathi", "gu": "Gujarati", "kn": "Kannada", "ml": "Malayalam", "pa": "Punjabi", "sw": "Swahili",
        "tl": "Tagalog", "fil": "Filipino", "ca": "Catalan", "eu": "Basque", "gl": "Galician", "hr": "Croatian",
        "sr": "Serbian", "sl": "Slovenian", "sk": "Slovak", "bg": "Bulgarian", "lt": "Lithuanian", "lv": "Latvian",
        "et": "Estonian", "is": "Icelandic", "ga": "Irish", "cy": "Welsh", "af": "Afrikaans", "sq": "Albanian",
        "mk": "Macedonian", "hy": "Armenian", "ka": "Georgian", "az": "Azerbaijani", "kk": "Kazakh", "uz": "Uzbek",
        "mn": "Mongolian", "ne": "Nepali", "si": "Sinhala", "km": "Khmer", "lo": "Lao", "my": "Burmese",
        "am": "Amharic", "zu": "Zulu", "xh": "Xhosa", "yo": "Yoruba", "ig": "Igbo", "ha": "Hausa", "so": "Somali",
        "lb": "Luxembourgish", "mt": "Maltese", "bs": "Bosnian", "be": "Belarusian", "ps": "Pashto", "ku": "Kurdish",
    ]

    private static let latinAmerica: Set<String> = [
        "mx", "ar", "bo", "cl", "co", "cr", "cu", "do", "ec", "gt", "hn", "ni", "pa", "pe", "pr", "py", "sv", "uy", "ve",
    ]

    /// Maps a requested tag onto a supported language, or nil when it names no language we
    /// recognise (the caller then reports `unsupportedLanguageOrLocale`).
    public static func resolve(_ requested: String) -> Resolution? {
        guard let tag = Tag(requested) else { return nil }
        let original = tag.normalized
        func fallback(_ to: String, _ why: String) -> Resolution {
            Resolution(language: to, fallbackFrom: original, reason: why)
        }
        let name = names[tag.language] ?? tag.language

        switch tag.language {
        case "nb", "nn", "no":
            // Bokmål is the Norwegian written for output (the seed's 26.1 rule): Nynorsk and
            // generic Norwegian fall back to it, visibly.
            if tag.language == "nb", tag.region == nil || tag.region == "no" { return Resolution(language: "nb-no") }
            return fallback("nb-no", "\(original) is not supported for output; using Norwegian Bokmål (nb-no)")
        case "zh":
            let traditional = tag.script == "hant" || (tag.script == nil && ["tw", "hk", "mo"].contains(tag.region ?? ""))
            if traditional {
                return fallback("zh-hans", "Traditional Chinese is not supported for output; using Simplified Chinese (zh-hans)")
            }
            return Resolution(language: "zh-hans")
        case "en", "fr", "de", "it", "es", "pt", "ja", "ko":
            guard let region = tag.region else { return Resolution(language: defaultRegion[tag.language] ?? "en-us") }
            let exact = "\(tag.language)-\(region)"
            if supported.contains(exact) { return Resolution(language: exact) }
            let target: String
            switch tag.language {
            case "en": target = ["nz"].contains(region) ? "en-au"
                : ["ie", "in", "za", "sg", "hk", "mt", "nz", "pk", "ng", "ke"].contains(region) ? "en-gb" : "en-us"
            case "es": target = latinAmerica.contains(region) ? "es-419" : "es-es"
            default: target = defaultRegion[tag.language] ?? "en-gb"
            }
            return fallback(target, "\(name) (\(exact)) is not supported for output; using \(target)")
        default:
            guard names[tag.language] != nil else { return nil }
            return fallback("en-gb", "\(name) (\(original)) is not supported for output; using British English (en-gb)")
        }
    }

    /// A syntactically checked BCP-47 tag: language, optional script and region.
    struct Tag {
        var language: String
        var script: String?
        var region: String?
        var normalized: String

        init?(_ raw: String) {
            let s = raw.trimmingSpaces().lowercased().replacingOccurrences(of: "_", with: "-")
            guard !s.isEmpty, s.count <= 64 else { return nil }
            let parts = s.split(separator: "-", omittingEmptySubsequences: false)
            guard let first = parts.first, (2...3).contains(first.count), first.allSatisfy({ $0.isASCII && $0.isLetter })
            else { return nil }
            for p in parts.dropFirst() {
                guard (1...8).contains(p.count), p.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else { return nil }
            }
            language = String(first)
            normalized = s
            for p in parts.dropFirst() {
                if p.count == 1 { break }  // extensions and private use: ignore the rest
                if p.count == 4, p.allSatisfy(\.isLetter), script == nil, region == nil { script = String(p) }
                else if (p.count == 2 && p.allSatisfy(\.isLetter)) || (p.count == 3 && p.allSatisfy(\.isNumber)), region == nil {
                    region = String(p)
                }
            }
        }
    }
}
