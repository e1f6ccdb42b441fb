import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ParlanceRemote
import Synchronization

/// One file to download: where from, what it must hash to, and where it goes.
struct BlobTarget: Sendable {
    /// The name in progress reports and messages (the file's path in the repository, or the digest).
    var label: String
    /// Asked again on every attempt, so that a redirect to a signed CDN URL is fresh.
    var url: URL
    var authorization: String?
    /// The expected SHA-256, lower-case hex; nil when the server announces none (only the size is checked).
    var sha256: String?
    var size: Int
    /// The finished file, made by an atomic rename of `partial` once verified.
    var destination: String
    /// Where the bytes accumulate (`….incomplete`, `…-partial`): kept when a pull is
    /// interrupted or cancelled, resumed by the next.
    var partial: String
    /// flock(2)'d for the whole download: a second pull of the same file waits for the first.
    var lock: String
    /// Whether the lock file is removed once done (huggingface_hub leaves its `.locks` in place).
    var removeLock: Bool
}

struct BlobOutcome: Sendable {
    var sha256: String
    /// Bytes that were on disk already and not sent again.
    var resumedBytes: Int
    /// Whether any bytes came over the network.
    var transferred: Bool
}

/// Downloads a file resumably: the partial file's bytes are hashed first and the rest is
/// asked for with `Range: bytes=N-` (a 206 is appended to; a 200 starts over from 0); the
/// SHA-256 is checked before the atomic rename (a mismatch deletes the partial); transient
/// failures (a dropped connection, 5xx, a timeout) are retried from where they stopped.
enum BlobDownloader {
    /// Consecutive failed attempts (without new bytes) before giving up.
    static let maxFailures = 5
    static let writeBufferBytes = 4 << 20

    static func fetch(_ t: BlobTarget, progress: @escaping @Sendable (PullProgress) -> Void) async throws(PullError) -> BlobOutcome {
        if let done = try existing(t) { return done }
        for dir in Set([parent(t.partial), parent(t.destination), parent(t.lock)]) { try makeDirectory(dir) }
        let lock = try await FileLock.acquire(t.lock, label: t.label)
        defer { lock.release(remove: t.removeLock) }
        // Another pull may have finished it while this one waited.
        if let done = try existing(t) { return done }
        return try await transfer(t, progress: progress)
    }

    /// The destination when it is already complete (its size is the expected one; a file
    /// of another size is removed and fetched again).
    static func existing(_ t: BlobTarget) throws(PullError) -> BlobOutcome? {
        guard let size = fileSize(t.destination) else { return nil }
        if size == t.size {
            var sha = t.sha256
            if sha == nil { sha = try hashFile(t.destination) }
            return BlobOutcome(sha256: sha!, resumedBytes: size, transferred: false)
        }
        unlink(t.destination)
        return nil
    }

    private static func transfer(_ t: BlobTarget, progress: @escaping @Sendable (PullProgress) -> Void) async throws(PullError) -> BlobOutcome {
        var failures = 0
        var transferred = false
        var discardedStale = false
        var meter = ProgressMeter(file: t.label, total: t.size, report: progress)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 4096)
        defer { buffer.deallocate() }

        while true {
            // What an earlier attempt (or pull) left: hashed first, then resumed from.
            var have = fileSize(t.partial) ?? 0
            if have > t.size {
                unlink(t.partial)
                have = 0
            }
            var hasher = PullHasher()
            if have > 0 {
                let rfd = open(t.partial, O_RDONLY | O_CLOEXEC)
                guard rfd >= 0 else { throw fileError("cannot open \(t.partial)", errno, path: t.partial, remaining: t.size) }
                defer { close(rfd) }
                try hashPrefix(rfd, count: have, into: hasher, buffer: buffer)
            }
            if have == t.size {
                // Complete already (an earlier pull stopped before the rename): verified, not
                // fetched again; a complete partial with other bytes is dropped once and fetched.
                if t.size == 0 { try writeFileAtomically(t.partial, Data()) }
                let digest = hasher.finalizeHex()
                if let expected = t.sha256?.lowercased(), digest != expected, !transferred, !discardedStale {
                    unlink(t.partial)
                    discardedStale = true
                    continue
                }
                meter.restart(resumed: have, completed: have)
                meter.update(have, force: true)
                return try finish(t, digest: digest, resumed: have, transferred: transferred)
            }
            try ensureSpace(parent(t.partial), needed: t.size - have, what: t.label)

            // Ask for the rest (or all of it).
            var headers: [String: String] = [:]
            if have > 0 { headers["Range"] = "bytes=\(have)-" }
            var response: PullResponse
            do throws(PullError) {
                response = try await PullHTTP.open(t.url, headers: headers, authorization: t.authorization)
            } catch {
                if PullHTTP.retryable(error) && failures < maxFailures {
                    failures += 1
                    try await backoff(failures)
                    continue
                }
                throw error
            }
            switch response.status {
            case 206:
                let start = contentRangeStart(response.header("content-range"))
                guard start == have else {
                    // Not the range asked for: start over from 0.
                    unlink(t.partial)
                    failures += 1
                    if failures > maxFailures {
                        throw PullError(.network, "\(response.url.host ?? "?") answered a range request for \(t.label) with the wrong range (\(response.header("content-range") ?? "none"))",
                                        url: response.url.absoluteString, status: 206)
                    }
                    continue
                }
            case 200:
                if have > 0 {
                    // The server ignored the range: the whole file comes again, from byte 0.
                    unlink(t.partial)
                    hasher = PullHasher()
                    have = 0
                }
            case 416 where have > 0:
                // Nothing to send from `have` on: right only for a complete partial, which
                // this is not (it is shorter than the announced size): start over.
                unlink(t.partial)
                failures += 1
                if failures > maxFailures {
                    throw PullError(.network, "\(response.url.host ?? "?") keeps answering 416 for \(t.label)", url: response.url.absoluteString, status: 416)
                }
                continue
            default:
                let body = (try? await PullHTTP.readBody(&response, limit: 1 << 20)) ?? Data()
                let e = PullHTTP.statusError(response.status, body: body, url: response.url, what: t.label)
                if PullHTTP.retryable(e) && failures < maxFailures {
                    failures += 1
                    try await backoff(failures)
                    continue
                }
                throw e
            }
            let fd = open(t.partial, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw fileError("cannot open \(t.partial)", errno, path: t.partial, remaining: t.size - have) }
            defer { close(fd) }
            var offset = have
            let resumed = have
            transferred = true
            meter.restart(resumed: resumed, completed: offset)
            meter.update(offset, force: true)

            // The body: hashed as it comes, copied into big buffers that a writer thread
            // writes while the next fills (the page cache's copy costs about as much as the hash).
            let startOffset = offset
            let writer = FileWriter(fd: fd, bufferBytes: writeBufferBytes)
            var current = await writer.next()
            var failure: PullError?
            var tooLong = false
            reading: while true {
                let chunk: HTTPClient.Chunk?
                do { chunk = try await response.body.next() } catch {
                    failure = PullHTTP.fault(error, url: response.url)
                    break reading
                }
                guard let chunk else { break reading }
                guard case .body(let data) = chunk else { continue }
                var consumed = 0
                let n = data.count
                if offset + current.count + n > t.size {
                    tooLong = true
                    break reading
                }
                while consumed < n {
                    let take = min(n - consumed, current.bytes.count - current.count)
                    let at = current.count, from = consumed, dest = current.bytes
                    data.withUnsafeBytes { raw in
                        let src = UnsafeRawBufferPointer(rebasing: raw[from..<(from + take)])
                        hasher.update(src)
                        (dest.baseAddress! + at).copyMemory(from: src.baseAddress!, byteCount: take)
                    }
                    current.count += take
                    consumed += take
                    if current.count == current.bytes.count {
                        let full = current.count
                        writer.submit(current, count: full, at: offset)
                        offset += full
                        if writer.failed { break reading }
                        current = await writer.next()
                    }
                }
                meter.update(offset + current.count)
            }
            if current.count > 0 && !writer.failed {
                let count = current.count
                writer.submit(current, count: count, at: offset)
                offset += count
            }
            let written = await writer.finish()
            if written.end >= 0 { offset = written.end }
            if let code = written.error {
                throw fileError("cannot write \(t.partial)", code, path: t.partial, remaining: t.size - offset)
            }
            if tooLong {
                unlink(t.partial)
                throw PullError(.checksum, "\(response.url.host ?? "?") sent more than the \(t.size) bytes announced for \(t.label); the partial download was deleted",
                                url: response.url.absoluteString, status: response.status)
            }
            if Task.isCancelled || failure?.reason == .cancelled {
                meter.update(offset, force: true)
                throw PullError(.cancelled, "the pull of \(t.label) was cancelled; \(offset) of \(t.size) bytes are kept in \(t.partial) for the next pull to resume",
                                url: t.url.absoluteString)
            }
            if failure == nil && offset < t.size {
                failure = PullError(.network, "\(response.url.host ?? "?") ended \(t.label) after \(offset) of \(t.size) bytes", url: response.url.absoluteString)
            }
            if let failure {
                guard PullHTTP.retryable(failure), offset > startOffset || failures < maxFailures else {
                    var e = failure
                    e.message += "; \(offset) of \(t.size) bytes are kept in \(t.partial): pulling again resumes"
                    throw e
                }
                if offset > startOffset {
                    // It moved: resume at once (the count is of attempts in a row that got nowhere).
                    failures = 0
                } else {
                    failures += 1
                    try await backoff(failures)
                }
                continue
            }
            meter.update(offset, force: true)
            return try finish(t, digest: hasher.finalizeHex(), resumed: resumed, transferred: transferred)
        }
    }

    /// Checks the hash and renames the partial into place (deleting it on a mismatch).
    private static func finish(_ t: BlobTarget, digest got: String, resumed: Int, transferred: Bool) throws(PullError) -> BlobOutcome {
        if let expected = t.sha256?.lowercased(), got != expected {
            unlink(t.partial)
            throw PullError(.checksum, "\(t.label): the downloaded bytes' sha256 is \(got), expected \(expected); the partial download was deleted",
                            url: t.url.absoluteString)
        }
        guard rename(t.partial, t.destination) == 0 else {
            throw fileError("cannot rename \(t.partial) to \(t.destination)", errno, path: t.destination, remaining: 0)
        }
        return BlobOutcome(sha256: got, resumedBytes: resumed, transferred: transferred)
    }

    /// Hashes the first `count` bytes of the partial file (what a resumed pull keeps).
    private static func hashPrefix(_ fd: Int32, count: Int, into hasher: PullHasher, buffer: UnsafeMutableRawBufferPointer) throws(PullError) {
        var done = 0
        while done < count {
            let n = pread(fd, buffer.baseAddress!, min(buffer.count, count - done), off_t(done))
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw fileError("cannot read the partial download", n < 0 ? errno : EIO, path: "", remaining: 0) }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            done += n
        }
    }

    static func hashFile(_ path: String) throws(PullError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw fileError("cannot open \(path)", errno, path: path, remaining: 0) }
        defer { close(fd) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: writeBufferBytes, alignment: 4096)
        defer { buffer.deallocate() }
        let hasher = PullHasher()
        try hashPrefix(fd, count: fileSize(path) ?? 0, into: hasher, buffer: buffer)
        return hasher.finalizeHex()
    }

    /// A local file error: ENOSPC and EDQUOT are `diskFull` (with the bytes still needed
    /// and the free space); the rest name the path and the system's words.
    static func fileError(_ what: String, _ code: Int32, path: String, remaining: Int) -> PullError {
        if code == ENOSPC || code == EDQUOT {
            let dir = path.isEmpty ? "." : parent(path)
            let free = freeBytes(dir) ?? 0
            return PullError(.diskFull, "the disk filled up: \(what): \(formatBytes(remaining)) still needed, \(formatBytes(free)) free in \(dir)",
                             neededBytes: remaining, freeBytes: free)
        }
        return PullError(.network, "\(what): \(String(cString: strerror(code)))")
    }

    /// Fails with `diskFull` unless `needed` bytes fit in `dir`'s file system.
    static func ensureSpace(_ dir: String, needed: Int, what: String) throws(PullError) {
        guard needed > 0, let free = freeBytes(dir), free < needed else { return }
        throw PullError(.diskFull, "not enough free space for \(what) in \(dir): \(formatBytes(needed)) needed, \(formatBytes(free)) free",
                        neededBytes: needed, freeBytes: free)
    }

    static func freeBytes(_ dir: String) -> Int? {
        var s = statvfs()
        guard statvfs(dir, &s) == 0 else { return nil }
        return Int(s.f_bavail) &* Int(s.f_frsize)
    }

    static func fileSize(_ path: String) -> Int? {
        var s = stat()
        guard stat(path, &s) == 0, (s.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int(s.st_size)
    }

    static func parent(_ path: String) -> String {
        (path as NSString).deletingLastPathComponent
    }

    /// `mkdir -p`, with the system's error (ENOSPC is diskFull).
    static func makeDirectory(_ dir: String) throws(PullError) {
        var s = stat()
        if stat(dir, &s) == 0 {
            if (s.st_mode & S_IFMT) == S_IFDIR { return }
            throw fileError("cannot create the folder \(dir)", ENOTDIR, path: dir, remaining: 0)
        }
        let up = parent(dir)
        if !up.isEmpty && up != dir && up != "/" { try makeDirectory(up) }
        if mkdir(dir, 0o755) != 0 && errno != EEXIST {
            throw fileError("cannot create the folder \(dir)", errno, path: dir, remaining: 0)
        }
    }

    /// Writes `data` to a temporary file beside `path` and renames it into place.
    static func writeFileAtomically(_ path: String, _ data: Data) throws(PullError) {
        try makeDirectory(parent(path))
        let tmp = parent(path) + "/." + (path as NSString).lastPathComponent + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw fileError("cannot create \(tmp)", errno, path: tmp, remaining: data.count) }
        var failed: Int32 = 0
        data.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let n = write(fd, raw.baseAddress! + done, raw.count - done)
                if n < 0 {
                    if errno == EINTR { continue }
                    failed = errno
                    return
                }
                done += n
            }
        }
        close(fd)
        if failed == 0 && rename(tmp, path) != 0 { failed = errno }
        if failed != 0 {
            unlink(tmp)
            throw fileError("cannot write \(path)", failed, path: path, remaining: data.count)
        }
    }

    /// `bytes N-M/T` → N.
    static func contentRangeStart(_ value: String?) -> Int? {
        guard let v = value?.trimmingCharacters(in: .whitespaces).lowercased(), v.hasPrefix("bytes ") else { return nil }
        return Int(v.dropFirst(6).prefix { $0 != "-" })
    }

    private static func backoff(_ failures: Int) async throws(PullError) {
        let ms = min(4000, 250 << max(0, failures - 1))
        do { try await Task.sleep(for: .milliseconds(ms)) } catch { throw PullError(.cancelled, "the pull was cancelled") }
    }

    static func formatBytes(_ n: Int) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var v = Double(n), i = 0
        while v >= 1000 && i < units.count - 1 { v /= 1000; i += 1 }
        return i == 0 ? "\(n) B" : String(format: "%.1f %@", v, units[i])
    }
}

/// Progress for one file: at most every 200 ms (and forced at the start and the end),
/// the rate over the last 3 s.
struct ProgressMeter {
    let file: String
    let total: Int?
    let report: @Sendable (PullProgress) -> Void
    static let interval: Duration = .milliseconds(200)
    static let window: Duration = .seconds(3)
    private var samples: [(at: ContinuousClock.Instant, bytes: Int)] = []
    private var last: ContinuousClock.Instant?
    private var resumed = 0

    init(file: String, total: Int?, report: @escaping @Sendable (PullProgress) -> Void) {
        self.file = file
        self.total = total
        self.report = report
    }

    /// A new request: bytes from here are counted for the rate.
    mutating func restart(resumed: Int, completed: Int) {
        self.resumed = resumed
        samples = [(ContinuousClock.now, completed)]
    }

    mutating func update(_ completed: Int, force: Bool = false) {
        let now = ContinuousClock.now
        if !force, let last, now - last < Self.interval { return }
        samples.append((now, completed))
        while samples.count > 2 && now - samples[1].at >= Self.window { samples.removeFirst() }
        var rate = 0.0
        if let first = samples.first {
            let d = now - first.at
            let secs = Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
            if secs > 0.001 { rate = Double(max(0, completed - first.bytes)) / secs }
        }
        last = now
        report(PullProgress(file: file, completedBytes: completed, totalBytes: total, bytesPerSecond: rate, resumedBytes: resumed))
    }
}

/// An exclusive flock(2) on a file, polled so that waiting can be cancelled. If the
/// holder removed the file (done), the lock taken on the old one is let go and the new
/// one locked, so that two waiters never both hold "the" lock.
final class FileLock: Sendable {
    let fd: Int32
    let path: String

    private init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    static func acquire(_ path: String, label: String) async throws(PullError) -> FileLock {
        while true {
            let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw BlobDownloader.fileError("cannot create the lock file \(path)", errno, path: path, remaining: 0) }
            if flock(fd, LOCK_EX | LOCK_NB) == 0 {
                var held = stat(), now = stat()
                if fstat(fd, &held) == 0, stat(path, &now) == 0, held.st_ino == now.st_ino, held.st_dev == now.st_dev {
                    return FileLock(fd: fd, path: path)
                }
                close(fd)
                continue
            }
            close(fd)
            do { try await Task.sleep(for: .milliseconds(50)) } catch {
                throw PullError(.cancelled, "the pull was cancelled while waiting for another pull of \(label)")
            }
        }
    }

    func release(remove: Bool) {
        if remove { unlink(path) }
        flock(fd, LOCK_UN)
        close(fd)
    }
}

/// Writes a download's buffers on a thread of its own, in order, while the next buffer
/// fills: the copy into the page cache costs about as much as the hash, and the two then
/// run on two cores. At most `depth` buffers exist; `next()` waits for one to come back.
/// After the first error nothing more is written, so the file is always a prefix.
final class FileWriter: Sendable {
    final class Buffer: @unchecked Sendable {
        let bytes: UnsafeMutableRawBufferPointer
        var count = 0
        init(_ size: Int) { bytes = .allocate(byteCount: size, alignment: 4096) }
        deinit { bytes.deallocate() }
    }

    private struct State: Sendable {
        var free: [Buffer] = []
        var made = 0
        var waiting: CheckedContinuation<Buffer, Never>?
        var inflight = 0
        var drained: CheckedContinuation<Void, Never>?
        var error: Int32?
        /// The end of what was written (a prefix of the file).
        var end: Int
    }

    private let fd: Int32
    private let bufferBytes: Int
    private let depth: Int
    private let queue = DispatchQueue(label: "parlance.pull.writer", qos: .userInitiated)
    private let state: Mutex<State>

    /// `fd`'s bytes before the first buffer written are kept: `end` starts at the first
    /// buffer's offset.
    init(fd: Int32, bufferBytes: Int, depth: Int = 3) {
        self.fd = fd
        self.bufferBytes = bufferBytes
        self.depth = depth
        self.state = Mutex(State(end: -1))
    }

    /// An empty buffer: a new one while fewer than `depth` exist, else the next one written.
    func next() async -> Buffer {
        let b = await withCheckedContinuation { (c: CheckedContinuation<Buffer, Never>) in
            let ready: Buffer? = state.withLock { s in
                if let b = s.free.popLast() { return b }
                if s.made < depth {
                    s.made += 1
                    return Buffer(bufferBytes)
                }
                s.waiting = c
                return nil
            }
            if let ready { c.resume(returning: ready) }
        }
        b.count = 0
        return b
    }

    var failed: Bool { state.withLock { $0.error != nil } }

    /// Queues `buffer`'s first `count` bytes to be written at `offset`; the buffer comes
    /// back (emptied) through `next()` once written. (The writer never touches `count`:
    /// the caller reads it after this returns.)
    func submit(_ buffer: Buffer, count: Int, at offset: Int) {
        state.withLock { s in
            s.inflight += 1
            if s.end < 0 { s.end = offset }
        }
        queue.async { [self] in
            var code: Int32 = 0
            var done = 0
            let skip = state.withLock { $0.error != nil }
            while !skip && done < count {
                let n = pwrite(fd, buffer.bytes.baseAddress! + done, count - done, off_t(offset + done))
                if n < 0 {
                    if errno == EINTR { continue }
                    code = errno
                    break
                }
                done += n
            }
            let (waiter, drained): (CheckedContinuation<Buffer, Never>?, CheckedContinuation<Void, Never>?) = state.withLock { s in
                if !skip {
                    s.end = offset + done
                    if code != 0 && s.error == nil { s.error = code }
                }
                s.inflight -= 1
                var w: CheckedContinuation<Buffer, Never>?
                if let waiting = s.waiting {
                    s.waiting = nil
                    w = waiting
                } else {
                    s.free.append(buffer)
                }
                var d: CheckedContinuation<Void, Never>?
                if s.inflight == 0, let drained = s.drained {
                    s.drained = nil
                    d = drained
                }
                return (w, d)
            }
            waiter?.resume(returning: buffer)
            drained?.resume()
        }
    }

    /// Waits for every queued write: the first error (errno), and the end of what was
    /// written (-1 when nothing was submitted).
    func finish() async -> (error: Int32?, end: Int) {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if s.inflight == 0 { return true }
                s.drained = c
                return false
            }
            if now { c.resume() }
        }
        return state.withLock { ($0.error, $0.end) }
    }
}
