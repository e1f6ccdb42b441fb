import ParlanceJSON
import ParlanceSchema

/// A JSON-RPC request the server answers. One type per method, in one file per family:
/// its params and result types are the single source of truth for the method's JSON
/// Schema, which becomes the published spec, the params validator and (for generated
/// fields) the grammar that constrains the model.
public protocol RPCMethod: Sendable {
    associatedtype Params: Codable & Sendable & Schematic
    associatedtype Result: Codable & Sendable & Schematic
    static var name: String { get }
    static var summary: String { get }
    /// Error codes this method may answer besides the generic ones.
    static var errors: [ProtocolError] { get }
    /// LSP clients send many optional fields; methods that must accept them say so.
    static var acceptsUnknownParams: Bool { get }
    static var example: (params: JSONValue, result: JSONValue)? { get }
    /// The config file's route key for this method's model (besides its full name): its
    /// family, the part of its name before the first `/`.
    static var modelRoute: String { get }
}

extension RPCMethod {
    public static var errors: [ProtocolError] { [] }
    public static var acceptsUnknownParams: Bool { false }
    public static var example: (params: JSONValue, result: JSONValue)? { nil }
    public static var modelRoute: String { String(name.prefix { $0 != "/" }) }
    public static var paramsSchema: JSONValue { SchemaDeriver.schema(for: Params.self) }
    public static var resultSchema: JSONValue { SchemaDeriver.schema(for: Result.self) }
}

/// A notification (no reply), in either direction.
public protocol RPCNotification: Sendable {
    associatedtype Params: Codable & Sendable & Schematic
    static var name: String { get }
    static var summary: String { get }
    static var direction: NotificationDirection { get }
}

public enum NotificationDirection: String, Sendable { case clientToServer, serverToClient }

extension RPCNotification {
    public static var paramsSchema: JSONValue { SchemaDeriver.schema(for: Params.self) }
}

/// No params / no result.
public struct Empty: Codable, Sendable, Hashable, Schematic {
    public init() {}
}

/// A result whose listed fields are produced by the model. The grammar constraining the
/// model is this type's schema projected onto those fields, so the result type stays the
/// only definition of them.
public protocol GeneratedResult: Schematic {
    static var generatedFields: [String] { get }
}

extension GeneratedResult {
    public static var generationSchema: JSONValue { SchemaDeriver.schema(for: Self.self).projected(onto: generatedFields) }
}

extension JSONValue {
    /// This object schema restricted to some of its properties (order and `required` kept).
    public func projected(onto fields: [String]) -> JSONValue {
        guard case .object(var o) = self, let props = self["properties"]?.objectValue else { return self }
        var p = JSONObject()
        for f in fields { if let s = props[f] { p[f] = s } }
        o["properties"] = .object(p)
        if let req = self["required"]?.arrayValue {
            o["required"] = .array(req.filter { fields.contains($0.stringValue ?? "") })
        }
        o["title"] = nil
        return .object(o)
    }
}
