import JSONRPC
import ParlanceJSON

/// One MCP method `parlance mcp` serves: whether it is answered before the next message
/// is read, and how it answers.
struct MCPRoute: Sendable {
    /// Answered before the next message is read, in arrival order: the methods that set
    /// what later requests read (the negotiated revision, the log level). The others run
    /// concurrently, so a long tool call never holds up `ping` or a cancellation.
    let ordered: Bool
    let answer: @Sendable (RequestID, JSONValue) async -> Result<JSONValue, ResponseError>
}

/// The methods and notifications `parlance mcp` serves, by name, registered with typed
/// params: `router.on(MCPWire.resourcesRead, ReadResource.self) { p, _ in … }`.
struct MCPRouter: Sendable {
    private var routes: [String: MCPRoute] = [:]
    private var notifications: [String: @Sendable (JSONValue) -> Void] = [:]

    mutating func on<P: MCPParams>(
        _ method: String, _ params: P.Type, ordered: Bool = false,
        _ handler: @escaping @Sendable (P, RequestID) async -> Result<JSONValue, ResponseError>
    ) {
        precondition(routes[method] == nil, "MCP method \(method) registered twice")
        routes[method] = MCPRoute(ordered: ordered, answer: { id, raw in await handler(P.read(raw), id) })
    }

    mutating func notification<P: MCPParams>(_ method: String, _ params: P.Type, _ handler: @escaping @Sendable (P) -> Void) {
        notifications[method] = { raw in handler(P.read(raw)) }
    }

    /// The method's route; for a method not served, one that answers "method not found".
    func route(_ method: String) -> MCPRoute {
        routes[method] ?? MCPRoute(ordered: false, answer: { _, _ in
            .failure(ResponseError(.methodNotFound, "parlance mcp does not serve \(method)", data: ["method": .string(method)]))
        })
    }

    /// Handles a notification; the others (notifications/initialized, roots/list_changed, …) are ignored.
    func notify(_ method: String, _ params: JSONValue?) {
        notifications[method]?(params ?? .object(JSONObject()))
    }
}

/// An MCP method's params, read as `parlance mcp` has always read them: leniently. A field
/// of another type than expected reads as absent (the method then answers as it does when
/// the field is missing), and params that are not an object read as empty. Nothing is
/// refused for its shape here; a tool's arguments are validated against its input schema.
protocol MCPParams: Decodable, Sendable {
    init()
}

extension MCPParams {
    static func read(_ raw: JSONValue) -> Self { (try? raw.decode(Self.self)) ?? Self() }
}

/// Params of a method that reads none.
struct NoParams: MCPParams {
    init() {}
    init(from decoder: any Decoder) throws {}
}

extension Decoder {
    /// The params' fields, or nil when the params are not an object.
    func fields<K: CodingKey>(_ keys: K.Type) -> KeyedDecodingContainer<K>? { try? container(keyedBy: keys) }
}

extension KeyedDecodingContainer {
    /// The field when it has type T; nil when it is missing or of another type.
    func loose<T: Decodable>(_ key: Key) -> T? { try? decodeIfPresent(T.self, forKey: key) }

    /// The field as sent, `null` included: for what is echoed back or passed on as it is.
    func sent(_ key: Key) -> JSONValue? { contains(key) ? (try? decode(JSONValue.self, forKey: key)) : nil }
}
