import Foundation

/// `JSONValue` as a Codable value (for free-form fields such as a schema or parsed
/// content), and bridges between `JSONValue` and typed Codable values.
extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        // Decoded from a JSONValue (`decode(_:)`): the value at this path in the source, with
        // its members in the order they were written (Foundation's keyed containers forget
        // it, and a client's schema lays out its grammar in that order).
        if let source = decoder.userInfo[JSONValue.sourceKey] as? SourceBox, let v = source.value.at(decoder.codingPath) {
            self = v
            return
        }
        if var a = try? decoder.unkeyedContainer() {
            var out: [JSONValue] = []
            while !a.isAtEnd { out.append(try a.decode(JSONValue.self)) }
            self = .array(out)
            return
        }
        if let k = try? decoder.container(keyedBy: AnyCodingKey.self) {
            var o = JSONObject()
            for key in k.allKeys { o[key.stringValue] = try k.decode(JSONValue.self, forKey: key) }
            self = .object(o)
            return
        }
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let i = try? c.decode(Int.self) { self = .int(i) }
        else if let d = try? c.decode(Double.self) { self = .double(d) }
        else { self = .string(try c.decode(String.self)) }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null: var c = encoder.singleValueContainer(); try c.encodeNil()
        case .bool(let b): var c = encoder.singleValueContainer(); try c.encode(b)
        case .int(let i): var c = encoder.singleValueContainer(); try c.encode(i)
        case .double(let d): var c = encoder.singleValueContainer(); try c.encode(d)
        case .string(let s): var c = encoder.singleValueContainer(); try c.encode(s)
        case .array(let a):
            var c = encoder.unkeyedContainer()
            for v in a { try c.encode(v) }
        case .object(let o):
            var c = encoder.container(keyedBy: AnyCodingKey.self)
            for (k, v) in o { try c.encode(v, forKey: AnyCodingKey(k)) }
        }
    }

    /// Encodes any Encodable value into a `JSONValue`, members in the order encoded.
    public init(encoding value: some Encodable) throws {
        self = try JSONValueEncoder.encode(value)
    }

    /// Decodes this value into a typed Decodable value. Free-form `JSONValue` fields keep
    /// their members' order.
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        let d = JSONDecoder()
        d.userInfo[JSONValue.sourceKey] = SourceBox(self)
        return try d.decode(T.self, from: Data(serialized().utf8))
    }

    static let sourceKey = CodingUserInfoKey(rawValue: "parlance.jsonvalue.source")!
    final class SourceBox: Sendable {
        let value: JSONValue
        init(_ value: JSONValue) { self.value = value }
    }

    /// The value at a coding path (object members by name, array elements by index).
    func at(_ path: [any CodingKey]) -> JSONValue? {
        var v = self
        for k in path {
            switch v {
            case .object(let o):
                guard let next = o[k.stringValue] else { return nil }
                v = next
            case .array(let a):
                guard let i = k.intValue, a.indices.contains(i) else { return nil }
                v = a[i]
            default: return nil
            }
        }
        return v
    }
}

public struct AnyCodingKey: CodingKey, Hashable, Sendable {
    public var stringValue: String
    public var intValue: Int?
    public init(_ s: String) { stringValue = s }
    public init?(stringValue: String) { self.stringValue = stringValue }
    public init?(intValue: Int) { self.stringValue = String(intValue); self.intValue = intValue }
}

extension DecodingError {
    /// A one-line description naming the JSON path, for JSON-RPC error messages.
    public var pathDescription: String {
        func path(_ p: [any CodingKey]) -> String {
            var s = ""
            for k in p {
                if let i = k.intValue { s += "[\(i)]" } else { s += s.isEmpty ? k.stringValue : "." + k.stringValue }
            }
            return s.isEmpty ? "(root)" : s
        }
        switch self {
        case .keyNotFound(let k, let c): return "\(path(c.codingPath + [k])): missing required field"
        case .typeMismatch(let t, let c): return "\(path(c.codingPath)): expected \(t)"
        case .valueNotFound(let t, let c): return "\(path(c.codingPath)): expected \(t), got null"
        case .dataCorrupted(let c): return "\(path(c.codingPath)): \(c.debugDescription)"
        @unknown default: return "\(self)"
        }
    }
}
