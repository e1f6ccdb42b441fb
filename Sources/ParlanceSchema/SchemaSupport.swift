import Foundation
#if canImport(ParlanceJSON)
import ParlanceJSON
#endif

/// Helpers shared by the validator and the grammar builder.
enum SchemaSupport {
    /// JSON equality as JSON Schema defines it: numbers by value (`1 == 1.0`), objects
    /// regardless of key order.
    static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.int(let x), .int(let y)): return x == y
        case (.int, .double), (.double, .int), (.double, .double):
            return compare(a, b) == .orderedSame
        case (.array(let x), .array(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { equal($0, $1) }
        case (.object(let x), .object(let y)):
            guard x.count == y.count else { return false }
            for (k, v) in x {
                guard let w = y[k], equal(v, w) else { return false }
            }
            return true
        default: return a == b
        }
    }

    /// Numeric comparison, exact between integers.
    static func compare(_ a: JSONValue, _ b: JSONValue) -> ComparisonResult? {
        if case .int(let x) = a, case .int(let y) = b { return x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame }
        guard let x = a.doubleValue, let y = b.doubleValue else { return nil }
        return x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
    }

    static func isNumber(_ v: JSONValue) -> Bool {
        switch v {
        case .int, .double: return true
        default: return false
        }
    }

    /// Whether `v` is an instance of the JSON Schema type `name`.
    static func isInstance(_ v: JSONValue, of name: String) -> Bool {
        switch (name, v) {
        case ("null", .null), ("boolean", .bool), ("string", .string), ("array", .array), ("object", .object): return true
        case ("number", .int), ("number", .double), ("integer", .int): return true
        case ("integer", .double(let d)): return d.isFinite && d.rounded() == d
        default: return false
        }
    }

    /// A number for a message: integral values without a fraction.
    static func format(_ v: JSONValue) -> String {
        switch v {
        case .int(let i): return String(i)
        case .double(let d): return d.isFinite && d.rounded() == d && abs(d) < 1e15 ? String(Int(d)) : String(d)
        default: return render(v)
        }
    }

    /// A value for a message: compact JSON, cut at 60 characters.
    static func render(_ v: JSONValue) -> String {
        if case .int = v { return format(v) }
        if case .double = v { return format(v) }
        let s = v.serialized()
        guard s.count > 60 else { return s }
        return String(s.prefix(57)) + "…"
    }

    /// An enum member in a list: strings bare, the rest as JSON.
    static func listItem(_ v: JSONValue) -> String {
        if case .string(let s) = v { return s.count > 60 ? String(s.prefix(57)) + "…" : s }
        return render(v)
    }

    /// The number a keyword holds, if it is one.
    static func number(_ v: JSONValue?) -> JSONValue? {
        guard let v, isNumber(v) else { return nil }
        return v
    }

    /// A non-negative integer keyword (`minLength`, `maxItems`…), if it is one.
    static func count(_ v: JSONValue?) -> Int? {
        guard let v, isNumber(v), let i = v.intValue, i >= 0 else { return nil }
        return i
    }

    /// The types a schema without `type` implies by the keywords it holds (`properties` →
    /// object…), in a fixed order; empty when none (any value).
    static func impliedTypes(_ o: JSONObject) -> [String] {
        let implied: [(String, [String])] = [
            ("object", ["properties", "required", "additionalProperties"]), ("array", ["items", "minItems", "maxItems"]),
            ("string", ["minLength", "maxLength"]),
            ("number", ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]),
        ]
        return implied.filter { _, keys in keys.contains { o[$0] != nil } }.map(\.0)
    }

    /// Keywords that never constrain: ignored by the validator and the grammar builder.
    static let annotations: Set<String> = [
        "title", "description", "examples", "default", "$schema", "$id", "$comment", "format",
        "contentEncoding", "contentMediaType", "readOnly", "writeOnly", "deprecated",
    ]

    /// Keywords the grammar builder cannot express.
    static let unsupported: Set<String> = [
        "$ref", "$defs", "definitions", "$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef",
        "$recursiveAnchor", "$vocabulary", "allOf", "not", "if", "then", "else", "patternProperties",
        "dependentRequired", "dependentSchemas", "dependencies", "pattern", "propertyNames", "contains",
        "minContains", "maxContains", "minProperties", "maxProperties", "prefixItems", "additionalItems",
        "unevaluatedProperties", "unevaluatedItems", "multipleOf",
    ]
}
