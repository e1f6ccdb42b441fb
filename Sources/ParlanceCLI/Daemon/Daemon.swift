#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
import JSONRPC
import ParlanceEngine
import ParlanceServer

/// `parlance --stdio`: the JSON-RPC server on this process's stdin and stdout.
enum Daemon {
    static func serve(_ settings: DaemonSettings) async -> Int32 {
        let options: ServerOptions
        let log = settings.startLogging()
        do { options = try settings.serverOptions(log: log) } catch {
            FileHandle.standardError.write(Data("parlance: \(error)\n".utf8))
            return 2
        }
        let connection = Connection.stdio(maxMessageSize: settings.maxMessage)
        let server = Server(options: options, connection: connection, log: log)
        log.info("parlance \(Server.version) serving on stdio; models: " + options.models.models.map { "\($0.name) (\($0.engine.modelPath))" }.joined(separator: ", ")
                 + "; default \(options.models.defaultModel); threads \(settings.engine.threads)")
        // SIGTERM / SIGINT: cancel the work in flight, answer it with what it had (within
        // half a second), exit 0. A second signal exits at once.
        let signals = [SIGTERM, SIGINT].map { sig -> DispatchSourceSignal in
            signal(sig, SIG_IGN)
            let src = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            let seen = Once()
            src.setEventHandler {
                guard seen.first() else { _exit(0) }
                log.info("signal \(sig): cancelling the work in flight, exiting")
                Task {
                    await server.stop()
                    exit(0)
                }
            }
            src.resume()
            return src
        }
        let code = await server.run()
        signals.forEach { $0.cancel() }
        return code
    }
}

