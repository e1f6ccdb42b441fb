/// The output language a request gets from the languages its model writes well: the
/// model's own list (its card or the config file says it) when there is one, else
/// `LanguageSupport`'s fixed table. `keep` writes in the language asked even so, and says
/// what the fallback would have been.
extension LanguageSupport {
    /// `writesWell`: normalized tags (`normalize`); nil or empty: the fixed table.
    public static func resolve(_ requested: String, writesWell: [String]?, keep: Bool) -> Resolution? {
        guard let r = resolve(requested, writesWell: writesWell) else { return nil }
        guard keep, let asked = r.fallbackFrom else { return r }
        var kept = Resolution(language: canonical(asked))
        kept.kept = .init(fallbackWouldUse: r.language)
        return kept
    }

    static func resolve(_ requested: String, writesWell list: [String]?) -> Resolution? {
        guard let list, !list.isEmpty else { return resolve(requested) }
        guard let tag = Tag(requested) else { return nil }
        let asked = tag.normalized
        if list.contains(asked) || list.contains(tag.language) { return Resolution(language: canonical(asked)) }
        if let variant = list.first(where: { base($0) == tag.language }) {
            // A bare code means the variant the model writes; another region falls back to it.
            if asked == tag.language { return Resolution(language: variant) }
            return Resolution(language: variant, fallbackFrom: asked,
                              reason: "\(displayName(asked)) (\(asked)) is not among the languages this model writes well; using \(variant)")
        }
        guard names[tag.language] != nil else { return nil }
        // The table's choice when the model writes it, else the model's first language.
        let target = resolve(requested).map(\.language).flatMap { covered($0, by: list) } ?? canonical(list[0])
        return Resolution(language: target, fallbackFrom: asked,
                          reason: "\(displayName(asked)) (\(asked)) is not among the languages this model writes well; using \(displayName(target)) (\(target))")
    }

    /// A tag as the table writes it when the table has it as asked ("en" → "en-us", "fr-fr"),
    /// else as asked ("sv", "zh-hant").
    static func canonical(_ tag: String) -> String {
        guard let r = resolve(tag), r.fallbackFrom == nil else { return tag }
        return r.language
    }

    /// `tag` when the list covers it (the tag itself, or its bare language), else nil.
    static func covered(_ tag: String, by list: [String]) -> String? {
        list.contains(tag) || list.contains(base(tag)) ? tag : nil
    }

    static func base(_ tag: String) -> String { String(tag.split(separator: "-").first ?? "") }

    /// Tags as a model's card or the config file writes them, normalized (lowercase, `-`),
    /// each once; `invalid` are those that are no BCP-47 tag.
    public static func normalize(_ tags: [String]) -> (tags: [String], invalid: [String]) {
        var out: [String] = [], invalid: [String] = []
        for t in tags {
            guard let tag = Tag(t) else { invalid.append(t); continue }
            if !out.contains(tag.normalized) { out.append(tag.normalized) }
        }
        return (out, invalid)
    }

    /// The language's English name, as prompts say it ("Write in Swedish."): a variant's
    /// own name where it has one, else the language's, else the tag itself.
    public static func displayName(_ tag: String) -> String {
        if let n = variantNames[tag] { return n }
        let b = base(tag)
        return variantNames[b] ?? names[b] ?? tag
    }

    /// Variants whose name is not just their language's.
    static let variantNames: [String: String] = [
        "en-gb": "British English", "pt-br": "Brazilian Portuguese", "zh-hans": "Simplified Chinese", "nb": "Norwegian Bokmål",
    ]
}
