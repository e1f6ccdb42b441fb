import Foundation
#if canImport(ParlanceJSON)
import ParlanceJSON
#endif

/// A `Decoder` that answers every request with a placeholder and records what was asked:
/// which keys (in call order), of which types, via `decode` (required) or
/// `decodeIfPresent` (optional). `SchemaDeriver` turns the record into a JSON Schema.
///
/// Unkeyed containers pretend to hold exactly one element, so the element type is seen once.
/// A key checked with `contains(_:)` before it is decoded counts as optional (the
/// "decode with a default" idiom); `decodeNil` marks a value nullable.
final class RecordingDecoder: Decoder {
    enum Shape {
        case none
        case object(ObjectRecord)
        case array(ArrayRecord)
        case single(SingleRecord)
    }

    let context: DerivationContext
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    private(set) var shape: Shape = .none

    init(_ context: DerivationContext, codingPath: [any CodingKey]) {
        self.context = context
        self.codingPath = codingPath
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let record: ObjectRecord
        if case .object(let r) = shape { record = r } else { record = ObjectRecord(); shape = .object(record) }
        return KeyedDecodingContainer(KeyedRecorder<Key>(decoder: self, record: record))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let record: ArrayRecord
        if case .array(let r) = shape { record = r } else { record = ArrayRecord(); shape = .array(record) }
        return UnkeyedRecorder(decoder: self, record: record)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        let record: SingleRecord
        if case .single(let r) = shape { record = r } else { record = SingleRecord(); shape = .single(record) }
        return SingleRecorder(decoder: self, record: record)
    }

    /// The schema of what was asked for. A type that asked for nothing (an empty struct)
    /// is an object with no properties.
    func render() -> JSONValue {
        switch shape {
        case .none, .object:
            let record: ObjectRecord
            if case .object(let r) = shape { record = r } else { record = ObjectRecord() }
            var props = JSONObject()
            var required: [JSONValue] = []
            for p in record.properties {
                var s = p.source.render()
                if p.nullable { s = SchemaDeriver.nullable(s) }
                props[p.name] = s
                if p.required && !record.probed.contains(p.name) { required.append(.string(p.name)) }
            }
            var o = JSONObject([("type", "object"), ("properties", .object(props))])
            if !required.isEmpty { o["required"] = .array(required) }
            o["additionalProperties"] = false
            return .object(o)
        case .array(let r):
            var items = r.items?.render() ?? JSONValue.object(JSONObject())
            if r.nullable { items = SchemaDeriver.nullable(items) }
            return .object(JSONObject([("type", "array"), ("items", items)]))
        case .single(let r):
            let s = r.schema ?? .object(JSONObject())
            return r.nullable ? SchemaDeriver.nullable(s) : s
        }
    }

    /// Derives `T`: its schema, and a placeholder value when one could be built.
    func derive<T: Decodable>(_ type: T.Type, at path: [any CodingKey]) -> (schema: JSONValue, value: T?) {
        let derived = context.derive(T.self, codingPath: path)
        return (derived.schema, derived.value as? T)
    }

    /// A placeholder that could not be built ends the recording of the enclosing type.
    static func need<T>(_ value: T?, _ path: [any CodingKey]) throws -> T {
        guard let value else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: path, debugDescription: "schema derivation could not build a placeholder \(T.self)"))
        }
        return value
    }
}

/// Where a recorded schema comes from: already known, or a nested container still recording.
enum SchemaSource {
    case fixed(JSONValue)
    case nested(RecordingDecoder)

    func render() -> JSONValue {
        switch self {
        case .fixed(let s): return s
        case .nested(let d): return d.render()
        }
    }
}

final class ObjectRecord {
    struct Property {
        var name: String
        var source: SchemaSource
        var required: Bool
        var nullable: Bool
        /// Seen only through `decodeNil`: the next recording supplies the schema.
        var provisional = false
    }
    private(set) var properties: [Property] = []
    private var index: [String: Int] = [:]
    /// Keys checked with `contains(_:)`: decoded conditionally, so not required.
    var probed: Set<String> = []

    /// The first recording of a key fixes its schema; any required decode makes it required.
    func record(_ name: String, _ source: SchemaSource, required: Bool) {
        if let i = index[name] {
            if properties[i].provisional {
                properties[i].source = source
                properties[i].provisional = false
            }
            properties[i].required = properties[i].required || required
            return
        }
        index[name] = properties.count
        properties.append(Property(name: name, source: source, required: required, nullable: false))
    }

    func markNullable(_ name: String) {
        if index[name] == nil {
            record(name, .fixed(.object(JSONObject())), required: true)
            properties[index[name]!].provisional = true
        }
        properties[index[name]!].nullable = true
    }
}

final class ArrayRecord {
    var items: SchemaSource?
    var nullable = false
    var decoded = 0
}

final class SingleRecord {
    var schema: JSONValue?
    var nullable = false
}

struct KeyedRecorder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: RecordingDecoder
    let record: ObjectRecord
    var codingPath: [any CodingKey] { decoder.codingPath }
    var allKeys: [Key] { [] }

    func contains(_ key: Key) -> Bool {
        record.probed.insert(key.stringValue)
        return true
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        record.markNullable(key.stringValue)
        return false
    }

    /// Records the key, then answers with a placeholder (nil for an optional key without one).
    private func take<T: Decodable>(_ type: T.Type, _ key: Key, required: Bool) throws -> T? {
        let path = codingPath + [key]
        let (schema, value) = decoder.derive(T.self, at: path)
        record.record(key.stringValue, .fixed(schema), required: required)
        return required ? try RecordingDecoder.need(value, path) : value
    }

    private func must<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T {
        try RecordingDecoder.need(take(T.self, key, required: true), codingPath + [key])
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try must(T.self, key) }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try must(type, key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try must(type, key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try must(type, key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try must(type, key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try must(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try must(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try must(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try must(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try must(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try must(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try must(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try must(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try must(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try must(type, key) }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { try take(T.self, key, required: false) }
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try take(type, key, required: false) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try take(type, key, required: false) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try take(type, key, required: false) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try take(type, key, required: false) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try take(type, key, required: false) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try take(type, key, required: false) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try take(type, key, required: false) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try take(type, key, required: false) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try take(type, key, required: false) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try take(type, key, required: false) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try take(type, key, required: false) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try take(type, key, required: false) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try take(type, key, required: false) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try take(type, key, required: false) }

    private func child(_ key: Key) -> RecordingDecoder {
        let d = RecordingDecoder(decoder.context, codingPath: codingPath + [key])
        record.record(key.stringValue, .nested(d), required: true)
        return d
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try child(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try child(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { decoder }
    func superDecoder(forKey key: Key) throws -> any Decoder { child(key) }
}

struct UnkeyedRecorder: UnkeyedDecodingContainer {
    let decoder: RecordingDecoder
    let record: ArrayRecord
    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { 1 }
    var isAtEnd: Bool { record.decoded >= 1 }
    var currentIndex: Int { record.decoded }

    mutating func decodeNil() throws -> Bool {
        record.nullable = true
        return false
    }

    private mutating func take<T: Decodable>(_ type: T.Type) throws -> T {
        let path = codingPath + [AnyCodingKey(intValue: currentIndex)!]
        let (schema, value) = decoder.derive(T.self, at: path)
        if record.items == nil { record.items = .fixed(schema) }
        record.decoded += 1
        return try RecordingDecoder.need(value, path)
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try take(T.self) }
    mutating func decode(_ type: Bool.Type) throws -> Bool { try take(type) }
    mutating func decode(_ type: String.Type) throws -> String { try take(type) }
    mutating func decode(_ type: Double.Type) throws -> Double { try take(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try take(type) }
    mutating func decode(_ type: Int.Type) throws -> Int { try take(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try take(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try take(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try take(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try take(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try take(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try take(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try take(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try take(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try take(type) }

    private mutating func child() -> RecordingDecoder {
        let d = RecordingDecoder(decoder.context, codingPath: codingPath + [AnyCodingKey(intValue: currentIndex)!])
        if record.items == nil { record.items = .nested(d) }
        record.decoded += 1
        return d
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try child().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try child().unkeyedContainer() }
    mutating func superDecoder() throws -> any Decoder { child() }
}

struct SingleRecorder: SingleValueDecodingContainer {
    let decoder: RecordingDecoder
    let record: SingleRecord
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool {
        record.nullable = true
        return false
    }

    private func take<T: Decodable>(_ type: T.Type) throws -> T {
        let (schema, value) = decoder.derive(T.self, at: codingPath)
        if record.schema == nil { record.schema = schema }
        return try RecordingDecoder.need(value, codingPath)
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T { try take(T.self) }
    func decode(_ type: Bool.Type) throws -> Bool { try take(type) }
    func decode(_ type: String.Type) throws -> String { try take(type) }
    func decode(_ type: Double.Type) throws -> Double { try take(type) }
    func decode(_ type: Float.Type) throws -> Float { try take(type) }
    func decode(_ type: Int.Type) throws -> Int { try take(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try take(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try take(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try take(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try take(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try take(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try take(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try take(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try take(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try take(type) }
}
