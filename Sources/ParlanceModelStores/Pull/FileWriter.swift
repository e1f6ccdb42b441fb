import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

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
