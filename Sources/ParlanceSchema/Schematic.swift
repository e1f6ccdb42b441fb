import Foundation
#if canImport(ParlanceJSON)
import ParlanceJSON
#endif

/// Extra JSON Schema facts about one property that its Swift type cannot say.
///
/// Hints are keyed by the property's CodingKey string in `Schematic.schemaHints`.
/// How `SchemaDeriver` applies them:
/// - `description` goes on the property's own schema (it overrides a nested type's
///   `schemaDescription`).
/// - `minItems` / `maxItems` go on the property's schema when it is an array (else ignored).
/// - The value hints — `minLength`, `maxLength`, `minimum`, `maximum`, `enumValues`, `format` —
///   go on the property's schema, except for arrays and dictionaries: there they go on the
///   innermost element (array `items`, dictionary `additionalProperties`, through any
///   nesting), so `[String]` with `minLength: 2` means "every string at least 2 long".
///   They are ignored where the target is an object schema.
public struct SchemaHint: Sendable {
    public var description: String?
    public var minItems: Int?
    public var maxItems: Int?
    public var minLength: Int?
    public var maxLength: Int?
    public var minimum: Double?
    public var maximum: Double?
    public var enumValues: [JSONValue]?
    public var format: String?
    /// A regular expression the string must match (validation only; grammars refuse `pattern`).
    public var pattern: String?

    public init(
        description: String? = nil, minItems: Int? = nil, maxItems: Int? = nil, minLength: Int? = nil,
        maxLength: Int? = nil, minimum: Double? = nil, maximum: Double? = nil, enumValues: [JSONValue]? = nil,
        format: String? = nil, pattern: String? = nil
    ) {
        self.pattern = pattern
        self.description = description
        self.minItems = minItems
        self.maxItems = maxItems
        self.minLength = minLength
        self.maxLength = maxLength
        self.minimum = minimum
        self.maximum = maximum
        self.enumValues = enumValues
        self.format = format
    }

    public static func description(_ text: String) -> SchemaHint { SchemaHint(description: text) }
    public static func range(_ minimum: Double?, _ maximum: Double?, description: String? = nil) -> SchemaHint {
        SchemaHint(description: description, minimum: minimum, maximum: maximum)
    }
    public static func length(_ minLength: Int?, _ maxLength: Int?, description: String? = nil) -> SchemaHint {
        SchemaHint(description: description, minLength: minLength, maxLength: maxLength)
    }
    public static func items(_ minItems: Int?, _ maxItems: Int?, description: String? = nil) -> SchemaHint {
        SchemaHint(description: description, minItems: minItems, maxItems: maxItems)
    }
    public static func oneOf(_ values: [JSONValue], description: String? = nil) -> SchemaHint {
        SchemaHint(description: description, enumValues: values)
    }
}

/// A type whose JSON Schema is derived from its `Decodable` conformance.
public protocol Schematic: Decodable {
    /// Keyed by CodingKey string. Default: none.
    static var schemaHints: [String: SchemaHint] { get }
    /// The schema's `description`. Default: nil.
    static var schemaDescription: String? { get }
    /// The schema's `title` (object schemas only). Default: the type's name.
    static var schemaTitle: String { get }
}

extension Schematic {
    public static var schemaHints: [String: SchemaHint] { [:] }
    public static var schemaDescription: String? { nil }
    public static var schemaTitle: String { String(describing: Self.self) }
}

/// A type whose JSON Schema cannot be derived by decoding it (a value that is one of
/// several shapes, like `"auto"` or `{"name": …}`): it states its schema, and a value the
/// recorder can stand in with while deriving the types that contain it.
public protocol SchemaProviding: Decodable {
    static var providedSchema: JSONValue { get }
    static var schemaPlaceholder: Self { get }
}

/// A string enum: its schema is `{"type":"string","enum":[raw values in allCases order]}`.
public protocol SchemaEnum: Schematic, CaseIterable, RawRepresentable, Sendable where RawValue == String {}

extension SchemaEnum {
    static var schemaRawValues: [String] { allCases.map(\.rawValue) }
    static var schemaPlaceholder: Any? { allCases.first }
}

// MARK: - Markers the recording decoder uses to see through generic containers

/// `Optional<Wrapped>`: decoded as a required-but-nullable value.
protocol SchemaOptionalMarker {
    static var schemaWrapped: any Decodable.Type { get }
    static var schemaNone: Any { get }
}

extension Optional: SchemaOptionalMarker where Wrapped: Decodable {
    static var schemaWrapped: any Decodable.Type { Wrapped.self }
    static var schemaNone: Any { Optional<Wrapped>.none as Any }
}

/// `Array<Element>`: the element schema becomes `items`.
protocol SchemaArrayMarker {
    static var schemaElement: any Decodable.Type { get }
    static func schemaArray(_ placeholder: Any?) -> Any
}

extension Array: SchemaArrayMarker where Element: Decodable {
    static var schemaElement: any Decodable.Type { Element.self }
    static func schemaArray(_ placeholder: Any?) -> Any {
        if let e = placeholder as? Element { return [e] }
        return [Element]()
    }
}

/// `Dictionary<String, Value>`: the recorder cannot enumerate keys, so the value schema
/// becomes `additionalProperties`.
protocol SchemaDictionaryMarker {
    static var schemaValue: any Decodable.Type { get }
    static var schemaEmpty: Any { get }
}

extension Dictionary: SchemaDictionaryMarker where Key == String, Value: Decodable {
    static var schemaValue: any Decodable.Type { Value.self }
    static var schemaEmpty: Any { [String: Value]() }
}
