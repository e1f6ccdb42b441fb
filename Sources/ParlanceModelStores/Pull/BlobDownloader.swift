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

    /// Fetches what the partial file lacks, verifies it and renames it into place.
    private static func transfer(_ t: BlobTarget, progress: @escaping @Sendable (PullProgress) -> Void) async throws(PullError) -> BlobOutcome {
        let meter = ProgressMeter(file: t.label, total: t.size, report: progress)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 4096)
        defer { buffer.deallocate() }
        var transfer = Transfer(t: t, meter: meter, buffer: buffer)
        return try await transfer.run()
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

    /// The SHA-256 of a whole file, lower-case hex.
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

    /// `bytes N-M/T` → N.
    static func contentRangeStart(_ value: String?) -> Int? {
        guard let v = value?.trimmingCharacters(in: .whitespaces).lowercased(), v.hasPrefix("bytes ") else { return nil }
        return Int(v.dropFirst(6).prefix { $0 != "-" })
    }

    private static func backoff(_ failures: Int) async throws(PullError) {
        let ms = min(4000, 250 << max(0, failures - 1))
        do { try await Task.sleep(for: .milliseconds(ms)) } catch { throw PullError(.cancelled, "the pull was cancelled") }
    }
}

extension BlobDownloader {
    /// One file's download, attempt after attempt, and the state the attempts share.
    private struct Transfer {
        let t: BlobTarget
        /// Attempts in a row that got no new bytes.
        var failures = 0
        /// Whether any bytes came over the network.
        var transferred = false
        /// Whether a complete partial with other bytes was dropped already (once only).
        var discardedStale = false
        var meter: ProgressMeter
        /// Where the partial file's bytes are read to be hashed.
        let buffer: UnsafeMutableRawBufferPointer

        /// Attempts until the file is complete and verified, or a failure is final.
        mutating func run() async throws(PullError) -> BlobOutcome {
            while true {
                var (have, hasher) = try resumePoint()
                if have == t.size {
                    if let done = try completed(have, hasher: hasher) { return done }
                    continue
                }
                try BlobDownloader.ensureSpace(BlobDownloader.parent(t.partial), needed: t.size - have, what: t.label)
                guard var response = try await request(from: have) else { continue }
                if response.status == 200 && have > 0 {
                    // The server ignored the range: the whole file comes again, from byte 0.
                    unlink(t.partial)
                    hasher = PullHasher()
                    have = 0
                }
                if let done = try await receive(&response, from: have, hasher: hasher) { return done }
            }
        }

        /// What an earlier attempt (or pull) left, hashed, to resume from (a partial longer
        /// than the file is deleted).
        private func resumePoint() throws(PullError) -> (have: Int, hasher: PullHasher) {
            var have = BlobDownloader.fileSize(t.partial) ?? 0
            if have > t.size {
                unlink(t.partial)
                have = 0
            }
            let hasher = PullHasher()
            if have > 0 {
                let rfd = open(t.partial, O_RDONLY | O_CLOEXEC)
                guard rfd >= 0 else { throw BlobDownloader.fileError("cannot open \(t.partial)", errno, path: t.partial, remaining: t.size) }
                defer { close(rfd) }
                try BlobDownloader.hashPrefix(rfd, count: have, into: hasher, buffer: buffer)
            }
            return (have, hasher)
        }

        /// A partial of the full size (an earlier pull stopped before the rename): verified,
        /// not fetched again. A complete partial with other bytes is dropped once: nil, fetch it.
        private mutating func completed(_ have: Int, hasher: PullHasher) throws(PullError) -> BlobOutcome? {
            if t.size == 0 { try BlobDownloader.writeFileAtomically(t.partial, Data()) }
            let digest = hasher.finalizeHex()
            if let expected = t.sha256?.lowercased(), digest != expected, !transferred, !discardedStale {
                unlink(t.partial)
                discardedStale = true
                return nil
            }
            meter.restart(resumed: have, completed: have)
            meter.update(have, force: true)
            return try BlobDownloader.finish(t, digest: digest, resumed: have, transferred: transferred)
        }

        /// Asks for the bytes from `have` on (or all of them): the response whose body to
        /// read (a 206 from `have`, or a 200 from byte 0), or nil to try again.
        private mutating func request(from have: Int) async throws(PullError) -> PullResponse? {
            var headers: [String: String] = [:]
            if have > 0 { headers["Range"] = "bytes=\(have)-" }
            var response: PullResponse
            do throws(PullError) {
                response = try await PullHTTP.open(t.url, headers: headers, authorization: t.authorization)
            } catch {
                try await retryOrThrow(error)
                return nil
            }
            switch response.status {
            case 206:
                let start = BlobDownloader.contentRangeStart(response.header("content-range"))
                guard start == have else {
                    // Not the range asked for: start over from 0.
                    try restartOrThrow(PullError(.network, "\(response.url.host ?? "?") answered a range request for \(t.label) with the wrong range (\(response.header("content-range") ?? "none"))",
                                                 url: response.url.absoluteString, status: 206))
                    return nil
                }
                return response
            case 200:
                return response
            case 416 where have > 0:
                // Nothing to send from `have` on: right only for a complete partial, which
                // this is not (it is shorter than the announced size): start over.
                try restartOrThrow(PullError(.network, "\(response.url.host ?? "?") keeps answering 416 for \(t.label)", url: response.url.absoluteString, status: 416))
                return nil
            default:
                let body = (try? await PullHTTP.readBody(&response, limit: 1 << 20)) ?? Data()
                try await retryOrThrow(PullHTTP.statusError(response.status, body: body, url: response.url, what: t.label))
                return nil
            }
        }

        /// A request that failed before any body: waits to try again while the failure is
        /// transient and the attempts in a row allow it; else throws it.
        private mutating func retryOrThrow(_ error: PullError) async throws(PullError) {
            guard PullHTTP.retryable(error) && failures < BlobDownloader.maxFailures else { throw error }
            failures += 1
            try await BlobDownloader.backoff(failures)
        }

        /// A server that answered another range than asked: the partial is deleted to start
        /// over from 0, at once, unless that happened too often in a row (then `error`).
        private mutating func restartOrThrow(_ error: PullError) throws(PullError) {
            unlink(t.partial)
            failures += 1
            if failures > BlobDownloader.maxFailures { throw error }
        }

        /// Writes the body after the partial's first `have` bytes: the finished file, or nil
        /// to try again after a transient failure (at once when bytes came, else after a
        /// pause); a cancel, a write error or too many bytes end the pull.
        private mutating func receive(_ response: inout PullResponse, from have: Int, hasher: PullHasher) async throws(PullError) -> BlobOutcome? {
            let fd = open(t.partial, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw BlobDownloader.fileError("cannot open \(t.partial)", errno, path: t.partial, remaining: t.size - have) }
            defer { close(fd) }
            transferred = true
            meter.restart(resumed: have, completed: have)
            meter.update(have, force: true)

            let writer = FileWriter(fd: fd, bufferBytes: BlobDownloader.writeBufferBytes)
            let body = await copyBody(&response, from: have, to: writer, hasher: hasher)
            var offset = body.offset, failure = body.failure
            let written = await writer.finish()
            if written.end >= 0 { offset = written.end }
            if let code = written.error {
                throw BlobDownloader.fileError("cannot write \(t.partial)", code, path: t.partial, remaining: t.size - offset)
            }
            if body.tooLong {
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
                guard PullHTTP.retryable(failure), offset > have || failures < BlobDownloader.maxFailures else {
                    var e = failure
                    e.message += "; \(offset) of \(t.size) bytes are kept in \(t.partial): pulling again resumes"
                    throw e
                }
                if offset > have {
                    // It moved: resume at once (the count is of attempts in a row that got nowhere).
                    failures = 0
                } else {
                    failures += 1
                    try await BlobDownloader.backoff(failures)
                }
                return nil
            }
            meter.update(offset, force: true)
            return try BlobDownloader.finish(t, digest: hasher.finalizeHex(), resumed: have, transferred: transferred)
        }

        /// The body: hashed as it comes, copied into big buffers that the writer's thread
        /// writes while the next fills (the page cache's copy costs about as much as the
        /// hash). Returns where the bytes handed to the writer end, the read's failure, and
        /// whether the server sent more than the announced size.
        private mutating func copyBody(_ response: inout PullResponse, from start: Int, to writer: FileWriter,
                                       hasher: PullHasher) async -> (offset: Int, failure: PullError?, tooLong: Bool) {
            var offset = start
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
            return (offset, failure, tooLong)
        }
    }
}
