import Foundation
#if canImport(ParlanceJSON)
import ParlanceJSON
#endif

/// Derives a JSON Schema from a `Decodable` type by decoding it from a `RecordingDecoder`.
///
/// Mapping: `String` → string; `Bool` → boolean; `Int`, `Int64`, `UInt`… → integer (fixed-width
/// types add their range; unsigned ones `minimum: 0`); `Double`, `Float`, `Decimal` → number;
/// `JSONValue` → `{}` (any value); `[T]` → array with `items`; `[String: T]` → object with
/// `additionalProperties`; `SchemaEnum` → string `enum`; `URL`, `UUID` → string with `format`;
/// `Data` → base64 string; other `Decodable` types → an inline object schema (no `$ref`),
/// with `properties` in decode order, `required` for keys read with `decode` (not
/// `decodeIfPresent`), and `"additionalProperties": false`. `decode(T?.self, forKey:)` gives a
/// required, nullable property. Recursive types stop at the repeated type with `{}`.
///
/// `Schematic` types add `title` (object schemas) and `description`, and their
/// `schemaHints` (see `SchemaHint` for where each hint lands).
///
/// `CaseIterable` enums with `String` or `Int` raw values get an `enum` schema too.
///
/// Limits: the type's `init(from:)` runs with placeholder values (`""`, `0`, `false`, the
/// first enum case, one-element arrays); an init that throws on them stops recording at that
/// point. Raw-value enums that are not `CaseIterable` cannot be built from a placeholder, so
/// their schema is the raw type's and recording of the enclosing type stops there (an
/// optional one is recorded and answered with nil): make them `SchemaEnum`.
///
/// Output is deterministic: the same type gives a byte-identical serialization. Results are
/// cached per type.
public enum SchemaDeriver {
    public static func schema<T: Decodable>(for type: T.Type) -> JSONValue {
        let key = ObjectIdentifier(T.self)
        if let s = cache.get(key) { return s }
        let s = canonical(DerivationContext().derive(T.self, codingPath: []).schema)
        cache.set(key, s)
        return s
    }

    /// The schema also admitting `null`.
    static func nullable(_ schema: JSONValue) -> JSONValue {
        guard case .object(var o) = schema, let type = o["type"] else { return schema }
        switch type {
        case .string(let t) where t != "null": o["type"] = [.string(t), "null"]
        case .array(let ts) where !ts.contains("null"): o["type"] = .array(ts + ["null"])
        default: return schema
        }
        if case .array(let e)? = o["enum"], !e.contains(.null) { o["enum"] = .array(e + [.null]) }
        return .object(o)
    }

    // MARK: Hints

    static func apply(_ h: SchemaHint, to schema: JSONValue) -> JSONValue {
        guard case .object(var o) = schema else { return schema }
        if let d = h.description { o["description"] = .string(d) }
        if has(o, type: "array") {
            if let n = h.minItems { o["minItems"] = .int(n) }
            if let n = h.maxItems { o["maxItems"] = .int(n) }
        }
        return .object(applyValueHints(h, to: o))
    }

    private static func applyValueHints(_ h: SchemaHint, to schema: JSONObject) -> JSONObject {
        var o = schema
        if has(o, type: "array") {
            if case .object(let items)? = o["items"] { o["items"] = .object(applyValueHints(h, to: items)) }
            return o
        }
        if has(o, type: "object") {
            if case .object(let values)? = o["additionalProperties"] {
                o["additionalProperties"] = .object(applyValueHints(h, to: values))
            }
            return o
        }
        guard o["type"] != nil else { return o }
        if var values = h.enumValues {
            if has(o, type: "null"), !values.contains(.null) { values.append(.null) }
            o["enum"] = .array(values)
        }
        if let f = h.format { o["format"] = .string(f) }
        if let m = h.minimum { o["minimum"] = number(m) }
        if let m = h.maximum { o["maximum"] = number(m) }
        if let n = h.minLength { o["minLength"] = .int(n) }
        if let n = h.maxLength { o["maxLength"] = .int(n) }
        if let p = h.pattern { o["pattern"] = .string(p) }
        return o
    }

    static func has(_ o: JSONObject, type name: String) -> Bool {
        switch o["type"] {
        case .string(let t)?: return t == name
        case .array(let ts)?: return ts.contains(.string(name))
        default: return false
        }
    }

    /// Integral values as `.int`, so bounds print as `2`, not `2.0`.
    static func number(_ d: Double) -> JSONValue {
        if d.isFinite, d.rounded() == d, abs(d) < 9.0e15 { return .int(Int(d)) }
        return .double(d)
    }

    // MARK: Canonical key order

    private static let keyOrder = [
        "type", "title", "description", "enum", "const", "format", "contentEncoding", "minimum", "maximum",
        "minLength", "maxLength", "items", "minItems", "maxItems", "properties", "required", "additionalProperties",
    ]

    /// Schema keywords in one fixed order (properties keep declaration order), for stable,
    /// readable output.
    static func canonical(_ schema: JSONValue) -> JSONValue {
        guard case .object(let o) = schema else { return schema }
        var out = JSONObject()
        func put(_ k: String, _ v: JSONValue) {
            switch k {
            case "items", "additionalProperties": out[k] = canonical(v)
            case "properties":
                guard case .object(let props) = v else { out[k] = v; return }
                var p = JSONObject()
                for (name, s) in props { p[name] = canonical(s) }
                out[k] = .object(p)
            default: out[k] = v
            }
        }
        for k in keyOrder { if let v = o[k] { put(k, v) } }
        for (k, v) in o where out[k] == nil { put(k, v) }
        return .object(out)
    }

    private static let cache = SchemaCache()
}

private final class SchemaCache: @unchecked Sendable {
    private let lock = NSLock()
    private var store: [ObjectIdentifier: JSONValue] = [:]
    func get(_ k: ObjectIdentifier) -> JSONValue? { lock.withLock { store[k] } }
    func set(_ k: ObjectIdentifier, _ v: JSONValue) { lock.withLock { store[k] = v } }
}

/// One derivation: the types being derived (to stop recursion) and the nesting depth.
final class DerivationContext {
    struct Derived {
        var schema: JSONValue
        var value: Any?
    }

    static let maxDepth = 32
    private var inProgress: Set<ObjectIdentifier> = []
    private var depth = 0

    func derive(_ type: any Decodable.Type, codingPath: [any CodingKey]) -> Derived {
        if let p = Self.primitive(type) { return p }
        if let t = type as? any SchemaProviding.Type { return Derived(schema: t.providedSchema, value: t.schemaPlaceholder) }
        if let e = type as? any SchemaEnum.Type {
            var o = JSONObject([("type", "string"), ("enum", .array(e.schemaRawValues.map { .string($0) }))])
            if let d = e.schemaDescription { o["description"] = .string(d) }
            return Derived(schema: .object(o), value: e.schemaPlaceholder)
        }
        if let c = type as? any CaseIterable.Type, let e = Self.rawEnum(c) {
            var o = e.schema
            if let d = (type as? any Schematic.Type)?.schemaDescription { o["description"] = .string(d) }
            return Derived(schema: .object(o), value: e.first)
        }
        let id = ObjectIdentifier(type)
        if inProgress.contains(id) || depth >= Self.maxDepth { return Derived(schema: .object(JSONObject()), value: nil) }
        inProgress.insert(id)
        depth += 1
        defer {
            inProgress.remove(id)
            depth -= 1
        }
        if let o = type as? any SchemaOptionalMarker.Type {
            let inner = derive(o.schemaWrapped, codingPath: codingPath)
            return Derived(schema: SchemaDeriver.nullable(inner.schema), value: o.schemaNone)
        }
        if let a = type as? any SchemaArrayMarker.Type {
            let element = derive(a.schemaElement, codingPath: codingPath + [AnyCodingKey(intValue: 0)!])
            return Derived(schema: ["type": "array", "items": element.schema], value: a.schemaArray(element.value))
        }
        if let m = type as? any SchemaDictionaryMarker.Type {
            let v = derive(m.schemaValue, codingPath: codingPath + [AnyCodingKey("*")])
            let schema: JSONValue = ["type": "object", "additionalProperties": v.schema]
            return Derived(schema: schema, value: m.schemaEmpty)
        }
        let decoder = RecordingDecoder(self, codingPath: codingPath)
        let value = try? type.init(from: decoder)
        var schema = decoder.render()
        if let s = type as? any Schematic.Type, case .object(var o) = schema {
            switch decoder.shape {
            case .none, .object: o["title"] = .string(s.schemaTitle)
            case .array, .single: break
            }
            if let d = s.schemaDescription { o["description"] = .string(d) }
            if case .object(var props)? = o["properties"], !s.schemaHints.isEmpty {
                for name in props.keys {
                    if let h = s.schemaHints[name] { props[name] = SchemaDeriver.apply(h, to: props[name]!) }
                }
                o["properties"] = .object(props)
            }
            schema = .object(o)
        }
        return Derived(schema: schema, value: value)
    }

    /// A `CaseIterable` raw-value enum (String or Int raw values) as an `enum` schema.
    private static func rawEnum(_ type: any CaseIterable.Type) -> (schema: JSONObject, first: Any?)? {
        func cases<C: CaseIterable>(_ t: C.Type) -> [Any] { t.allCases.map { $0 as Any } }
        let all = cases(type)
        let raws = all.compactMap { ($0 as? any RawRepresentable)?.rawValue }
        guard !all.isEmpty, raws.count == all.count else { return nil }
        if let strings = raws as? [String] {
            return (JSONObject([("type", "string"), ("enum", .array(strings.map { .string($0) }))]), all.first)
        }
        if let ints = raws as? [Int] {
            return (JSONObject([("type", "integer"), ("enum", .array(ints.map { .int($0) }))]), all.first)
        }
        return nil
    }

    private static func primitive(_ t: any Decodable.Type) -> Derived? {
        func p(_ type: String, _ value: Any, _ extra: [(String, JSONValue)] = []) -> Derived {
            Derived(schema: .object(JSONObject([("type", .string(type))] + extra)), value: value)
        }
        func range(_ lo: Int, _ hi: Int?) -> [(String, JSONValue)] {
            [("minimum", .int(lo))] + (hi.map { [("maximum", .int($0))] } ?? [])
        }
        switch ObjectIdentifier(t) {
        case ObjectIdentifier(String.self): return p("string", "")
        case ObjectIdentifier(Bool.self): return p("boolean", false)
        case ObjectIdentifier(Int.self): return p("integer", 0 as Int)
        case ObjectIdentifier(Int64.self): return p("integer", 0 as Int64)
        case ObjectIdentifier(Int32.self): return p("integer", 0 as Int32, range(Int(Int32.min), Int(Int32.max)))
        case ObjectIdentifier(Int16.self): return p("integer", 0 as Int16, range(Int(Int16.min), Int(Int16.max)))
        case ObjectIdentifier(Int8.self): return p("integer", 0 as Int8, range(Int(Int8.min), Int(Int8.max)))
        case ObjectIdentifier(UInt.self): return p("integer", 0 as UInt, range(0, nil))
        case ObjectIdentifier(UInt64.self): return p("integer", 0 as UInt64, range(0, nil))
        case ObjectIdentifier(UInt32.self): return p("integer", 0 as UInt32, range(0, Int(UInt32.max)))
        case ObjectIdentifier(UInt16.self): return p("integer", 0 as UInt16, range(0, Int(UInt16.max)))
        case ObjectIdentifier(UInt8.self): return p("integer", 0 as UInt8, range(0, Int(UInt8.max)))
        case ObjectIdentifier(Double.self): return p("number", 0 as Double)
        case ObjectIdentifier(Float.self): return p("number", 0 as Float)
        case ObjectIdentifier(Decimal.self): return p("number", Decimal(0))
        case ObjectIdentifier(URL.self): return p("string", URL(string: "about:blank")!, [("format", "uri")])
        case ObjectIdentifier(UUID.self): return p("string", UUID(), [("format", "uuid")])
        case ObjectIdentifier(Data.self): return p("string", Data(), [("contentEncoding", "base64")])
        case ObjectIdentifier(JSONValue.self): return Derived(schema: .object(JSONObject()), value: JSONValue.null)
        default: return nil
        }
    }
}
