import JSONRPC
import ParlanceEngine
import ParlanceFeatures
import ParlanceJSON
import ParlanceProtocol
import ParlanceSchema

/// Typed registration: `router.on(Summarize.self, Summaries.summarize)`. Each route
/// validates params against the schema derived from the method's Params type (precise
/// -32602 errors), decodes, runs the handler and encodes its result.
public struct Route: Sendable {
    public let name: String
    public let summary: String
    public let paramsSchema: JSONValue
    public let resultSchema: JSONValue
    public let errors: [ProtocolError]
    public let example: (params: JSONValue, result: JSONValue)?
    /// Unknown params fields are ignored (LSP methods, `initialize`), not refused.
    public let acceptsUnknownParams: Bool
    /// Runs before the next message is read, in arrival order: decodes the params and takes
    /// the request's claims on shared state (a session, a document's text, a variation id),
    /// or does all the work of a bookkeeping method. Returns the long work, which runs
    /// concurrently with later requests.
    let claim: @Sendable (JSONValue?, RequestContext) async throws -> Work
    public typealias Work = @Sendable () async throws -> JSONValue
}

public struct NotificationInfo: Sendable {
    public let name: String
    public let summary: String
    public let direction: NotificationDirection
    public let paramsSchema: JSONValue
}

/// A request the client implements (the server sends it), for the spec.
public struct ClientMethodInfo: Sendable {
    public let name: String
    public let summary: String
    public let paramsSchema: JSONValue
    public let resultSchema: JSONValue
}

public struct Router: Sendable {
    public private(set) var routes: [String: Route] = [:]
    public private(set) var order: [String] = []
    public private(set) var notifications: [NotificationInfo] = []
    /// Handlers of client notifications, run in arrival order before the next message is read.
    public private(set) var notificationHandlers: [String: @Sendable (JSONValue?, RequestContext) async throws -> Void] = [:]
    public private(set) var clientMethods: [ClientMethodInfo] = []

    public init() {}

    /// Registers a method. `ordered` methods (bookkeeping: documents, session lifecycle)
    /// run whole before the next message is read; the others claim the documents their
    /// params name (see `RequestContext.claimDocuments`), then run concurrently.
    public mutating func on<M: RPCMethod>(
        _ method: M.Type, ordered: Bool = false,
        _ handler: @escaping @Sendable (M.Params, RequestContext) async throws -> M.Result
    ) {
        on(method) { params, ctx in
            if ordered {
                let result = try await handler(params, ctx)
                return { result }
            }
            let ctx = await ctx.claimDocuments(params)
            return { try await handler(params, ctx) }
        }
    }

    /// Registers a method whose claim on shared state is its own: `claim` runs in arrival
    /// order (it must not wait for the model or other long work) and returns the work.
    public mutating func on<M: RPCMethod>(
        _ method: M.Type,
        claim: @escaping @Sendable (M.Params, RequestContext) async throws -> @Sendable () async throws -> M.Result
    ) {
        let schema = M.paramsSchema
        let lenient = M.acceptsUnknownParams
        precondition(routes[M.name] == nil, "method \(M.name) registered twice")
        routes[M.name] = Route(
            name: M.name, summary: M.summary, paramsSchema: schema, resultSchema: M.resultSchema, errors: M.errors,
            example: M.example, acceptsUnknownParams: lenient,
            claim: { raw, ctx in
                // Every generation the request makes waits in the engine's line by this (`RequestArrival`).
                let arrival = ContinuousClock.now
                return try await RequestArrival.$instant.withValue(arrival) {
                    let params = try Router.decode(M.Params.self, raw, schema: schema, lenient: lenient)
                    let ctx = try ctx.choosingModel((params as? any ModelSelecting)?.model, routes: [M.name, M.modelRoute])
                    let work = try await claim(params, ctx)
                    return { try await RequestArrival.$instant.withValue(arrival) { try JSONValue(encoding: try await work()) } }
                }
            })
        order.append(M.name)
    }

    public mutating func notification<N: RPCNotification>(_ n: N.Type) {
        notifications.append(NotificationInfo(name: N.name, summary: N.summary, direction: N.direction, paramsSchema: N.paramsSchema))
    }

    /// Registers a client notification's handler. Params are validated like a request's
    /// (unknown fields allowed: LSP clients send many); a failure is logged, never answered.
    public mutating func on<N: RPCNotification>(_ n: N.Type, _ handler: @escaping @Sendable (N.Params, RequestContext) async throws -> Void) {
        precondition(notificationHandlers[N.name] == nil, "notification \(N.name) registered twice")
        notification(n)
        let schema = N.paramsSchema
        notificationHandlers[N.name] = { raw, ctx in
            try await handler(try Router.decode(N.Params.self, raw, schema: schema, lenient: true), ctx)
        }
    }

    /// Lists a request the server sends and the client answers.
    public mutating func clientMethod<M: RPCClientMethod>(_ m: M.Type) {
        clientMethods.append(ClientMethodInfo(name: M.name, summary: M.summary, paramsSchema: M.paramsSchema, resultSchema: M.resultSchema))
    }

    static func decode<P: Decodable>(_ type: P.Type, _ raw: JSONValue?, schema: JSONValue, lenient: Bool) throws -> P {
        var value = raw ?? .object(JSONObject())
        if case .array(let a) = value {
            guard a.isEmpty else {
                throw ResponseError.invalidParams("params must be an object (by-name), got an array", data: ["path": "(root)", "keyword": "type"])
            }
            value = .object(JSONObject())
        }
        // LSP clients send null for absent optional fields: treat those as absent.
        if case .object(var o) = value {
            let required = Set(schema["required"]?.arrayValue?.compactMap(\.stringValue) ?? [])
            for k in o.keys where o[k] == .null && !required.contains(k) { o[k] = nil }
            value = .object(o)
        }
        var violations = SchemaValidator.validate(value, against: schema)
        if lenient { violations.removeAll { $0.keyword == "additionalProperties" } }
        if let v = violations.first {
            // The message names every problem (a few), so one round trip fixes them all.
            let shown = violations.prefix(4).map(\.description).joined(separator: "; ")
            let more = violations.count > 4 ? " (and \(violations.count - 4) more)" : ""
            throw ResponseError.invalidParams(
                shown + more, data: ["path": .string(v.path), "keyword": .string(v.keyword),
                                      "violations": .array(violations.prefix(10).map { .string($0.description) })])
        }
        do {
            return try value.decode(P.self)
        } catch let e as DecodingError {
            throw ResponseError.invalidParams(e.pathDescription)
        }
    }
}
