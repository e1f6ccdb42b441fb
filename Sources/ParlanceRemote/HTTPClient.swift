import ParlanceJSON
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// Streaming HTTP calls: the response head, then the body as it arrives. Cancelling the
/// consumer's task closes the connection — how an OpenAI-compatible server learns to stop
/// generating.
///
/// `http://` (loopback only) goes through `SocketTransfer`, a small HTTP/1.1 client over a
/// POSIX socket on a thread of its own; `https://` through the toolchain's Foundation
/// (`URLSession`, on Linux its libcurl backend, which does TLS). Why not URLSession for
/// both: on Linux it kept two dispatch threads busy while a stream was open (measured: the
/// daemon burned ~1.3 s of CPU per 1.8 s stream, taking cores from a local llama-server and
/// halving its throughput); the socket client costs nothing between bytes.
///
/// Timeouts are our own watchdog, not URLSession's: no byte within `timeout` of sending
/// (or of the previous byte) ends the call with `remoteTimeout`.
public final class HTTPClient: Sendable {
    public enum Chunk: Sendable {
        case head(status: Int, headers: [String: String])
        case body(Data)
    }

    public static let shared = HTTPClient()

    public init() {}

    /// The URLSession for https:// calls, made by the first one (a daemon whose remote
    /// models are all http:// never starts it). One for every client: connections are reused.
    private static let tls: (session: URLSession, delegate: Delegate) = {
        let config = URLSessionConfiguration.ephemeral
        config.httpMaximumConnectionsPerHost = 64
        config.requestCachePolicy = .reloadIgnoringLocalCacheData
        config.urlCache = nil
        config.httpCookieStorage = nil
        config.timeoutIntervalForResource = 7 * 24 * 3600
        let delegate = Delegate()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "parlance.http"
        return (URLSession(configuration: config, delegate: delegate, delegateQueue: queue), delegate)
    }()

    /// Sends the request; the stream yields the head then body chunks, and ends when the
    /// body does, or throws a `RemoteFault`. With `followRedirects: false` a 3xx answer is
    /// the answer (its head, then its body), for callers that follow redirects themselves
    /// (URLSession would send every header, `Authorization` too, to whatever host a
    /// redirect names, and follow https:// to http://). The socket client (http://) never
    /// follows redirects.
    public func send(_ request: URLRequest, timeout: Duration, host: String, followRedirects: Bool = true) -> AsyncThrowingStream<Chunk, any Error> {
        if request.url?.scheme?.lowercased() == "http" {
            let (stream, continuation) = AsyncThrowingStream<Chunk, any Error>.makeStream(bufferingPolicy: .unbounded)
            let call = Call(continuation: continuation, host: host, timeout: timeout)
            let transfer = SocketTransfer(request: request, call: call)
            continuation.onTermination = { reason in
                if case .cancelled = reason { transfer.abort() }
                call.watchdog.withLock { $0?.cancel(); $0 = nil }
            }
            call.arm { transfer.abort() }
            transfer.start()
            return stream
        }
        var request = request
        // URLSession's own idle timeout only as a backstop behind the watchdog.
        request.timeoutInterval = max(30, timeout.inSeconds * 4)
        let (stream, continuation) = AsyncThrowingStream<Chunk, any Error>.makeStream(bufferingPolicy: .unbounded)
        let (session, delegate) = Self.tls
        let task = session.dataTask(with: request)
        let call = Call(continuation: continuation, host: host, timeout: timeout, followRedirects: followRedirects)
        delegate.calls.withLock { $0[task.taskIdentifier] = call }
        continuation.onTermination = { reason in
            if case .cancelled = reason { task.cancel() }
            call.watchdog.withLock { $0?.cancel(); $0 = nil }
        }
        call.arm { task.cancel() }
        task.resume()
        return stream
    }

    final class Call: Sendable {
        let continuation: AsyncThrowingStream<Chunk, any Error>.Continuation
        let host: String
        let timeout: Duration
        /// Bytes (or the head) seen since the watchdog last looked; whether any byte came.
        let activity = Mutex<(seen: Bool, any: Bool, timedOut: Bool)>((false, false, false))
        let watchdog = Mutex<Task<Void, Never>?>(nil)
        let followRedirects: Bool

        init(continuation: AsyncThrowingStream<Chunk, any Error>.Continuation, host: String, timeout: Duration, followRedirects: Bool = true) {
            self.continuation = continuation
            self.host = host
            self.timeout = timeout
            self.followRedirects = followRedirects
        }

        func arm(cancel: @escaping @Sendable () -> Void) {
            let t = Task { [self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: timeout)
                    if Task.isCancelled { return }
                    let stalled = activity.withLock { a -> Bool in
                        defer { a.seen = false }
                        if a.seen { return false }
                        a.timedOut = true
                        return true
                    }
                    if stalled {
                        let first = activity.withLock { !$0.any }
                        let what = first ? "no answer from \(host) within \(timeout.inSeconds.formatted1) s" : "the stream from \(host) stalled for \(timeout.inSeconds.formatted1) s"
                        continuation.finish(throwing: RemoteFault(.remoteTimeout, what, retryable: first))
                        cancel()
                        return
                    }
                }
            }
            watchdog.withLock { $0 = t }
        }

        func touched() { activity.withLock { $0.seen = true; $0.any = true } }
        var timedOut: Bool { activity.withLock { $0.timedOut } }
        var gotAny: Bool { activity.withLock { $0.any } }
    }

    final class Delegate: NSObject, URLSessionDataDelegate, Sendable {
        let calls = Mutex<[Int: Call]>([:])

        func call(_ task: URLSessionTask) -> Call? { calls.withLock { $0[task.taskIdentifier] } }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
            if let c = call(dataTask) {
                c.touched()
                let http = response as? HTTPURLResponse
                var headers: [String: String] = [:]
                for (k, v) in http?.allHeaderFields ?? [:] { headers[String(describing: k).lowercased()] = String(describing: v) }
                c.continuation.yield(.head(status: http?.statusCode ?? 0, headers: headers))
            }
            completionHandler(.allow)
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
            completionHandler(call(task)?.followRedirects == false ? nil : request)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            guard let c = call(dataTask) else { return }
            c.touched()
            c.continuation.yield(.body(data))
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            guard let c = calls.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
            c.watchdog.withLock { $0?.cancel(); $0 = nil }
            if c.timedOut { return }  // the watchdog already ended the stream
            if let error {
                c.continuation.finish(throwing: Self.fault(error, host: c.host, gotAny: c.gotAny))
            } else {
                c.continuation.finish()
            }
        }

        static func fault(_ error: any Error, host: String, gotAny: Bool) -> any Error {
            guard let u = error as? URLError else {
                return RemoteFault(.remoteUnavailable, "cannot reach \(host): \(error.localizedDescription)", retryable: !gotAny)
            }
            switch u.code {
            case .cancelled:
                return CancellationError()
            case .cannotFindHost, .dnsLookupFailed:
                return RemoteFault(.remoteUnavailable, "cannot resolve \(host) (DNS lookup failed)", retryable: true)
            case .cannotConnectToHost, .notConnectedToInternet:
                return RemoteFault(.remoteUnavailable, "cannot connect to \(host) (connection refused or unreachable)", retryable: true)
            case .networkConnectionLost where !gotAny:
                return RemoteFault(.remoteUnavailable, "cannot connect to \(host) (connection refused or unreachable)", retryable: true)
            case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
                 .serverCertificateHasUnknownRoot, .clientCertificateRejected, .clientCertificateRequired:
                return RemoteFault(.remoteUnavailable, "TLS handshake with \(host) failed: \(u.localizedDescription)", retryable: false)
            case .timedOut:
                return RemoteFault(.remoteTimeout, "\(host) timed out", retryable: !gotAny)
            case .networkConnectionLost:
                return RemoteFault(.remoteProtocol, "\(host) closed the connection before the answer ended", retryable: false)
            default:
                let text = u.localizedDescription
                if ["SSL", "TLS", "certificate"].contains(where: { text.contains($0) }) {
                    return RemoteFault(.remoteUnavailable, "TLS handshake with \(host) failed: \(text)", retryable: false)
                }
                return RemoteFault(gotAny ? .remoteProtocol : .remoteUnavailable, "\(host): \(u.localizedDescription) (URLError \(u.code.rawValue))",
                                   retryable: !gotAny)
            }
        }
    }
}

extension Duration {
}

extension Double {
    var formatted1: String { String(format: "%.1f", self) }
}
