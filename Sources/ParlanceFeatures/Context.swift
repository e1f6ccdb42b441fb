import JSONRPC
import ParlanceEngine
import ParlanceJSON
import ParlanceProtocol

/// What a handler gets besides its params: who asked, how to report progress, and the
/// services it may use. Created by the server for each request.
public struct RequestContext: Sendable {
    public let id: RequestID
    public let progress: ProgressReporter
    public let services: Services

    public init(id: RequestID, progress: ProgressReporter, services: Services) {
        self.id = id
        self.progress = progress
        self.services = services
    }

    /// The loaded engine, waiting for a load in progress; a typed error when unavailable.
    public func engine() async throws -> Engine { try await services.models.engine() }
}

/// Sends `$/progress` for one work-done token (or nothing when the client gave none).
public struct ProgressReporter: Sendable {
    public let token: JSONValue?
    let send: @Sendable (JSONValue) -> Void

    public init(token: JSONValue?, send: @escaping @Sendable (JSONValue) -> Void) {
        self.token = token
        self.send = send
    }

    public static let none = ProgressReporter(token: nil, send: { _ in })
    public var isActive: Bool { token != nil }

    public func callAsFunction(_ value: Progress.Value) {
        guard let token else { return }
        guard let v = try? JSONValue(encoding: Progress.Params(token: token, value: value)) else { return }
        send(v)
    }

    public func begin(_ title: String) { self(.init(kind: .begin, title: title, percentage: 0, cancellable: true)) }
    public func end(_ message: String) { self(.init(kind: .end, message: message)) }
}
