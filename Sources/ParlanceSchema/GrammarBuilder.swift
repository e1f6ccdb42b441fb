import Foundation
#if canImport(ParlanceJSON)
import ParlanceJSON
#endif

public enum SchemaGrammarError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A keyword the grammar cannot express; `path` is a JSON Pointer into the schema ("#/properties/a").
    case unsupportedKeyword(keyword: String, path: String)
    /// The message says what is wrong and where, without an "invalid schema" prefix.
    case invalidSchema(String)

    public var description: String {
        switch self {
        case .unsupportedKeyword(let k, let p): return "schema keyword '\(k)' at \(p) is not supported"
        case .invalidSchema(let m): return m
        }
    }
}

/// Writes a llama.cpp GBNF grammar (root rule `root`) whose every sentence is a compact JSON
/// text valid against the schema (up to the gaps listed below, which the validator catches).
///
/// - Objects: declared properties in declared order; optional ones may be left out, with
///   commas right in every combination. No other keys, whatever `additionalProperties`
///   says (a `required` name missing from `properties` is declared with the
///   `additionalProperties` schema). An object with no declared properties is a dictionary
///   of `additionalProperties` values (at most `defaultMaxItems` entries), or `{}` when that
///   is `false`.
/// - Arrays: `items`, `minItems`, `maxItems` (default `defaultMaxItems`).
/// - Strings: `minLength`, `maxLength` in characters (an escape counts as one); without
///   `maxLength`, at most `defaultMaxStringLength`; `maxLength` is capped at `maxRepetition`.
/// - Integers: exact `[minimum, maximum]`. Numbers with a bound: exact, at most 4 decimals.
///   Unbounded: 16 digits. Never an exponent.
/// - `enum` / `const` of any JSON values (the members that fail the rest of the schema are
///   dropped), `anyOf` / `oneOf` as alternation (sibling keywords are merged into each
///   alternative; `oneOf` exclusivity is not enforced), `type` arrays, `{}` / `true` (any
///   value, `anyValueDepth` levels deep), booleans, null.
/// - Missing `type`: inferred from the keywords present (`properties` → object…), else any.
/// - Whitespace: at most one `ws` (see `GrammarRules`) between tokens, none around the root.
///
/// Annotations (`title`, `description`, `examples`, `default`, `format`, `$schema`, `$id`,
/// `$comment`…) are ignored. `SchemaSupport.unsupported` keywords (`$ref`, `allOf`, `not`,
/// `pattern`, `minProperties`, `prefixItems`…) and `uniqueItems: true` throw
/// `.unsupportedKeyword`.
public enum GrammarBuilder {
    /// `s` as a GBNF string literal (quotes, backslashes and control characters escaped),
    /// for grammars written outside this module.
    public static func literal(_ s: String) -> String { GrammarRules.literal(s) }

    public static let defaultMaxStringLength = 1000
    public static let defaultMaxKeyLength = 100
    public static let defaultMaxItems = 100
    /// The largest `{m,n}` written: llama.cpp rejects repetitions of 2000 or more.
    public static let maxRepetition = 1999
    public static let anyValueDepth = 3
    static let maxSchemaDepth = 64
    static let maxVisits = 20_000
    static let maxGrammarSize = 4_000_000

    public static func gbnf(for schema: JSONValue) throws(SchemaGrammarError) -> String {
        var b = Builder()
        let top = try b.visit(schema, "#", "", 0)
        b.rules.finish(top: top)
        return b.rules.text
    }
}

struct Builder {
    var rules = GrammarRules()
    var visits = 0

    mutating func visit(_ schema: JSONValue, _ path: String, _ hint: String, _ depth: Int) throws(SchemaGrammarError) -> String {
        visits += 1
        guard depth <= GrammarBuilder.maxSchemaDepth else {
            throw .invalidSchema("the schema at \(path) is nested deeper than \(GrammarBuilder.maxSchemaDepth) levels")
        }
        guard visits <= GrammarBuilder.maxVisits, rules.size <= GrammarBuilder.maxGrammarSize else {
            throw .invalidSchema("the schema is too large to turn into a grammar")
        }
        let o: JSONObject
        switch schema {
        case .bool(true): return rules.anyValue(depth: GrammarBuilder.anyValueDepth)
        case .bool(false): throw .invalidSchema("the schema at \(path) is false: no value satisfies it")
        case .object(let obj): o = obj
        default: throw .invalidSchema("the schema at \(path) must be an object or a boolean, got \(schema.typeName)")
        }
        for k in o.keys where SchemaSupport.unsupported.contains(k) { throw .unsupportedKeyword(keyword: k, path: path) }
        if o["uniqueItems"] == .bool(true) { throw .unsupportedKeyword(keyword: "uniqueItems", path: path) }
        if case .array? = o["items"] { throw .unsupportedKeyword(keyword: "items", path: path) }

        if o["anyOf"] != nil || o["oneOf"] != nil { return try alternatives(o, path, hint, depth) }
        if let c = o["const"] { return try literals([c], "const", schema, path, hint) }
        if let e = o["enum"] {
            guard case .array(let values) = e else { throw .invalidSchema("'enum' at \(path) must be an array") }
            return try literals(values, "enum", schema, path, hint)
        }
        var types = try typeNames(o, path)
        if types.contains("number") { types.removeAll { $0 == "integer" } }
        if types.isEmpty { return rules.anyValue(depth: GrammarBuilder.anyValueDepth) }
        var exprs: [String] = []
        for t in types {
            let sub = types.count > 1 ? Self.join(hint, t) : hint
            switch t {
            case "null": exprs.append(rules.null())
            case "boolean": exprs.append(rules.boolean())
            case "string": exprs.append(try string(o, path, sub))
            case "integer", "number": exprs.append(try number(o, t == "integer", path, sub))
            case "array": exprs.append(try array(o, path, sub, depth))
            default: exprs.append(try object(o, path, sub, depth))
            }
        }
        return exprs.count == 1 ? exprs[0] : rules.add(hint, exprs.joined(separator: " | "))
    }

    /// The declared types, or those the keywords present imply.
    func typeNames(_ o: JSONObject, _ path: String) throws(SchemaGrammarError) -> [String] {
        let known = ["null", "boolean", "object", "array", "number", "string", "integer"]
        var names: [String] = []
        switch o["type"] {
        case nil: return SchemaSupport.impliedTypes(o)
        case .string(let t)?: names = [t]
        case .array(let ts)?:
            for t in ts {
                guard case .string(let s) = t else { throw .invalidSchema("'type' at \(path) must hold strings") }
                if !names.contains(s) { names.append(s) }
            }
            if names.isEmpty { throw .invalidSchema("'type' at \(path) is an empty array") }
        default: throw .invalidSchema("'type' at \(path) must be a string or an array")
        }
        for t in names where !known.contains(t) { throw .invalidSchema("unknown type '\(t)' at \(path)") }
        return names
    }

    mutating func alternatives(_ o: JSONObject, _ path: String, _ hint: String, _ depth: Int) throws(SchemaGrammarError) -> String {
        let key = o["anyOf"] != nil ? "anyOf" : "oneOf"
        guard case .array(let list)? = o[key], !list.isEmpty else {
            throw .invalidSchema("'\(key)' at \(path) must be a non-empty array")
        }
        var rest = o
        rest[key] = nil
        let siblings = rest.keys.filter { !SchemaSupport.annotations.contains($0) }
        var exprs: [String] = []
        for (i, alt) in list.enumerated() {
            var merged = alt
            if !siblings.isEmpty {
                switch alt {
                case .object(var a):
                    for k in siblings where a[k] == nil { a[k] = rest[k] }
                    merged = .object(a)
                case .bool(true): merged = .object(rest)
                default: break
                }
            }
            if merged == .bool(false) { continue }
            let e = try visit(merged, "\(path)/\(key)/\(i)", Self.join(hint, "\(i)"), depth + 1)
            if !exprs.contains(e) { exprs.append(e) }
        }
        guard !exprs.isEmpty else { throw .invalidSchema("no alternative of '\(key)' at \(path) admits a value") }
        return exprs.count == 1 ? exprs[0] : rules.add(hint, exprs.joined(separator: " | "))
    }

    /// `enum` / `const`: the values that satisfy the whole schema, as JSON literals.
    mutating func literals(_ values: [JSONValue], _ keyword: String, _ schema: JSONValue, _ path: String, _ hint: String)
        throws(SchemaGrammarError) -> String
    {
        var seen: Set<String> = []
        var alts: [String] = []
        for v in values where SchemaValidator.validate(v, against: schema).isEmpty {
            let text = v.serialized()
            if seen.insert(text).inserted { alts.append(GrammarRules.literal(text)) }
        }
        guard !alts.isEmpty else { throw .invalidSchema("no '\(keyword)' value at \(path) satisfies the rest of its schema") }
        return rules.add(hint, alts.joined(separator: " | "))
    }

    func count(_ o: JSONObject, _ key: String, _ path: String) throws(SchemaGrammarError) -> Int? {
        guard let v = o[key] else { return nil }
        guard let n = SchemaSupport.count(v) else { throw .invalidSchema("'\(key)' at \(path) must be a non-negative integer") }
        return n
    }

    mutating func string(_ o: JSONObject, _ path: String, _ hint: String) throws(SchemaGrammarError) -> String {
        let min = try count(o, "minLength", path) ?? 0
        let max = Swift.min(try count(o, "maxLength", path) ?? GrammarBuilder.defaultMaxStringLength, GrammarBuilder.maxRepetition)
        guard min <= max else {
            throw .invalidSchema(min > GrammarBuilder.maxRepetition
                ? "minLength \(min) at \(path) is above the grammar's limit of \(GrammarBuilder.maxRepetition)"
                : "minLength \(min) at \(path) is above maxLength \(max)")
        }
        return rules.string(hint, min: min, max: max)
    }

    mutating func number(_ o: JSONObject, _ isInteger: Bool, _ path: String, _ hint: String) throws(SchemaGrammarError) -> String {
        var keywords: [String: NumberGrammar.JSONNumberKeyword] = [:]
        for k in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] {
            switch o[k] {
            case nil: continue
            case .bool(let b)? where k.hasPrefix("exclusive"): keywords[k] = .flag(b)
            case let v? where SchemaSupport.isNumber(v): keywords[k] = .number(v.doubleValue!)
            default: throw .invalidSchema("'\(k)' at \(path) must be a number")
            }
        }
        let decimals = isInteger ? 0 : NumberGrammar.decimals
        let (lo, hi) = NumberGrammar.bounds(keywords, decimals: decimals)
        if lo == nil && hi == nil { return isInteger ? rules.integer() : rules.number() }
        let cap = isInteger ? NumberGrammar.cap : NumberGrammar.cap * NumberGrammar.unit + NumberGrammar.unit - 1
        let low = lo ?? Swift.min(-cap, hi!)
        let high = hi ?? Swift.max(cap, low)
        guard low <= high else {
            throw .invalidSchema("no \(isInteger ? "integer" : "number with at most 4 decimals") at \(path) satisfies its bounds")
        }
        let alts = isInteger ? NumberGrammar.integer(low, high) : NumberGrammar.number(low, high)
        return rules.add(hint, alts.joined(separator: " | "))
    }

    mutating func array(_ o: JSONObject, _ path: String, _ hint: String, _ depth: Int) throws(SchemaGrammarError) -> String {
        let min = try count(o, "minItems", path) ?? 0
        var max = try count(o, "maxItems", path) ?? Swift.max(GrammarBuilder.defaultMaxItems, min)
        max = Swift.min(max, GrammarBuilder.maxRepetition + 1)
        guard min <= max else { throw .invalidSchema("minItems \(min) at \(path) is above maxItems \(max) or the grammar's limit") }
        let items = o["items"] ?? .bool(true)
        if items == .bool(false) || max == 0 {
            guard min == 0 else { throw .invalidSchema("the array at \(path) needs \(min) items but admits none") }
            return rules.container(hint, open: "[", close: "]", item: "", max: 0)
        }
        let item = try visit(items, path + "/items", Self.join(hint, "item"), depth + 1)
        return rules.container(hint, open: "[", close: "]", item: item, min: min, max: max)
    }

    mutating func object(_ o: JSONObject, _ path: String, _ hint: String, _ depth: Int) throws(SchemaGrammarError) -> String {
        var props = JSONObject()
        if let p = o["properties"] {
            guard case .object(let obj) = p else { throw .invalidSchema("'properties' at \(path) must be an object") }
            props = obj
        }
        var required: [String] = []
        if let r = o["required"] {
            guard case .array(let names) = r else { throw .invalidSchema("'required' at \(path) must be an array") }
            for n in names {
                guard case .string(let s) = n else { throw .invalidSchema("'required' at \(path) must hold strings") }
                if !required.contains(s) { required.append(s) }
            }
        }
        let extra = o["additionalProperties"] ?? .bool(true)
        switch extra {
        case .bool, .object: break
        default: throw .invalidSchema("'additionalProperties' at \(path) must be a boolean or a schema")
        }
        var members: [(name: String, schema: JSONValue, schemaPath: String, required: Bool)] = []
        for (name, s) in props {
            let isRequired = required.contains(name)
            if s == .bool(false) {
                if isRequired { throw .invalidSchema("property '\(name)' at \(path) is required but its schema is false") }
                continue
            }
            members.append((name, s, "\(path)/properties/\(Self.pointerEscape(name))", isRequired))
        }
        for name in required where props[name] == nil {
            if extra == .bool(false) {
                throw .invalidSchema("required property '\(name)' at \(path) is not allowed by additionalProperties: false")
            }
            members.append((name, extra, "\(path)/additionalProperties", true))
        }
        let w = rules.ws()
        if members.isEmpty {
            if extra == .bool(false) { return rules.container(hint, open: "{", close: "}", item: "", max: 0) }
            let value = try visit(extra, path + "/additionalProperties", Self.join(hint, "value"), depth + 1)
            let key = rules.key()
            let kv = rules.add(Self.join(hint, "kv"), "\(key) \(w) \":\" \(w) \(value)")
            return rules.container(hint, open: "{", close: "}", item: kv, max: GrammarBuilder.defaultMaxItems)
        }
        var kvs: [String] = []
        for m in members {
            let value = try visit(m.schema, m.schemaPath, Self.join(hint, m.name), depth + 1)
            let key = GrammarRules.literal(JSONValue.string(m.name).serialized())
            kvs.append(rules.add(Self.join(hint, m.name + "-kv"), "\(key) \(w) \":\" \(w) \(value)"))
        }
        // after[j]: members j... once one member is written (each needs a leading comma).
        var after = [String?](repeating: nil, count: members.count + 1)
        for j in members.indices.reversed() where j > 0 {
            let tail = after[j + 1].map { " " + $0 } ?? ""
            let body = members[j].required ? "\",\" \(w) \(kvs[j])\(tail)" : "(\",\" \(w) \(kvs[j]))?\(tail)"
            after[j] = rules.add(Self.join(hint, "after-" + members[j].name), body)
        }
        // The first member written is some optional one before the first required, or that one.
        var firsts: [String] = []
        for j in members.indices {
            firsts.append(kvs[j] + (after[j + 1].map { " " + $0 } ?? ""))
            if members[j].required { break }
        }
        let list = rules.add(Self.join(hint, "members"), firsts.joined(separator: " | "))
        let anyRequired = members.contains { $0.required }
        return rules.add(hint, anyRequired ? "\"{\" \(w) \(list) \(w) \"}\"" : "\"{\" \(w) (\(list) \(w))? \"}\"")
    }

    static func join(_ hint: String, _ part: String) -> String { hint.isEmpty ? part : hint + "-" + part }

    static func pointerEscape(_ s: String) -> String {
        s.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
    }
}
