#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ParlanceJSON
import Synchronization

/// What the reader delivers: a parsed JSON value, or why a frame could not become one.
public enum Incoming: Sendable {
    case json(JSONValue, Framing)
    case parseError(String, Framing)
    case framingError(FramingError, Framing)
}

/// A byte-stream JSON-RPC connection over two file descriptors.
///
/// A dedicated thread blocks on `read` and feeds the pure `FrameDecoder`; `send` writes
/// each frame whole under a lock, so concurrent responses never interleave.
public final class Connection: Sendable {
    public let input: Int32
    public let output: Int32
    public let maxMessageSize: Int
    /// Guards writes to `output`: one whole frame at a time.
    private let writeLock = Mutex<Void>(())
    /// The framing the client used most recently; replies follow it.
    private let lastFraming = Mutex<Framing>(.lsp)
    /// Set once the reader of `output` is gone (a write failed with EPIPE, or the pipe or
    /// socket reported an error or hang-up); the incoming stream then ends at once.
    private let closedOutput = Atomic<Bool>(false)
    /// The incoming stream, ended early when the output closes.
    private let incomingEnd = Mutex<(@Sendable () -> Void)?>(nil)

    public init(input: Int32, output: Int32, maxMessageSize: Int = 64 * 1024 * 1024) {
        self.input = input
        self.output = output
        self.maxMessageSize = maxMessageSize
    }

    /// The process's stdio. stdout is kept privately for the protocol and fd 1 is pointed
    /// at stderr, so nothing else in the process (llama.cpp included) can corrupt the stream.
    public static func stdio(maxMessageSize: Int) -> Connection {
        signal(SIGPIPE, SIG_IGN)
        let protocolOut = dup(STDOUT_FILENO)
        dup2(STDERR_FILENO, STDOUT_FILENO)
        return Connection(input: STDIN_FILENO, output: protocolOut >= 0 ? protocolOut : STDOUT_FILENO, maxMessageSize: maxMessageSize)
    }

    public var framing: Framing { lastFraming.withLock { $0 } }

    /// Starts the reader thread. The stream finishes when input reaches end of file.
    ///
    /// Backpressure: each message comes with a `Permit` from a window of `window` permits;
    /// the reader takes one before it delivers a message and stops reading while none is
    /// left, so a client that pipelines thousands of requests waits in its own write buffer
    /// instead of making the daemon hold them all. The server keeps a message's permit
    /// until the message is answered.
    ///
    /// `watchOutput`: end the stream as soon as the reader of our output goes (see
    /// `watchOutput()`). An end that will close its own output passes false: a thread
    /// polling a descriptor keeps its file open, so the close would not reach the peer.
    public func incoming(window: Int = 1024, watchOutput watch: Bool = true) -> AsyncStream<(Incoming, Permit)> {
        let (stream, continuation) = AsyncStream<(Incoming, Permit)>.makeStream()
        incomingEnd.withLock { $0 = { continuation.finish() } }
        if closedOutput.load(ordering: .acquiring) { continuation.finish() }
        if watch { watchOutput() }
        let fd = input
        let limit = maxMessageSize
        let permits = Window(window)
        let thread = Thread {
            var decoder = FrameDecoder(maxMessageSize: limit)
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            func deliver(_ e: FrameEvent) {
                let permit = permits.acquire()
                switch e {
                case .message(let bytes, let framing):
                    self.lastFraming.withLock { $0 = framing }
                    do {
                        continuation.yield((.json(try JSONParser.parse(bytes), framing), permit))
                    } catch {
                        continuation.yield((.parseError(error.description, framing), permit))
                    }
                case .error(let err, let framing):
                    self.lastFraming.withLock { $0 = framing }
                    continuation.yield((.framingError(err, framing), permit))
                }
            }
            while true {
                let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                decoder.push(chunk[0..<n])
                while let e = decoder.next() { deliver(e) }
            }
            if let e = decoder.finish() { deliver(e) }
            continuation.finish()
        }
        thread.start()
        return stream
    }

    /// Writes one message, whole.
    public func send(_ value: JSONValue, framing: Framing? = nil) {
        let frame = FrameEncoder.encode(value.bytes, framing ?? self.framing)
        writeLock.withLock { _ in
            frame.withUnsafeBytes { raw in
                var off = 0
                while off < raw.count {
                    let n = write(output, raw.baseAddress! + off, raw.count - off)
                    if n < 0 {
                        if errno == EINTR { continue }
                        if errno == EPIPE { outputClosed() }
                        return
                    }
                    off += n
                }
            }
        }
    }
}

extension Connection {
    /// True once the reader of our output has gone (the client died or closed its end).
    public var isOutputClosed: Bool { closedOutput.load(ordering: .acquiring) }

    private func outputClosed() {
        guard !closedOutput.exchange(true, ordering: .acquiringAndReleasing) else { return }
        incomingEnd.withLock { $0 }?()
    }

    /// A pipe or socket reports its reader's departure without a write: a thread waits
    /// for POLLERR/POLLHUP on the output (asking for no other event), so work for a client
    /// that died is cancelled even while nothing is being written. Files and terminals are
    /// not watched (a write error still counts).
    private func watchOutput() {
        var st = stat()
        guard fstat(output, &st) == 0 else { return }
        let kind = st.st_mode & S_IFMT
        guard kind == S_IFIFO || kind == S_IFSOCK else { return }
        let fd = output
        Thread { [self] in
            var p = pollfd(fd: fd, events: 0, revents: 0)
            while true {
                let n = poll(&p, 1, -1)
                if n < 0 && errno == EINTR { continue }
                if n > 0 && p.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { break }
                if n < 0 { return }
            }
            outputClosed()
        }.start()
    }
}

/// A counting semaphore bounding the messages read but not yet answered.
final class Window: @unchecked Sendable {  // sem_t is thread-safe; the pointer never changes
    private let sem = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
    init(_ count: Int) { sem_init(sem, 0, UInt32(max(1, count))) }
    deinit {
        sem_destroy(sem)
        sem.deallocate()
    }
    /// Blocks until a permit is free.
    func acquire() -> Permit {
        while sem_wait(sem) != 0, errno == EINTR {}
        return Permit(self)
    }
    fileprivate func post() { sem_post(sem) }
}

/// One message's place in the reader's window: given back by `release()` or, at the
/// latest, when the last reference to it goes, so no path can leak it.
public final class Permit: Sendable {
    private let window: Window
    private let released = Atomic<Bool>(false)
    init(_ window: Window) { self.window = window }
    public func release() {
        if !released.exchange(true, ordering: .acquiringAndReleasing) { window.post() }
    }
    deinit { release() }
}

/// A minimal thread wrapper (Foundation-free) for the blocking reader.
final class Thread: @unchecked Sendable {
    private let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    func start() {
        let box = Unmanaged.passRetained(self)
        var tid = pthread_t()
        pthread_create(&tid, nil, { arg in
            let t = Unmanaged<Thread>.fromOpaque(arg!).takeRetainedValue()
            t.body()
            return nil
        }, box.toOpaque())
        pthread_detach(tid)
    }
}

extension Connection {
    /// Two connected ends over a pair of pipes, for a client in the same process as the
    /// server (the command line): whatever one sends, the other receives.
    public static func pair(maxMessageSize: Int = 64 * 1024 * 1024) -> (server: Connection, client: Connection)? {
        signal(SIGPIPE, SIG_IGN)
        var toServer: [Int32] = [0, 0], toClient: [Int32] = [0, 0]
        guard pipe(&toServer) == 0 else { return nil }
        guard pipe(&toClient) == 0 else {
            close(toServer[0]); close(toServer[1])
            return nil
        }
        return (Connection(input: toServer[0], output: toClient[1], maxMessageSize: maxMessageSize),
                Connection(input: toClient[0], output: toServer[1], maxMessageSize: maxMessageSize))
    }

    /// Closes this end's output: the other end reads end of input.
    public func closeOutput() { _ = close(output) }
}
