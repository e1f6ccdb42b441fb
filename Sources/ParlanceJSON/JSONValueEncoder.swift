import Foundation

/// Encodes an `Encodable` value straight into a `JSONValue`, members in the order they are
/// encoded (a synthesized `Codable` type: its declaration order). Foundation's
/// `JSONEncoder` went through a byte string that was parsed back, which cost most of a
/// small response's time (`model/status`, which editors poll), and laid members out in a
/// different order on every call.
///
/// Numbers come out as they did through Foundation: a whole `Double` is an integer, URL a
/// string, `Data` base64. A NaN or infinite number is refused, as JSON has none.
struct JSONValueEncoder {
    static func encode(_ value: some Encodable) throws -> JSONValue {
        let root = Slot()
        try root.encode(value, codingPath: [])
        return root.value
    }
}

/// Where one value goes: filled once by a single value, or by a keyed or unkeyed
/// container whose members are slots of their own (nested containers write into them
/// after they are handed out, hence a class).
private final class Slot {
    private enum Content {
        case empty
        case value(JSONValue)
        case object(keys: [String], slots: [String: Slot])
        case array([Slot])
    }
    private var content = Content.empty

    var value: JSONValue {
        switch content {
        case .empty: return .object(JSONObject())
        case .value(let v): return v
        case .object(let keys, let slots): return .object(JSONObject(keys.map { ($0, slots[$0]!.value) }))
        case .array(let slots): return .array(slots.map(\.value))
        }
    }

    func set(_ v: JSONValue) { content = .value(v) }

    /// The slot for `key`, made if new (a key encoded twice keeps its first place).
    func member(_ key: String) -> Slot {
        var (keys, slots): ([String], [String: Slot])
        if case .object(let k, let s) = content { (keys, slots) = (k, s) } else { (keys, slots) = ([], [:]) }
        if let s = slots[key] { return s }
        let s = Slot()
        content = .empty  // drop the references, so appending does not copy
        keys.append(key)
        slots[key] = s
        content = .object(keys: keys, slots: slots)
        return s
    }

    func becomeObject() {
        if case .object = content { return }
        content = .object(keys: [], slots: [:])
    }

    func element() -> Slot {
        var slots: [Slot] = []
        if case .array(let a) = content { slots = a }
        let s = Slot()
        content = .empty
        slots.append(s)
        content = .array(slots)
        return s
    }

    func becomeArray() {
        if case .array = content { return }
        content = .array([])
    }

    var count: Int {
        if case .array(let a) = content { return a.count }
        return 0
    }

    func encode<T: Encodable>(_ v: T, codingPath: [any CodingKey]) throws {
        switch v {
        case let j as JSONValue: set(j)
        case let d as Double: set(try Slot.number(d, codingPath))
        case let f as Float: set(try Slot.number(Double(f), codingPath))
        case let u as URL: set(.string(u.absoluteString))
        case let data as Data: set(.string(data.base64EncodedString()))
        case let d as Decimal: set(try Slot.number(NSDecimalNumber(decimal: d).doubleValue, codingPath))
        default: try v.encode(to: SlotEncoder(slot: self, codingPath: codingPath))
        }
    }

    static func number(_ d: Double, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> JSONValue {
        guard d.isFinite else {
            throw EncodingError.invalidValue(d, .init(codingPath: codingPath(), debugDescription: "\(d) is not a JSON number"))
        }
        if d == d.rounded(), abs(d) < 9_007_199_254_740_992 { return .int(Int(d)) }
        return .double(d)
    }

    static func integer<T: BinaryInteger>(_ i: T) -> JSONValue {
        if let n = Int(exactly: i) { return .int(n) }
        return .double(Double(i))
    }
}

private struct SlotEncoder: Encoder {
    let slot: Slot
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        slot.becomeObject()
        return KeyedEncodingContainer(Keyed<Key>(slot: slot, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        slot.becomeArray()
        return Unkeyed(slot: slot, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { Single(slot: slot, codingPath: codingPath) }
}

private struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }
    init(_ i: Int) { intValue = i }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

private struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let slot: Slot
    let codingPath: [any CodingKey]

    private func put(_ v: JSONValue, _ key: Key) { slot.member(key.stringValue).set(v) }

    mutating func encodeNil(forKey key: Key) throws { put(.null, key) }
    mutating func encode(_ v: Bool, forKey key: Key) throws { put(.bool(v), key) }
    mutating func encode(_ v: String, forKey key: Key) throws { put(.string(v), key) }
    mutating func encode(_ v: Double, forKey key: Key) throws { put(try Slot.number(v, codingPath + [key]), key) }
    mutating func encode(_ v: Float, forKey key: Key) throws { put(try Slot.number(Double(v), codingPath + [key]), key) }
    mutating func encode(_ v: Int, forKey key: Key) throws { put(.int(v), key) }
    mutating func encode(_ v: Int8, forKey key: Key) throws { put(Slot.integer(v), key) }
    mutating func encode(_ v: Int16, forKey key: Key) throws { put(Slot.integer(v), key) }
    mutating func encode(_ v: Int32, forKey key: Key) throws { put(Slot.integer(v), key) }
    mutating func encode(_ v: Int64, forKey key: Key) throws { put(Slot.integer(v), key) }
    mutating func encode(_ v: UInt, forKey key: Key) throws { put(Slot.integer(v), key) }
    mutating func encode(_ v: UInt8, forKey key: Key) throws { put(Slot.integer(v), key) }
    mutating func encode(_ v: UInt16, forKey key: Key) throws { put(Slot.integer(v), key) }
    mutating func encode(_ v: UInt32, forKey key: Key) throws { put(Slot.integer(v), key) }
    mutating func encode(_ v: UInt64, forKey key: Key) throws { put(Slot.integer(v), key) }
    mutating func encode<T: Encodable>(_ v: T, forKey key: Key) throws {
        try slot.member(key.stringValue).encode(v, codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let s = slot.member(key.stringValue)
        s.becomeObject()
        return KeyedEncodingContainer(Keyed<NestedKey>(slot: s, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let s = slot.member(key.stringValue)
        s.becomeArray()
        return Unkeyed(slot: s, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder { SlotEncoder(slot: slot.member("super"), codingPath: codingPath) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { SlotEncoder(slot: slot.member(key.stringValue), codingPath: codingPath + [key]) }
}

private struct Unkeyed: UnkeyedEncodingContainer {
    let slot: Slot
    let codingPath: [any CodingKey]
    var count: Int { slot.count }

    private func next() -> Slot { slot.element() }
    private var key: IndexKey { IndexKey(count) }

    mutating func encodeNil() throws { next().set(.null) }
    mutating func encode(_ v: Bool) throws { next().set(.bool(v)) }
    mutating func encode(_ v: String) throws { next().set(.string(v)) }
    mutating func encode(_ v: Double) throws { let n = try Slot.number(v, codingPath + [key]); next().set(n) }
    mutating func encode(_ v: Float) throws { let n = try Slot.number(Double(v), codingPath + [key]); next().set(n) }
    mutating func encode(_ v: Int) throws { next().set(.int(v)) }
    mutating func encode(_ v: Int8) throws { next().set(Slot.integer(v)) }
    mutating func encode(_ v: Int16) throws { next().set(Slot.integer(v)) }
    mutating func encode(_ v: Int32) throws { next().set(Slot.integer(v)) }
    mutating func encode(_ v: Int64) throws { next().set(Slot.integer(v)) }
    mutating func encode(_ v: UInt) throws { next().set(Slot.integer(v)) }
    mutating func encode(_ v: UInt8) throws { next().set(Slot.integer(v)) }
    mutating func encode(_ v: UInt16) throws { next().set(Slot.integer(v)) }
    mutating func encode(_ v: UInt32) throws { next().set(Slot.integer(v)) }
    mutating func encode(_ v: UInt64) throws { next().set(Slot.integer(v)) }
    mutating func encode<T: Encodable>(_ v: T) throws {
        let path = codingPath + [key]
        try next().encode(v, codingPath: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let path = codingPath + [key]
        let s = next()
        s.becomeObject()
        return KeyedEncodingContainer(Keyed<NestedKey>(slot: s, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = codingPath + [key]
        let s = next()
        s.becomeArray()
        return Unkeyed(slot: s, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        let path = codingPath + [key]
        return SlotEncoder(slot: next(), codingPath: path)
    }
}

private struct Single: SingleValueEncodingContainer {
    let slot: Slot
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { slot.set(.null) }
    mutating func encode(_ v: Bool) throws { slot.set(.bool(v)) }
    mutating func encode(_ v: String) throws { slot.set(.string(v)) }
    mutating func encode(_ v: Double) throws { slot.set(try Slot.number(v, codingPath)) }
    mutating func encode(_ v: Float) throws { slot.set(try Slot.number(Double(v), codingPath)) }
    mutating func encode(_ v: Int) throws { slot.set(.int(v)) }
    mutating func encode(_ v: Int8) throws { slot.set(Slot.integer(v)) }
    mutating func encode(_ v: Int16) throws { slot.set(Slot.integer(v)) }
    mutating func encode(_ v: Int32) throws { slot.set(Slot.integer(v)) }
    mutating func encode(_ v: Int64) throws { slot.set(Slot.integer(v)) }
    mutating func encode(_ v: UInt) throws { slot.set(Slot.integer(v)) }
    mutating func encode(_ v: UInt8) throws { slot.set(Slot.integer(v)) }
    mutating func encode(_ v: UInt16) throws { slot.set(Slot.integer(v)) }
    mutating func encode(_ v: UInt32) throws { slot.set(Slot.integer(v)) }
    mutating func encode(_ v: UInt64) throws { slot.set(Slot.integer(v)) }
    mutating func encode<T: Encodable>(_ v: T) throws { try slot.encode(v, codingPath: codingPath) }
}
