#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// Levels mean something: `fault` is our bug, `error` is bad input or a failed request.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case debug, info, warning, error, fault, off
    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
    public init?(name: String) {
        switch name.lowercased() {
        case "debug", "trace": self = .debug
        case "info": self = .info
        case "warn", "warning": self = .warning
        case "error": self = .error
        case "fault": self = .fault
        case "off", "none": self = .off
        default: return nil
        }
    }
}

/// Writes log lines to stderr or a file — never stdout, which belongs to the protocol.
public final class Logger: Sendable {
    public let level: LogLevel
    private let fd: Int32
    private let lock = Mutex<Void>(())  // guards line-at-a-time writes to fd

    public init(level: LogLevel, file: String?) {
        self.level = level
        if let file, case let f = open(file, O_WRONLY | O_CREAT | O_APPEND, 0o600), f >= 0 {
            fd = f
        } else {
            fd = STDERR_FILENO
        }
    }

    public func log(_ l: LogLevel, _ message: @autoclosure () -> String) {
        guard l >= level, level != .off else { return }
        let line = "\(Date().ISO8601Format()) [\(l)] \(message())\n"
        lock.withLock { _ in
            _ = line.withCString { write(fd, $0, strlen($0)) }
        }
    }
    public func debug(_ m: @autoclosure () -> String) { log(.debug, m()) }
    public func info(_ m: @autoclosure () -> String) { log(.info, m()) }
    public func warning(_ m: @autoclosure () -> String) { log(.warning, m()) }
    public func error(_ m: @autoclosure () -> String) { log(.error, m()) }
    public func fault(_ m: @autoclosure () -> String) { log(.fault, m()) }
}
