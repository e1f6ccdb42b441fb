import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The few file-system questions the store readers ask, answered with `stat`/`realpath`
/// directly (listing fifty models asks hundreds of them). Every function only reads, and
/// answers nil or empty instead of throwing: a store that cannot be read holds nothing.
enum StoreFiles {
    struct Status: Sendable, Hashable {
        var size: Int
        /// Nanoseconds since 1970 (the index's key, with the size and real path).
        var modified: Int64
        var isDirectory: Bool
        var isRegular: Bool
        /// The file's identity: hard links to one file share it.
        var device: UInt64
        var inode: UInt64
    }

    /// The status of what `path` names, following symbolic links (nil: absent or dangling).
    static func status(_ path: String) -> Status? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        #if canImport(Darwin)
        let seconds = Int64(st.st_mtimespec.tv_sec), nanos = Int64(st.st_mtimespec.tv_nsec)
        #else
        let seconds = Int64(st.st_mtim.tv_sec), nanos = Int64(st.st_mtim.tv_nsec)
        #endif
        let kind = st.st_mode & S_IFMT
        return Status(size: Int(st.st_size), modified: seconds * 1_000_000_000 + nanos,
                      isDirectory: kind == S_IFDIR, isRegular: kind == S_IFREG,
                      device: UInt64(truncatingIfNeeded: st.st_dev), inode: UInt64(truncatingIfNeeded: st.st_ino))
    }

    static func isDirectory(_ path: String) -> Bool { status(path)?.isDirectory ?? false }
    static func isFile(_ path: String) -> Bool { status(path)?.isRegular ?? false }

    /// Whether `path` itself is a symbolic link (not following it).
    static func isSymbolicLink(_ path: String) -> Bool {
        var st = stat()
        guard lstat(path, &st) == 0 else { return false }
        return st.st_mode & S_IFMT == S_IFLNK
    }

    /// The target a symbolic link names, as written in the link (nil: not a link).
    static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink(path, &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The canonical absolute path (symbolic links resolved); nil when it does not exist.
    static func realPath(_ path: String) -> String? {
        guard let p = realpath(path, nil) else { return nil }
        defer { free(p) }
        return String(cString: p)
    }

    /// The names in a folder, sorted, without `.` and `..` (empty when it cannot be read).
    static func names(in directory: String) -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// A small text file's contents (nil when absent, unreadable or larger than `limit`).
    static func text(_ path: String, limit: Int = 1 << 20) -> String? {
        guard let st = status(path), st.isRegular, st.size <= limit,
              let data = FileManager.default.contents(atPath: path) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// Whether the file starts with GGUF's magic number.
    static func hasGGUFMagic(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var magic = [UInt8](repeating: 0, count: 4)
        let n = magic.withUnsafeMutableBytes { read(fd, $0.baseAddress, 4) }
        return n == 4 && magic == [0x47, 0x47, 0x55, 0x46]
    }

    /// `a/b` without doubling the slash.
    static func join(_ a: String, _ b: String) -> String {
        a.hasSuffix("/") ? a + b : a + "/" + b
    }

    /// The last path component.
    static func fileName(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? path
    }

    /// Everything before the last `/` (the path itself when it has none).
    static func directory(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// `path` made absolute against the current directory, `.` and `..` removed (no links resolved).
    static func absolute(_ path: String) -> String {
        let expanded = path.hasPrefix("~/") ? NSHomeDirectory() + path.dropFirst(1) : path
        let full = expanded.hasPrefix("/") ? expanded : join(FileManager.default.currentDirectoryPath, expanded)
        var parts: [Substring] = []
        for c in full.split(separator: "/", omittingEmptySubsequences: true) {
            if c == "." { continue }
            if c == ".." { _ = parts.popLast(); continue }
            parts.append(c)
        }
        return "/" + parts.joined(separator: "/")
    }

    /// GGUF files under `root` (following linked folders), at most `depth` folders down,
    /// skipping hidden folders; the order is the sorted walk.
    static func ggufFiles(under root: String, depth: Int) -> [String] {
        var found: [String] = []
        var seen: Set<String> = []
        func walk(_ dir: String, _ level: Int) {
            guard let real = realPath(dir), seen.insert(real).inserted else { return }
            for name in names(in: dir) where !name.hasPrefix(".") {
                let path = join(dir, name)
                guard let st = status(path) else { continue }
                if st.isDirectory {
                    if level < depth { walk(path, level + 1) }
                } else if st.isRegular, isGGUFName(name) {
                    found.append(path)
                }
            }
        }
        walk(root, 0)
        return found
    }

    /// `*.gguf` (any case).
    static func isGGUFName(_ name: String) -> Bool {
        name.count > 5 && name.lowercased().hasSuffix(".gguf")
    }

    /// Multimodal projectors and other companion files that are not a model to chat with
    /// (the same words llama.cpp's `-hf` passes over when it picks a model file).
    static func isCompanionGGUF(_ name: String) -> Bool {
        let n = name.lowercased()
        return ["mmproj", "imatrix", "mtp-", "eagle3-", "dflash-", "dspark-"].contains { n.contains($0) }
    }
}
