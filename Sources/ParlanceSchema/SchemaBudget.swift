import Foundation
#if canImport(ParlanceJSON)
import ParlanceJSON
#endif

/// The longest compact JSON text a schema's grammar admits, and a tighter schema whose
/// every sentence fits a character budget. Used when a generation ran out of tokens
/// before its JSON was complete: the retry's grammar admits only texts that fit the token
/// budget at the caller's chars-per-token floor.
///
/// The size is an upper bound in characters, counting one character per separator's
/// whitespace and per escape (as the grammar does). Tightening scales every string's
/// `maxLength` and every array's `maxItems` by the same factor, never below their
/// `minLength` / `minItems`, so what the tighter schema admits still validates against
/// the original one.
public enum SchemaBudget {
    /// The longest value the grammar for `schema` admits, in characters.
    public static func maxChars(_ schema: JSONValue) -> Int { size(schema, depth: 0) }

    /// `schema` with its strings and arrays shrunk until `maxChars` is at most `chars`
    /// (or as far as the minimums allow). `schema` itself when it already fits.
    public static func fitting(_ schema: JSONValue, chars: Int) -> JSONValue {
        guard maxChars(schema) > chars else { return schema }
        var (lo, hi) = (0.0, 1.0)
        for _ in 0..<24 {
            let mid = (lo + hi) / 2
            if maxChars(scaled(schema, mid)) <= chars { lo = mid } else { hi = mid }
        }
        return scaled(schema, lo)
    }

    static func scaled(_ schema: JSONValue, _ f: Double) -> JSONValue {
        guard case .object(var o) = schema else { return schema }
        // A literal is written as it stands: none of its bounds, nor its items' or properties'
        // bounds, is scaled (a shorter `maxLength` on a `const` list's items would leave no
        // value that satisfies the schema).
        guard o["enum"] == nil, o["const"] == nil else { return schema }
        if case .object(var props)? = o["properties"] {
            for (k, v) in props { props[k] = scaled(v, f) }
            o["properties"] = .object(props)
        }
        for key in ["anyOf", "oneOf"] {
            if case .array(let alts)? = o[key] { o[key] = .array(alts.map { scaled($0, f) }) }
        }
        for key in ["items", "additionalProperties"] {
            if let v = o[key], case .object = v { o[key] = scaled(v, f) }
        }
        let types = typeNames(o)
        if types.contains("string") {
            let min = SchemaSupport.count(o["minLength"]) ?? 0
            let max = stringMax(o)
            o["maxLength"] = .int(Swift.max(min, Int((Double(max) * f).rounded(.down))))
        }
        if types.contains("array") {
            let min = SchemaSupport.count(o["minItems"]) ?? 0
            let max = SchemaSupport.count(o["maxItems"]) ?? Swift.max(GrammarBuilder.defaultMaxItems, min)
            o["maxItems"] = .int(Swift.max(min, Int((Double(max) * f).rounded(.up))))
        }
        return .object(o)
    }

    private static func size(_ schema: JSONValue, depth: Int) -> Int {
        guard depth <= GrammarBuilder.maxSchemaDepth else { return 0 }
        guard case .object(let o) = schema else { return anyValue(GrammarBuilder.anyValueDepth) }
        var alternatives: [JSONValue] = []
        for key in ["anyOf", "oneOf"] { if case .array(let a)? = o[key] { alternatives += a } }
        if !alternatives.isEmpty { return alternatives.map { size($0, depth: depth + 1) }.max() ?? 0 }
        if let c = o["const"] { return c.serialized().count }
        if case .array(let values)? = o["enum"] { return values.map { $0.serialized().count }.max() ?? 0 }
        let types = typeNames(o)
        if types.isEmpty { return anyValue(GrammarBuilder.anyValueDepth) }
        return types.map { t -> Int in
            switch t {
            case "null": return 4
            case "boolean": return 5
            case "string": return stringMax(o) + 2
            case "integer", "number": return 22
            case "array":
                let n = SchemaSupport.count(o["maxItems"]) ?? Swift.max(GrammarBuilder.defaultMaxItems, SchemaSupport.count(o["minItems"]) ?? 0)
                return 2 + n * (size(o["items"] ?? .bool(true), depth: depth + 1) + 2)
            default:
                guard case .object(let props)? = o["properties"], !props.isEmpty else {
                    if o["additionalProperties"] == .bool(false) { return 2 }
                    let value = size(o["additionalProperties"] ?? .bool(true), depth: depth + 1)
                    return 2 + GrammarBuilder.defaultMaxItems * (GrammarBuilder.defaultMaxKeyLength + 5 + value)
                }
                return 2 + props.reduce(0) { $0 + $1.key.count + 5 + size($1.value, depth: depth + 1) }
            }
        }.max() ?? 0
    }

    private static func stringMax(_ o: JSONObject) -> Int {
        Swift.min(SchemaSupport.count(o["maxLength"]) ?? GrammarBuilder.defaultMaxStringLength, GrammarBuilder.maxRepetition)
    }

    /// Any JSON value `depth` levels deep, as the grammar's `value-N` rules admit it.
    private static func anyValue(_ depth: Int) -> Int {
        let scalar = GrammarBuilder.defaultMaxStringLength + 2
        guard depth > 0 else { return scalar }
        return Swift.max(scalar, 2 + GrammarBuilder.defaultMaxItems * (GrammarBuilder.defaultMaxKeyLength + 5 + anyValue(depth - 1)))
    }

    private static func typeNames(_ o: JSONObject) -> [String] {
        switch o["type"] {
        case .string(let t)?: return [t]
        case .array(let ts)?: return ts.compactMap { $0.stringValue }
        default: return SchemaSupport.impliedTypes(o)
        }
    }
}
