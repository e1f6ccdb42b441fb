import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The file system as pulls use it: sizes, free space, folders, atomic writes and locks,
// each failure as a `PullError` (a full disk as `diskFull`).
extension BlobDownloader {
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

    static func formatBytes(_ n: Int) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var v = Double(n), i = 0
        while v >= 1000 && i < units.count - 1 { v /= 1000; i += 1 }
        return i == 0 ? "\(n) B" : String(format: "%.1f %@", v, units[i])
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
